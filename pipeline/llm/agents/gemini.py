"""``agent:gemini``: Gemini CLI's headless mode as the model (``gemini -p``).

Flags, from google-gemini/gemini-cli ``docs/cli/headless.md``, ``docs/cli/cli-reference.md`` and
``packages/core/src/output/json-formatter.ts``:

* ``-p`` / ``--prompt <text>``: non-interactive; "Appended to stdin input if provided", so the whole prompt goes
  on stdin and ``-p`` carries only the closing instruction (``base.INSTRUCTION``);
* ``--output-format json``: one JSON object: ``response`` (the final answer), ``stats`` (per model
  ``stats.models.<name>.tokens`` with ``prompt``, ``candidates``, ``total``, ``cached``, ``thoughts``, ``tool``),
  ``error`` (``type``, ``message``) when the request failed; exit codes 0 success, 1 error, 42 bad input, 53 turn
  limit;
* ``--model <name>`` when ``agent:gemini/<name>`` names one.

Gemini CLI has no structured-output flag: the schema is written into the prompt and the answer validated here.
It has no flag to turn hooks off for one run (``hooksConfig.enabled`` is a settings-file key) nor to leave a run
unsaved (sessions are kept in ``~/.gemini/tmp/<project_hash>/chats/``, ``docs/cli/session-management.md``): the
nested run's hooks meet duck-tape's recursion guard (``DUCK_TAPE_NESTED``), and it runs in duck-tape's own folder,
so its session is listed under that folder, never under the user's project.
"""

from __future__ import annotations

from pipeline.llm.agents.base import INSTRUCTION, CliAdapter, Reply, Request, add, json_document, number


class Gemini(CliAdapter):
    """The ``gemini -p`` adapter (``pipeline.llm.agents.base.Adapter``)."""

    name = "gemini"
    executable = "gemini"

    def command(self, request: Request) -> tuple[list[str], str]:
        argv = ["-p", INSTRUCTION, "--output-format", "json"]
        return self.with_model(argv, request), request.prompt(with_schema=True)

    def parse(self, stdout: str) -> Reply:
        doc = json_document(stdout)
        if doc is None:
            return Reply(error="no JSON object on stdout")
        reply = Reply(session=doc.get("session_id") if isinstance(doc.get("session_id"), str) else None)
        if isinstance(doc.get("response"), str):
            reply.text = doc["response"]
        stats = doc.get("stats") if isinstance(doc.get("stats"), dict) else {}
        models = stats.get("models") if isinstance(stats.get("models"), dict) else {}
        for metrics in models.values():
            tokens = metrics.get("tokens") if isinstance(metrics, dict) and isinstance(metrics.get("tokens"), dict) else {}
            prompt, total = number(tokens.get("prompt")), number(tokens.get("total"))
            reply.sent = add(reply.sent, prompt)
            if total is not None and prompt is not None:
                reply.received = add(reply.received, max(total - prompt, 0))
            else:
                reply.received = add(reply.received, number(tokens.get("candidates")))
        error = doc.get("error")
        if isinstance(error, dict):
            reply.error = f"{error.get('type') or 'error'}: {error.get('message') or ''}".strip(": ")[:300]
            reply.failed = True
        return reply


ADAPTER = Gemini()
