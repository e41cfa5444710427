"""Saved-session documents: Copilot CLI's legacy ``history-session-state`` file and Gemini CLI's ``/chat save``
checkpoint (``pipeline.transcripts.copilot_history`` / ``gemini_checkpoint``): detection, events, error flags,
damaged files, unknown records."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pipeline.errors import InputError
from pipeline.transcripts import read_transcript
from pipeline.transcripts.copilot_history import exit_failed, prompt_text
from pipeline.transcripts.depth import JsonTooDeep
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.gemini_checkpoint import call_time

ROOT = Path(__file__).resolve().parents[1]
HISTORY = ROOT / "fixtures" / "copilot" / "history-session.json"
UNITS = ROOT / "fixtures" / "gemini" / "checkpoint-units.json"
DOCS = ROOT / "fixtures" / "gemini" / "checkpoint-docs.json"
CSV = "/home/dev/csv-tools"
WEATHER = "/home/dev/weather-cli"


def _kinds(t) -> Counter:
    return Counter(e.kind for e in t.events)


def _write(tmp_path: Path, doc: object, name: str, indent: int | None = 2) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


# --- detection -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "fmt"), [(HISTORY, "copilot-history"), (UNITS, "gemini-checkpoint"),
                                           (DOCS, "gemini-checkpoint")])
def test_detected_indented_on_one_line_and_after_a_bom(tmp_path, path, fmt):
    assert detect_format(str(path)) == fmt
    doc = _load(path)
    assert detect_format(_write(tmp_path, doc, "one-line.json", indent=None)) == fmt
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert detect_format(str(bom)) == fmt
    assert len(read_transcript(str(bom)).events) == len(read_transcript(str(path)).events)


def test_look_alikes_are_not_taken(tmp_path):
    # a "history" that holds no Gemini Content, an empty one, a sessionId without chatMessages/timeline
    assert detect_format(_write(tmp_path, {"history": [{"cmd": "ls"}]}, "a.json")) == "unknown"
    assert detect_format(_write(tmp_path, {"history": [], "authType": "oauth-personal"}, "b.json")) == "unknown"
    assert detect_format(_write(tmp_path, {"sessionId": "x", "entries": []}, "c.json")) == "unknown"
    # an array of {role, parts} with an opencode info stays opencode
    assert detect_format(_write(tmp_path, [{"info": {"role": "user"}, "role": "user", "parts": []}],
                                "d.json")) == "opencode-messages"
    with pytest.raises(InputError, match="unknown transcript format .*history-session-state JSON.*/chat save"):
        read_transcript(_write(tmp_path, {"history": [{"cmd": "ls"}]}, "e.json"), warn=False)


# --- Copilot CLI history-session-state ---------------------------------------------------------------------------


def test_copilot_history_events_from_the_timeline():
    t = read_transcript(str(HISTORY))
    meta = t.meta
    assert (meta.harness, meta.format, meta.cwd, meta.model) == ("copilot", "copilot-history", CSV, "claude-sonnet-4.5")
    assert meta.session_id == _load(HISTORY)["sessionId"]
    assert (meta.start_time, meta.end_time) == ("2025-10-09T13:20:00.000Z", t.events[-1].timestamp)
    assert meta.version is None and meta.git_branch is None  # the file stores neither
    assert _kinds(t) == Counter({"tool_call": 8, "tool_result": 8, "user_prompt": 4, "assistant_text": 4})
    assert t.report.records == 19 and t.report.skipped_lines == [] and t.report.unknown_types == Counter()
    assert t.report.ignored == Counter({"notice:info": 2})
    prompts = [e.text for e in t.events if e.kind == "user_prompt"]
    assert prompts[1] == "keep it stdlib only, no pandas: the tool ships as a single file"
    assert not any("<reminder>" in p for p in prompts)  # the typed text, not what the model saw
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert [(c.tool_name, c.target) for c in calls[:2]] == [
        ("str_replace_editor", f"{CSV}/src/csvtool/merge.py"), ("bash", "python -m pytest -q tests/test_merge.py")]
    assert all(c.call_id and c.call_id.startswith("toolu_") for c in calls)
    results = {e.call_id: e for e in t.events if e.kind == "tool_result" and e.call_id}
    assert [results[c.call_id].is_error for c in calls[:-1]] == [False, True, True, False, True, False, True]
    flagged = [results[c.call_id].text for c in calls[:-1] if results[c.call_id].is_error]
    assert flagged[0].endswith("1 failed, 9 passed in 0.21s\n<exited with exit code 1>")  # ran, exit code 1
    assert flagged[1].startswith("No replacement was performed")  # failure
    assert flagged[2].startswith("Permission to run this tool was denied")  # denied
    assert flagged[3] == "rejected by the user"  # rejected, no log
    assert calls[-1].target == "python -m pytest -q" and calls[-1].call_id not in results  # still running
    (harness_error,) = [e for e in t.events if e.kind == "tool_result" and e.call_id is None]
    assert harness_error.tool_name == "copilot-cli" and harness_error.is_error
    assert harness_error.text.startswith("Model call failed: 500")
    assert [e.line for e in t.events[:3]] == [3, 4, 5]  # timeline entry numbers


def _without_timeline(tmp_path: Path, name: str = "chat.json") -> tuple[dict, str]:
    doc = _load(HISTORY)
    doc["timeline"] = []
    return doc, _write(tmp_path, doc, name)


def test_copilot_history_without_timeline_reads_the_chat_messages(tmp_path):
    doc, path = _without_timeline(tmp_path)
    doc["chatMessages"].insert(0, {"role": "system", "content": "You are the GitHub Copilot CLI…"})
    doc["chatMessages"].append({"role": "tool", "tool_call_id": doc["chatMessages"][-1]["tool_calls"][0]["id"],
                                "content": "The execution of this tool, or a previous tool was interrupted."})
    t = read_transcript(_write(tmp_path, doc, "chat.json"))
    assert t.meta.format == "copilot-history" and t.meta.model == "claude-sonnet-4.5" and t.meta.cwd is None
    assert t.meta.end_time is None or t.meta.end_time == t.meta.start_time  # chat messages carry no times
    assert [e.text for e in t.events if e.kind == "user_prompt"][0].startswith("csvtool merge drops rows")
    assert all("<reminder>" not in e.text for e in t.events if e.kind == "user_prompt")
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert len(calls) == 8 and calls[1].target == "python -m pytest -q tests/test_merge.py"  # JSON-string args parsed
    results = [e for e in t.events if e.kind == "tool_result"]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert [r.tool_name for r in results[:2]] == ["str_replace_editor", "bash"]
    # no error flag in chat messages: only a non-zero exit code and the interruption text count
    assert [r.is_error for r in results] == [False, True, False, False, False, False, False, True]
    assert t.report.ignored == Counter({"system_message": 1}) and t.report.records == 25


def test_copilot_history_truncated(tmp_path):
    raw = HISTORY.read_bytes()
    inside_timeline = raw[: raw.rindex(b"\"Permission to run this tool")]  # the timeline comes last
    cut = tmp_path / "cut-timeline.json"
    cut.write_bytes(inside_timeline)
    t = read_transcript(str(cut), warn=False)
    assert detect_format(str(cut)) == "copilot-history"
    assert t.report.skipped_lines == [11]  # the timeline entry the file ends in
    assert t.meta.session_id and t.meta.cwd == CSV and (t.events[-1].kind, t.events[-1].line) == ("tool_result", 10)
    assert len([e for e in t.events if e.kind == "user_prompt"]) == 2
    assert t.meta.model is None  # selectedModel comes after the timeline

    inside_chat = tmp_path / "cut-chat.json"
    raw = Path(_without_timeline(tmp_path)[1]).read_bytes()
    inside_chat.write_bytes(raw[: raw.index(b"keep it stdlib only")])
    t = read_transcript(str(inside_chat), warn=False)
    assert [e.kind for e in t.events] == ["user_prompt", "assistant_text", "tool_call", "tool_result", "tool_call",
                                          "tool_result", "assistant_text", "tool_call", "tool_result"]
    assert t.report.skipped_lines == [10]  # counted in chat messages, like the events' lines


def test_copilot_history_unknown_entries_are_counted(tmp_path):
    doc = _load(HISTORY)
    doc["timeline"] += [
        {"id": "x1", "timestamp": "2025-10-09T14:00:00.000Z", "type": "plan_update", "text": "1. merge"},
        {"id": "x2", "timestamp": "2025-10-09T14:00:01.000Z", "type": "tool_call_completed", "callId": "c9",
         "name": "view", "arguments": {"path": "README.md"}, "result": {"type": "skipped", "log": "not run"}},
        {"id": "x3", "timestamp": "2025-10-09T14:00:02.000Z", "type": ["user"], "text": "?"},
        "not an entry",
    ]
    t = read_transcript(_write(tmp_path, doc, "odd.json"), warn=False)
    assert t.report.unknown_types == Counter({"timeline:plan_update": 1, "tool-result:skipped": 1, "timeline:None": 1})
    assert t.report.skipped_lines == [23]  # the string element
    last = t.events[-1]
    assert (last.kind, last.call_id, last.is_error, last.text) == ("tool_result", "c9", False, "not run")
    assert t.meta.end_time == "2025-10-09T14:00:02.000Z"


def test_copilot_prompt_text_and_exit_codes():
    assert prompt_text("fix it\n\n<reminder>\nCall tools together.\n</reminder>") == "fix it"
    assert prompt_text([{"type": "text", "text": "look at this"}, {"type": "image_url", "image_url": {"url": "x"}}]) \
        == "look at this"
    assert prompt_text("hi\n\n<current_datetime>2025-10-09T13:20:00Z</current_datetime>") == "hi"
    assert exit_failed("boom\n<exited with exit code 2>") and exit_failed("x\n<exited with exit code -1>\n")
    assert not exit_failed("ok\n<exited with exit code 0>")
    assert not exit_failed("<exited with exit code 1> was printed, then more output")  # only at the end


# --- Gemini CLI /chat save checkpoint ---------------------------------------------------------------------------


def test_gemini_checkpoint_array():
    t = read_transcript(str(UNITS))
    meta = t.meta
    assert (meta.harness, meta.format, meta.cwd, meta.session_id, meta.model) == (
        "gemini", "gemini-checkpoint", WEATHER, None, None)
    assert _kinds(t) == Counter({"tool_call": 4, "tool_result": 4, "user_prompt": 3, "assistant_text": 3})
    assert t.report.ignored == Counter({"session_context": 1, "context_ack": 1, "attachment": 1})
    assert t.report.unknown_types == Counter() and t.report.records == 12
    prompts = [e.text for e in t.events if e.kind == "user_prompt"]
    assert prompts[0].endswith("default metric @cli.py")  # the @file expansion left out
    assert prompts[2] == "this is what the failure looks like"  # the pasted image left out
    assert "Thanks for the context" not in " ".join(e.text for e in t.events)
    calls = [e for e in t.events if e.kind == "tool_call"]
    results = {e.call_id: e for e in t.events if e.kind == "tool_result"}
    # calls without ids take their result's id, and the time inside it
    assert [c.call_id.split("-")[0] for c in calls] == ["read_file", "replace", "run_shell_command", "read_many_files"]
    assert calls[0].timestamp == "2025-07-08T20:05:04.823Z" and calls[0].call_id.split("-")[1] == "1752005104823"
    assert [results[c.call_id].is_error for c in calls] == [False, True, True, False]  # cancelled, Exit Code: 1
    assert results[calls[1].call_id].text == "[Operation Cancelled] Reason: User did not allow tool call"
    many = results[calls[3].call_id].text
    assert many.startswith("Tool execution succeeded.\n--- tests/test_cli.py ---") and "test_fahrenheit_alias" in many
    assert [e.text for e in t.events if e.kind == "assistant_text"][1] == (
        "Keeping --fahrenheit as a hidden alias. Running the tests first.")  # adjacent text parts joined
    assert (meta.start_time, meta.end_time) == (calls[0].timestamp, calls[3].timestamp)
    assert [e.line for e in t.events[:3]] == [3, 4, 4]  # Content numbers


def test_gemini_checkpoint_object():
    t = read_transcript(str(DOCS))
    assert (t.meta.format, t.meta.cwd) == ("gemini-checkpoint", WEATHER)
    assert [e.kind for e in t.events] == ["compaction", "user_prompt", "reasoning", "todo_list", "tool_call",
                                          "tool_result", "assistant_text", "tool_call", "tool_result"]
    assert t.report.ignored == Counter({"session_context": 1, "compression_ack": 1})
    assert t.report.unknown_types == Counter({"part:executableCode": 1})
    todo = t.events[3]
    assert [(i.status, i.content) for i in todo.todos] == [("completed", "Add --units to forecast"),
                                                           ("in_progress", "Document the flag in the README")]
    assert todo.call_id == "write_todos__write_todos_1778577005621_0" and todo.timestamp == "2026-05-12T09:10:05.621Z"
    assert t.events[5].call_id == t.events[4].call_id and not t.events[5].is_error  # Exit Code: 0
    assert t.events[8].is_error and t.events[8].text == f"File not found: {WEATHER}/README.md"
    assert t.events[7].target == "README.md"


def test_gemini_checkpoint_truncated(tmp_path):
    raw = UNITS.read_bytes()
    cut = tmp_path / "checkpoint-cut.json"
    cut.write_bytes(raw[: raw.index(b"Keeping --fahrenheit")])
    assert detect_format(str(cut)) == "gemini-checkpoint"
    t = read_transcript(str(cut), warn=False)
    assert t.report.skipped_lines == [9]
    assert [e.kind for e in t.events][-1] == "user_prompt" and len(t.events) == 7


def test_gemini_checkpoint_unknown_roles_parts_and_unpaired_calls(tmp_path):
    history = [
        {"role": "user", "parts": [{"text": "list the files"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "list_directory", "args": {"path": "."}}},
                                    {"functionCall": {"name": "glob", "args": {"pattern": "*.py"}}},
                                    {"videoMetadata": {}, "fileData": {"fileUri": "gs://x"}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "glob", "response": {"output": "a.py"}}},
                                   {"functionResponse": {"name": "list_directory",
                                                         "response": {"error": {"message": "no such dir"}}}}]},
        {"role": "system", "parts": [{"text": "?"}]},
        {"role": "model", "parts": [{"codeExecutionResult": {"outcome": "OUTCOME_OK"}}, {"text": ""}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "orphan", "name": "x", "response": {"output": "y"}}}]},
        "not a content",
    ]
    t = read_transcript(_write(tmp_path, history, "checkpoint-odd.json"), warn=False)
    assert t.meta.format == "gemini-checkpoint"
    assert t.report.unknown_types == Counter({"role:system": 1, "part:codeExecutionResult": 1})
    assert t.report.ignored == Counter({"attachment": 1}) and t.report.skipped_lines == [7]
    calls = [e for e in t.events if e.kind == "tool_call"]
    results = [e for e in t.events if e.kind == "tool_result"]
    # paired by name in the next content, neither side had an id: made-up ids link them
    assert [c.call_id for c in calls] == ["checkpoint-call-2", "checkpoint-call-1"]
    assert [(r.tool_name, r.call_id, r.is_error, r.text) for r in results] == [
        ("glob", "checkpoint-call-1", False, "a.py"), ("list_directory", "checkpoint-call-2", True, "no such dir"),
        ("x", "orphan", False, "y")]
    assert all(e.timestamp is None for e in t.events)


def test_gemini_call_times():
    assert call_time("run_shell_command-1752005355323-e4d0961b6964b") == "2025-07-08T20:09:15.323Z"
    assert call_time("read_file__read_file_1778577016387_2") == "2026-05-12T09:10:16.387Z"
    assert call_time("synth_prompt-3_1778577016387_4") == "2026-05-12T09:10:16.387Z"
    assert call_time("call_abc123") is None and call_time("x-17520053553231-y") is None and call_time(None) is None


@pytest.mark.parametrize("text", [
    '{\n  "sessionId": "s",\n  "chatMessages": [],\n  "timeline": [' + "[" * 3000 + "]" * 3000 + "]\n}",
    '{\n  "sessionId": "s",\n  "chatMessages": [' + '{"a":' * 3000 + "1" + "}" * 3000 + '],\n  "timeline": []\n}',
    '[\n  {"role": "user", "parts": [{"text": "hi"}]},\n  ' + "[" * 3000 + "]" * 3000 + "\n]",
])
def test_documents_nested_too_deep_are_refused(tmp_path, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    with pytest.raises(JsonTooDeep, match="JSON nested deeper than 1024 levels"):
        read_transcript(str(path), warn=False)
