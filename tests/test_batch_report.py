"""The batch report (markdown and JSON) and the progress display (issue 6, item 1)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pipeline.batch.discover import Skipped
from pipeline.batch.progress import PlainProgress, RichProgress, line, make_progress
from pipeline.batch.report import report_paths, to_json, to_markdown, totals, write_reports
from pipeline.batch.runner import BatchRun, output_name
from pipeline.batch.worker import empty_record


def row(path: str, **fields) -> dict:
    record = empty_record(path, [])
    record.update({"cached": False, "key": "ab" * 20, **fields})
    return record


@pytest.fixture
def run() -> BatchRun:
    return BatchRun(
        rows=[
            row("/a/s1.jsonl", session_id="s1", harness="claude-code", events=40, decisions=3, facts=5, engine="rules",
                seconds=0.25, status="ok", text="# Agent State\n", output="written"),
            row("/a/s2.jsonl", session_id="s2", harness="copilot", events=12, decisions=1, facts=2, engine="llm",
                tokens=5120, cost=0.0123, seconds=4.5, status="ok", text="# Agent State\n", cached=True, output="unchanged"),
            row("/a/bad|name.jsonl", status="failed", errors=["/a/bad|name.jsonl: unknown transcript format"]),
        ],
        skipped=[Skipped("/a/agent-1234abcd.jsonl", "warm-up sub-agent file (not a task)")],
        engine="rules", jobs=2, out="/tmp/out", started="2026-11-29T10:00:00Z", finished="2026-11-29T10:00:05Z",
        wall_seconds=5.0,
    )


def test_totals(run):
    t = totals(run)
    assert t == {"sessions": 3, "status": {"failed": 1, "ok": 2}, "cached": 1, "failed": 1, "refused": 0, "events": 52,
                 "decisions": 4, "facts": 7, "tokens": 5120, "cost": 0.0123, "seconds": 4.75, "computed_seconds": 0.25,
                 "wall_seconds": 5.0, "skipped_files": 1}


def test_unknown_cost_makes_the_total_unknown(run):
    run.rows[1]["cost"] = None
    assert totals(run)["cost"] is None
    assert "| n/a |" in to_markdown(run)


def test_markdown_table(run):
    md = to_markdown(run)
    lines = md.splitlines()
    header = lines.index("| session | harness | events | decisions | facts | engine | tokens | cost | seconds | status | errors |")
    assert lines[header + 2] == "| s1 | claude-code | 40 | 3 | 5 | rules | 0 | $0.0000 | 0.25 | ok, written |  |"
    assert lines[header + 3] == "| s2 | copilot | 12 | 1 | 2 | llm | 5120 | $0.0123 | 4.50 | ok (cached) |  |"
    assert lines[header + 4] == ("| bad\\|name.jsonl | - | 0 | 0 | 0 | - | 0 | $0.0000 | 0.00 | failed | "
                                 "/a/bad\\|name.jsonl: unknown transcript format |")
    assert lines[header + 5] == ("| **total** (3 sessions) |  | 52 | 4 | 7 | rules | 5120 | $0.0123 | 4.75 | "
                                 "failed 1, ok 2; cached 1 |  |")
    assert "## Skipped files\n\n- `/a/agent-1234abcd.jsonl`: warm-up sub-agent file (not a task)" in md
    assert "3 session(s): 1 from cache, 1 failed; 0.25 s of processing in this run." in md


def test_json_report_has_no_state_text(run, tmp_path):
    md_path, json_path = write_reports(run, None, tmp_path)
    assert (md_path, json_path) == (tmp_path / "report.md", tmp_path / "report.json")
    data = json.loads(json_path.read_text())
    assert data == json.loads(json.dumps(to_json(run)))
    assert [s["session_id"] for s in data["sessions"]] == ["s1", "s2", None]
    assert all("text" not in s and "cacheable" not in s for s in data["sessions"])
    assert data["skipped"] == [{"path": "/a/agent-1234abcd.jsonl", "reason": "warm-up sub-agent file (not a task)"}]
    assert md_path.read_text() == to_markdown(run)


@pytest.mark.parametrize("given, expected", [
    (None, ("/o/report.md", "/o/report.json")),
    ("r/batch.md", ("r/batch.md", "r/batch.json")),
    ("r/batch.json", ("r/batch.md", "r/batch.json")),
    ("r/batch", ("r/batch", "r/batch.json")),
])
def test_report_paths(given, expected):
    assert report_paths(given, Path("/o")) == (Path(expected[0]), Path(expected[1]))


@pytest.mark.parametrize("fields, expected", [
    ({"session_id": "5b0e8a52-1d3c"}, "5b0e8a52-1d3c.state.md"),
    ({"session_id": "ses/../../etc"}, "ses_.._.._etc.state.md"),
    ({"session_id": None}, "events-abababab.state.md"),
])
def test_output_names_are_safe(fields, expected):
    assert output_name(row("/x/events.jsonl", **fields)) == expected


def test_plain_progress_lines(run):
    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.start(2, 1, 2)
    progress.done(run.rows[0])
    progress.done(run.rows[2])
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "batch: 3 transcript(s), 1 from cache, 2 to process with 2 worker(s)",
        "[1/2] ok       claude-code  s1  decisions 3, facts 5  0.25 s",
        "[2/2] failed   -            bad|name.jsonl  /a/bad|name.jsonl: unknown transcript format",
    ]
    assert line(run.rows[1]).startswith("ok       copilot      s2  decisions 1, facts 2")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_the_rich_progress_bar(run):
    stream = _Terminal()
    progress = make_progress(stream)
    assert isinstance(progress, RichProgress)
    assert isinstance(make_progress(io.StringIO()), PlainProgress)
    progress.start(2, 0, 2)
    progress.done(run.rows[0])
    progress.done(run.rows[2])
    progress.finish()
    text = stream.getvalue()
    assert "batch: 2 transcript(s), 0 from cache, 2 to process with 2 worker(s)" in text
    assert "2/2" in text and "failed   -            bad|name.jsonl" in text


def test_summary_line_says_how_many_failures_were_refusals(run):
    """The summary said '2 failed' while the table said 'failed 1, refused 1': both count each status alone now
    (issue 24, item 5)."""
    run.rows[0]["status"] = "refused"
    md = to_markdown(run)
    assert "3 session(s): 1 from cache, 1 failed, 1 refused by redaction; " in md
