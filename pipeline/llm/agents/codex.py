"""``agent:codex``: Codex CLI's non-interactive mode as the model (``codex exec``).

Flags, from openai/codex ``docs/exec.md`` ("Non-interactive mode") and ``codex-rs/exec/src/cli.rs``:

* ``codex exec … -``: the prompt is read from stdin ("If not provided as an argument (or if ``-`` is used),
  instructions are read from stdin");
* ``--json``: events on stdout as JSON Lines: ``thread.started``, ``turn.started``, ``item.completed`` (an
  ``agent_message`` item holds the model's message in ``text``), ``turn.completed`` with ``usage``
  (``input_tokens``, ``cached_input_tokens``, ``output_tokens``), ``turn.failed`` with error details;
* ``--output-schema <FILE>``: a JSON Schema file describing the final response, which "must follow the strict
  schema rules" of OpenAI structured outputs: ``pipeline.llm.agents.schema.strict`` rewrites the answer's schema
  that way;
* ``--ephemeral``: "Run without persisting session files to disk", so the nested run never shows in
  ``codex resume``;
* ``--skip-git-repo-check``: the run happens in duck-tape's own empty folder, not a Git repository;
* ``--sandbox read-only``: the documented default of ``codex exec``, stated so that a user config cannot widen it;
* ``-c features.hooks=false``: the config override of ``[features] hooks`` ("Equivalent to ``-c
  features.<name>=false``" for ``--disable``; an override of a key an older Codex does not know is ignored, where
  ``--disable hooks`` would be refused), so no hook fires in the nested run;
* ``--color never``: no terminal colour codes in the output;
* ``--model <name>`` when ``agent:codex/<name>`` names one.
"""

from __future__ import annotations

import json

from pipeline.llm.agents.base import CliAdapter, Reply, Request, add, number
from pipeline.llm.agents.schema import strict

SCHEMA_FILE = "answer.schema.json"


class Codex(CliAdapter):
    """The ``codex exec`` adapter (``pipeline.llm.agents.base.Adapter``)."""

    name = "codex"
    executable = "codex"
    schema_flag = True

    def command(self, request: Request) -> tuple[list[str], str]:
        schema_path = request.scratch / SCHEMA_FILE
        schema_path.write_text(json.dumps(strict(request.schema), ensure_ascii=False), encoding="utf-8")
        argv = ["exec", "--json", "--output-schema", str(schema_path), "--ephemeral", "--skip-git-repo-check",
                "--sandbox", "read-only", "-c", "features.hooks=false", "--color", "never"]
        return [*self.with_model(argv, request), "-"], request.prompt(with_schema=False)

    def parse(self, stdout: str) -> Reply:
        reply, events = self.events(stdout)
        for event in events:
            kind = event.get("type")
            if kind == "thread.started" and isinstance(event.get("thread_id"), str):
                reply.session = event["thread_id"]
            elif kind == "item.completed":
                item = event.get("item") if isinstance(event.get("item"), dict) else {}
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    reply.text = item["text"]
            elif kind == "turn.completed":
                usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
                reply.sent = add(reply.sent, number(usage.get("input_tokens")))
                reply.received = add(reply.received, number(usage.get("output_tokens")))
            elif kind in ("turn.failed", "error"):
                error = event.get("error")
                message = error.get("message") if isinstance(error, dict) else event.get("message")
                reply.error, reply.failed = str(message or kind)[:300], True
        return reply


ADAPTER = Codex()
