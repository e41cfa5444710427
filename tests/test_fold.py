"""The fold of two parts of one session (pipeline/state/fold.py, issue 23): every section, as a whole read would."""

from __future__ import annotations

from pipeline.state.fold import MAX_DONE, MAX_FACTS, fold, fold_workflow
from pipeline.state.model import AgentState, Decision, Evidence, Fact, Position


def _state(**kw) -> AgentState:
    base = dict(stamp="2026-09-01-1000", kind="auto", cwd="/home/dev/shop", repo="shop", branch="main",
                created="2026-09-01T10:00:00Z", session_id="s1")
    return AgentState(**{**base, **kw})


def _d(ts: str, status: str, what: str, why: str = "because") -> Decision:
    return Decision(timestamp=ts, status=status, what=what, reasoning=why, evidence=Evidence(event_index=3, quote=what))


OLD_FLOW = ("Add rate limiting to the checkout API.\n"
            "Task 2026-09-01T09:10:00Z: run the limiter tests again\n"
            "Active task 2026-09-01T09:20:00Z: also cover the refund endpoint")


def test_tasks_append_the_newer_opening_request_becomes_a_task_and_only_the_newest_is_active():
    newer = ("Second task: add an audit log for refunds.\n"
             "Redirected 2026-09-02T11:00:00Z: actually, store the amount in cents")
    got = fold_workflow(OLD_FLOW, newer, head_time="2026-09-02T10:00:00Z").splitlines()
    assert got == [
        "Add rate limiting to the checkout API.",
        "Task 2026-09-01T09:10:00Z: run the limiter tests again",
        "Task 2026-09-01T09:20:00Z: also cover the refund endpoint",
        "Task 2026-09-02T10:00:00Z: Second task: add an audit log for refunds.",
        "Active redirection 2026-09-02T11:00:00Z: actually, store the amount in cents",
    ]


def test_a_carried_opening_request_a_known_task_and_summary_lines_add_nothing():
    newer = ("run the limiter tests again\n"
             "From the compaction summary: the user wants rate limiting\n"
             "Task 2026-09-02T10:00:00Z: Also cover the refund endpoint")  # case aside: a known task
    assert fold_workflow(OLD_FLOW, newer, head_seen=True) == OLD_FLOW
    assert fold_workflow(None, newer) == newer and fold_workflow(OLD_FLOW, None) == OLD_FLOW


def test_decisions_dedupe_keep_a_reversal_and_stay_in_time_order():
    older = _state(decisions=[_d("2026-09-01T09:00:00Z", "APPROVED", "a token bucket in Redis"),
                              _d("2026-09-01T09:05:00Z", "REJECTED", "a fixed window")])
    newer = _state(decisions=[_d("2026-09-02T09:00:00Z", "APPROVED", "A token-bucket in Redis!"),
                              _d("2026-09-02T09:30:00Z", "REJECTED", "a token bucket in Redis", "too slow"),
                              _d("2026-09-02T08:00:00Z", "APPROVED", "Lua script for the update")])
    got = [(d.timestamp, d.status, d.what) for d in fold(older, newer).decisions]
    assert got == [("2026-09-01T09:00:00Z", "APPROVED", "a token bucket in Redis"),
                   ("2026-09-01T09:05:00Z", "REJECTED", "a fixed window"),
                   ("2026-09-02T08:00:00Z", "APPROVED", "Lua script for the update"),
                   ("2026-09-02T09:30:00Z", "REJECTED", "a token bucket in Redis")]
    assert fold(older, newer).decisions[0].evidence == Evidence(event_index=3, quote="a token bucket in Redis")


def test_facts_dedupe_and_past_the_cap_user_constraints_stay_then_the_newest():
    older = _state(facts=[Fact(text="never push to main", kind="constraint")]
                   + [Fact(text=f"old fact {n}") for n in range(MAX_FACTS)])
    newer = _state(facts=[Fact(text="Never push to main."), Fact(text="redis listens on 6380")])
    got = [f.text for f in fold(older, newer).facts]
    assert len(got) == MAX_FACTS
    assert got[0] == "never push to main" and got[-1] == "redis listens on 6380"
    assert "old fact 1" not in got and "old fact 2" in got  # 24 places left: the newest facts


def test_position_comes_from_the_newest_part_and_done_appends():
    older = _state(position=Position(current="wire the limiter", done=["explore the API", "design the bucket"],
                                     remaining=["Update the OpenAPI spec", "Commit the changes made after 1a2b3c"]))
    newer = _state(position=Position(current=None, done=["Tests for pagination", "explore the API"],
                                     remaining=["Load-test the endpoint"]))
    pos = fold(older, newer).position
    assert pos.current is None and pos.remaining == ["Load-test the endpoint"]  # the newest view of what is left
    assert pos.done == ["design the bucket", "Tests for pagination", "explore the API"]


def test_a_newer_part_naming_nothing_in_flight_keeps_the_older_position_minus_what_is_stale():
    older = _state(
        approved_workflow="From the compaction summary, pending: Execute the migration dry-run; Write the docs",
        position=Position(current="wire the limiter", done=["Tests for pagination and the legacy array response"],
                          remaining=["Tests for pagination", "Update the OpenAPI spec", "Waiting for the user: ok?",
                                     "Execute the migration dry-run"]))
    pos = fold(older, _state()).position
    assert pos.current == "wire the limiter" and pos.remaining == ["Update the OpenAPI spec"]
    did = fold(older, _state(position=Position(done=["Update the OpenAPI spec", "Wire the limiter"]))).position
    assert did.current is None and did.remaining == []


def test_done_keeps_the_newest_items():
    older = _state(position=Position(done=[f"step {n}" for n in range(MAX_DONE)]))
    newer = _state(position=Position(done=["step new"]))
    done = fold(older, newer).position.done
    assert len(done) == MAX_DONE and done[-1] == "step new" and "step 0" not in done


def test_rederivation_keeps_the_rules_order_the_newest_places_and_the_caps():
    older = _state(rederivation=["Read the transcript: /t.jsonl", "Read: a.py", "Read: b.py", "Run: pytest -q",
                                 "Resume the explore sub-agent: task_id ses_1"])
    newer = _state(rederivation=["Read the transcript: /t.jsonl", "Read: a.py", "Run: ruff check src"]
                   + [f"Run: cmd {n}" for n in range(10)])
    got = fold(older, newer).rederivation
    assert got[:3] == ["Read the transcript: /t.jsonl", "Read: b.py", "Read: a.py"]
    assert got[3:] == [f"Run: cmd {n}" for n in range(10)] + ["Resume the explore sub-agent: task_id ses_1"]


def test_the_header_is_the_newer_part_s_with_what_it_does_not_know_from_the_older():
    older = _state(cwd="/home/dev/shop", branch="feature/x", session_id="s1")
    newer = _state(stamp="2026-09-02-1100", cwd="unknown", branch="unknown", session_id=None, trigger="t2")
    got = fold(older, newer)
    assert (got.stamp, got.cwd, got.branch, got.session_id, got.trigger) == (
        "2026-09-02-1100", "/home/dev/shop", "feature/x", "s1", "t2")


def test_past_the_cap_a_quirk_found_early_outranks_later_plain_facts():
    older = _state(facts=[Fact(text="redis listens on 6380, not 6379", kind="quirk")])
    newer = _state(facts=[Fact(text=f"note {n}") for n in range(MAX_FACTS)])
    got = [f.text for f in fold(older, newer).facts]
    assert got[0] == "redis listens on 6380, not 6379" and "note 0" not in got and got[-1] == f"note {MAX_FACTS - 1}"
