"""Errors a harness reports itself (no tool call asked for them) are environment facts: Copilot CLI's
``session.error`` (MCP servers that do not start, a model list it cannot load), counted once with how often."""

from __future__ import annotations

import json

from pipeline.stages.rules import facts
from pipeline.stages.rules.scan import scan
from pipeline.transcripts import read_transcript
from rules_builder import B


def _copilot(tmp_path, errors: list[tuple[str, str]]) -> str:
    rows = [{"type": "session.start", "data": {"sessionId": "c1", "context": {"cwd": "/home/dev/app"}},
             "id": "e0", "timestamp": "2026-06-08T01:48:00.000Z"}]
    for n, (kind, message) in enumerate(errors, 1):
        rows.append({"type": "session.error", "data": {"errorType": kind, "message": message}, "id": f"e{n}",
                     "timestamp": f"2026-06-08T01:49:{n:02d}.000Z"})
    rows.append({"type": "user.message", "data": {"content": "oi"}, "id": "u", "timestamp": "2026-06-08T01:50:00.000Z"})
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_copilot_session_errors_become_one_fact_each_with_their_count(tmp_path):
    mcp = "Failed to start MCP Servers: Invalid MCP server configuration: mcpServers: Required"
    path = _copilot(tmp_path, [("mcp", mcp), ("mcp", mcp), ("model", "Error loading model list: Not authenticated"),
                               ("mcp", mcp)])
    out = [f.text for f in facts.build(scan(read_transcript(path, warn=False)))]
    assert out == [f"Copilot CLI reported (3 times): mcp error: {mcp}",
                   "Copilot CLI reported: model error: Error loading model list: Not authenticated"]


def test_a_harness_error_of_another_harness_is_named_by_its_tool():
    b = B()
    b.user("Fix the flaky login test.")
    b.add("tool_result", "API Error: 529 overloaded_error", tool_name="claude-code", is_error=True)
    b.add("tool_result", "Quota exceeded for gemini-2.5-pro; switching to flash", tool_name="gemini-cli", is_error=True)
    out = [f.text for f in facts.build(scan(b.build()))]
    assert "claude-code reported: API Error: 529 overloaded_error" in out
    assert "gemini-cli reported: Quota exceeded for gemini-2.5-pro; switching to flash" in out


def test_a_failed_result_of_a_call_is_not_a_harness_error():
    b = B()
    b.user("Run the tests.")
    b.bash("pytest -q", "FAILED tests/test_login.py::test_expired - AssertionError", error=True)
    assert not any("reported" in f.text for f in facts.build(scan(b.build())))


def test_a_failed_result_of_a_todo_write_is_not_a_harness_error():
    """Corpus input: a TodoWrite call is a todo_list event, so its failed result has no tool_call before it."""
    b = B()
    b.user("Plan the migration.")
    b.todos(("Write the migration", "pending"))
    b.add("tool_result", "InputValidationError: priority 'critical' is not one of high, medium, low",
          tool_name="TodoWrite", is_error=True, call_id="toolu_01")
    assert not any("reported" in f.text for f in facts.build(scan(b.build())))
