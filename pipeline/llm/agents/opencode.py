"""``agent:opencode``: opencode's non-interactive mode as the model (``opencode run``).

Flags, from anomalyco/opencode ``packages/web/src/content/docs/cli.mdx`` ("run") and
``packages/opencode/src/cli/cmd/run.ts``:

* ``opencode run`` with no message argument and the prompt on stdin: "piped" stdin is the message when no
  argument is given (``resolveRunInput``); the run ends when the session goes idle;
* ``--format json``: raw JSON events, one per line, each ``{type, timestamp, sessionID, …}``: ``text`` (a
  finished text part in ``part.text``), ``step_finish`` (``part.tokens``: ``input``, ``output``, ``reasoning``,
  ``cache.read``, ``cache.write``; ``part.cost``; the ``StepFinishPart`` of ``session/message-v2.ts``), ``error``
  (``error.name``, ``error.data.message``), ``tool_use``;
* ``--dir <path>``: the directory to run in (opencode takes its project root from ``$PWD``, so the folder is named
  explicitly as well as set as the working directory);
* ``--model provider/model`` when ``agent:opencode/<provider>/<model>`` names one.

Non-interactive runs deny questions and auto-reject every permission request (``run.ts``), so the nested run
cannot edit anything.  opencode has no structured-output flag (the schema goes into the prompt), no flag to skip
plugins for one run, and no flag to leave a session unsaved: the nested run's hooks meet duck-tape's recursion
guard (``DUCK_TAPE_NESTED``), and it runs in duck-tape's own folder, so its session is that folder's, never listed
with the user's project.
"""

from __future__ import annotations

from pipeline.llm.agents.base import CliAdapter, Reply, Request, add, number


class OpenCode(CliAdapter):
    """The ``opencode run`` adapter (``pipeline.llm.agents.base.Adapter``)."""

    name = "opencode"
    executable = "opencode"

    def command(self, request: Request) -> tuple[list[str], str]:
        argv = ["run", "--format", "json", "--dir", str(request.workdir)]
        return self.with_model(argv, request), request.prompt(with_schema=True)

    def parse(self, stdout: str) -> Reply:
        reply, events = self.events(stdout)
        for event in events:
            kind = event.get("type")
            part = event.get("part") if isinstance(event.get("part"), dict) else {}
            if isinstance(event.get("sessionID"), str):
                reply.session = event["sessionID"]
            if kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
                reply.text = part["text"]
            elif kind == "step_finish":
                tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
                cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
                sent = add(number(tokens.get("input")), add(number(cache.get("read")), number(cache.get("write"))))
                reply.sent = add(reply.sent, sent)
                reply.received = add(reply.received, add(number(tokens.get("output")), number(tokens.get("reasoning"))))
            elif kind == "error":
                error = event.get("error") if isinstance(event.get("error"), dict) else {}
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                reply.error, reply.failed = str(data.get("message") or error.get("name") or "error")[:300], True
        return reply


ADAPTER = OpenCode()
