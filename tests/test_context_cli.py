"""End-to-end tests of ``duck-tape merge``, ``migrate``, ``prune`` and ``recover --merge`` (pipeline.commands.context).

Each runs ``pipeline.cli.main`` in-process and asserts the exit code (DESIGN.md "Exit codes"), what is printed
(unified diff preview, ``Changelog:`` or ``No changes to CONTEXT.md.``) and what is (not) written.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from store_kit import put_state

from pipeline.cli import main
from pipeline.context.safewrite import backup_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "context"
STATE = FIXTURES / "states" / "2026-03-11-0900.state.md"
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
TRUTH = json.loads((ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.truth.json").read_text())
SECRET = "sk-proj-Zx9FAKEq7Lm2Vb8Nc4Rt6Yh1Jk3Pw5Sd0"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class FakeTTY:
    def isatty(self):
        return True


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_merge_bootstraps_then_reports_no_changes(capsys, workspace):
    code, out, err = run(capsys, "merge", str(STATE), "--yes")
    assert code == 0, err
    assert out.startswith("--- /dev/null\n+++ b/CONTEXT.md\n@@ -0,0 +1,")
    assert "\nChangelog:\n- Added: Goals TODO(scaffold)\n- Added: Decisions key-each-bucket-api\n" in out
    # the preview names what the translation left out, with its reason, before the write
    assert ("\nLeft out of CONTEXT.md:\n- Skipped: Approved Workflow: Finish the rate limiting branch: document the "
            "settings, raise the bucket size for partner keys, and… (task list)\n") in out
    assert out.endswith("- Added: Notes 2026-03-11 09:00\n")
    text = (workspace / "CONTEXT.md").read_text()
    assert text.startswith("# Project Context: shop\n") and "**proxyfix-x-for-1**" in text
    code, out, _ = run(capsys, "merge", str(STATE), "--yes")
    assert (code, out) == (0, "No changes to CONTEXT.md.\n")


def test_merge_defaults_to_the_state_to_resume_from(capsys, workspace):
    store = workspace / ".duck-tape"
    for source in (FIXTURES / "states" / "2026-03-10-1000-recovered.state.md", STATE):  # files a checkpoint here wrote
        put_state(store, source.name, source.read_text())
    code, out, err = run(capsys, "merge", "--yes", "--context", "notes/CONTEXT.md")
    assert code == 2 and "notes/CONTEXT.md: its directory does not exist" in err
    code, out, err = run(capsys, "merge", "--yes")
    assert code == 0, err
    assert f"duck-tape: merging {Path('.duck-tape') / '2026-03-11-0900.state.md'}" in err
    assert "Merged state file 2026-03-11-0900.state.md" in (workspace / "CONTEXT.md").read_text()


def test_merge_without_a_state_file_is_bad_usage(capsys, workspace):
    code, _, err = run(capsys, "merge", "--yes")
    assert code == 2 and "no state file in .duck-tape: pass STATE_FILE or --dir" in err
    (workspace / "bad.state.md").write_text("# Agent State\n\nnot a header\n")
    code, _, err = run(capsys, "merge", "bad.state.md", "--yes")
    assert code == 2 and "bad.state.md:3:" in err


def test_merge_needs_yes_off_a_terminal_and_dry_run_writes_nothing(capsys, workspace, monkeypatch):
    shutil.copy(FIXTURES / "medium.md", workspace / "CONTEXT.md")
    before = (workspace / "CONTEXT.md").read_bytes()
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    code, out, err = run(capsys, "merge", str(STATE))
    assert code == 4 and "pass --yes to approve or --dry-run to preview" in err
    assert out.startswith("--- a/CONTEXT.md\n+++ b/CONTEXT.md\n")
    code, out, err = run(capsys, "merge", str(STATE), "--dry-run")
    assert code == 0 and "dry run: nothing was written to CONTEXT.md" in err
    assert "+- **proxyfix-x-for-1**: APPROVED: ProxyFix with x_for=1" in out
    assert "\nChangelog:\n" in out and "- Dropped: Open-Questions Document the RATE_LIMIT_*" in out
    assert (workspace / "CONTEXT.md").read_bytes() == before


def test_merge_asks_on_a_terminal(capsys, workspace, monkeypatch):
    shutil.copy(FIXTURES / "small.md", workspace / "CONTEXT.md")
    monkeypatch.setattr("sys.stdin", FakeTTY())
    monkeypatch.setattr("builtins.input", lambda _q: "next")
    code, _, err = run(capsys, "merge", str(STATE))
    assert code == 4 and "not approved; nothing was written to CONTEXT.md" in err
    monkeypatch.setattr("builtins.input", lambda _q: "yes, go ahead")
    code, out, _ = run(capsys, "merge", str(STATE))
    assert code == 0 and out.rstrip().endswith("- Added: Notes 2026-03-11 09:00")
    assert not backup_path(workspace / "CONTEXT.md").exists()


def test_merge_refuses_missing_sections_and_secrets(capsys, workspace):
    shutil.copy(FIXTURES / "missing-sections.md", workspace / "CONTEXT.md")
    code, _, err = run(capsys, "merge", str(STATE), "--yes")
    assert code == 2 and "missing schema section(s) '## Conventions', '## Notes': run `duck-tape migrate`" in err
    shutil.copy(FIXTURES / "small.md", workspace / "CONTEXT.md")
    secret_state = STATE.read_text().replace("rounded up", f"rounded up (staging key {SECRET})")
    (workspace / "s.state.md").write_text(secret_state)
    code, out, err = run(capsys, "merge", "s.state.md", "--yes")
    assert code == 3 and "Redaction: detected 1 potential secret(s) in Glossary." in err
    assert SECRET not in out + err and "<REDACTED>" not in (workspace / "CONTEXT.md").read_text()
    code, out, err = run(capsys, "merge", "s.state.md", "--yes", "--mask")
    assert code == 0, err
    assert out.rstrip().endswith("- Redacted: Glossary 1 secret(s)")
    assert "(staging key <REDACTED>)" in (workspace / "CONTEXT.md").read_text()


def test_recover_merge_done_when(capsys, workspace, monkeypatch):
    """Issue 5 "Done when": bootstrap and changelog on the first run, no changes on the second identical run."""
    clock = iter([datetime(2026, 3, 10, 10, 0, tzinfo=timezone.utc), datetime(2026, 3, 10, 10, 2, tzinfo=timezone.utc)])

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return next(clock)

    monkeypatch.setattr("pipeline.recovery.datetime", Clock)
    argv = ("recover", str(CC), "--merge", "--yes", "--mask", "--dir", ".duck-tape")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    written = out.split("\n--- /dev/null\n")[0].splitlines()[-1]
    assert written == str(Path(".duck-tape") / "2026-03-10-1000-recovered.state.md")
    changelog = out.split("\nChangelog:\n")[1].splitlines()
    assert changelog[0] == "- Added: Goals TODO(scaffold)"
    # 16: nine lasting decisions (the Lua script over MULTI/EXEC, chosen with its reason, among them), the user's two
    # rules, one debt, three scaffold lines and the Notes block that holds the durable facts (DESIGN.md "Translation
    # (rigid map)", revised 2026-12-04)
    assert changelog[-1] == "- Added: Notes 2026-03-10 10:00" and len(changelog) == 16
    assert "- Added: Decisions lua-script" in changelog and "- Added: Decisions multi-exec" in changelog
    context = (workspace / "CONTEXT.md").read_text()
    for secret in TRUTH["secrets"]:
        assert secret not in context
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert out.endswith("2026-03-10-1002-recovered.state.md\nNo changes to CONTEXT.md.\n")
    assert (workspace / "CONTEXT.md").read_text() == context


def test_recover_merge_dry_run_writes_nothing(capsys, workspace):
    code, out, err = run(capsys, "recover", str(CC), "--merge", "--dry-run")
    assert code == 0, err
    assert "\n--- /dev/null\n+++ b/CONTEXT.md\n" in out and "\nChangelog:\n" in out
    assert not (workspace / "CONTEXT.md").exists() and not (workspace / ".duck-tape").exists()


def test_migrate_command(capsys, workspace, monkeypatch):
    shutil.copy(FIXTURES / "freeform.md", workspace / "CONTEXT.md")
    code, out, err = run(capsys, "migrate", "--dry-run")
    assert code == 0 and out.startswith("Migration:\n- line 3 ")
    assert '-> Decisions (low confidence: weak cue)' in out and "+## Notes\n" in out
    assert (workspace / "CONTEXT.md").read_text() == (FIXTURES / "freeform.md").read_text()
    code, out, err = run(capsys, "migrate", "--yes")
    assert code == 0, err
    assert out.rstrip().endswith("- Added: Notes 2026-02-12 00:00")
    code, out, _ = run(capsys, "merge", str(STATE), "--yes")
    assert code == 0 and "- Added: Decisions proxyfix-x-for-1" in out
    code, out, _ = run(capsys, "migrate", "--yes")
    assert code == 0 and out.endswith("No changes to CONTEXT.md.\n")
    code, _, err = run(capsys, "migrate", "--context", "absent.md")
    assert code == 2 and "absent.md: does not exist" in err


def test_prune_command(capsys, workspace):
    shutil.copy(FIXTURES / "medium.md", workspace / "CONTEXT.md")
    code, out, _ = run(capsys, "prune")
    assert (code, out) == (0, "2026-02-12 16:40  (1 line)  Partner-7 retries failed checkouts in a tight loop; see SHOP-1234.\n"
                              "2026-03-02 11:05  (2 lines)  Load test on staging: 420 req/s before the Redis CPU saturates.\n")
    code, _, err = run(capsys, "prune", "--drop", "2026-01-01 10:00", "--yes")
    assert code == 2 and "no Notes block at 2026-01-01 10:00" in err
    code, out, err = run(capsys, "prune", "--drop", "2026-02-12 16:40", "--yes")
    assert code == 0, err
    assert "-### 2026-02-12 16:40\n" in out and out.endswith("Changelog:\n- Dropped: Notes 2026-02-12 16:40 (pruned)\n")
    code, out, _ = run(capsys, "prune", "--list")
    assert out.startswith("2026-03-02 11:05  (2 lines)")
