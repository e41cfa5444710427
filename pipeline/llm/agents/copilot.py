"""``agent:copilot``: GitHub Copilot CLI's programmatic mode as the model (a prompt piped to ``copilot``).

Flags, from github/docs ``content/copilot/how-tos/copilot-cli/automate-copilot-cli/run-cli-programmatically.md``,
``content/copilot/reference/copilot-cli-reference/cli-programmatic-reference.md`` and ``cli-command-reference.md``
("Command-line options"):

* a prompt piped to ``copilot`` runs it programmatically, like ``-p`` ("Pipe a prompt to the copilot command";
  piped input is ignored when ``-p`` is also given, so ``-p`` is not used: the prompt stays off the command line);
* ``--output-format json``: "outputs JSONL: one JSON object per line".  The lines are Copilot's session events,
  the envelope ``{type, data, id, timestamp}`` its session logs use (``../shared/FORMATS.md`` §2): the answer is
  the last ``assistant.message`` of the main thread (``data.content``, no ``parentToolCallId``), the tokens are
  ``session.shutdown``'s ``data.modelMetrics.<model>.usage`` (``inputTokens``, ``outputTokens``; also
  ``assistant.usage`` events, when printed), errors ``session.error`` (``data.message``);
* ``--no-custom-instructions``: "Disable loading of custom instructions from AGENTS.md and related files";
* ``--no-ask-user``: the agent never stops to ask a question;
* ``--disable-builtin-mcps``: no built-in MCP server (the GitHub one) is started;
* ``-C <directory>``: "Change working directory before doing anything else" (duck-tape's own folder);
* ``--model <name>`` when ``agent:copilot/<name>`` names one.

Copilot CLI has no structured-output flag (the schema goes into the prompt), no flag to skip hooks for one run and
no flag to leave a session unsaved: the nested run's hooks meet duck-tape's recursion guard (``DUCK_TAPE_NESTED``),
and it runs in duck-tape's own folder, so its session belongs to that folder, not to the user's project.
"""

from __future__ import annotations

from pipeline.llm.agents.base import CliAdapter, Reply, Request, add, number


class Copilot(CliAdapter):
    """The piped ``copilot`` adapter (``pipeline.llm.agents.base.Adapter``)."""

    name = "copilot"
    executable = "copilot"

    def command(self, request: Request) -> tuple[list[str], str]:
        argv = ["--output-format", "json", "--no-custom-instructions", "--no-ask-user", "--disable-builtin-mcps",
                "-C", str(request.workdir)]
        return self.with_model(argv, request), request.prompt(with_schema=True)

    def parse(self, stdout: str) -> Reply:
        reply, events = self.events(stdout)
        usage_events: tuple[int | None, int | None] = (None, None)
        shutdown: tuple[int | None, int | None] = (None, None)
        for event in events:
            kind = event.get("type")
            data = event.get("data") if isinstance(event.get("data"), dict) else {}
            if kind == "session.start" and isinstance(data.get("sessionId"), str):
                reply.session = data["sessionId"]
            elif kind == "assistant.message" and not data.get("parentToolCallId"):
                content = data.get("content")
                if isinstance(content, str) and content.strip():
                    reply.text = content
            elif kind == "assistant.usage":
                usage_events = (add(usage_events[0], number(data.get("inputTokens"))),
                                add(usage_events[1], number(data.get("outputTokens"))))
            elif kind == "session.shutdown":
                metrics = data.get("modelMetrics") if isinstance(data.get("modelMetrics"), dict) else {}
                for model in metrics.values():
                    usage = model.get("usage") if isinstance(model, dict) and isinstance(model.get("usage"), dict) else {}
                    shutdown = (add(shutdown[0], number(usage.get("inputTokens"))),
                                add(shutdown[1], number(usage.get("outputTokens"))))
            elif kind == "session.error":  # not fatal by itself: real sessions log MCP errors and go on
                reply.error = str(data.get("message") or data.get("errorType") or "error")[:300]
        reply.sent, reply.received = shutdown if shutdown != (None, None) else usage_events
        return reply


ADAPTER = Copilot()
