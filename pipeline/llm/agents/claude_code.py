"""``agent:claude-code``: Claude Code's print mode as the model (``claude -p``).

Flags, from Claude Code's CLI reference (code.claude.com/docs/en/cli-reference) and headless guide
(code.claude.com/docs/en/headless), and its CHANGELOG (github.com/anthropics/claude-code):

* ``-p`` / ``--print``: run non-interactively and exit; with no prompt argument the prompt is read from stdin
  (``cat file | claude -p``);
* ``--output-format json``: one JSON object on stdout: ``type: "result"``, ``subtype`` (``success`` or an
  ``error_…`` kind), ``is_error``, ``result`` (the final text), ``session_id``, ``total_cost_usd``, ``usage``
  (``input_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``, ``output_tokens``);
* ``--json-schema <schema>`` (print mode): the answer is validated against the schema and returned as
  ``structured_output`` in that object (CHANGELOG: "Fixed ``--json-schema`` silently producing unstructured output
  when the schema was invalid"; an answer that still comes back as text in ``result`` is parsed from there);
* ``--system-prompt <text>``: replaces Claude Code's own system prompt (the coding-agent instructions are not
  needed to answer a data question, and cost tokens);
* ``--no-session-persistence`` (print mode): the session is not saved to disk, so it never shows in the user's
  ``claude --resume`` list;
* ``--settings '{"disableAllHooks": true}'``: the ``disableAllHooks`` setting for this run only, so neither
  duck-tape's hooks nor the user's fire in the nested run (managed hooks set by policy still run: CHANGELOG
  "non-managed settings can no longer disable managed hooks");
* ``--strict-mcp-config``: only the MCP servers of ``--mcp-config`` are loaded, and none is given, so the nested
  run starts no MCP server (duck-tape's own included);
* ``--model <name>`` when ``agent:claude-code/<name>`` names one.

Tools stay as the CLI sets them for print mode (nothing is approved, so a tool that needs permission is
refused): ``--tools ""`` would also be the way to drop them, but whether it leaves the synthetic tool behind
``--json-schema`` in place is not documented, so it is not used.
"""

from __future__ import annotations

import json

from pipeline.llm.agents.base import CliAdapter, Reply, Request, add, json_document, number

NO_HOOKS = json.dumps({"disableAllHooks": True}, separators=(",", ":"))


class ClaudeCode(CliAdapter):
    """The ``claude -p`` adapter (``pipeline.llm.agents.base.Adapter``)."""

    name = "claude-code"
    executable = "claude"
    schema_flag = True

    def command(self, request: Request) -> tuple[list[str], str]:
        argv = ["-p", "--output-format", "json",
                "--json-schema", json.dumps(request.schema, separators=(",", ":"), ensure_ascii=False),
                "--system-prompt", request.system,
                "--no-session-persistence", "--strict-mcp-config", "--settings", NO_HOOKS]
        return self.with_model(argv, request), request.user.strip() + "\n"

    def parse(self, stdout: str) -> Reply:
        doc = json_document(stdout)
        if doc is None:
            return Reply(error="no JSON result object on stdout")
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        sent = None
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            sent = add(sent, number(usage.get(key)))
        reply = Reply(sent=sent, received=number(usage.get("output_tokens")),
                      session=doc.get("session_id") if isinstance(doc.get("session_id"), str) else None)
        structured = doc.get("structured_output")
        if isinstance(structured, dict):
            reply.data = structured
        result = doc.get("result")
        if isinstance(result, str):
            reply.text = result
        if doc.get("is_error") or str(doc.get("subtype") or "success") != "success":
            reply.error = f"{doc.get('subtype') or 'error'}: {(result or '').strip()[:300]}".rstrip(": ")
            reply.failed = True
        return reply


ADAPTER = ClaudeCode()
