"""``duck-tape batch`` over the fixture archive: state files, report, exit code, cache, interrupt and resume,
failure isolation, sub-agent linking, ``--since``, ``--mask``, ``--merge`` (issue 6, items 1 and 4)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from batch_helpers import ARCHIVE, A, B, C, D, archive, by_session, run  # noqa: F401 (archive: a fixture)

from pipeline.batch import merge
from pipeline.batch.progress import PlainProgress
from pipeline.batch.runner import BatchOptions, run_batch
from pipeline.stages import distil
from pipeline.state.parse import parse
from pipeline.transcripts import read_transcript

SECRET = "sk-proj-Wd3FAKEr8Tn5Qk2Lp7Vx9Hb4Mz6Jc1Ys0"
ROOT_CAUSE = ("Root cause: weather/cache.py reads WEATHER_CACHE_TTL once at import time, so the monkeypatch in "
              "test_forecast_cache has no effect and entries expire after the default 300 seconds.")


def states(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("*.state.md"))


def test_batch_writes_state_files_and_report_and_exits_6(capsys, archive, tmp_path):
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "batch", str(archive), "--out", str(out), "--jobs", "2")
    assert code == 6
    assert states(out) == sorted([f"{A}.state.md", f"{B}.state.md", f"{C}.state.md"])
    # one way of counting everywhere (issue 24, item 5: the summary said "1 failed", the error "2 ... failed")
    assert (f"duck-tape: error: 2 of 5 session(s) not written: 1 failed (upload-2026-02-28.jsonl), 1 refused by "
            f"redaction ({D}); pass --mask to write the refused ones with <REDACTED>; see {out / 'report.md'}") in err
    assert "[5/5]" in err and "batch: 5 transcript(s), 0 from cache, 5 to process with 2 worker(s)" in err
    assert stdout.startswith("5 session(s), 0 from cache: 1 failed, 3 ok, 1 refused; ")
    report = json.loads((out / "report.json").read_text())
    rows = by_session(report["sessions"])
    assert set(rows) == {A, B, C, D, "upload-2026-02-28.jsonl"}
    assert [rows[k]["status"] for k in (A, B, C, D, "upload-2026-02-28.jsonl")] == ["ok", "ok", "ok", "refused", "failed"]
    assert (rows[A]["harness"], rows[C]["harness"], rows[D]["harness"]) == ("claude-code", "copilot", "opencode")
    assert rows[A]["subagents_linked"] == 1 and rows[A]["engine"] == "rules" and rows[A]["tokens"] == 0
    assert "unknown transcript format" in rows["upload-2026-02-28.jsonl"]["errors"][0]
    assert any("Flagged: openai-api-key" in e for e in rows[D]["errors"]) and not any(SECRET in e for e in rows[D]["errors"])
    assert "text" not in rows[A]
    totals = report["totals"]
    assert (totals["sessions"], totals["failed"], totals["refused"], totals["cached"]) == (5, 1, 1, 0)
    assert totals["decisions"] == sum(r["decisions"] for r in report["sessions"] if r["status"] == "ok")
    reasons = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert reasons["agent-5d1e9a7c.jsonl"] == "warm-up sub-agent file (not a task)"
    assert reasons["agent-a3f9c2d17b8e4f6a1.jsonl"].startswith("sub-agent file, linked to its parent session")
    assert len([r for r in reasons.values() if r.endswith("(duplicate)")]) == 1
    md = (out / "report.md").read_text()
    assert "\n5 session(s): 0 from cache, 1 failed, 1 refused by redaction; " in md
    assert md.startswith("# duck-tape batch report\n") and f"| {A} | claude-code |" in md and "**total** (5 sessions)" in md


def test_state_files_are_valid_and_dated_by_the_session(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    state = parse((out / f"{A}.state.md").read_text())
    assert state.kind == "recovered" and state.trigger == "batch, engine: rules"
    last = read_transcript(str(archive / "claude-code" / "-home-dev-weather" / f"{A}.jsonl")).meta.end_time
    assert state.created == last[:19] + "Z" and state.stamp == last[:10] + "-" + last[11:13] + last[14:16]
    assert [d.status for d in state.decisions] == ["REJECTED", "APPROVED"]
    assert state.position.current == "Inject a clock into ForecastCache"


def test_subagent_answer_counts_only_through_the_link(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    linked = parse((out / f"{A}.state.md").read_text())
    assert ROOT_CAUSE in [f.text for f in linked.facts]
    alone = distil.run(read_transcript(str(archive / "claude-code" / "-home-dev-weather" / f"{A}.jsonl")))
    assert ROOT_CAUSE not in [f.text for f in alone.facts]


def test_mask_writes_the_session_with_a_secret(archive, tmp_path):
    out = tmp_path / "out"
    result = run_batch([str(archive)], BatchOptions(out=out, jobs=1, mask=True))
    text = (out / f"{D}.state.md").read_text()
    assert SECRET not in text and "<REDACTED>" in text
    row = by_session(result.rows)[D]
    assert row["status"] == "ok" and row["redacted"] == 2
    assert [r["path"] for r in result.failures] == [str(archive / "misc" / "upload-2026-02-28.jsonl")]


def test_rerun_is_served_from_cache_and_does_no_work(archive, tmp_path):
    out = tmp_path / "out"
    first = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    before = {name: (out / name).read_bytes() for name in states(out)}
    mtimes = {name: (out / name).stat().st_mtime_ns for name in states(out)}
    computed, stream = [], _Lines()
    second = run_batch([str(archive)], BatchOptions(out=out, jobs=1), progress=PlainProgress(stream),
                       on_result=computed.append)
    assert computed == []
    assert stream.text == "batch: 5 transcript(s), 5 from cache, 0 to process with 1 worker(s)\n"
    assert all(r["cached"] for r in second.rows) and len(second.rows) == len(first.rows) == 5
    assert {name: (out / name).read_bytes() for name in states(out)} == before
    assert {name: (out / name).stat().st_mtime_ns for name in states(out)} == mtimes
    assert {r["output"] for r in second.rows if r["status"] == "ok"} == {"unchanged"}
    assert [(r["session_id"], r["status"], r["decisions"]) for r in second.rows] == \
        [(r["session_id"], r["status"], r["decisions"]) for r in first.rows]


def test_rerun_does_not_even_read_unchanged_transcripts(archive, tmp_path, monkeypatch):
    from pipeline.batch import cache

    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    memo = json.loads((out / ".cache" / "index.json").read_text())["files"]
    assert sum(1 for p in memo if p.startswith(str(archive))) == 7  # 6 transcripts + 1 sub-agent file
    assert sum(1 for p in memo if p.startswith(str(out))) == 3  # the state files written

    def no_reading(path):
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(cache, "file_digest", no_reading)
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert all(r["cached"] for r in again.rows) and len(again.rows) == 5


def test_an_edited_state_file_is_restored_from_the_cache(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    target = out / f"{C}.state.md"
    good = target.read_text()
    target.write_text(good.replace("## Decision Log", "## Decision log"))
    again = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    assert target.read_text() == good
    assert {r["session_id"]: r["output"] for r in again.rows if r["status"] == "ok"}[C] == "updated"


def test_a_changed_transcript_or_option_is_recomputed(archive, tmp_path):
    out = tmp_path / "out"
    run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    events = next((archive / "copilot").rglob("events.jsonl"))
    with events.open("a") as handle:
        handle.write('{"type":"session.info","data":{"message":"resumed"},"id":"e-x","timestamp":"2026-02-03T09:00:00.000Z","parentId":null}\n')
    computed: list[dict] = []
    run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=computed.append)
    assert [r["session_id"] for r in computed] == [C]
    computed.clear()
    run_batch([str(archive)], BatchOptions(out=out, jobs=1, mask=True), on_result=computed.append)
    assert len(computed) == 5  # --mask is part of the configuration, so every key changed


def test_interrupt_then_resume(archive, tmp_path):
    out = tmp_path / "out"

    def stop_after_first(row: dict) -> None:
        raise KeyboardInterrupt

    first = run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=stop_after_first)
    assert first.interrupted and len(first.rows) == 1
    done = first.rows[0]
    assert done["status"] == "ok" and (out / f"{done['session_id']}.state.md").is_file()
    computed: list[dict] = []
    second = run_batch([str(archive)], BatchOptions(out=out, jobs=1), on_result=computed.append)
    assert not second.interrupted and len(second.rows) == 5
    assert [r["path"] for r in second.rows if r["cached"]] == [done["path"]]
    assert len(computed) == 4 and done["path"] not in [r["path"] for r in computed]


def test_interrupt_from_the_cli_writes_a_partial_report_and_exits_1(capsys, archive, tmp_path, monkeypatch):
    from pipeline.batch import runner

    original = runner.run_job
    calls = []

    def interrupted(job):
        calls.append(job.path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(job)

    monkeypatch.setattr(runner, "run_job", interrupted)
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "batch", str(archive), "--out", str(out), "--jobs", "1")
    assert code == 1
    assert "duck-tape: error: interrupted after 1 session(s); they are written and cached: run the same command again to resume" in err
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted"] is True and len(report["sessions"]) == 1
    assert "**interrupted**" in (out / "report.md").read_text()


def test_since_skips_sessions_that_ended_before(archive, tmp_path):
    out = tmp_path / "out"
    result = run_batch([str(archive)], BatchOptions(out=out, jobs=1, mask=True,
                                                    since=datetime(2026, 2, 15, tzinfo=timezone.utc)))
    rows = by_session(result.rows)
    assert rows[B]["status"] == rows[C]["status"] == "skipped"
    assert rows[C]["notes"][-1].startswith("session ended 2026-02-03T")
    assert rows[A]["status"] == rows[D]["status"] == "ok"
    assert states(out) == sorted([f"{A}.state.md", f"{D}.state.md"])
    computed: list[dict] = []
    run_batch([str(archive)], BatchOptions(out=out, jobs=1, mask=True), on_result=computed.append)
    assert sorted(r["session_id"] for r in computed) == sorted([B, C])  # skipped sessions were not cached as done


def test_same_session_in_two_different_files_keeps_the_one_with_more_events(archive, tmp_path):
    project = archive / "claude-code" / "-home-dev-weather"
    lines = (project / f"{A}.jsonl").read_text().splitlines(keepends=True)
    (archive / "misc" / "early-copy.jsonl").write_text("".join(lines[: len(lines) // 2]))
    out = tmp_path / "out"
    result = run_batch([str(archive)], BatchOptions(out=out, jobs=1))
    rows = [r for r in result.rows if r["session_id"] == A]
    assert sorted(r["status"] for r in rows) == ["duplicate", "ok"]
    kept = next(r for r in rows if r["status"] == "ok")
    assert kept["path"] == str(project / f"{A}.jsonl") and kept["output_path"] == str(out / f"{A}.state.md")
    assert parse((out / f"{A}.state.md").read_text()).position.current == "Inject a clock into ForecastCache"


def test_explicit_file_that_is_not_a_transcript_fails(capsys, tmp_path):
    notes = tmp_path / "notes.json"
    notes.write_text('{"title": "not a transcript"}')
    code, _, err = run(capsys, "batch", str(notes), "--out", str(tmp_path / "out"))
    assert code == 6 and "unknown transcript format" in (tmp_path / "out" / "report.md").read_text()


def test_json_file_found_in_a_folder_that_is_not_a_transcript_is_skipped(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "package.json").write_text('{"name": "x"}')
    shutil.copy(next((ARCHIVE / "copilot").rglob("events.jsonl")), folder / "events.jsonl")
    result = run_batch([str(folder)], BatchOptions(out=tmp_path / "out", jobs=1))
    assert [r["status"] for r in result.rows] == ["ok"] and result.failures == []
    assert [(Path(s.path).name, s.reason) for s in result.skipped] == [
        ("package.json", "not a transcript (a JSON file of no known transcript format)")]


@pytest.mark.parametrize("args, message", [
    (["batch", "{missing}", "--out", "{out}"], "no such file or folder: {missing}"),
    (["batch", "{empty}", "--out", "{out}"], "no transcripts found under {empty}"),
    (["batch", "{empty}", "--out", "{out}", "--since", "last tuesday"], "--since 'last tuesday': expected a date"),
])
def test_bad_usage_exits_2(capsys, tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    names = {"missing": str(tmp_path / "missing"), "out": str(tmp_path / "out"), "empty": str(tmp_path / "empty")}
    code, _, err = run(capsys, *[a.format(**names) for a in args])
    assert code == 2 and message.format(**names) in err


def test_llm_engine_without_a_model_routes_through_the_engines_and_falls_back(archive, tmp_path, monkeypatch):
    from pipeline.config import resolve

    monkeypatch.delenv("DUCK_TAPE_MODEL", raising=False)
    config, _ = resolve({"engine": "llm"}, env={}, file_values={})
    result = run_batch([str(archive / "copilot")], BatchOptions(out=tmp_path / "out", jobs=2, config=config))
    [row] = result.rows
    assert row["status"] == "ok" and row["engine"] == "rules"
    assert any("no model configured" in n for n in row["notes"])


def test_merge_orders_sessions_and_prints_one_changelog(capsys, archive, tmp_path):
    out = tmp_path / "out"
    context = tmp_path / "CONTEXT.md"
    code, stdout, _ = run(capsys, "batch", str(archive / "claude-code"), str(archive / "copilot"), "--out", str(out),
                          "--merge", str(context), "--yes")
    assert code == 0
    assert stdout.count("Changelog:") == 1 and "Merging 3 state file(s) into" in stdout
    text = context.read_text()
    dates = [text.index(d) for d in ("(date: 2026-02-03)", "(date: 2026-02-10)", "(date: 2026-02-17)")]
    assert dates == sorted(dates)  # Copilot (02-03), then the --units session (02-10), then the flaky test (02-17)
    assert ROOT_CAUSE in text
    code, stdout, _ = run(capsys, "batch", str(archive / "claude-code"), str(archive / "copilot"), "--out", str(out),
                          "--merge", str(context), "--yes")
    assert code == 0 and "No changes to CONTEXT.md." in stdout and context.read_text() == text


def test_merge_needs_approval_when_not_a_terminal(capsys, archive, tmp_path):
    context = tmp_path / "CONTEXT.md"
    code, _, err = run(capsys, "batch", str(archive / "copilot"), "--out", str(tmp_path / "out"), "--merge", str(context))
    assert code == 4 and not context.exists() and "pass --yes" in err


def test_merge_refused_up_front_when_the_engine_is_missing(capsys, archive, tmp_path, monkeypatch):
    monkeypatch.setattr(merge, "available", lambda: False)
    out = tmp_path / "out"
    code, _, err = run(capsys, "batch", str(archive), "--out", str(out), "--merge", str(tmp_path / "CONTEXT.md"))
    assert code == 2 and "--merge is not available yet" in err and not out.exists()


class _Lines:
    """A text stream that keeps what was written (not a terminal: plain progress lines)."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_minimal_claude_code_lines_are_a_session(capsys, tmp_path):
    """Issue 24, item 5: the duck-tape skill's fixtures ({type, message, timestamp} lines) were 'unknown format'."""
    from test_read_claude_code import MINIMAL_LINES

    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / "skill-fixture.jsonl").write_text("".join(json.dumps(line) + "\n" for line in MINIMAL_LINES))
    code, stdout, err = run(capsys, "batch", str(folder), "--out", str(tmp_path / "out"), "--jobs", "1")
    assert code == 0, err
    assert stdout.startswith("1 session(s), 0 from cache: 1 ok; ")
    [row] = json.loads((tmp_path / "out" / "report.json").read_text())["sessions"]
    assert (row["status"], row["harness"], row["events"]) == ("ok", "claude-code", 4)
