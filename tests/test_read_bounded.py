"""Transcripts are opened only when they are regular files, and read only as far as the size seen at the start
(issue 11, part 4: a FIFO hung ``batch`` in ``open()``; a growing transcript defeated the size cap)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import pipeline.transcripts as transcripts
from pipeline.batch.cache import file_digest
from pipeline.batch.discover import discover
from pipeline.batch.runner import BatchOptions, run_batch
from pipeline.batch.subagents import inspect
from pipeline.errors import InputError
from pipeline.transcripts import read_transcript
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.records import iter_json_items, iter_jsonl
from pipeline.transcripts.source import NotRegularFile, open_transcript
from tests.batch_helpers import run

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
CC_ARRAY = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.json"

pytestmark = [pytest.mark.timeout(20), pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")]


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    return path


# --- FIFOs and devices ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("opener", [
    lambda p: open_transcript(p),
    lambda p: detect_format(p),
    lambda p: list(iter_jsonl(p, ReadReport())),
    lambda p: list(iter_json_items(p, "item", ReadReport())),
])
def test_a_fifo_is_refused_without_blocking(fifo, opener):
    """No writer ever opens this FIFO: a plain ``open()`` would block until the timeout."""
    with pytest.raises(NotRegularFile, match="not a regular file") as info:
        opener(str(fifo))
    assert info.value.exit_code == 2 and str(fifo) in str(info.value)


def test_a_device_is_refused():
    with pytest.raises(NotRegularFile):
        open_transcript("/dev/zero")  # a read would never end


def test_read_transcript_names_the_fifo(fifo):
    with pytest.raises(InputError, match=r"session\.jsonl: not a regular file"):
        read_transcript(str(fifo))


def test_a_symlink_swapped_in_after_the_check_is_not_followed(tmp_path):
    link = tmp_path / "t.jsonl"
    link.symlink_to(CC)
    with pytest.raises(OSError):
        open_transcript(str(link))
    with open_transcript(str(link), follow=True) as handle:
        assert handle.read() == CC.read_bytes()


def test_batch_over_a_folder_holding_a_fifo_lists_it_as_skipped(tmp_path):
    """Bug: ``batch`` on a folder holding a FIFO blocked forever (discovery took it as a transcript, the digest
    opened it)."""
    folder = tmp_path / "archive"
    folder.mkdir()
    shutil.copy(CC, folder / "a.jsonl")
    os.mkfifo(folder / "b.jsonl")
    (folder / "sub" / "subagents").mkdir(parents=True)
    os.mkfifo(folder / "sub" / "subagents" / "agent-0123456789abcdef0.jsonl")
    found = discover([str(folder)])
    assert [Path(c.path).name for c in found.sessions] == ["a.jsonl"]
    assert [(Path(s.path).name, s.reason) for s in found.skipped] == [
        ("b.jsonl", "not a regular file (a FIFO, socket or device); not read")]
    result = run_batch([str(folder)], BatchOptions(out=tmp_path / "out", jobs=1))
    assert [r["status"] for r in result.rows] == ["ok"]


def test_batch_naming_a_fifo_says_it_is_not_a_regular_file(capsys, fifo, tmp_path):
    """Bug: exit 2 with "no such file or folder" for a FIFO that exists."""
    code, _, err = run(capsys, "batch", str(fifo), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"not a regular file (a FIFO, socket or device): {fifo}" in err
    assert "no such file" not in err


def test_batch_naming_a_symlink_to_a_fifo_fails_that_session(tmp_path, fifo):
    link = tmp_path / "link.jsonl"
    link.symlink_to(fifo)
    result = run_batch([str(link)], BatchOptions(out=tmp_path / "out", jobs=1))
    [row] = result.rows
    assert row["status"] == "failed" and "not a regular file" in row["errors"][0]


def test_digest_and_subagent_head_never_wait_on_a_fifo(tmp_path, fifo):
    with pytest.raises(OSError, match="not a regular file"):
        file_digest(str(fifo))
    agent = tmp_path / "agent-0123abcd.jsonl"
    os.mkfifo(agent)
    assert inspect(str(agent)).agent_id is None


# --- growth while reading ----------------------------------------------------------------------------------------


def test_open_transcript_stops_at_the_limit_and_skips_a_bom(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf0123456789")
    with open_transcript(str(path), 5) as handle:
        assert handle.read() == b"01"  # 5 bytes of the file, 3 of them the BOM
    with open_transcript(str(path)) as handle:
        assert handle.read(4) == b"0123" and handle.tell() == 4
        handle.seek(0)
        assert handle.read() == b"0123456789"
    with open_transcript(str(path), skip_bom=False) as handle:
        assert handle.read(3) == b"\xef\xbb\xbf"


@pytest.mark.parametrize("source", [CC, CC_ARRAY])
def test_a_transcript_that_grows_is_read_as_it_was_when_checked(tmp_path, monkeypatch, source):
    """Bug: the cap was checked once, before reading, and the readers read to the end of the file: a hook read
    205 MB in 110 s of a transcript the harness kept appending to.  Here the file grows by 4 MB right after the
    check (under a 1 MB cap): the read ends where the check saw the end."""
    path = tmp_path / source.name
    shutil.copy(source, path)
    expected = [(e.kind, e.text) for e in read_transcript(str(source), warn=False).events]
    real = transcripts.checked_transcript

    def check_then_grow(*args, **kwargs):
        checked = real(*args, **kwargs)
        with open(path, "ab") as handle:
            line = CC.read_bytes().splitlines(keepends=True)[-1]
            handle.write(line * (4_000_000 // len(line)))
        return checked

    monkeypatch.setattr(transcripts, "checked_transcript", check_then_grow)
    got = read_transcript(str(path), max_bytes=1_000_000, warn=False)
    assert os.path.getsize(path) > 4_000_000
    assert [(e.kind, e.text) for e in got.events] == expected
    assert got.report.skipped_lines == []
