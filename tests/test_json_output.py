"""``--json`` output (issue 15, item 5): one JSON object on stdout, documented in docs/json.md, for ``recover``
(with ``--merge``), ``resume``, ``restore`` (plain), ``merge``, ``migrate``, ``prune``; the error object of a command in
JSON mode (``init``, ``status`` too).  Shapes and real values."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from store_kit import mark_as_store, put_state
from conftest import GOLDEN

from pipeline.cli import main
from pipeline.commands import json_out
from pipeline.state.marker import Marker
from pipeline.state.store import list_states, session_label

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"


def test_recover_json_writes_and_reports(capsys, tmp_path):
    code = main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--yes", "--mask", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert set(report) == {"command", "transcript", "written", "dry_run", "stamp", "trigger", "sections", "counts",
                           "notes", "dropped", "redaction"}
    assert report["command"] == "recover" and report["transcript"] == str(CC)
    written = Path(report["written"])
    assert written.is_file() and written.name == f"{report['stamp']}-recovered.state.md"
    assert report["trigger"] == "recover, engine: rules"
    assert set(report["sections"].values()) == {"rules"} and "Decision Log" in report["sections"]
    assert report["counts"]["decisions"] > 0 and report["counts"]["facts"] > 0


def test_recover_json_never_asks(capsys, tmp_path):
    code = main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--mask", "--json"])
    out, err = capsys.readouterr()
    assert code == 4 and "--json never asks" in err
    error = json.loads(out)  # the error object: same exit code, same message as stderr
    assert set(error) == {"command", "error", "exit_code"}
    assert error["command"] == "recover" and error["exit_code"] == 4
    assert error["error"].startswith("--json never asks, so nothing was written to ") and error["error"] in err
    assert not (tmp_path / "st").exists()
    assert main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--json", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] is None


# --- shared helpers ------------------------------------------------------------------------------------------

FIXTURES = ROOT / "fixtures" / "context"
STATE = FIXTURES / "states" / "2026-03-11-0900.state.md"
SECRET = "sk-proj-Zx9FAKEq7Lm2Vb8Nc4Rt6Yh1Jk3Pw5Sd0"
SID = "3c36e3d9-43a0-4c66-9eb2-68a99f5c9fb0"  # the session of the CC fixture


def run_json(capsys, *argv: str) -> tuple[int, dict, str]:
    """Run the CLI in-process; stdout must be exactly one JSON object (and a final newline)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert out.endswith("}\n") and out.count("\n}\n") == 1, out  # one top-level object, indented
    return code, json.loads(out), err


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def manual_state(current: str, *, session: str | None = None) -> str:
    sid = f" | Session-Id: {session}" if session else ""
    return (f"# Agent State\n\nSession: 2026-03-10-0950 | Cwd: /home/dev/shop | Repo/Branch: shop@main{sid}\n"
            "Created: 2026-03-10T09:50:00Z\n\n## Approved Workflow\nAdd rate limiting to checkout\n\n"
            f"## Position\n- **Current:** {current}\n- **Done:**\n  - wrote the limiter\n- **Remaining:**\n"
            "  - document RATE_LIMIT settings\n\n## Decision Log\n"
            "2026-03-10T09:41:00Z APPROVED: token bucket in Redis - bursts of 35 requests must pass\n\n"
            "## Established Facts\nNone\n\n## Re-derivation\nNone\n")


# --- the emit helper ---------------------------------------------------------------------------------------


def test_masked_masks_every_string_and_keeps_the_json_valid():
    tricky = f'say "hi" \\ then OPENAI_API_KEY={SECRET}\nnext line'
    report = {"a": [tricky, {"nested": f"Bearer {SECRET}"}], "n": 3, "ok": True, "none": None,
              "path": Path("/tmp/x"), f"key {SECRET}": 1}
    text = json_out.dumps(report)
    assert SECRET not in text
    back = json.loads(text)
    assert back["a"][0] == 'say "hi" \\ then OPENAI_API_KEY=<REDACTED>\nnext line'
    assert back["a"][1]["nested"].endswith("<REDACTED>")
    assert (back["n"], back["ok"], back["none"], back["path"]) == (3, True, None, "/tmp/x")
    assert "key <REDACTED>" in back


def test_error_object_only_in_json_mode_and_only_once(capsys):
    json_out.reset()
    assert json_out.emit_error("boom", 2) is False and capsys.readouterr().out == ""
    json_out.begin("merge")
    assert json_out.emit_error("boom", 2, redaction=["line"]) is True
    assert json.loads(capsys.readouterr().out) == {"command": "merge", "error": "boom", "exit_code": 2,
                                                    "redaction": ["line"]}
    assert json_out.emit_error("again", 3) is False  # an object was printed already
    json_out.reset()


# --- recover --json --merge --------------------------------------------------------------------------------


def test_recover_json_merge_bootstraps_then_keeps(capsys, workspace):
    argv = ("recover", str(CC), "--dir", ".duck-tape", "--yes", "--mask", "--json", "--merge")
    code, report, err = run_json(capsys, *argv)
    assert code == 0, err
    assert err == ""  # everything is in the object
    merge = report["merge"]
    assert set(merge) == {"context", "state_files", "dry_run", "bootstrapped", "changed", "written", "changelog",
                          "added", "superseded", "dropped", "kept", "skipped", "redacted", "diff", "notes", "redaction"}
    assert merge["context"] == "CONTEXT.md" and merge["state_files"] == [report["written"]]
    assert (merge["bootstrapped"], merge["changed"], merge["written"], merge["dry_run"]) == (True, True, True, False)
    assert merge["changelog"][0] == "- Added: Goals TODO(scaffold)" and len(merge["changelog"]) == 16
    assert len(merge["added"]) == 16 and merge["added"][1] == {"section": "Decisions", "key": "fixed-window"}
    # what the translation left out, with its reason (issue 26): the workflow is a task list
    assert merge["skipped"][0]["source"] == "Approved Workflow" and merge["skipped"][0]["reason"] == "task list"
    assert {"source": "Decision Log", "text": "REJECTED: changing the checkout lock",
            "reason": "declined session action"} in merge["skipped"]
    assert merge["diff"].startswith("--- /dev/null\n+++ b/CONTEXT.md\n")
    context = (workspace / "CONTEXT.md").read_text()
    assert "**fixed-window**" in context
    code, again, err = run_json(capsys, *argv)  # the same recovery again (a later minute or an exit 2)
    if code == 2:
        assert again["command"] == "recover" and "already exists" in again["error"]
        return
    merge = again["merge"]
    assert (merge["changed"], merge["written"], merge["changelog"]) == (False, False, ["No changes to CONTEXT.md."])
    assert merge["added"] == [] and len(merge["kept"]) == 11
    assert merge["kept"][0] == {"section": "Decisions", "key": "fixed-window",
                                "reason": "already in CONTEXT.md with the same text"}
    assert (workspace / "CONTEXT.md").read_text() == context


def test_recover_json_merge_dry_run_writes_nothing(capsys, workspace):
    code, report, _ = run_json(capsys, "recover", str(CC), "--json", "--merge", "--dry-run")
    assert code == 0 and report["written"] is None
    assert report["merge"]["state_files"] == [] and report["merge"]["changed"] is True
    assert report["merge"]["written"] is False
    assert not (workspace / "CONTEXT.md").exists() and not (workspace / ".duck-tape").exists()


# --- merge --json ------------------------------------------------------------------------------------------


def test_merge_json_reports_added_superseded_dropped(capsys, workspace):
    shutil.copy(FIXTURES / "medium.md", workspace / "CONTEXT.md")
    before = (workspace / "CONTEXT.md").read_text()
    code, report, _ = run_json(capsys, "merge", str(STATE), "--json", "--dry-run")
    assert code == 0
    assert report["command"] == "merge" and report["state_files"] == [str(STATE)]
    assert (report["dry_run"], report["bootstrapped"], report["changed"], report["written"]) == (True, False, True,
                                                                                                   False)
    assert [a["key"] for a in report["added"] if a["section"] == "Decisions"] == [
        "key-each-bucket-api", "proxyfix-x-for-1", "trusting-every-x-forwarded-for-hop"]
    assert report["superseded"] == [{
        "section": "Deferred-Debt",
        "key": "TODO(perf,#41): rate-limited requests are not logged, so we cannot see which partner hits the limit",
        "old": "no status", "new": "resolved"}]
    assert report["skipped"][-1] == {"source": "Position.Remaining", "reason": "procedural step",
                                     "text": "Push feature/rate-limit and open a PR against main"}
    assert report["dropped"] == [{"section": "Open-Questions",
                                  "key": "Document the RATE_LIMIT_* settings in docs/configuration.md",
                                  "reason": "done in session 2026-03-11-0900"}]
    assert report["changelog"][-1] == "- Added: Notes 2026-03-11 09:00" and len(report["changelog"]) == 8
    assert "+- **proxyfix-x-for-1**: APPROVED: ProxyFix with x_for=1" in report["diff"]
    assert (workspace / "CONTEXT.md").read_text() == before
    code, report, _ = run_json(capsys, "merge", str(STATE), "--json", "--yes")
    assert code == 0 and report["written"] is True and report["dry_run"] is False
    assert "**proxyfix-x-for-1**" in (workspace / "CONTEXT.md").read_text()
    code, report, _ = run_json(capsys, "merge", str(STATE), "--json", "--yes")
    assert (report["changed"], report["written"], report["diff"]) == (False, False, "")
    assert {k["key"] for k in report["kept"]} >= {"proxyfix-x-for-1", "Retry-After"}


def test_merge_json_never_asks_and_reports_errors(capsys, workspace):
    shutil.copy(FIXTURES / "small.md", workspace / "CONTEXT.md")
    before = (workspace / "CONTEXT.md").read_text()
    code, report, err = run_json(capsys, "merge", str(STATE), "--json")
    assert code == 4 and report["exit_code"] == 4 and "--json never asks" in report["error"]
    assert (workspace / "CONTEXT.md").read_text() == before
    code, report, err = run_json(capsys, "merge", "--json", "--yes")
    assert (code, report) == (2, {"command": "merge", "error": "no state file in .duck-tape: pass STATE_FILE or --dir",
                                  "exit_code": 2})
    assert "duck-tape: error: no state file in .duck-tape" in err  # stderr keeps its line
    shutil.copy(FIXTURES / "missing-sections.md", workspace / "CONTEXT.md")
    code, report, _ = run_json(capsys, "merge", str(STATE), "--json", "--yes")
    assert code == 2 and "missing schema section(s) '## Conventions', '## Notes'" in report["error"]


def test_merge_json_secret_refused_then_masked(capsys, workspace):
    shutil.copy(FIXTURES / "small.md", workspace / "CONTEXT.md")
    (workspace / "s.state.md").write_text(STATE.read_text().replace("rounded up", f"rounded up (staging key {SECRET})"))
    code, report, err = run_json(capsys, "merge", "s.state.md", "--json", "--yes")
    assert code == 3 and report["exit_code"] == 3 and set(report) == {"command", "error", "exit_code", "redaction"}
    assert "Redaction: detected 1 potential secret(s) in Glossary." in report["redaction"]
    assert SECRET not in json.dumps(report) + err
    code, report, _ = run_json(capsys, "merge", "s.state.md", "--json", "--yes", "--mask")
    assert code == 0 and report["redacted"] == {"Glossary": 1}
    assert report["changelog"][-1] == "- Redacted: Glossary 1 secret(s)"  # masked as the state was translated
    assert SECRET not in json.dumps(report)


# --- migrate --json, prune --json --------------------------------------------------------------------------


def test_migrate_json(capsys, workspace):
    shutil.copy(FIXTURES / "freeform.md", workspace / "CONTEXT.md")
    code, report, _ = run_json(capsys, "migrate", "--json", "--dry-run")
    assert code == 0
    assert set(report) == {"command", "context", "dry_run", "changed", "written", "diff", "report", "placements",
                           "added_sections", "toc_regenerated", "changelog"}
    assert (report["changed"], report["written"], report["toc_regenerated"]) == (True, False, True)
    assert report["placements"][1] == {"lines": [5, 5], "excerpt": "We use gunicorn with 4 workers per pod.",
                                       "to": "Decisions", "low_confidence": "weak cue"}
    assert [p["to"] for p in report["placements"]].count("kept") == 2
    assert [p["excerpt"] for p in report["placements"] if p["to"] == "removed"] == [
        "## What we are building", "## Decisions made", "## Team rules"]
    assert len(report["placements"]) == len(report["report"]) - 2  # + the added sections and the TOC lines
    assert report["added_sections"][0] == "Goals" and report["changelog"][-1] == "- Added: Notes 2026-02-12 00:00"
    assert (workspace / "CONTEXT.md").read_text() == (FIXTURES / "freeform.md").read_text()
    code, report, _ = run_json(capsys, "migrate", "--json")
    assert code == 4 and "--json never asks" in report["error"]
    code, report, _ = run_json(capsys, "migrate", "--json", "--yes")
    assert code == 0 and report["written"] is True and "## Goals" in (workspace / "CONTEXT.md").read_text()
    code, report, _ = run_json(capsys, "migrate", "--json", "--yes")
    assert (report["changed"], report["written"], report["changelog"]) == (False, False, ["No changes to CONTEXT.md."])
    code, report, _ = run_json(capsys, "migrate", "--json", "--context", "absent.md")
    assert code == 2 and report["error"] == "absent.md: does not exist (duck-tape merge bootstraps a new CONTEXT.md)"


def test_prune_json_list_and_drop(capsys, workspace):
    shutil.copy(FIXTURES / "medium.md", workspace / "CONTEXT.md")
    code, report, _ = run_json(capsys, "prune", "--list", "--json")
    assert code == 0 and report == {"command": "prune", "context": "CONTEXT.md", "action": "list", "notes": [
        {"stamp": "2026-02-12 16:40", "lines": 1,
         "first": "Partner-7 retries failed checkouts in a tight loop; see SHOP-1234."},
        {"stamp": "2026-03-02 11:05", "lines": 2,
         "first": "Load test on staging: 420 req/s before the Redis CPU saturates."}]}
    code, report, _ = run_json(capsys, "prune", "--drop", "2026-02-12T16:40", "--json", "--dry-run")
    assert code == 0 and report["dropped"] == ["2026-02-12 16:40"] and report["written"] is False
    assert report["changelog"] == ["- Dropped: Notes 2026-02-12 16:40 (pruned)"] and "-### 2026-02-12 16:40\n" in report["diff"]
    code, report, _ = run_json(capsys, "prune", "--drop", "2026-02-12 16:40", "--json", "--yes")
    assert code == 0 and report["written"] is True
    assert "2026-02-12 16:40" not in (workspace / "CONTEXT.md").read_text()
    code, report, _ = run_json(capsys, "prune", "--drop", "2026-01-01 10:00", "--json", "--yes")
    assert code == 2 and "no Notes block at 2026-01-01 10:00" in report["error"]


# --- resume --json -----------------------------------------------------------------------------------------


def test_resume_json_uses_a_state_as_is_with_context_and_reconcile(capsys, workspace):
    store = workspace / ".duck-tape"
    store.mkdir()
    put_state(store, "2026-03-10-0950.state.md", manual_state("wire the refund bucket", session="s-1"))
    mark_as_store(store, Marker(time="2026-03-10T09:55:00Z", cwd="/home/dev/shop", latest_state=None, transcript=None,
                               session_id="s-1"))
    (workspace / "CONTEXT.md").write_text(
        "# Project\n\n## Decisions\n- **limiter**: token bucket rate limiting in Redis (date: 2026-03-10)\n"
        "- **css**: use tailwind for the admin pages (date: 2026-01-02)\n\n## Notes\n")
    code, report, err = run_json(capsys, "resume", "--json", "--reconcile")
    assert code == 0, err
    assert set(report) == {"command", "store", "messages", "marker", "state", "recovered", "dry_run", "position",
                           "context", "context_exists", "decisions", "reconciliation"}
    assert report["messages"] == ["Using manual state file 2026-03-10-0950.state.md as is."]  # a file it adopted
    assert report["marker"] == {"time": "2026-03-10T09:55:00Z", "session": "s-1", "cwd": "/home/dev/shop",
                                "transcript": None}
    assert report["state"] == str(Path(".duck-tape") / "2026-03-10-0950.state.md") and report["recovered"] is None
    assert report["position"] == {"current": "wire the refund bucket", "done": ["wrote the limiter"],
                                  "remaining": ["document RATE_LIMIT settings"]}
    assert report["context_exists"] is True
    assert report["decisions"] == ["- **limiter**: token bucket rate limiting in Redis (date: 2026-03-10)"]
    assert isinstance(report["reconciliation"], list) and report["reconciliation"]


def test_resume_json_recovers_only_with_yes(capsys, workspace):
    store = workspace / ".duck-tape"
    mark_as_store(store, Marker(time="2026-03-10T09:55:00Z", cwd=None, latest_state=None, transcript=str(CC),
                               session_id=SID))
    before = sorted(p.name for p in store.iterdir())
    code, report, _ = run_json(capsys, "resume", "--json", "--mask")
    assert code == 4 and report["command"] == "resume" and "--json never asks" in report["error"]
    assert sorted(p.name for p in store.iterdir()) == before
    code, report, _ = run_json(capsys, "resume", "--json", "--dry-run")
    assert code == 0 and report["recovered"]["written"] is None and report["state"] is None
    assert report["recovered"]["transcript"] == str(CC) and report["recovered"]["trigger"] == "recover, engine: rules"
    assert report["position"]["remaining"] == ["Document the RATE_LIMIT_* settings in docs/configuration.md",
                                               "Push feature/rate-limit and open a PR against main"]
    assert report["context_exists"] is False and report["decisions"] == [] and report["reconciliation"] is None
    code, report, _ = run_json(capsys, "resume", "--json", "--yes", "--mask")
    assert code == 0
    [recovered] = [s for s in list_states(store) if s.kind == "recovered"]
    assert report["recovered"]["written"] == report["state"] == str(Path(".duck-tape") / recovered.path.name)


def test_resume_json_without_marker_or_state(capsys, workspace):
    code, report, _ = run_json(capsys, "resume", "--json")
    assert code == 0 and report["state"] is None and report["position"] is None and report["marker"] is None
    assert report["messages"][0].startswith("No compaction marker found")


# --- restore --json ----------------------------------------------------------------------------------------


def test_restore_json_matches_the_plain_handoff(capsys, workspace):
    from pipeline.restore.run import render_restore

    store = workspace / ".duck-tape"
    store.mkdir()
    put_state(store, "2026-03-10-0950.state.md", manual_state("wire the refund bucket", session="s-1"))
    mark_as_store(store, Marker(time="2026-03-10T09:55:00Z", cwd="/home/dev/shop", latest_state=None, transcript=None,
                               session_id="s-1"))
    code, report, err = run_json(capsys, "restore", "--json", "--no-reconcile")
    assert code == 0, err
    assert set(report) == {"command", "store", "restored", "reason", "notes", "state", "kind", "created",
                           "compaction", "handoff", "bytes", "budget", "complete", "parts", "footer",
                           "compared_with_summary", "reconciliation"}
    plain, _ = render_restore(".duck-tape", budget=6000, fmt="plain", reconcile=False)
    assert report["handoff"] == plain.decode("utf-8") and report["bytes"] == len(plain)
    assert (report["restored"], report["reason"], report["budget"], report["complete"]) == (True, None, 6000, True)
    assert report["state"] == str(Path(".duck-tape") / "2026-03-10-0950.state.md") and report["kind"] == "manual"
    assert (report["created"], report["compaction"]) == ("2026-03-10T09:50:00Z", "2026-03-10T09:55:00Z")
    assert report["footer"] is None and report["reconciliation"] is None
    current = next(p for p in report["parts"] if p["part"] == "current")
    assert current == {"part": "current", "name": "Current", "items": 1, "included": 1, "left_out": 0,
                       "shortened": 0}


def test_restore_json_reports_what_the_budget_left_out(capsys, workspace):
    store = Path(".duck-tape")
    text = (GOLDEN / "recover" / "claude-code.state.md").read_text(encoding="utf-8")
    label = session_label("2026-03-10-1000", "recovered")
    text = re.sub(r"^Session: \S+", f"Session: {label}", text, count=1, flags=re.M)
    store.mkdir()
    put_state(store, f"{label}.state.md", text)
    mark_as_store(store, Marker("2026-03-10T10:05:00Z", "/home/dev/shop", None, None, SID))
    code, report, _ = run_json(capsys, "restore", "--json", "--budget", "1500", "--no-reconcile")
    assert code == 0 and report["restored"] is True and report["bytes"] <= 1500 and report["complete"] is False
    assert report["footer"].startswith("Left out to fit 1500 bytes")
    assert sum(p["left_out"] for p in report["parts"]) > 0
    assert all(p["included"] + p["left_out"] == p["items"] for p in report["parts"])


def test_restore_json_nothing_to_restore_and_hook_formats(capsys, workspace):
    code, report, err = run_json(capsys, "restore", "--json")
    assert code == 0 and err == ""
    assert (report["restored"], report["handoff"], report["bytes"]) == (False, None, 0)
    assert report["reason"] == "duck-tape: restore: no compaction marker in .duck-tape; nothing to restore"
    store = workspace / ".duck-tape"
    store.mkdir()
    (store / ".last-compact").write_text("garbage\n")
    code, report, _ = run_json(capsys, "restore", "--json")
    assert code == 0 and report["restored"] is False and report["reason"].startswith("duck-tape: restore: nothing restored: ")
    code, report, err = run_json(capsys, "restore", "--json", "--format", "claude-code")
    assert code == 2 and report["exit_code"] == 2 and "--json prints the plain handoff only" in report["error"]


# --- init and status in JSON mode -------------------------------------------------------------------------


def test_init_json_error_object(capsys, workspace):
    code, report, err = run_json(capsys, "init", "--json", "--root", "no-such-folder")
    assert code == 2 and report["command"] == "init" and report["error"].startswith("--root no-such-folder: ")
    assert report["error"] in err


def test_status_json_prints_one_object_when_unhealthy(capsys, workspace):
    code, report, _ = run_json(capsys, "status", "--json")
    assert code == 1 and report["command"] == "status" and report["problems"] and "error" not in report


def test_a_flag_rejected_while_parsing_is_an_error_object_too(capsys, workspace):
    code, report, err = run_json(capsys, "restore", "--json", "--budget", "5")
    assert code == 2 and report["command"] == "restore" and report["exit_code"] == 2
    assert "'--budget': 5 is not in the range 1000<=x<=9500" in report["error"] and "Usage:" in err
    code, report, _ = run_json(capsys, "prune", "--json", "--bogus")
    assert code == 2 and report == {"command": "prune", "error": "No such option '--bogus'.", "exit_code": 2}
    assert main(["merge", "--bogus"]) == 2 and capsys.readouterr().out == ""  # text mode: stderr only
    assert main(["eval", "--json"]) == 2 and capsys.readouterr().out == ""  # eval --json FILE writes a file
