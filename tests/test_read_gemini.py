"""Gemini CLI reader (FORMATS.md §5): chat JSONL, legacy chat JSON, stream-json, and the refused prompt log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.errors import InputError
from pipeline.transcripts import read_transcript
from pipeline.transcripts.detect import detect_format

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "gemini"
CORPUS = ROOT.parent / "shared" / "corpus"
CWD = "/home/dev/weather-cli"


def _kinds(t) -> Counter:
    return Counter(e.kind for e in t.events)


def _write(tmp_path: Path, records: list, name: str = "session.jsonl", tail: bytes = b"") -> str:
    path = tmp_path / name
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n" + tail)
    return str(path)


HEADER = {"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": "2026-05-01T10:00:00.000Z",
          "lastUpdated": "2026-05-01T10:00:00.000Z", "kind": "main"}


def _user(ident: str, text: str, n: int = 1) -> dict:
    return {"id": ident, "timestamp": f"2026-05-01T10:00:{n:02d}.000Z", "type": "user", "content": [{"text": text}]}


def _gemini(ident: str, text: str, n: int = 2, **extra) -> dict:
    return {"id": ident, "timestamp": f"2026-05-01T10:00:{n:02d}.000Z", "type": "gemini", "content": text, **extra}


# --- the generated fixtures ---------------------------------------------------------------------------------


def test_chat_jsonl_fixture():
    t = read_transcript(str(FIX / "session.jsonl"))
    assert (t.meta.harness, t.meta.format) == ("gemini", "gemini-chat-jsonl")
    assert t.meta.cwd == CWD  # from the <session_context> preamble in the checkpoint
    assert t.meta.model == "gemini-2.5-pro" and t.meta.start_time == "2026-05-12T08:30:00.000Z"
    assert t.report.skipped_lines == [] and t.report.unknown_types == Counter()
    assert t.report.ignored == Counter({"superseded_record": 5, "rewound_message": 2, "notice:info": 1,
                                        "notice:error": 1, "compression_ack": 1, "session_context": 1})
    assert _kinds(t) == Counter({"tool_call": 7, "tool_result": 6, "assistant_text": 4, "user_prompt": 3,
                                 "reasoning": 2, "todo_list": 1, "compaction": 1})
    prompts = [e.text for e in t.events if e.kind == "user_prompt"]
    assert prompts[0].endswith("default metric @cli.py")  # displayContent, not the expanded @file content
    assert "--unit-system" not in " ".join(e.text for e in t.events)  # rewound away
    # first-seen order: the test run's record was updated after the next prompt appeared, it stays before it
    kinds = [(e.kind, e.tool_name) for e in t.events]
    assert kinds.index(("tool_call", "run_shell_command")) < kinds.index(("user_prompt", None), 1)
    results = {e.call_id: e for e in t.events if e.kind == "tool_result"}
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert [c.target for c in calls] == [f"{CWD}/cli.py", f"{CWD}/cli.py", "pytest -q tests/test_cli.py",
                                         f"{CWD}/cli.py", "pytest -q", f"{CWD}/CHANGELOG.md", f"{CWD}/README.md"]
    assert [results[c.call_id].is_error for c in calls if c.call_id in results] == [
        False, False, True, False, False, True]  # Exit Code: 1, cancelled write
    assert calls[-1].target == f"{CWD}/README.md" and calls[-1].call_id not in results  # still executing
    assert results[calls[0].call_id].text.startswith("import click")  # the real output, not the masked copy
    (todo,) = [e for e in t.events if e.kind == "todo_list"]
    assert [(i.status, i.content) for i in todo.todos][2] == ("in_progress", "Document the flag in the README")
    (summary,) = [e for e in t.events if e.kind == "compaction"]
    assert summary.text.startswith("<state_snapshot>")


def test_legacy_chat_json_fixture():
    t = read_transcript(str(FIX / "session-legacy.json"))
    assert t.meta.format == "gemini-chat-json"
    assert t.meta.session_id and t.meta.start_time == "2026-01-20T15:00:00.000Z"
    assert t.report.records == 5 and t.report.ignored == Counter({"notice:info": 1})
    assert _kinds(t) == Counter({"user_prompt": 2, "assistant_text": 2, "tool_call": 2, "tool_result": 2,
                                 "reasoning": 1})
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert [c.target for c in calls] == [f"{CWD}/cli.py", "pytest -q"]  # absolute_path (older read_file)
    assert [e.is_error for e in t.events if e.kind == "tool_result"] == [False, True]
    assert [e.line for e in t.events if e.kind == "user_prompt"] == [1, 4]  # message numbers


def test_stream_json_fixture():
    t = read_transcript(str(FIX / "stream.jsonl"))
    assert t.meta.format == "gemini-stream-json" and t.meta.model == "gemini-2.5-pro"
    texts = [e.text for e in t.events if e.kind == "assistant_text"]
    assert texts == ["Running the suite.", "One test fails: test_forecast_units_default."]  # deltas joined
    results = [e for e in t.events if e.kind == "tool_result"]
    assert [(r.tool_name, r.is_error) for r in results] == [("run_shell_command", False), ("read_file", True)]
    assert results[1].text.startswith("File not found:")


def test_prompt_log_is_refused_not_read_as_claude_code():
    path = FIX / "logs.json"
    assert detect_format(str(path)) == "gemini-prompt-log"
    with pytest.raises(InputError) as info:
        read_transcript(str(path))
    assert info.value.exit_code == 2
    assert "not a session transcript (a Gemini CLI prompt log" in str(info.value)


def test_one_line_prompt_log_is_refused_too(tmp_path):
    path = tmp_path / "logs.json"
    path.write_bytes(orjson.dumps([{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi",
                                    "timestamp": "2026-05-01T10:00:00.000Z"}]))
    assert detect_format(str(path)) == "gemini-prompt-log"


def test_claude_code_json_array_still_detected(tmp_path):
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps([{"parentUuid": None, "sessionId": "s", "type": "user", "uuid": "u1",
                                    "message": {"role": "user", "content": "hi"}}]))
    assert detect_format(str(path)) == "claude-code-json-array"


# --- JSONL rules --------------------------------------------------------------------------------------------


def test_later_record_wins_in_first_seen_order(tmp_path):
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "make"}, "status": "success",
            "timestamp": "2026-05-01T10:00:05.000Z",
            "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                             "response": {"output": "Output: ok"}}}]}
    path = _write(tmp_path, [
        HEADER, _user("u1", "build it"), _gemini("g1", "Building."), {"$set": {"lastUpdated": "x"}},
        _user("u2", "and test it", 3), _gemini("g1", "Building.", toolCalls=[call]),
        {"$set": {"lastUpdated": "2026-05-01T10:00:09.000Z"}},
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "build it"), ("assistant_text", "Building."), ("tool_call", "command: make"),
        ("tool_result", "Output: ok"), ("user_prompt", "and test it")]
    assert [e.line for e in t.events] == [2, 6, 6, 6, 5]
    assert [e.index for e in t.events] == list(range(5))
    assert t.meta.end_time == "2026-05-01T10:00:09.000Z"
    assert t.report.ignored["superseded_record"] == 1


def test_rewind_to_an_unknown_id_drops_everything_before(tmp_path):
    path = _write(tmp_path, [HEADER, _user("u1", "one"), {"$rewindTo": "nope"}, _user("u2", "two", 4)])
    assert [e.text for e in read_transcript(path).events] == ["two"]


def test_bad_lines_skipped_and_counted(tmp_path):
    path = _write(tmp_path, [HEADER, _user("u1", "first")], tail=b'{"id": "u2", "type": "us\n' +
                  orjson.dumps(_user("u3", "third")) + b"\n" + b'{"id": "u4", "ty')
    t = read_transcript(path, warn=False)
    assert [e.text for e in t.events] == ["first", "third"]
    assert t.report.skipped_lines == [3, 5] and t.report.records == 3


def test_damaged_header_still_gemini(tmp_path):
    path = _write(tmp_path, ["garbage", _user("u1", "first"), {"$set": {"lastUpdated": "x"}}])
    assert detect_format(path) == "gemini-chat-jsonl"


def test_subagent_kind_and_tool_error_response(tmp_path):
    call = {"id": "c1", "name": "read_file", "args": {"file_path": "/x/a.py"}, "status": "error",
            "result": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"error": "denied"}}}]}
    path = _write(tmp_path, [dict(HEADER, kind="subagent"), _gemini("g1", "", toolCalls=[call])])
    t = read_transcript(path)
    assert t.meta.version == "(subagent)"
    assert [(e.kind, e.is_error, e.text) for e in t.events] == [
        ("tool_call", False, "file_path: /x/a.py"), ("tool_result", True, "denied")]


def test_one_line_session_object_is_read(tmp_path):
    doc = dict(HEADER, messages=[{"type": "user", "content": "hi"}, _gemini("g1", "hello")])
    path = _write(tmp_path, [doc], name="session.json")
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [("user_prompt", "hi"), ("assistant_text", "hello")]


def test_big_legacy_object_meta_read_from_the_head(tmp_path):
    messages = [_user(f"u{n}", "x" * 1000, n % 60) for n in range(300)]
    path = tmp_path / "session.json"
    path.write_text(orjson.dumps(dict(HEADER, messages=messages), option=orjson.OPT_INDENT_2).decode())
    t = read_transcript(str(path))
    assert t.meta.format == "gemini-chat-json" and t.meta.session_id == "s-1"
    assert _kinds(t) == Counter({"user_prompt": 300})


# --- the real chat JSONL (../shared/corpus, used by path) ----------------------------------------------------


@pytest.mark.corpus
def test_corpus_chat_jsonl():
    path = CORPUS / "gemini-cli-chat.jsonl"
    if not path.exists():
        pytest.skip("corpus not present")
    t = read_transcript(str(path))
    assert (t.meta.harness, t.meta.format) == ("gemini", "gemini-chat-jsonl")
    assert t.meta.session_id == "16a02704-6391-4649-8aab-cd8ac592ff4f"
    assert t.meta.model == "gemini-2.5-flash-lite" and t.meta.cwd == "/home/dev"  # from the tools' resolved paths
    assert (t.meta.start_time, t.meta.end_time) == ("2026-04-25T13:04:08.408Z", "2026-04-25T13:18:44.079Z")
    # 83 lines: header, 32 $set, 50 message records (7 user, 43 gemini) for 32 ids: 18 re-appended with toolCalls
    assert t.report.records == 83 and t.report.skipped_lines == [] and t.report.unknown_types == Counter()
    assert t.report.ignored == Counter({"superseded_record": 18})
    assert _kinds(t) == Counter({"assistant_text": 19, "tool_call": 19, "tool_result": 19, "user_prompt": 7,
                                 "reasoning": 7})
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert Counter(c.tool_name for c in calls) == Counter(
        {"run_shell_command": 9, "glob": 4, "read_file": 2, "replace": 2, "list_directory": 2})
    assert calls[0].target == "src/data/vocabContent.ts"
    assert calls[-1].target.startswith("git remote add origin https://github.com/dev/tp-tutor.git")
    errors = [e for e in t.events if e.kind == "tool_result" and e.is_error]
    assert [e.line for e in errors] == [10, 26, 36, 68]  # read_file status error + 3 git runs with Exit Code: 128
    prompts = [e for e in t.events if e.kind == "user_prompt"]
    assert [p.line for p in prompts] == [2, 6, 13, 29, 39, 49, 71]
    assert t.events[-1].kind == "assistant_text"
    assert t.events[-1].text == "The remote origin has been set. Next, I will stage all changes."


def test_torn_header_line_is_still_chat_jsonl(tmp_path):
    """Found by the fuzz test: a torn header still names sessionId and projectHash, and once passed for the
    legacy JSON object (which then read nothing)."""
    data = (FIX / "session.jsonl").read_bytes()
    end = data.index(b"\n")
    path = tmp_path / "session.jsonl"
    path.write_bytes(data[: end // 2] + data[end:])
    assert detect_format(str(path)) == "gemini-chat-jsonl"
    t = read_transcript(str(path), warn=False)
    assert t.report.skipped_lines == [1] and _kinds(t)["user_prompt"] == 3
