"""Safe CONTEXT.md writes (pipeline.context.safewrite, api.apply_merge): lock, re-plan, atomic replace, backup.

Issue 5 item 6: two merges started together both land; a crash mid-write leaves the old file intact.
The parallel test starts 20 real ``duck-tape merge`` processes at once on a workspace with no CONTEXT.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from datetime import date
from pathlib import Path

import pytest

from pipeline.context.api import MergeOutcome, apply_merge, plan_merge
from pipeline.context.changelog import NO_CHANGES
from pipeline.context.parse import items, parse
from pipeline.context.safewrite import backup_path, lock_path, locked, read_context
from pipeline.errors import DuckTapeError, InputError
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.render import render as render_state

ROOT = Path(__file__).resolve().parent.parent
SMALL = (ROOT / "fixtures" / "context" / "small.md").read_text(encoding="utf-8")
DAY = date(2026, 3, 12)
N_PARALLEL = 20


def numbered_state(i: int) -> AgentState:
    """A state whose decision, fact and open item all carry ``i`` (so each one lands on its own key)."""
    return AgentState(
        stamp=f"2026-03-12-08{i:02d}", kind="manual", created=f"2026-03-12T08:{i:02d}:00Z",
        repo="shop", branch="feature/parallel",
        decisions=[Decision(timestamp=f"2026-03-12T08:{i:02d}:00Z", status="APPROVED",
                            what=f"worker pool of {i} threads", reasoning=f"measured best for shard {i}")],
        facts=[Fact(text=f"shard-{i}: the orders of region {i}")],
        position=Position(remaining=[f"benchmark shard {i} under load"]),
    )


def test_twenty_parallel_merges_all_land(tmp_path):
    states = []
    for i in range(N_PARALLEL):
        path = tmp_path / f"state-{i:02d}.state.md"
        path.write_text(render_state(numbered_state(i)), encoding="utf-8")
        states.append(path)
    context = tmp_path / "CONTEXT.md"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline", "merge", str(p), "--context", str(context), "--yes"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for p in states]
    results = [(proc.wait(timeout=300), proc.stdout.read(), proc.stderr.read()) for proc in procs]
    for proc in procs:
        proc.stdout.close()
        proc.stderr.close()
    assert [code for code, _, _ in results] == [0] * N_PARALLEL, [err for _, _, err in results if err]
    assert all(out.rstrip().splitlines()[-1].startswith("- Added: Notes 2026-03-12 ") for _, out, _ in results)
    text = context.read_text(encoding="utf-8")
    doc = parse(text)
    keys = {it.label for name in ("Decisions", "Glossary") for it in items(doc.get(name)) if it.kind == "entry"}
    assert keys == {f"worker-pool-{i}-threads" for i in range(N_PARALLEL)} | {f"shard-{i}" for i in range(N_PARALLEL)}
    debts = [it.value for it in items(doc.get("Deferred-Debt")) if it.kind == "debt"]  # Remaining -> Deferred-Debt
    assert sorted(debts) == sorted(f"benchmark shard {i} under load" for i in range(N_PARALLEL))
    stamps = [it.key for it in items(doc.get("Notes")) if it.kind == "note"]
    assert stamps == [f"2026-03-12 08:{i:02d}" for i in range(N_PARALLEL)]  # timestamp order, not landing order
    assert text.count("TODO(scaffold)") == 3  # Goals, Conventions, Open-Questions: bootstrapped exactly once
    assert not backup_path(context).exists()
    assert plan_merge(context, [numbered_state(7)], today=DAY).changelog == [NO_CHANGES]


def test_a_merge_planned_before_another_landed_is_replanned(tmp_path):
    context = tmp_path / "CONTEXT.md"
    context.write_text(SMALL, encoding="utf-8")
    first = plan_merge(context, [numbered_state(1)], today=DAY)
    second = plan_merge(context, [numbered_state(2)], today=DAY)
    apply_merge(context, second)
    written = apply_merge(context, first)
    assert written is first and first.before is not None and "worker-pool-2-threads" in first.before
    text = context.read_text(encoding="utf-8")
    assert "**worker-pool-1-threads**" in text and "**worker-pool-2-threads**" in text
    assert first.after == text and "- Added: Decisions worker-pool-1-threads" in first.changelog


def test_a_stale_outcome_without_states_is_refused(tmp_path):
    context = tmp_path / "CONTEXT.md"
    context.write_text(SMALL, encoding="utf-8")
    stale = MergeOutcome(["- Added: Goals x"], "old text", "new text", True)
    with pytest.raises(InputError, match="changed since the merge was planned"):
        apply_merge(context, stale)
    assert context.read_text(encoding="utf-8") == SMALL


def test_lock_and_backup_live_in_the_ignored_store(tmp_path):
    context = tmp_path / "CONTEXT.md"
    context.write_text(SMALL, encoding="utf-8")
    apply_merge(context, plan_merge(context, [numbered_state(3)], today=DAY))
    assert lock_path(context) == tmp_path / ".duck-tape" / "CONTEXT.md.lock"
    assert (tmp_path / ".duck-tape" / ".gitignore").read_text() == "*\n"
    assert not backup_path(context).exists()


def test_crash_mid_write_leaves_the_old_file_intact(tmp_path):
    context = tmp_path / "CONTEXT.md"
    context.write_bytes(SMALL.encode("utf-8"))
    script = textwrap.dedent(f"""
        import os, signal
        from datetime import date
        from pathlib import Path
        import pipeline.fsutil as fsutil
        from pipeline.context.api import apply_merge, plan_merge
        from pipeline.state.model import AgentState, Decision

        state = AgentState(stamp="2026-03-12-0900", created="2026-03-12T09:00:00Z",
                           decisions=[Decision(timestamp="2026-03-12T09:00:00Z", status="APPROVED",
                                               what="gzip the feed", reasoning="halves the transfer")])
        outcome = plan_merge(Path({str(context)!r}), [state], today=date(2026, 3, 12))
        real = fsutil._write_fd

        def crash(fd, text, encoding):
            if text == outcome.after:  # the new CONTEXT.md, not the backup
                os.write(fd, text[: len(text) // 2].encode())
                os.kill(os.getpid(), signal.SIGKILL)
            real(fd, text, encoding)

        fsutil._write_fd = crash
        apply_merge(Path({str(context)!r}), outcome)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert context.read_bytes() == SMALL.encode("utf-8")
    assert backup_path(context).read_text(encoding="utf-8") == SMALL
    outcome = plan_merge(context, [numbered_state(4)], today=DAY)  # the next merge works and clears the backup
    apply_merge(context, outcome)
    assert "**worker-pool-4-threads**" in context.read_text(encoding="utf-8")
    assert not backup_path(context).exists()


def test_failed_replace_keeps_old_file_and_backup(tmp_path, monkeypatch):
    context = tmp_path / "CONTEXT.md"
    context.write_text(SMALL, encoding="utf-8")
    outcome = plan_merge(context, [numbered_state(5)], today=DAY)
    import pipeline.context.safewrite as safewrite

    calls = []

    def failing(path, text, **kwargs):
        calls.append(Path(path))
        if Path(path) == context:
            raise OSError(28, "No space left on device")
        return real(path, text, **kwargs)

    real = safewrite.atomic_write_text
    monkeypatch.setattr(safewrite, "atomic_write_text", failing)
    with pytest.raises(OSError, match="No space left"):
        apply_merge(context, outcome)
    assert calls == [backup_path(context), context]
    assert context.read_text(encoding="utf-8") == SMALL and backup_path(context).read_text(encoding="utf-8") == SMALL


def test_read_context_refuses_symlinks_directories_and_non_utf8(tmp_path):
    real = tmp_path / "real.md"
    real.write_text(SMALL)
    link = tmp_path / "CONTEXT.md"
    link.symlink_to(real)
    with pytest.raises(InputError, match="is a symlink"):
        read_context(link)
    with pytest.raises(InputError, match="is a directory"):
        read_context(tmp_path)
    (tmp_path / "bad.md").write_bytes(b"# T\n\xff\xfe\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_context(tmp_path / "bad.md")
    assert read_context(tmp_path / "absent.md") is None
    crlf = tmp_path / "crlf.md"
    crlf.write_bytes(b"a\r\nb")
    assert read_context(crlf) == "a\r\nb"


def test_lock_wait_times_out_with_a_clear_error(tmp_path):
    context = tmp_path / "CONTEXT.md"
    held, release = threading.Event(), threading.Event()

    def holder():
        with locked(context):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        with pytest.raises(DuckTapeError, match="timed out after 0 s waiting for"), locked(context, timeout=0.2):
            pass
    finally:
        release.set()
        thread.join()
    with pytest.raises(InputError, match="its directory does not exist"), locked(tmp_path / "nope" / "CONTEXT.md"):
        pass
