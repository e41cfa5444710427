"""The batch cache index (``pipeline.batch.cache.Index``): a rerun served from one read, stat stamps that catch a
rewrite which keeps size and mtime, state text read back only when needed, and what happens when the index and
the record files disagree (issue 6, item 1: "a rerun of an unchanged archive does no work")."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from batch_helpers import A, B, C, archive, copy_archive  # noqa: F401 (archive: a fixture)
from batch_helpers import by_session as ids

from pipeline.batch import cache, subagents
from pipeline.batch.cache import Cache, Index
from pipeline.batch.discover import discover
from pipeline.batch.progress import RichProgress
from pipeline.batch.runner import BatchOptions, run_batch



def index_data(out: Path) -> dict:
    return json.loads((out / ".cache" / "index.json").read_text())


def test_rerun_reads_no_record_file_and_no_state_text(archive, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    data = index_data(out)
    assert data["format"] == Index.FORMAT == 2 and len(data["rows"]) == 5  # one record per session, the corrupt one included
    assert all("text" not in row for row in data["rows"].values())
    assert {row["session_id"]: len(row["text_digest"]) for row in data["rows"].values() if row["status"] == "ok"} == {
        A: 32, B: 32, C: 32}

    def no_record(self, key):
        raise AssertionError(f"opened the record {key}")

    monkeypatch.setattr(Cache, "get", no_record)
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert all(r["cached"] for r in again.rows) and "text" not in ids(again.rows)[A]

    def figures(rows: list[dict]) -> list[tuple]:
        return [(r["session_id"], r["status"], r["decisions"], r["facts"], r.get("text_digest")) for r in rows]

    assert figures(again.rows) == figures(first.rows)
    assert {r["session_id"]: r["output"] for r in again.rows if r["status"] == "ok"} == {A: "unchanged", B: "unchanged",
                                                                                       C: "unchanged"}


def test_rerun_without_the_index_is_served_from_the_record_files(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    before = (out / f"{A}.state.md").read_bytes()
    (out / ".cache" / "index.json").unlink()
    computed: list[dict] = []
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=computed.append)
    assert computed == [] and all(r["cached"] for r in again.rows) and len(again.rows) == 5
    assert (out / f"{A}.state.md").read_bytes() == before
    assert len(index_data(out)["rows"]) == 5  # written again from the records


def test_a_rewrite_that_keeps_size_and_mtime_is_recomputed(archive, tmp_path):
    """The stamp has the ctime, which every write (and every utime) sets: putting the mtime back is not enough to
    hide a changed transcript."""
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    events = next((archive / "copilot").rglob("events.jsonl"))
    st = events.stat()
    data = events.read_bytes()
    assert b"forecast" in data
    events.write_bytes(data.replace(b"forecast", b"Forecast", 1))
    os.utime(events, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = events.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    computed: list[dict] = []
    run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=computed.append)
    assert [r["session_id"] for r in computed] == [C]


def test_a_missing_state_file_is_written_from_its_record(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    target = out / f"{B}.state.md"
    good = target.read_text()
    target.unlink()
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert target.read_text() == good
    assert ids(again.rows)[B]["output"] == "written" and ids(again.rows)[B]["cached"]


def test_a_lost_record_fails_once_then_is_recomputed(archive, tmp_path):
    """Index present, record files deleted, a state file to rewrite: no text to write it with.  The session fails
    with a reason (exit 6 from the CLI) and leaves the index, so the next run recomputes it."""
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    for folder in (out / ".cache").iterdir():
        if folder.is_dir():
            shutil.rmtree(folder)
    target = out / f"{B}.state.md"
    good = target.read_text()
    target.write_text(good.replace("## Decision Log", "## Decision log"))
    second = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    row = ids(second.rows)[B]
    assert row["status"] == "failed" and row["output"] == "error"
    assert row["errors"][-1].startswith("its cache record is missing or damaged")
    assert ids(second.rows)[A]["output"] == "unchanged"  # the others are still served from the index
    computed: list[dict] = []
    run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=computed.append)
    assert [r["session_id"] for r in computed] == [B] and target.read_text() == good


def test_texts_option_gives_cached_rows_their_state_text(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1, texts=True))
    ok = [r for r in again.rows if r["status"] == "ok"]
    assert len(ok) == 3 and all(r["cached"] for r in ok)
    assert all(r["text"] == Path(r["output_path"]).read_text() for r in ok)


def test_unchanged_subagent_files_are_not_read_again(archive, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert len(index_data(out)["agents"]) == 2  # the linked sub-agent file and the warm-up one

    def no_reading(path):
        raise AssertionError(f"inspected {path}")

    monkeypatch.setattr(subagents, "inspect", no_reading)
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert ids(again.rows)[A]["subagent_files"] == ids(first.rows)[A]["subagent_files"] != []
    assert [(s.path, s.reason) for s in again.skipped] == [(s.path, s.reason) for s in first.skipped]


def test_index_agent_memo_follows_the_file(tmp_path):
    """A 2.0.x sub-agent file names its parent by the ``sessionId`` of its lines: a rewrite that changes it
    changes the memo's answer."""
    agent = tmp_path / "agent-abcdef12.jsonl"
    agent.write_text('{"type":"user","sessionId":"s-one","message":{"role":"user","content":"look"}}\n')
    index = Index(tmp_path / "cache")
    assert index.agent(str(agent)) == (str(tmp_path / "s-one.jsonl"), False)
    agent.write_text('{"type":"user","sessionId":"s-two","message":{"role":"user","content":"Warmup"}}\n')
    assert index.agent(str(agent)) == (str(tmp_path / "s-two.jsonl"), True)
    index.save()
    assert Index(tmp_path / "cache").agent(str(agent)) == (str(tmp_path / "s-two.jsonl"), True)


def test_index_holds_the_last_run_only(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    run_batch([str(archive)], BatchOptions(out=out, jobs=1, mask=True))  # every key changes
    assert len(index_data(out)["rows"]) == 5
    run_batch([str(archive / "copilot")], BatchOptions(out=out, jobs=1, mask=True))
    assert [row["session_id"] for row in index_data(out)["rows"].values()] == [C]


def test_unchanged_rerun_does_not_rewrite_the_index(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    stamp = (out / ".cache" / "index.json").stat()
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    again = (out / ".cache" / "index.json").stat()
    assert (again.st_ino, again.st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)


@pytest.mark.parametrize("content", [b"", b"not json", b"[1, 2]", b'{"format": 0, "files": {}, "rows": {}}',
                                     b'{"format": 1, "files": [], "agents": 3, "rows": {"k": "x"}}'])
def test_an_unusable_index_is_ignored(tmp_path, content):
    (tmp_path / "index.json").write_bytes(content)
    index = Index(tmp_path)
    assert (index.files, index.agents, index.row("k")) == ({}, {}, None)
    (tmp_path / "f.txt").write_text("hello")
    assert index.digest(str(tmp_path / "f.txt")) == cache.file_digest(str(tmp_path / "f.txt"))


def test_discovery_walk_order_and_links(tmp_path):
    """Sorted top-down: a folder's sub-agent folder, then its own files, then its sub-folders; a symlinked folder
    or file is not followed."""
    for rel in ("p/b.jsonl", "p/a.json", "p/agent-00aa11.jsonl", "p/s/subagents/agent-22bb33.jsonl",
                "p/s/subagents/agent-11aa22.jsonl", "p/z/c.jsonl", "p/y/d.jsonl", "elsewhere/e.jsonl"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    (tmp_path / "p" / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "p" / "x.jsonl").symlink_to(tmp_path / "elsewhere" / "e.jsonl")
    seen: list[str] = []

    def describe(path: str):
        seen.append(Path(path).relative_to(tmp_path).as_posix())
        return None, False

    found = discover([str(tmp_path / "p")], describe=describe)
    assert [Path(c.path).relative_to(tmp_path).as_posix() for c in found.sessions] == [
        "p/a.json", "p/b.jsonl", "p/y/d.jsonl", "p/z/c.jsonl"]
    assert [c.absolute for c in found.sessions] == [os.path.abspath(c.path) for c in found.sessions]
    assert seen == ["p/agent-00aa11.jsonl", "p/s/subagents/agent-11aa22.jsonl", "p/s/subagents/agent-22bb33.jsonl"]


def test_rich_progress_with_nothing_to_process_prints_one_line():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = RichProgress(stream)
    progress.start(0, 5, 1)
    progress.finish()
    assert stream.getvalue() == "batch: 5 transcript(s), 5 from cache, 0 to process with 1 worker(s)\n"
    assert progress.bar is None


def test_markdown_table_lines_are_the_table_rows():
    """``to_markdown`` writes each session line in one f-string; it must say what ``table_rows`` says."""
    from pipeline.batch.report import _cell, table_rows, to_markdown, totals
    from pipeline.batch.runner import BatchRun
    from pipeline.batch.worker import empty_record

    rows = []
    for n, (sid, status, cost, errors, notes) in enumerate([
            ("a b|c", "ok", 0.5, [], ["kept  twice", "x|y"]), (None, "failed", 0.0, ["bad\n line", "|"], []),
            ("s\t3", "refused", None, [], ["flagged"]), ("d", "duplicate", 1.25, [], ["same id"])]):
        row = empty_record(f"/p/f{n}|x.jsonl", [])
        row.update(session_id=sid, status=status, cost=cost, errors=errors, notes=notes, cached=bool(n % 2), key="k",
                   harness="claude code" if n else None, engine="ru|les", events=n * 7, seconds=n / 3,
                   output="written" if n == 0 else None)
        rows.append(row)
    run = BatchRun(rows=rows, engine="rules")
    md = to_markdown(run).splitlines()
    expected = ["| " + " | ".join(_cell(c) for c in cells) + " |" for cells in table_rows(run, totals(run))]
    start = md.index(expected[0])
    assert md[start:start + len(expected)] == expected


def test_agent_memo_is_the_same_from_another_working_directory(tmp_path, monkeypatch):
    """Review finding: the memo kept a sub-agent's parent as discovery spelled it (relative), so a rerun started
    elsewhere took the sub-agent for an orphan and rewrote the parent's state file without its answer."""
    copy_archive(tmp_path / "archive")
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    first = run_batch(["archive"], BatchOptions(out=out, jobs=1))
    monkeypatch.chdir(tmp_path / "elsewhere")
    second = run_batch(["../archive"], BatchOptions(out=out, jobs=1))
    assert [ids(run.rows)[A]["subagents_linked"] for run in (first, second)] == [1, 1]
    assert ids(second.rows)[A]["cached"] is True
    assert all(os.path.isabs(entry[5]) for entry in index_data(out)["agents"].values() if entry[5])


def test_since_applies_to_sessions_served_from_the_cache(archive, tmp_path):
    """Review finding: the cache key does not hold --since, so a session cached by a run without it was served
    as ok by a run with it."""
    from datetime import datetime, timezone

    for path in archive.rglob("*.json*"):  # files modified now: discovery's mtime shortcut keeps them all
        os.utime(path)
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    since = datetime(2026, 2, 10, tzinfo=timezone.utc)  # between the two weather sessions (02-03 and 02-17)
    fresh = ids(run_batch([str(archive)], BatchOptions(out=tmp_path / "fresh", jobs=1, since=since)).rows)
    cached = ids(run_batch([str(archive)], BatchOptions(out=out, jobs=1, since=since)).rows)
    assert fresh[A]["status"] == cached[A]["status"] == "ok"
    early = [sid for sid, row in fresh.items() if row["status"] == "skipped"]
    assert early and [cached[sid]["status"] for sid in early] == ["skipped"] * len(early)
    assert all(cached[sid]["cached"] for sid in early)
    assert any("before --since 2026-02-10T00:00:00Z" in note for sid in early for note in cached[sid]["notes"])


@pytest.mark.parametrize("damage", ["digest", "row"])
def test_a_damaged_index_entry_is_a_miss_not_a_crash(archive, tmp_path, damage):
    out = tmp_path / "out"
    first = ids(run_batch([str(archive)], BatchOptions(out=out, jobs=1)).rows)
    data = index_data(out)
    if damage == "digest":
        for entry in data["files"].values():
            entry[5] = None
    else:
        for row in data["rows"].values():
            del row["status"]
    (out / ".cache" / "index.json").write_text(json.dumps(data))
    again = ids(run_batch([str(archive)], BatchOptions(out=out, jobs=1)).rows)
    assert {sid: r["status"] for sid, r in again.items()} == {sid: r["status"] for sid, r in first.items()}


def test_the_memo_forgets_files_gone_from_the_archive(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    gone = archive / "copilot" / "session-state" / C / "events.jsonl"
    assert str(gone.resolve()) in index_data(out)["files"]
    gone.unlink()
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    files = index_data(out)["files"]
    assert str(gone.resolve()) not in files
    assert str(next(archive.rglob(f"{A}.jsonl")).resolve()) in files
