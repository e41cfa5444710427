"""Every byte read once (issue 23): a generated session with a second task and a decision planted at its middle
keeps them, and its last message's next step, through recover and through a sequence of checkpoints of the
growing file; a checkpoint reads only what is new; a first look under a time budget names what it left."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))

from fixturegen import long_session  # noqa: E402

from pipeline.hooks import incremental  # noqa: E402
from pipeline.hooks.checkpoint import run_checkpoint  # noqa: E402
from pipeline.hooks.payload import parse_payload  # noqa: E402
from pipeline.recovery import recover  # noqa: E402
from pipeline.redact.source import mask_transcript  # noqa: E402
from pipeline.segmented import distil_stream  # noqa: E402
from pipeline.stages.validate import grounding_problem  # noqa: E402
from pipeline.state import cursor  # noqa: E402
from pipeline.state.parse import parse  # noqa: E402
from pipeline.transcripts import read_transcript  # noqa: E402

SIZE = 400_000
T0 = datetime(2026, 9, 20, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def small_segments(monkeypatch):
    """Segments of this small session as many as a big one has (the default holds 200,000 message characters)."""
    from pipeline.transcripts import segments

    monkeypatch.setattr(segments, "DEFAULT_POLICY", segments.Policy(message_chars=3_000))


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("long") / "long.jsonl"
    return path, long_session.write(str(path), SIZE)


def _keeps_the_plants(text: str, truth: dict) -> None:
    state = parse(text)
    assert truth["task"] in state.approved_workflow
    assert truth["first_task"] in state.approved_workflow
    decisions = [(d.status, d.what) for d in state.decisions]
    assert any(s == "APPROVED" and truth["approved"] in w for s, w in decisions), decisions
    assert any(s == "REJECTED" and truth["rejected"] in w for s, w in decisions), decisions
    position = [state.position.current or "", *state.position.remaining]
    assert any(truth["next_step"] in item for item in position), position


def test_recover_reads_the_middle_segment_by_segment(session):
    path, truth = session
    result = recover(str(path), now=T0, mask=True)
    _keeps_the_plants(result.text, truth)
    folded = distil_stream(str(path), max_bytes=1 << 30, action="recover", kind="recovered", now=T0, trigger="t")
    assert folded.segments >= 3 and folded.events == len(read_transcript(str(path), warn=False).events)


def test_folded_evidence_grounds_in_the_whole_transcript(session):
    path, _ = session
    folded = distil_stream(str(path), max_bytes=1 << 30, action="recover", kind="recovered", now=T0, trigger="t")
    whole, _ = mask_transcript(read_transcript(str(path), warn=False))
    entries = [*folded.state.decisions, *folded.state.facts]
    assert entries and all(grounding_problem(e.evidence, whole) is None for e in entries)


def _hook(path: Path, cwd: Path):
    return parse_payload(json.dumps({"session_id": long_session.SESSION, "transcript_path": str(path),
                                     "cwd": str(cwd), "hook_event_name": "PreCompact", "trigger": "auto"}))


def _grow(src: Path, dst: Path, fraction: float) -> None:
    data = src.read_bytes()
    end = len(data) if fraction >= 1 else data.index(b"\n", int(len(data) * fraction)) + 1
    dst.write_bytes(data[:end])


def test_checkpoints_of_a_growing_session_read_on_and_keep_the_middle(session, tmp_path, monkeypatch):
    monkeypatch.delenv("DUCK_TAPE_HOOK_BUDGET", raising=False)
    src, truth = session
    path, store = tmp_path / "grow.jsonl", tmp_path / ".duck-tape"
    results = []
    for n, fraction in enumerate((0.55, 0.95, 1.0)):
        _grow(src, path, fraction)
        results.append(run_checkpoint(_hook(path, tmp_path), store=store, now=T0 + timedelta(minutes=n)))
    assert all(r.written for r in results)
    assert not any("read on" in m for m in results[0].messages)
    for r in results[1:]:
        assert any("read on from line" in m for m in r.messages), r.messages
    new_lines = len(src.read_bytes().splitlines()) - len(src.read_bytes()[: int(len(src.read_bytes()) * 0.95)].splitlines())
    assert any(f"{new_lines:,} new line(s)" in m or f"{new_lines - 1:,} new line(s)" in m for m in results[2].messages)
    _keeps_the_plants(results[-1].state_path.read_text(), truth)
    record = cursor.load(store, str(path))
    assert record is not None and record.end == path.stat().st_size and record.gap is None


def _read_twice(src: Path, tmp_path: Path, between) -> list[str]:
    """Checkpoint half of ``src``, run ``between(path)``, checkpoint again; the second checkpoint's messages."""
    path, store = tmp_path / "t.jsonl", tmp_path / ".duck-tape"
    _grow(src, path, 0.5)
    run_checkpoint(_hook(path, tmp_path), store=store, now=T0)
    between(path)
    return run_checkpoint(_hook(path, tmp_path), store=store, now=T0 + timedelta(minutes=1)).messages


def test_a_rewritten_transcript_is_read_whole_again(session, tmp_path):
    def rewrite(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[200:206] = b"XXXXXX" if data[200:206] != b"XXXXXX" else b"YYYYYY"
        path.write_bytes(bytes(data))

    messages = _read_twice(session[0], tmp_path, rewrite)
    assert any("reading the whole transcript again: its content changed" in m for m in messages)


def test_a_changed_engine_reads_the_whole_transcript_again(session, tmp_path, monkeypatch):
    messages = _read_twice(session[0], tmp_path, lambda _path: monkeypatch.setattr(cursor, "_engine", "another"))
    assert any("the engine changed since" in m for m in messages)


def test_a_first_look_under_a_budget_names_the_gap_and_the_next_checkpoint_reads_it(session, tmp_path, monkeypatch):
    src, truth = session
    path, store = tmp_path / "t.jsonl", tmp_path / ".duck-tape"
    _grow(src, path, 1.0)
    monkeypatch.setenv("DUCK_TAPE_HOOK_BUDGET", "0.000001")
    monkeypatch.setattr(incremental, "MIN_TAIL_BYTES", 60_000)  # the end it reads at least, scaled to this file
    first = run_checkpoint(_hook(path, tmp_path), store=store, now=T0)
    note = next(m for m in first.messages if "not read yet" in m)
    assert "DUCK_TAPE_HOOK_BUDGET" in note and f"duck-tape recover {path}" in note
    state = parse(first.state_path.read_text())
    assert any(line.startswith("Read the middle of the transcript too (lines ") and "duck-tape recover" in line
               for line in state.rederivation)
    assert truth["first_task"] in state.approved_workflow  # the start and the end are read
    assert any(truth["next_step"] in item for item in [state.position.current or "", *state.position.remaining])
    assert cursor.load(store, str(path)).gap is not None
    monkeypatch.setenv("DUCK_TAPE_HOOK_BUDGET", "0")  # no limit: the next checkpoint reads the rest
    second = run_checkpoint(_hook(path, tmp_path), store=store, now=T0 + timedelta(minutes=1))
    assert any("the whole transcript is read" in m for m in second.messages), second.messages
    _keeps_the_plants(second.state_path.read_text(), truth)
    assert not any(line.startswith("Read the middle") for line in parse(second.state_path.read_text()).rederivation)
    assert cursor.load(store, str(path)).gap is None


def _task_session(cc, n_round: int) -> None:
    cc.asst(f"Working on round {n_round} of the audit log.")
    cc.bash("pytest -q tests/test_audit.py", f"{n_round + 2} passed")


def test_a_checkpoint_that_reads_on_knows_the_task_list_created_before(tmp_path, monkeypatch):
    """Claude Code 2.1.9x updates tasks by id (TaskUpdate {taskId, status}): a read from the middle of the file must
    start with the list as it stood there (the record keeps it), or the updates of earlier tasks are lost."""
    from cc_jsonl import CC

    monkeypatch.setenv("DUCK_TAPE_HOOK_BUDGET", "0")
    cc = CC("7d1c2e90-4b5a-4c3e-8f21-a0b1c2d3e4f5")
    cc.user("Add an audit log for refunds.")
    cc.tool("TaskCreate", {"subject": "Write the refund_audit migration"}, "Task #1 created")
    cc.tool("TaskCreate", {"subject": "Add the audit log tests"}, "Task #2 created")
    cc.tool("TaskUpdate", {"taskId": "1", "status": "in_progress"}, "Updated task #1")
    _task_session(cc, 1)
    path, store = tmp_path / "s.jsonl", tmp_path / ".duck-tape"
    cc.write(path)
    run_checkpoint(_hook(path, tmp_path), store=store, now=T0)
    cc.user("go on")
    cc.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1")
    cc.tool("TaskUpdate", {"taskId": "2", "status": "in_progress"}, "Updated task #2")
    _task_session(cc, 2)
    cc.write(path)
    second = run_checkpoint(_hook(path, tmp_path), store=store, now=T0 + timedelta(minutes=1))
    assert any("read on from line" in m for m in second.messages)
    state = parse(second.state_path.read_text())
    assert "Write the refund_audit migration" in state.position.done
    assert "Add the audit log tests" in [state.position.current, *state.position.remaining]
