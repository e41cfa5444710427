"""Copilot CLI reader (FORMATS.md §2, §6, §7): the real corpus files and one hand-written input per rule."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.copilot import clean_prompt

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
EVENTS_1059 = CORPUS / "copilot-cli-1.0.59-events.jsonl"
LEGACY = CORPUS / "copilot-cli-legacy.jsonl"


def _kinds(transcript) -> Counter:
    return Counter(e.kind for e in transcript.events)


def _write(tmp_path: Path, records: list[dict], name: str = "events.jsonl") -> str:
    path = tmp_path / name
    lines = []
    for number, (rtype, data) in enumerate(records, 1):
        lines.append(orjson.dumps({
            "type": rtype, "data": data, "id": f"e{number}",
            "timestamp": f"2026-09-02T09:00:{number:02d}.000Z", "parentId": f"e{number - 1}" if number > 1 else None,
        }))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


START = ("session.start", {
    "sessionId": "3f0c-test", "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.59",
    "startTime": "2026-09-02T09:00:00.000Z",
    "context": {"cwd": "/home/dev/tool", "branch": "main", "repository": "dev/tool"},
})
LEGACY_START = ("session.start", {"sessionId": "legacy-1", "version": 1, "producer": "copilot-agent",
                                  "copilotVersion": "unknown", "startTime": "2025-12-02T08:26:25.611Z"})


def _assistant(content="", requests=(), **extra) -> tuple[str, dict]:
    return ("assistant.message", {"messageId": "m", "content": content, "toolRequests": list(requests), **extra})


def _done(call_id: str, content: str | None = None, error: str | None = None, **extra) -> tuple[str, dict]:
    if error is not None:
        return ("tool.execution_complete", {"toolCallId": call_id, "success": False,
                                            "error": {"message": error, "code": "failure"}, **extra})
    return ("tool.execution_complete", {"toolCallId": call_id, "success": True, "result": {"content": content},
                                        **extra})


# --- corpus ---------------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_1059_events_meta_and_events():
    t = read_transcript(str(EVENTS_1059))
    assert t.meta.format == "copilot-events" and t.meta.harness == "copilot"
    assert t.report.skipped_lines == [] and t.report.records == 15
    assert t.report.unknown_types == Counter()
    assert t.meta.session_id == "9a493a94-a307-489e-8bc7-d16f4afcd992"
    assert t.meta.cwd == "/Users/dev/.dotfiles/.config"
    assert t.meta.git_branch == "main"
    assert t.meta.repo == "XEFF09/dotfiles"
    assert t.meta.version == "1.0.59"
    assert t.meta.model == "claude-sonnet-4.6"
    assert t.meta.start_time == "2026-06-08T01:48:57.913Z"
    assert t.meta.end_time == "2026-06-08T01:58:22.764Z"  # the session.shutdown line
    mcp = ("mcp error: Failed to start MCP Servers: Error: Failed to read configuration from "
           "/Users/dev/.copilot/mcp-config.json: Error: Invalid MCP server configuration: mcpServers: Required")
    assert [(e.kind, e.text, e.line) for e in t.events] == [
        ("tool_result", mcp, 2),  # session.error: the CLI's own failure, a failed result no call asked for
        ("tool_result", mcp, 5),
        ("user_prompt", "hi", 8),  # not the transformedContent with <current_datetime> and <system_reminder>
        ("assistant_text", "Hi! How can I help you today?", 10),
        ("tool_result", "model error: Error loading model list: Error: Not authenticated", 12),
        ("tool_result", mcp, 14),
    ]
    assert all(e.is_error and e.tool_name == "copilot-cli" and e.call_id is None
               for e in t.events if e.kind == "tool_result")


@pytest.mark.corpus
def test_corpus_legacy_counts():
    t = read_transcript(str(LEGACY))
    assert t.meta.format == "copilot-legacy"
    assert t.report.skipped_lines == [] and t.report.records == 115
    assert t.report.unknown_types == Counter()
    # 27 results of calls and 13 session.error records (model_call 400s, a query that gave up after 5 retries)
    assert _kinds(t) == Counter({"tool_call": 28, "tool_result": 40, "user_prompt": 5, "assistant_text": 3})
    assert sum(e.tool_name == "copilot-cli" for e in t.events) == 13
    assert Counter(e.tool_name for e in t.events if e.kind == "tool_call") == Counter(
        {"str_replace_editor": 17, "powershell": 10, "read_powershell": 1}
    )
    assert t.meta.session_id == "27d7ef99-f7c7-43eb-8599-cb469623c8f7"
    assert t.meta.cwd == "c:\\Users\\dev\\Desktop\\Projetos\\HAWZX-AI"  # from the system.message
    assert t.meta.version == "0.0.343"  # copilotVersion is "unknown"; the system prompt has the number
    assert t.meta.git_branch is None and t.meta.model is None
    assert t.meta.start_time == "2025-12-02T08:26:25.611Z"
    assert all(e.timestamp for e in t.events)


@pytest.mark.corpus
def test_corpus_legacy_prompts_are_stripped_of_datetime():
    t = read_transcript(str(LEGACY))
    prompts = [e.text for e in t.events if e.kind == "user_prompt"]
    assert prompts[0] == "qual é melhor pra criar o programa do guia completo voce ou o gemini?"
    assert prompts[1] == "crie entao o programa"
    assert prompts[4] == "oi"
    assert prompts[2].startswith("egion: us-east4]") and prompts[2].endswith("https://railpack.com")
    assert prompts[3].endswith("https://railpack.com")  # "\r\n\r\n\n\n<current_datetime>…" removed
    assert not any("current_datetime" in p for p in prompts)


@pytest.mark.corpus
def test_corpus_legacy_tool_calls_results_and_the_error():
    t = read_transcript(str(LEGACY))
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert not any(e.target == "unknown" for e in calls)
    assert calls[0].target == "c:\\Users\\dev\\Desktop\\Projetos\\HAWZX-AI"
    assert calls[2].target == "python --version"
    assert calls[-1].target == "curl http://localhost:8000/"
    read_ps = next(e for e in calls if e.tool_name == "read_powershell")
    assert read_ps.target == "backend"  # {"delay": 5, "sessionId": "backend"}
    errors = [e for e in t.events if e.kind == "tool_result" and e.is_error and e.tool_name != "copilot-cli"]
    assert [(e.call_id, e.tool_name, e.text, e.line) for e in errors] == [
        ("tooluse_bM-c9YC2TF69Nc_JwBeWjw", "str_replace_editor", "Path already exists", 64)
    ]
    failed_call = next(e for e in calls if e.call_id == "tooluse_bM-c9YC2TF69Nc_JwBeWjw")
    assert failed_call.target.endswith("HAWZX-AI\\.gitignore")
    # one call (railway.json) never got its execution_complete
    result_ids = {e.call_id for e in t.events if e.kind == "tool_result"}
    assert [e.target.rsplit("\\", 1)[-1] for e in calls if e.call_id not in result_ids] == ["railway.json"]
    # each result comes after its call
    position = {e.call_id: e.index for e in calls}
    assert all(position[e.call_id] < e.index for e in t.events if e.kind == "tool_result" and e.call_id)


# --- hand-written inputs, one per rule --------------------------------------------------------------------------


def test_object_and_raw_string_arguments(tmp_path):
    patch = "*** Begin Patch\n*** Update File: src/export.py\n@@\n-rows = list(q)\n+rows = iter(q)\n*** End Patch"
    path = _write(tmp_path, [
        START,
        ("user.message", {"content": "Make the export stream rows", "transformedContent": "<current_datetime>x"}),
        _assistant("", [
            {"toolCallId": "c1", "name": "view", "arguments": {"path": "/home/dev/tool/export.py"}, "type": "function"},
            {"toolCallId": "c2", "name": "apply_patch", "arguments": patch, "type": "custom"},
        ]),
        ("tool.execution_start", {"toolCallId": "c1", "toolName": "view", "arguments": {"path": "/x"}}),
        _done("c1", "1. import csv"),
        _done("c2", "Applied"),
    ])
    t = read_transcript(path)
    assert [e.kind for e in t.events] == ["user_prompt", "tool_call", "tool_call", "tool_result", "tool_result"]
    assert t.events[0].text == "Make the export stream rows"
    view, apply = t.events[1], t.events[2]
    assert (view.tool_name, view.target) == ("view", "/home/dev/tool/export.py")
    assert view.text == "path: /home/dev/tool/export.py"
    assert (apply.tool_name, apply.target, apply.text) == ("apply_patch", "src/export.py", patch)
    assert [(e.call_id, e.tool_name, e.text) for e in t.events[3:]] == [("c1", "view", "1. import csv"),
                                                                      ("c2", "apply_patch", "Applied")]
    assert t.events[1].timestamp == "2026-09-02T09:00:03.000Z"


def test_success_false_is_an_error_with_the_error_message(tmp_path):
    path = _write(tmp_path, [
        START,
        _assistant("", [{"toolCallId": "c1", "name": "view", "arguments": {"path": "/nope.py"}}]),
        _done("c1", error="Path does not exist"),
    ])
    t = read_transcript(path)
    result = t.events[-1]
    assert (result.kind, result.is_error, result.text, result.tool_name) == (
        "tool_result", True, "Path does not exist", "view")


def test_subagent_messages_are_excluded_and_task_result_is_a_subagent_result(tmp_path):
    path = _write(tmp_path, [
        START,
        ("user.message", {"content": "Find where rows are buffered"}),
        _assistant("I'll ask an explorer.", [{
            "toolCallId": "t1", "name": "task", "type": "function",
            "arguments": {"name": "find-buffering", "description": "Find row buffering", "agent_type": "explore",
                          "prompt": "Search src/ for list(q) calls"},
        }]),
        ("subagent.started", {"toolCallId": "t1", "agentName": "explore", "agentDisplayName": "Explore"}),
        _assistant("Looking in src/", [{"toolCallId": "s1", "name": "grep", "arguments": {"pattern": "list\\("}}],
                   parentToolCallId="t1"),
        _done("s1", "src/export.py:3", parentToolCallId="t1"),
        _assistant("Found it in export.py", [], parentToolCallId="t1"),
        ("subagent.completed", {"toolCallId": "t1", "agentName": "explore", "totalToolCalls": 1}),
        _done("t1", "Rows are buffered in src/export.py line 3."),
        _assistant("The buffering is in export.py."),
    ])
    t = read_transcript(path)
    assert [e.kind for e in t.events] == [
        "user_prompt", "assistant_text", "subagent_call", "subagent_result", "assistant_text"]
    call, result = t.events[2], t.events[3]
    assert (call.tool_name, call.target, call.agent, call.text, call.call_id) == (
        "task", "Find row buffering", "explore", "Search src/ for list(q) calls", "t1")
    assert (result.call_id, result.agent, result.text, result.is_error) == (
        "t1", "explore", "Rows are buffered in src/export.py line 3.", False)
    assert t.report.ignored["subagent_message"] == 2
    assert t.report.ignored["subagent_tool_result"] == 0  # s1 was dropped with its message
    assert not any("Looking in src/" in e.text or e.call_id == "s1" for e in t.events)


def test_subagent_name_from_subagent_completed_when_the_call_has_no_agent_type(tmp_path):
    path = _write(tmp_path, [
        START,
        _assistant("", [{"toolCallId": "t1", "name": "task", "arguments": {"name": "review", "prompt": "Review"}}]),
        _done("t1", "LGTM"),
        ("subagent.completed", {"toolCallId": "t1", "agentName": "code-review"}),
        _done("x9", "orphan result", parentToolCallId="t1"),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.agent, e.target) for e in t.events] == [
        ("subagent_call", None, "review"), ("subagent_result", "code-review", None)]
    assert t.report.ignored["subagent_tool_result"] == 1


def test_report_intent_is_skipped_and_counted(tmp_path):
    path = _write(tmp_path, [
        START,
        _assistant("", [
            {"toolCallId": "r1", "name": "report_intent", "arguments": {"intent": "Exploring codebase"}},
            {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls src", "description": "list"}},
        ]),
        _done("r1", "Intent logged"),
        _done("c1", "export.py"),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.tool_name, e.target) for e in t.events] == [
        ("tool_call", "bash", "ls src"), ("tool_result", "bash", None)]
    assert t.report.ignored["report_intent"] == 1


def test_legacy_datetime_suffix_null_content_truncation_and_system_cwd(tmp_path):
    system = "You are Copilot.\nVersion number: 0.0.343\n* Current working directory: c:\\Users\\dev\\shop\n* More"
    path = _write(tmp_path, [
        LEGACY_START,
        ("user.message", {"content": "fix the cart\n\n<current_datetime>2025-12-02T08:26:25.627Z</current_datetime>",
                          "attachments": []}),
        ("system.message", {"role": "system", "content": system}),
        ("user.message", {"content": None, "attachments": []}),
        ("session.truncation", {"tokenLimit": 128000, "messagesRemovedDuringTruncation": 12,
                                "performedBy": "BasicTruncator"}),
    ], name="legacy.jsonl")
    t = read_transcript(path)
    assert t.meta.format == "copilot-legacy"
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "fix the cart"),
        ("compaction", "truncation: 12 messages removed (token limit 128000)"),
    ]
    assert (t.meta.cwd, t.meta.version) == ("c:\\Users\\dev\\shop", "0.0.343")


def test_compaction_reasoning_abort_and_unknown_types(tmp_path):
    path = _write(tmp_path, [
        START,
        ("session.model_change", {"newModel": "gpt-5.2"}),
        _assistant("Plan: stream rows.", [], reasoningText="The user wants streaming.", reasoningOpaque="xx",
                   model="gpt-5.2-later"),
        ("session.compaction_start", {"systemTokens": 9000, "conversationTokens": 120000}),
        ("session.compaction_complete", {"success": True, "summaryContent": "<overview>Streaming export</overview>",
                                         "checkpointNumber": 1}),
        ("abort", {"reason": "user_initiated"}),
        ("session.brand_new_event", {"x": 1}),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("reasoning", "The user wants streaming."),
        ("assistant_text", "Plan: stream rows."),
        ("compaction", "<overview>Streaming export</overview>"),
    ]
    assert t.meta.model == "gpt-5.2"  # the first model named
    assert t.report.ignored["abort"] == 1
    assert t.report.unknown_types == Counter({"session.brand_new_event": 1})


def test_blank_assistant_content_gives_no_text_event(tmp_path):
    path = _write(tmp_path, [START, _assistant("\n\n", [{"toolCallId": "c", "name": "glob",
                                                         "arguments": {"pattern": "**/*.py"}}])])
    t = read_transcript(path)
    assert [(e.kind, e.target) for e in t.events] == [("tool_call", "**/*.py")]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("hi\n\n<current_datetime>2025-12-02T08:26:25.627Z</current_datetime>", "hi"),
        ("a\r\n\r\n\n\n<current_datetime>2025-12-02T08:45:08.400Z</current_datetime>", "a"),
        ("keep <current_datetime> in the middle", "keep <current_datetime> in the middle"),
        (None, ""),
    ],
)
def test_clean_prompt(content, expected):
    assert clean_prompt(content) == expected
