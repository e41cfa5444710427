"""The fixture archive of ``duck-tape batch`` and the discovery of sessions in it (issue 6, item 1)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.batch.discover import discover
from pipeline.batch.subagents import inspect, is_agent_file

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "fixtures" / "archive"
PROJECT = ARCHIVE / "claude-code" / "-home-dev-weather"
A = "53353b45-ab35-4b2f-9b14-a09175b8dd79"
B = "b7a79a26-41d3-4b65-889f-fe8d3d2873ae"
C = "9789d0e6-955a-4c09-a65d-5d09b6184de8"
AGENT = PROJECT / A / "subagents" / "agent-a3f9c2d17b8e4f6a1.jsonl"


def rel(paths) -> list[str]:
    return [str(Path(p).relative_to(ARCHIVE)) for p in paths]


def test_archive_is_current(tmp_path):
    subprocess.run([sys.executable, str(ARCHIVE / "build.py"), str(tmp_path)], check=True, capture_output=True)
    built = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    kept = sorted(str(p.relative_to(ARCHIVE)) for p in ARCHIVE.rglob("*")
                  if p.is_file() and p.name not in ("build.py", "README.md") and "__pycache__" not in p.parts)
    assert built == kept and len(built) == 10
    for name in built:
        assert (tmp_path / name).read_bytes() == (ARCHIVE / name).read_bytes(), f"run fixtures/archive/build.py: {name}"


def test_discovery_links_the_subagent_and_skips_the_warmup():
    found = discover([str(ARCHIVE)])
    assert rel(c.path for c in found.sessions) == [
        "backup/weather-units-copy.jsonl",
        f"claude-code/-home-dev-weather/{A}.jsonl",
        f"claude-code/-home-dev-weather/{B}.jsonl",
        f"copilot/session-state/{C}/events.jsonl",
        "misc/upload-2026-02-28.jsonl",
        "opencode/ses_d0728e6d05ccFcREVkTShczEFb.json",
    ]
    parent = next(c for c in found.sessions if c.path.endswith(f"{A}.jsonl"))
    assert parent.subagents == [str(AGENT)]
    assert {(str(Path(s.path).relative_to(ARCHIVE)), s.reason.split(",")[0]) for s in found.skipped} == {
        ("claude-code/-home-dev-weather/agent-5d1e9a7c.jsonl", "warm-up sub-agent file (not a task)"),
        (str(AGENT.relative_to(ARCHIVE)), "sub-agent file"),
    }
    assert all(not c.explicit and not is_agent_file(c.path) for c in found.sessions)


def test_subagent_file_knows_its_parent_and_meta():
    info = inspect(str(AGENT))
    assert info.parent == str(PROJECT / f"{A}.jsonl")
    assert (info.agent_id, info.warmup, info.agent_type, info.description) == (
        "a3f9c2d17b8e4f6a1", False, "Explore", "Investigate flaky cache test")
    warm = inspect(str(PROJECT / "agent-5d1e9a7c.jsonl"))  # 2.0.x layout: the parent comes from sessionId
    assert warm.parent == str(PROJECT / f"{B}.jsonl") and warm.warmup


def test_orphan_subagent_is_skipped(tmp_path):
    target = tmp_path / "proj"
    shutil.copytree(PROJECT, target)
    (target / f"{A}.jsonl").unlink()
    found = discover([str(target)])
    assert [s.reason for s in found.skipped if "agent-a3f9" in s.path] == [
        "sub-agent file whose parent session is not in the archive"]
    assert not any("agent-" in Path(c.path).name for c in found.sessions)


def test_hidden_side_and_excluded_folders_are_not_entered(tmp_path):
    for rel_path in (".git/x.jsonl", ".duck-tape/y.jsonl", "node_modules/z.json", "p/tool-results/t.json",
                     "s/checkpoints/c.json", "out/report.json", "keep/session.jsonl", "keep/notes.md",
                     "keep/agent-1.meta.json"):
        path = tmp_path / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    (tmp_path / "keep" / "link.jsonl").symlink_to(tmp_path / "keep" / "session.jsonl")
    found = discover([str(tmp_path)], exclude=[str(tmp_path / "out")])
    assert [Path(c.path).relative_to(tmp_path).as_posix() for c in found.sessions] == ["keep/session.jsonl"]


def test_explicit_files_and_missing_paths(tmp_path):
    found = discover([str(PROJECT / f"{B}.jsonl"), str(tmp_path / "nope"), str(PROJECT / f"{B}.jsonl")])
    assert [c.path for c in found.sessions] == [str(PROJECT / f"{B}.jsonl")]
    assert found.sessions[0].explicit and found.missing == [str(tmp_path / "nope")]


def test_since_skips_files_last_modified_before(tmp_path):
    target = tmp_path / "a"
    shutil.copytree(ARCHIVE / "copilot", target)
    old = datetime(2025, 6, 1, tzinfo=timezone.utc).timestamp()
    events = next(target.rglob("events.jsonl"))
    os.utime(events, (old, old))
    found = discover([str(target)], since=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert found.sessions == [] and [s.reason for s in found.skipped] == ["last modified before --since 2026-01-01"]


@pytest.mark.parametrize("name, expected", [("agent-a3f9c2d1.jsonl", True), ("agent-a3f9c2d17b8e4f6a1.jsonl", True),
                                            ("agent-notes.jsonl", False), ("agent-a3f9c2d1.meta.json", False),
                                            (f"{A}.jsonl", False)])
def test_agent_file_names(name, expected):
    assert is_agent_file(name) is expected


def _transcript(events: list[tuple[str, str, str | None]]):
    from pipeline.transcripts.model import Event, Transcript, TranscriptMeta

    meta = TranscriptMeta(harness="claude-code", format="claude-code-jsonl", path="/p/s.jsonl", session_id="s",
                          end_time=events[-1][2] if events else None)
    return Transcript(meta=meta, events=[Event(index=n, kind=k, text=t, timestamp=ts) for n, (k, t, ts) in enumerate(events)])


def test_link_inserts_the_missing_answer_in_time_order():
    from pipeline.batch.subagents import SubagentFile, link

    parent = _transcript([("user_prompt", "find the bug", "2026-02-17T09:30:00.000Z"),
                          ("subagent_call", "look at the cache", "2026-02-17T09:31:00.000Z"),
                          ("subagent_result", "Async agent launched successfully.", "2026-02-17T09:31:01.000Z"),
                          ("assistant_text", "waiting for the agent", "2026-02-17T09:35:00.000Z")])
    parent.events[1].target, parent.events[1].call_id, parent.events[1].tool_name = "Investigate", "toolu_1", "Agent"
    sub = _transcript([("user_prompt", "look at the cache", "2026-02-17T09:31:02.000Z"),
                       ("assistant_text", "The TTL is read at import time.", "2026-02-17T09:33:00.000Z")])
    info = SubagentFile(path="/p/s/subagents/agent-abc123.jsonl", parent="/p/s.jsonl", agent_type="Explore",
                        description="Investigate")
    linked, added = link(parent, [(info, sub)])
    assert added == 1
    assert [(e.index, e.kind) for e in linked.events] == [(0, "user_prompt"), (1, "subagent_call"),
                                                          (2, "subagent_result"), (3, "subagent_result"),
                                                          (4, "assistant_text")]
    new = linked.events[3]
    assert (new.text, new.call_id, new.tool_name, new.agent, new.timestamp) == (
        "The TTL is read at import time.", "toolu_1", "Agent", "Explore", "2026-02-17T09:33:00.000Z")
    assert [e.index for e in parent.events] == [0, 1, 2, 3]  # the parent's events are not renumbered
    again, added = link(linked, [(info, sub)])
    assert added == 0 and again is linked  # already counted: nothing added twice
