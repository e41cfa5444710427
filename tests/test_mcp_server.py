"""``duck-tape mcp`` (issue 16): the stdio MCP server, driven by the official SDK's own client over stdio (the
command spawned as a subprocess, as Claude Code runs an MCP server), and its tool functions directly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_kit import mark_as_store, own
from conftest import ROOT

from pipeline.serve import tools

mcp = pytest.importorskip("mcp")  # the `mcp` extra; the dev extra installs it

CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # fake, split so no scanner flags this file

STATE = """# Agent State

Session: 2026-03-10-0930 | Cwd: {cwd} | Repo/Branch: shop@main | Trigger: manual

Created: 2026-03-10T09:30:00Z

## Approved Workflow
Add rate limiting to the checkout endpoint.

## Position
- **Current:** Writing the limiter middleware
- **Done:**
  - Read the checkout handler
- **Remaining:**
  - Add tests for the 429 response

## Decision Log
2026-03-10T09:10:00Z APPROVED: token bucket per API key - bursts are allowed, the average is capped
2026-03-10T09:20:00Z REJECTED: fixed window counter - it lets twice the limit through at the window edge
{extra}
## Established Facts
The checkout handler lives in src/checkout/handler.py

## Re-derivation
Read src/checkout/handler.py
"""

CONTEXT = """# Shop

## Contents
- [Goals](#goals)
- [Decisions](#decisions)
- [Conventions](#conventions)
- [Glossary](#glossary)
- [Deferred-Debt](#deferred-debt)
- [Open-Questions](#open-questions)
- [Notes](#notes)

## Goals
- **checkout**: a checkout that survives traffic spikes

## Decisions
- **redis-limiter-store**: keep limiter counters in Redis, shared by all workers (date: 2026-03-12)
- **python-version**: the service runs on Python 3.12 (date: 2026-02-01)

## Conventions
- **tests**: pytest, one file per module

## Glossary
- **bucket**: a token bucket

## Deferred-Debt
- TODO(perf): 2026-03-10 measure the limiter overhead [status: open]

## Open-Questions
- Which limit for anonymous users? (date: 2026-03-10)

## Notes
### 2026-03-10 09:40
Started the limiter."""


def _workspace(tmp_path: Path, extra: str = "") -> Path:
    project = tmp_path / "shop"
    store = project / ".duck-tape"
    store.mkdir(parents=True)
    (store / "2026-03-10-0930.state.md").write_text(STATE.format(cwd=project, extra=extra))
    own(store, store / "2026-03-10-0930.state.md")  # as the store does when it writes one
    (project / "CONTEXT.md").write_text(CONTEXT)
    return project


async def _session(project: Path, calls: list[tuple[str, dict]]):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pipeline", "mcp"], cwd=str(project),
        env={"PYTHONPATH": str(ROOT), "HOME": str(project), "PATH": os.environ.get("PATH", ""),
             "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]})
    async with Client(params, read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        results = [await client.call_tool(name, args) for name, args in calls]
    return listed, results


def _run(project: Path, calls: list[tuple[str, dict]]):
    import anyio

    return anyio.run(_session, project, calls)


def test_sdk_client_over_stdio_lists_the_tools_and_reads_state_and_decisions(tmp_path):
    project = _workspace(tmp_path)
    listed, (state, found, old) = _run(project, [("state", {}), ("decisions", {"query": "limiter"}),
                                                 ("decisions", {"query": "WINDOW edge"})])
    assert sorted(t.name for t in listed.tools) == ["decisions", "raw_material", "recover", "save_state", "state"]
    recover_tool = next(t for t in listed.tools if t.name == "recover")
    assert recover_tool.input_schema["required"] == ["path"]
    assert set(recover_tool.input_schema["properties"]) == {"path", "approve", "mask", "session"}

    assert not state.is_error
    data = state.structured_content
    assert data["path"] == str(project / ".duck-tape" / "2026-03-10-0930.state.md") and data["kind"] == "manual"
    assert data["state"]["position"]["current"] == "Writing the limiter middleware"
    assert data["state"]["decisions"][1]["status"] == "REJECTED"
    assert data["state"]["decisions"][1]["what"] == "fixed window counter"
    assert "## Decision Log" in state.content[0].text and "State file (manual):" in state.content[0].text
    assert "No compaction marker found" in state.content[0].text  # what resume says, too

    # "limiter": the CONTEXT.md decision (its text) and none of the state's (they say "bucket"/"window")
    assert [d["source"] for d in found.structured_content["decisions"]] == ["context"]
    assert found.structured_content["decisions"][0] == {
        "source": "context", "file": str(project / "CONTEXT.md"), "when": "2026-03-12", "key": "redis-limiter-store",
        "text": "keep limiter counters in Redis, shared by all workers"}
    [hit] = old.structured_content["decisions"]
    assert (hit["status"], hit["what"], hit["when"]) == ("REJECTED", "fixed window counter", "2026-03-10T09:20:00Z")
    assert "2026-03-10T09:20:00Z REJECTED: fixed window counter" in old.content[0].text


def test_recover_is_a_dry_run_unless_approved_and_errors_are_tool_errors(tmp_path):
    project = _workspace(tmp_path)
    store = project / ".duck-tape"
    _, (dry, wrote, missing) = _run(project, [("recover", {"path": str(CC)}),
                                              ("recover", {"path": str(CC), "approve": True}),
                                              ("recover", {"path": "nope.jsonl"})])
    assert not dry.is_error and dry.structured_content["written"] is None
    assert dry.structured_content["text"].startswith("# Agent State")
    assert "Dry run: nothing was written." in dry.content[0].text
    written = Path(wrote.structured_content["written"])
    assert written.parent == store and written.name.endswith("-recovered.state.md")
    assert written.read_text() == wrote.structured_content["text"]
    assert len(list(store.glob("*.state.md"))) == 2  # the manual file and the one approved write
    assert missing.is_error and "nope.jsonl" in missing.content[0].text


def test_every_output_passes_the_redaction_mask(tmp_path):
    extra = f"2026-03-10T09:25:00Z APPROVED: deploy key {SECRET} for CI - the pipeline needs it\n"
    project = _workspace(tmp_path, extra)
    _, (state, found) = _run(project, [("state", {}), ("decisions", {"query": "deploy key"})])
    for result in (state, found):
        assert SECRET not in result.content[0].text and SECRET not in repr(result.structured_content)
        assert "<REDACTED>" in result.content[0].text
    assert found.structured_content["decisions"][0]["what"] == "deploy key <REDACTED> for CI"


def test_find_decisions_newest_first_dedupes_repeated_log_entries_and_limits(tmp_path):
    project = _workspace(tmp_path)
    store = project / ".duck-tape"
    later = STATE.format(cwd=project, extra="2026-03-11T08:00:00Z APPROVED: 429 with Retry-After - clients back off\n")
    (store / "2026-03-11-0800.state.md").write_text(later.replace("2026-03-10-0930", "2026-03-11-0800"))
    own(store, store / "2026-03-11-0800.state.md")
    found = tools.find_decisions(store, project / "CONTEXT.md")
    whens = [d["when"] for d in found["decisions"]]
    assert whens == ["2026-03-12", "2026-03-11T08:00:00Z", "2026-03-10T09:20:00Z", "2026-03-10T09:10:00Z",
                     "2026-02-01"]  # the two entries both files hold are listed once
    assert found["total"] == 5 and found["notes"] == []
    assert [d["when"] for d in tools.find_decisions(store, project / "CONTEXT.md", limit=2)["decisions"]] == whens[:2]
    with pytest.raises(ValueError, match="limit must be at least 1"):
        tools.find_decisions(store, project / "CONTEXT.md", limit=0)


def test_best_state_is_the_file_resume_uses_for_the_marker_session(tmp_path):
    """A marker naming session A: the file of session B (newer) is not the answer, A's own file is."""
    from pipeline.state.marker import Marker

    project = _workspace(tmp_path)
    store = project / ".duck-tape"
    mine = (store / "2026-03-10-0930.state.md")
    mine.write_text(mine.read_text().replace("Trigger: manual", "Trigger: manual | Session-Id: sess-a"))
    other = STATE.format(cwd=project, extra="").replace("2026-03-10-0930", "2026-03-10-0945")
    (store / "2026-03-10-0945.state.md").write_text(other.replace("Trigger: manual", "Trigger: manual | Session-Id: sess-b"))
    own(store, mine, store / "2026-03-10-0945.state.md")
    mark_as_store(store, Marker(time="2026-03-10T09:29:00Z", cwd=str(project), session_id="sess-a"))
    found = tools.best_state(store)
    assert found["path"] == str(mine) and found["state"]["session_id"] == "sess-a"
    assert any("other sessions" in m for m in found["messages"])


def test_mcp_is_imported_only_by_the_mcp_command():
    code = ("import sys; from pipeline.entry import main; "
            "main(['restore', '--dir', '/nonexistent/store']); main(['--help']); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


def test_missing_sdk_is_a_clear_usage_error(monkeypatch, capsys):
    from pipeline.cli import main

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)  # "import mcp…" raises ImportError
    monkeypatch.delitem(sys.modules, "pipeline.serve.mcp", raising=False)
    assert main(["mcp"]) == 2
    err = capsys.readouterr().err
    assert "the MCP server needs the 'mcp' package, which this installation lacks" in err
    assert "reinstall duck-tape: " in err and " -m pip install -e '" in err  # this checkout is an editable install
