"""The JSONL byte window (pipeline/transcripts/records.py, issue 14): a file over DUCK_TAPE_READ_WINDOW bytes is
read at its start and its end, the lines between counted so every line keeps its true number."""

from __future__ import annotations

import json

import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.records import iter_jsonl, read_window


def _jsonl(path, n: int) -> list[bytes]:
    lines = [json.dumps({"n": k, "pad": "x" * (20 + k % 7)}).encode() + b"\n" for k in range(1, n + 1)]
    path.write_bytes(b"".join(lines))
    return lines


@pytest.mark.parametrize("window", [700, 1400, 7000])
def test_the_window_reads_the_start_and_the_end_with_true_line_numbers(tmp_path, monkeypatch, window):
    monkeypatch.setenv("DUCK_TAPE_READ_WINDOW", str(window))
    lines = _jsonl(tmp_path / "t.jsonl", 400)
    report = ReadReport()
    got = list(iter_jsonl(str(tmp_path / "t.jsonl"), report))
    assert all(rec["n"] == number for number, rec in got)  # a line's number is its place in the file
    numbers = [number for number, _ in got]
    head, tail = read_window()
    first, last, nbytes = report.window
    assert numbers == list(range(1, first)) + list(range(last + 1, 401))
    assert sum(len(ln) for ln in lines[: first - 1]) >= head  # the head ends at the first line past its bytes
    assert sum(len(ln) for ln in lines[last:]) <= tail
    assert nbytes == sum(len(ln) for ln in lines[first - 1: last])
    assert report.records == len(got)


def test_a_file_within_the_window_and_a_window_of_zero_read_every_line(tmp_path, monkeypatch):
    _jsonl(tmp_path / "t.jsonl", 200)
    report = ReadReport()
    assert len(list(iter_jsonl(str(tmp_path / "t.jsonl"), report))) == 200 and report.window is None
    monkeypatch.setenv("DUCK_TAPE_READ_WINDOW", "0")
    report = ReadReport()
    assert len(list(iter_jsonl(str(tmp_path / "t.jsonl"), report))) == 200 and report.window is None


def test_a_claude_code_session_keeps_its_task_and_its_last_request_and_says_what_it_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("DUCK_TAPE_READ_WINDOW", "70000")
    rows = []
    for k in range(600):
        role = "user" if k % 2 == 0 else "assistant"
        text = ("Add a retry budget to the payout exporter." if k == 0 else
                "Now run the exporter tests." if k == 598 else f"message {k} " + "filler " * 20)
        content = text if role == "user" else [{"type": "text", "text": text}]
        rows.append({"type": role, "uuid": f"u{k}", "parentUuid": f"u{k - 1}" if k else None, "sessionId": "s1",
                     "timestamp": f"2026-09-01T10:{k // 60:02d}:{k % 60:02d}.000Z", "cwd": "/home/dev/shop",
                     "message": {"role": role, "content": content, **({"id": f"m{k}"} if role == "assistant" else {})}})
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = read_transcript(str(path), warn=False)
    prompts = [e.text for e in t.events if e.kind == "user_prompt"]
    assert prompts[0] == "Add a retry budget to the payout exporter."
    assert prompts[-1] == "Now run the exporter tests."
    assert len(prompts) < 300
    first, last, _ = t.report.window
    assert f"lines {first:,}-{last:,}" in t.report.warning(str(path))


def test_a_tail_that_starts_on_a_line_boundary_keeps_that_line(tmp_path, monkeypatch):
    """Review input: 20 lines of 10 bytes and a 70-byte window read line 1 and lines 15-20, not 16-20."""
    monkeypatch.setenv("DUCK_TAPE_READ_WINDOW", "70")
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(b'{"n":%d}\n' % (100 + k) for k in range(1, 21)))  # 10 bytes a line
    report = ReadReport()
    got = [number for number, _ in iter_jsonl(str(path), report)]
    assert got == [1, 15, 16, 17, 18, 19, 20]
    assert report.window == (2, 14, 130)
