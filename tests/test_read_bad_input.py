"""Bad input through ``pipeline.transcripts.read_transcript`` (DESIGN.md "Transcript formats": input safety,
torn last line, unknown records never fatal; "Exit codes": 2 names the file)."""

from __future__ import annotations

import os
import random

import orjson
import pytest

from pipeline.errors import InputError
from pipeline.transcripts import read_transcript

SID = "0b6f1c2e-0000-4000-8000-00000000000a"


def line(content: str, n: int) -> bytes:
    return orjson.dumps({
        "parentUuid": None, "isSidechain": False, "type": "user", "sessionId": SID, "cwd": "/home/dev/app",
        "version": "2.0.55", "uuid": f"u{n}", "timestamp": f"2026-09-01T10:00:0{n}.000Z",
        "message": {"role": "user", "content": content},
    }) + b"\n"


def prompts(t):
    return [e.text for e in t.events if e.kind == "user_prompt"]


def expect_input_error(path, *words, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        read_transcript(str(path), **kwargs)
    assert info.value.exit_code == 2
    message = str(info.value)
    assert str(path) in message
    for word in words:
        assert word in message, message
    return info.value


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    expect_input_error(path, "unknown transcript format")


def test_blank_lines_only(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\n  \n\t\n")
    expect_input_error(path, "unknown transcript format")


def test_binary_file(tmp_path):
    path = tmp_path / "noise.jsonl"
    data = random.Random(7).randbytes(8192)
    assert data.lstrip()[:1] not in (b"{", b"[")
    path.write_bytes(data)
    expect_input_error(path, "unknown transcript format")


def test_json_object_of_another_tool(tmp_path):
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps({"conversationId": "s1", "createdAt": "2026-01-01T00:00:00Z",
                                   "turns": [{"speaker": "user", "text": "hi"}]}))
    expect_input_error(path, "unknown transcript format")


def test_torn_last_line_is_skipped_with_one_warning(tmp_path, capsys):
    path = tmp_path / "torn.jsonl"
    path.write_bytes(line("first", 1) + line("second", 2) + line("third", 3)[:40])
    t = read_transcript(str(path))
    assert prompts(t) == ["first", "second"]
    assert t.report.skipped_lines == [3] and t.report.records == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert str(path) in err[0] and "line(s) 3" in err[0] and "skipped 1 record(s)" in err[0]


def test_bad_json_line_in_the_middle(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(line("first", 1) + b'{"type": "user", oops}\n' + b"[1, 2]\n" + line("last", 4))
    t = read_transcript(str(path))
    assert prompts(t) == ["first", "last"]
    assert t.report.skipped_lines == [2, 3]
    assert "line(s) 2, 3" in capsys.readouterr().err


def test_no_warning_when_nothing_skipped(tmp_path, capsys):
    path = tmp_path / "ok.jsonl"
    path.write_bytes(line("fine", 1))
    read_transcript(str(path))
    assert capsys.readouterr().err == ""


def test_invalid_utf8_inside_a_string_is_replaced_and_counted(tmp_path, capsys):
    path = tmp_path / "latin1.jsonl"
    raw = line("caf\u00e9 menu", 1).replace("caf\u00e9".encode(), b"caf\xe9")
    path.write_bytes(line("ok", 0) + raw)
    t = read_transcript(str(path))
    assert prompts(t) == ["ok", "caf\ufffd menu"]
    assert t.report.repaired_lines == [2] and t.report.skipped_lines == []
    err = capsys.readouterr().err
    assert str(path) in err and "replaced invalid UTF-8 in 1 record(s) at line(s) 2" in err


def test_truncated_json_array_keeps_complete_elements(tmp_path):
    records = [orjson.loads(line(f"p{n}", n)) for n in range(1, 4)]
    data = orjson.dumps(records, option=orjson.OPT_INDENT_2)
    path = tmp_path / "chat.json"
    path.write_bytes(data[: len(data) - 60])
    t = read_transcript(str(path), warn=False)
    assert t.meta.format == "claude-code-json-array"
    assert prompts(t) == ["p1", "p2"] and t.report.skipped_lines == [3]


def test_symlink_is_refused(tmp_path):
    real = tmp_path / "real.jsonl"
    real.write_bytes(line("hi", 1))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    expect_input_error(link, "symlink")


def test_over_the_size_cap(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes(line("x" * 500, 1))
    size = path.stat().st_size
    expect_input_error(path, f"{size} bytes", "cap of 100 bytes", max_bytes=100)
    assert read_transcript(str(path), max_bytes=size).events  # exactly at the cap is fine


def test_outside_the_trusted_root(tmp_path, monkeypatch):
    root = tmp_path / "projects"
    root.mkdir()
    inside = root / "in.jsonl"
    inside.write_bytes(line("hi", 1))
    outside = tmp_path / "out.jsonl"
    outside.write_bytes(line("hi", 1))
    expect_input_error(outside, "outside the trusted root", trusted_root=str(root))
    monkeypatch.setenv("DUCK_TAPE_TRUSTED_ROOT", str(root))
    expect_input_error(outside, "DUCK_TAPE_TRUSTED_ROOT")
    assert prompts(read_transcript(str(inside))) == ["hi"]


def test_a_directory(tmp_path):
    folder = tmp_path / "session.jsonl"
    folder.mkdir()
    expect_input_error(folder, "not a regular file")


def test_missing_file(tmp_path):
    expect_input_error(tmp_path / "nope.jsonl", "no such file")


def test_unreadable_records_never_fatal(tmp_path):
    path = tmp_path / "odd.jsonl"
    odd = [
        {"parentUuid": None, "type": "user", "sessionId": SID, "message": "not an object"},
        {"parentUuid": None, "type": "assistant", "sessionId": SID, "message": {"content": 42}},
        {"parentUuid": None, "type": "assistant", "sessionId": SID,
         "message": {"id": "m", "content": [None, 3, {"type": "tool_use"}, {"type": "text", "text": 5}]}},
        {"parentUuid": None, "type": "user", "sessionId": SID, "message": {"content": [{"type": "tool_result"}]}},
        {"parentUuid": None, "type": "user", "sessionId": SID, "timestamp": 12345, "message": {"content": None}},
    ]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in odd) + line("still here", 6))
    t = read_transcript(str(path), warn=False)
    assert [e.kind for e in t.events] == ["tool_call", "tool_result", "user_prompt"]
    assert (t.events[0].tool_name, t.events[0].target) == ("unknown", "unknown")
    assert t.events[1].call_id is None and t.events[1].timestamp is None
    assert t.report.unknown_types["user without message"] == 1
    assert os.path.basename(t.meta.path) == "odd.jsonl"


def test_trusted_root_accepts_a_relative_path_with_dotdot(tmp_path, monkeypatch):
    """Bug: 'sub/../t.jsonl' under DUCK_TAPE_TRUSTED_ROOT was refused as going through a symlink."""
    from pipeline.transcripts.safety import check_transcript_path

    (tmp_path / "sub").mkdir()
    target = tmp_path / "t.jsonl"
    target.write_text('{"role": "user", "content": "hi"}\n')
    monkeypatch.chdir(tmp_path)
    assert check_transcript_path("sub/../t.jsonl", max_bytes=10_000, trusted_root=str(tmp_path)) == str(target)
    (tmp_path / "sub" / "t2.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    with pytest.raises(InputError, match="symlink"):
        check_transcript_path("link/t2.jsonl", max_bytes=10_000, trusted_root=str(tmp_path))
