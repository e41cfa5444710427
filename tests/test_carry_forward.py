"""Issue 17 item 5: carry forward, never regenerate away.

Session A works on checkout rate limiting and checkpoints; session B continues it in the same workspace (a Claude
Code continued session: its file starts with a summary that dropped the rejected fixed window counter and the
Redis port); B's checkpoint inherits them, marked with session A, as v2; C's as v3.  Plus: only the same
workspace's previous file, never an older session's directly; the sweep of Remaining items a commit completed.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.hooks.checkpoint import run_checkpoint
from pipeline.hooks.payload import HookInput
from pipeline.state.carry import inherit, version_of, with_version
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.render import render
from pipeline.state.sections import read_sections
from tests.cc_jsonl import CC, rate_limit_session

A = "5f0c2a71-8d3e-4b19-a6c2-0e9d7b4f1a36"
B = "8a41d0c3-2b7e-4f55-9c10-6e2f3a9d7b18"
C = "c2e9f6a4-71b3-4d08-8e5f-0a4b6c2d9e73"
T1 = datetime(2026, 9, 1, 10, 2, tzinfo=timezone.utc)
T2 = datetime(2026, 9, 1, 11, 30, tzinfo=timezone.utc)
T3 = datetime(2026, 9, 1, 13, 0, tzinfo=timezone.utc)
#: What a continued session starts with: the summary kept the ticket and the bucket, dropped the rest.
CONTINUED = ("Summary:\n1. The user asked for rate limiting on POST /api/checkout (SHOP-1234).\n"
             "2. A token bucket in Redis is implemented in src/shop/ratelimit.py.\n")


def continued_session(session: str, start: str = "2026-09-01T11:00:00") -> CC:
    cc = CC(session, start=start)
    cc.compact(CONTINUED)
    cc.user("also cover the /refund endpoint with its own bucket")
    cc.asst("We should not use slowapi for this: it needs the Starlette request object. I'll write the decorator myself.")
    cc.edit("/home/dev/shop/src/shop/refund.py")
    cc.todos(("Write the refund decorator in src/shop/refund.py", "completed"), ("Add refund rate-limit tests", "pending"))
    return cc


def short_session(session: str) -> CC:
    cc = CC(session, start="2026-09-01T12:50:00")
    cc.user("run the refund tests again and tell me if they pass")
    cc.bash("python -m pytest -q tests/test_refund_limits.py", "3 passed")
    return cc


def checkpoint(store: Path, session: str, cc: CC, now: datetime, tmp_path: Path):
    transcript = cc.write(tmp_path / f"{session}.jsonl")
    done = run_checkpoint(HookInput(session_id=session, transcript_path=str(transcript), trigger="auto"),
                          store=store, now=now)
    assert done.written, done.messages
    return done, done.state_path.read_text()


def test_a_continued_session_inherits_rejections_and_facts_marked_with_their_session(tmp_path):
    store = tmp_path / ".duck-tape"
    first, text_a = checkpoint(store, A, rate_limit_session(A), T1, tmp_path)
    assert " v" not in read_sections(text_a).trigger  # a first write has no version suffix
    second, text_b = checkpoint(store, B, continued_session(B), T2, tmp_path)
    doc = read_sections(text_b)
    header = text_b.split("\n")[2]
    # the fixed fields are as they were; the version ends the Trigger value, before the Session-Id suffix
    assert header == ("Session: 2026-09-01-1130-auto | Cwd: /home/dev/shop | Repo/Branch: shop@feature/rate-limit | "
                      f"Trigger: pre-compact auto, engine: rules, v2 | Session-Id: {B}")
    assert doc.session_id == B and version_of(doc.trigger) == 2
    decisions = [(d.status, d.what, d.reasoning) for d in doc.decisions]
    assert decisions[0] == ("REJECTED", "fixed window counter",
                            f'user said "no fixed window counter. use a token bucket in Redis." (carried from session {A})')
    assert ("REJECTED", "slowapi", "it needs the Starlette request object") in decisions  # B's own
    assert not any(d.status == "APPROVED" and "carried" in d.reasoning for d in doc.decisions)  # approvals stay behind
    assert f"Found it: redis-server in this container listens on port 6380, not 6379. (carried from session {A})" \
        in doc.facts
    assert f"Never push to main directly. (carried from session {A})" in doc.facts
    assert any("carried 1 rejected approach(es) and 3 fact(s) forward from 2026-09-01-1002-auto.state.md "
               f"(session {A}); this state file is version 2 of the session" in m for m in second.messages)
    # C continues B: what B carried keeps A's mark, B's own entries get B's; the version goes on
    _, text_c = checkpoint(store, C, short_session(C), T3, tmp_path)
    doc = read_sections(text_c)
    assert doc.trigger.endswith(", v3")
    reasons = {d.what: d.reasoning for d in doc.decisions}
    assert reasons["fixed window counter"].endswith(f"(carried from session {A})")
    assert reasons["slowapi"] == f"it needs the Starlette request object (carried from session {B})"
    assert sum("(carried from session" in f for f in doc.facts) == len(doc.facts)


def test_only_the_same_workspaces_previous_file_is_inherited(tmp_path):
    store = tmp_path / ".duck-tape"
    other = rate_limit_session(A, cwd="/home/dev/ledger-cli")  # same store, written from another folder
    checkpoint(store, A, other, T1, tmp_path)
    _, text = checkpoint(store, B, continued_session(B), T2, tmp_path)
    doc = read_sections(text)
    assert "carried" not in text and " v2" not in doc.trigger
    # a later file of the same folder is the previous one; the ledger file is never reached past it
    _, text = checkpoint(store, C, short_session(C), T3, tmp_path)
    assert f"(carried from session {B})" in text and A not in text


def test_what_the_new_state_decides_again_or_knows_already_is_not_inherited():
    previous = read_sections(render(AgentState(
        stamp="2026-09-01-1002", kind="auto", cwd="/w", created="2026-09-01T10:02:00Z", session_id=A,
        decisions=[Decision(timestamp="2026-09-01T10:00:10Z", status="REJECTED", what="Fixed window counter",
                            reasoning="bursts at the window edge"),
                   Decision(timestamp="2026-09-01T10:00:20Z", status="REJECTED", what="slowapi", reasoning="None"),
                   Decision(timestamp="2026-09-01T10:00:30Z", status="APPROVED", what="token bucket", reasoning="x")],
        facts=[Fact(text="Redis listens on port 6380."), Fact(text="CI runs on py3.11")])))
    state = AgentState(stamp="2026-09-01-1130", kind="auto", cwd="/w", created="2026-09-01T11:30:00Z",
                       decisions=[Decision(timestamp="2026-09-01T11:10:00Z", status="APPROVED",
                                           what="fixed  window counter", reasoning="the user changed their mind")],
                       facts=[Fact(text="redis listens on port 6380.")], position=Position(remaining=["ship it"]))
    new, decisions, facts = inherit(state, previous, A)
    assert decisions == [f"REJECTED: slowapi - rejected earlier (carried from session {A})"]
    assert facts == [f"CI runs on py3.11 (carried from session {A})"]
    assert [d.what for d in new.decisions] == ["slowapi", "fixed  window counter"]  # carried ones first: older
    assert new.position.remaining == ["ship it"]  # forward-looking work is never inherited


@pytest.mark.parametrize(("trigger", "version", "bumped"), [
    (None, 1, "v2"), ("pre-compact auto, engine: rules", 1, "pre-compact auto, engine: rules, v2"),
    ("pre-compact auto, engine: rules, v7", 7, "pre-compact auto, engine: rules, v2"),
    ("recover, engine: llm, fallback: rules for Position", 1, "recover, engine: llm, fallback: rules for Position, v2"),
])
def test_the_version_lives_at_the_end_of_the_trigger(trigger, version, bumped):
    assert version_of(trigger) == version
    assert with_version(trigger, 2) == bumped


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid"}
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_remaining_items_a_later_commit_completed_are_swept_and_reported(tmp_path):
    workspace = tmp_path / "shop"
    workspace.mkdir()
    git(workspace, "init", "-q")
    (workspace / "README.md").write_text("shop\n")
    git(workspace, "add", "README.md")
    git(workspace, "commit", "-qm", "Initial commit", when="2026-09-01T09:00:00Z")
    store = workspace / ".duck-tape"
    checkpoint(store, A, rate_limit_session(A), T1, tmp_path)
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_refund_limits.py").write_text("def test_refund(): pass\n")
    git(workspace, "add", "tests")
    git(workspace, "commit", "-qm", "Add refund rate-limit tests", when="2026-09-01T11:10:00Z")
    sha = git(workspace, "log", "-1", "--format=%h").strip()
    done, text = checkpoint(store, B, continued_session(B), T2, tmp_path)
    doc = read_sections(text)
    assert "Add refund rate-limit tests" not in doc.remaining  # the todo list still says pending: a commit did it
    assert f"duck-tape: checkpoint: swept Remaining 'Add refund rate-limit tests': commit {sha} " \
           "'Add refund rate-limit tests' shares the key words limit, rate, refund, tests" in done.messages
    assert doc.trigger.endswith(", v2")
