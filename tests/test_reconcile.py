"""Reconciliation with the workspace (issue 7, items 3 and 4): a temporary git repository built here, with
commits before and after the state file's Created time and a file deleted since; no repository, no git, a
slow git; strictly read-only; ``resume --reconcile`` and the section in ``restore``'s output."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from store_kit import mark_as_store, put_state

from pipeline.cli import main
from pipeline.restore.reconcile import (
    Commit,
    GitLog,
    WorkItems,
    drift_lines,
    find_drift,
    git_log_since,
    key_words,
    named_paths,
    parse_git_log,
    reconcile,
    since_utc,
    subject_match,
    work_items,
)
from pipeline.restore.run import restore_main
from pipeline.state.marker import Marker
from pipeline.state.parse import parse
from pipeline.state.sections import read_sections

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CREATED = "2026-03-10T10:00:00Z"
STATE = f"""# Agent State

Session: 2026-03-10-1000-recovered | Cwd: /home/dev/shop | Repo/Branch: shop@feature/rate-limit
Created: {CREATED}

## Approved Workflow
Add rate limiting to the checkout API.

## Position
- **Current:** Fix review findings: log rate-limited requests
- **Done:**
  - Implement the token bucket in src/shop/ratelimit.py
  - Spike the limiter in /home/dev/shop/src/shop/legacy_limiter.py
- **Remaining:**
  - Document the RATE_LIMIT_* settings in docs/configuration.md
  - Add a Grafana panel for rate-limited requests
  - Push feature/rate-limit and open a PR against main
  - Update the changelog in CHANGES.md

## Decision Log
2026-03-10T09:20:35Z REJECTED: a fixed window - a client can send 2x the limit across the minute boundary

## Established Facts
never push to main directly

## Re-derivation
- Read: src/shop/ratelimit.py
- Read: /nonexistent-duck-tape-test/spike.py
- Run: REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/test_ratelimit.py
"""


def git(repo: Path, *args: str, when: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Dev",
           "GIT_AUTHOR_EMAIL": "dev@example.invalid", "GIT_COMMITTER_NAME": "Dev",
           "GIT_COMMITTER_EMAIL": "dev@example.invalid"}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def commit(repo: Path, subject: str, when: str, write: dict[str, str] | None = None, delete: tuple[str, ...] = ()) -> str:
    for name, text in (write or {}).items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name in delete:
        (repo / name).unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", subject, when=when)
    return git(repo, "rev-parse", "--short", "HEAD").strip()


@pytest.fixture
def workspace(tmp_path):
    """A repository whose history straddles the state's Created time (10:00Z), with the state in .duck-tape."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "Implement the token bucket", "2026-03-10T09:00:00Z",
           {"src/shop/ratelimit.py": "bucket\n", "src/shop/legacy_limiter.py": "old\n", "CHANGES.md": "# Changes\n",
            "tests/test_ratelimit.py": "def test(): pass\n"})
    commit(repo, "Update the changelog", "2026-03-10T09:59:00Z", {"CHANGES.md": "# Changes\n- limiter\n"})  # before: no
    shas = {
        "docs": commit(repo, "Write the configuration docs", "2026-03-10T10:30:00Z",
                       {"docs/configuration.md": "RATE_LIMIT_CAPACITY\n"}),
        "same": commit(repo, "Note the limiter in CHANGES.md", "2026-03-10T11:00:00+01:00",  # = Created: not after
                       {"CHANGES.md": "# Changes\n- limiter\n- docs\n"}),
        "panel": commit(repo, "Grafana panel for rate-limited requests", "2026-03-10T12:00:00+01:00",
                        {"ops/grafana/rate-limits.json": "{}\n"}),
        "drop": commit(repo, "Remove the legacy limiter spike", "2026-03-10T11:30:00Z", delete=("src/shop/legacy_limiter.py",)),
    }
    store = repo / ".duck-tape"
    store.mkdir()
    (store / ".gitignore").write_text("*\n")
    put_state(store, "2026-03-10-1000-recovered.state.md", STATE.replace("/home/dev/shop", str(repo)))  # a recovery here
    mark_as_store(store, Marker("2026-03-10T10:00:05Z", "/home/dev/shop", "2026-03-10-1000-recovered.state.md", None))
    return repo, shas


def snapshot(root: Path) -> dict:
    return {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else sorted(os.listdir(p)))
            for p in [root, *root.rglob("*")]}


@needs_git
def test_commits_after_created_make_remaining_items_look_done(workspace):
    repo, shas = workspace
    lines = reconcile(read_sections(STATE), str(repo))
    assert lines[0] == (f'- Looks done (Remaining): "Document the RATE_LIMIT_* settings in docs/configuration.md" — '
                        f'commit {shas["docs"]} "Write the configuration docs" (2026-03-10T10:30:00+00:00) touches '
                        "docs/configuration.md")
    assert lines[1] == (f'- Looks done (Remaining): "Add a Grafana panel for rate-limited requests" — commit '
                        f'{shas["panel"]} "Grafana panel for rate-limited requests" (2026-03-10T12:00:00+01:00) shares '
                        "the key words grafana, limited, panel, rate, requests")
    assert lines[2] == (f"- No longer exists: /home/dev/shop/src/shop/legacy_limiter.py (named in Done; deleted in "
                        f'commit {shas["drop"]} "Remove the legacy limiter spike")')
    assert lines[3] == "- No longer exists: /nonexistent-duck-tape-test/spike.py (named in Re-derivation)"
    assert lines[4] == f"- Git: 3 commits since {CREATED} (newest first):"
    assert [line.split()[1] for line in lines[5:]] == [shas["drop"], shas["panel"], shas["docs"]]
    assert len(lines) == 8
    text = "\n".join(lines)
    assert "Push feature/rate-limit" not in text  # nothing completed it
    assert "CHANGES.md" not in text  # touched only before (or exactly when) the state was written: not done since
    assert shas["same"] not in text


@needs_git
def test_reconciliation_is_read_only(workspace):
    repo, _ = workspace
    before = snapshot(repo)
    reconcile(read_sections(STATE), str(repo))
    restore_main(str(repo / ".duck-tape"), fmt="claude-code", stdout=io.StringIO(), stderr=io.StringIO())
    assert snapshot(repo) == before


@needs_git
def test_resume_reconcile_reports_a_remaining_item_a_later_commit_completed(workspace, capsys):
    repo, shas = workspace
    store = repo / ".duck-tape"
    assert main(["resume", "--dir", str(store), "--context", str(repo / "CONTEXT.md"), "--reconcile"]) == 0
    out = capsys.readouterr().out
    assert f"Reconciliation with {repo} (read-only):\n" in out
    assert (f'  - Looks done (Remaining): "Document the RATE_LIMIT_* settings in docs/configuration.md" — commit '
            f'{shas["docs"]}') in out
    assert out.index("Remaining:") < out.index("Reconciliation with")
    assert main(["resume", "--dir", str(store), "--context", str(repo / "CONTEXT.md")]) == 0
    assert "Reconciliation" not in capsys.readouterr().out


@needs_git
def test_restore_output_carries_the_section(workspace):
    repo, shas = workspace
    out = io.BytesIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8")
    restore_main(str(repo / ".duck-tape"), stdout=wrapper, stderr=io.StringIO())
    wrapper.flush()
    text = out.getvalue().decode()
    section = text.split("## Since the state file (read-only check of the workspace)\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines()[0].startswith('- Looks done (Remaining): "Document the RATE_LIMIT_*')
    assert f'deleted in commit {shas["drop"]}' in section


def test_no_repository_is_said_and_the_file_checks_still_run(tmp_path):
    (tmp_path / "src" / "shop").mkdir(parents=True)
    (tmp_path / "src" / "shop" / "ratelimit.py").write_text("x\n")
    lines = reconcile(read_sections(STATE), str(tmp_path))
    if shutil.which("git") is not None:
        assert f"- Git: {tmp_path} is not in a git repository; commits not checked." in lines
    assert "- No longer exists: docs/configuration.md (named in Remaining)" in lines
    assert not any("Looks done" in line for line in lines)


def test_no_git_is_said(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert git_log_since(str(tmp_path), CREATED).status == "no-git"
    lines = reconcile(read_sections(STATE), str(tmp_path))
    assert "- Git: git is not installed (not on PATH); commits not checked." in lines


def test_a_slow_git_is_cut_off(tmp_path):
    slow = tmp_path / "git"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    log = git_log_since(str(tmp_path), CREATED, timeout=0.3, git=str(slow))
    assert log.status == "timeout"


def test_a_git_error_is_one_line(tmp_path):
    bad = tmp_path / "git"
    bad.write_text("#!/bin/sh\necho 'fatal: detected dubious ownership in repository' >&2\nexit 128\n")
    bad.chmod(0o755)
    log = git_log_since(str(tmp_path), CREATED, git=str(bad))
    assert (log.status, log.detail) == ("error", "fatal: detected dubious ownership in repository")


def test_the_state_in_another_folder_is_one_line(tmp_path):
    work = work_items(read_sections(STATE))
    work.remaining += ["Edit src/a.py", "Edit src/b.py", "Edit src/c.py"]
    lines = drift_lines(find_drift(work, GitLog("no-repo"), str(tmp_path), lambda path: False))
    assert lines[0] == (f"- None of the 8 workspace files the state names exist under {tmp_path} (it was written in "
                        "/home/dev/shop): another checkout or folder?")
    assert lines[1] == "- No longer exists: /nonexistent-duck-tape-test/spike.py (named in Re-derivation)"


def test_work_items_read_an_agent_state_and_sections_alike():
    assert work_items(parse(STATE)) == work_items(read_sections(STATE))


def test_parse_git_log():
    text = ("\x1eabc1234\x1f2026-03-10T11:00:00+00:00\x1fFix it\n\nM\tsrc/a.py\nD\told.py\n"
            "\x1edef5678\x1f2026-03-10T10:30:00+00:00\x1fEmpty commit\n")
    assert parse_git_log(text) == [
        Commit("abc1234", "2026-03-10T11:00:00+00:00", "Fix it", [("M", "src/a.py"), ("D", "old.py")]),
        Commit("def5678", "2026-03-10T10:30:00+00:00", "Empty commit", []),
    ]


@pytest.mark.parametrize("text, paths", [
    ("Document the RATE_LIMIT_* settings in docs/configuration.md", ["docs/configuration.md"]),
    ("`get_redis()` (src/shop/cache.py:9-11) calls `redis.Redis.from_url(...)`", ["src/shop/cache.py"]),
    ("Run: REDIS_URL=redis://localhost:6380/15 python -m pytest -q --cov=shop.ratelimit", []),
    ("Push feature/rate-limit and open a PR against main (v1.8, e.g. 41.8s)", []),
    ("parse_date() in invoice\\dates.py; see README.md and ~/notes/todo.txt.", ["invoice/dates.py", "README.md", "~/notes/todo.txt"]),
    ("Read: /tmp/spike_slowapi.py and csv.writer, then ./tools/x.sh", ["/tmp/spike_slowapi.py", "./tools/x.sh"]),
])
def test_named_paths(text, paths):
    assert named_paths(text) == paths


@pytest.mark.parametrize("item, subject, shared", [
    ("Document the RATE_LIMIT_* settings in docs/configuration.md", "Document the rate limit settings",
     ["document", "limit", "rate", "settings"]),
    ("Add a Grafana panel for rate-limited requests", "Grafana panel", []),  # 2 of 5: not enough
    ("Fix review findings: log rate-limited requests", "Fix review findings", []),  # "fix" is a stop word
    ("Push feature/rate-limit and open a PR against main", "Add rate limiting", []),
    ("Write the migration for the orders table", "Orders table migration written", ["migration", "orders", "table"]),
])
def test_subject_match(item, subject, shared):
    assert subject_match(item, subject) == shared


def test_key_words_and_since():
    assert key_words("Adding the Tests for 2 parsers") == {"test", "parser"}
    assert key_words("settings setting limited limits limiting class") == {"sett", "limit", "class"}
    assert since_utc("2026-03-10").isoformat() == "2026-03-10T00:00:00+00:00"
    assert since_utc("2026-03-10T11:00:00+01:00").isoformat() == "2026-03-10T10:00:00+00:00"
    assert since_utc("2026-03-10T10:00").isoformat() == "2026-03-10T10:00:00+00:00"


def test_current_can_look_done_and_nothing_named_is_said():
    work = WorkItems(CREATED, "/w", "Write the migration for the orders table", [], [], [])
    log = GitLog("ok", [Commit("abc1234", "2026-03-10T11:00:00+00:00", "Orders table migration", [("A", "m.sql")])])
    lines = drift_lines(find_drift(work, log, "/w", lambda path: True))
    assert lines[0].startswith('- Looks done (Current): "Write the migration for the orders table" — commit abc1234')
    assert lines[1:] == ["- Git: 1 commit since 2026-03-10T10:00:00Z (newest first):",
                         "- Files: none named in Current/Done/Remaining/Re-derivation.",
                         "- abc1234 2026-03-10T11:00:00+00:00 Orders table migration [m.sql]"]


@needs_git
def test_resume_reconcile_after_recovering_counts_commits_since_the_compaction(tmp_path, capsys):
    """Bug: when resume had to recover (only an auto checkpoint), the recovered state's Created was *now*, so a
    commit made after the compaction but before resume was missed; the marker's time is the right start."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "Initial", "2026-03-10T09:00:00Z", {"README.md": "shop\n"})
    done = commit(repo, "Document the RATE_LIMIT_* settings", "2026-03-10T10:30:00Z",
                  {"docs/configuration.md": "RATE_LIMIT_CAPACITY\n"})
    store = repo / ".duck-tape"
    transcript = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    mark_as_store(store, Marker("2026-03-10T10:00:00Z", str(repo), None, str(transcript)))
    assert main(["resume", "--dir", str(store), "--context", str(repo / "CONTEXT.md"), "--reconcile",
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert (f'  - Looks done (Remaining): "Document the RATE_LIMIT_* settings in docs/configuration.md" — commit '
            f'{done} "Document the RATE_LIMIT_* settings"') in out
    assert "  - Git: 1 commit since 2026-03-10T10:00:00Z" in out
