"""Whole-session checks of the rules engine: a generated session of realistic size, evidence grounding of
every entry, and the engine over the shared corpus and the project's fixtures (distil -> weave -> validate)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.stages import distil, validate, weave
from pipeline.transcripts import read_transcript
from rules_builder import B, evidence_ok

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
NOW = datetime(2026, 11, 29, 20, 31, tzinfo=timezone.utc)

QUIRK = "redis-server in this dev container listens on port 6380, not 6379"
CONSTRAINT = "never push to main directly, open a PR when the whole thing is done"
FINDING = "the Redis client in src/shop/cache.py is created per request, so INCR/EXPIRE pairs are not atomic"
MODULES = [
    "checkout", "refunds", "orders", "carts", "invoices", "coupons", "shipping", "search", "users", "reports",
    "reviews", "wishlists", "returns", "gift_cards", "addresses", "payouts",
]


def long_session() -> B:
    """~400 events: the decisive facts and decisions come in the first 5 %, then many ordinary work steps."""
    b = B(step=11)
    b.user("Add rate limiting to every write endpoint of the shop API, per API key, with tests. " + CONSTRAINT + ".")
    b.subagent("Audit Redis usage", f"Key finding: {FINDING}.\n\nNo Redis access in src/shop/payments/.")
    b.bash("python -m pytest -q tests/api", "E   ConnectionError: Error 111 connecting to localhost:6379", error=True)
    b.asst(f"Found it: {QUIRK}. I'll run the tests with REDIS_URL=redis://localhost:6380/15.")
    b.asst("We're going with a token bucket in Redis because it survives restarts and is shared across the 4 pods.")
    b.asst("Ruled out the in-memory limiter: it resets on every deploy.")
    todos = [(f"Apply the limiter to POST /api/{m}", "pending") for m in MODULES]
    b.todos(*todos)
    for n, module in enumerate(MODULES):
        todos[n] = (todos[n][0], "in_progress")
        b.todos(*todos)
        b.asst(f"Now let me look at the {module} handler.")
        for k in range(3):
            b.read(f"/home/dev/shop/src/shop/api/{module}_{k}.py")
        b.edit(f"/home/dev/shop/src/shop/api/{module}.py")
        b.edit(f"/home/dev/shop/tests/api/test_{module}.py", tool="Write")
        b.asst(f"Applied the limiter to {module}; running its tests.")
        b.bash(f"REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api/test_{module}.py",
               "1 failed, 11 passed", error=True)
        b.asst(f"One {module} test expected 200 for the 21st request. Updating the assertion to 429.")
        b.edit(f"/home/dev/shop/tests/api/test_{module}.py")
        b.bash(f"REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api/test_{module}.py", "12 passed in 0.8s")
        b.bash("ruff check src tests", "All checks passed!")
        b.asst(f"The {module} endpoint is rate limited and its tests pass.")
        todos[n] = (todos[n][0], "completed")
        b.todos(*todos)
        if n == 5:
            b.compaction("This session is being continued from a previous conversation that ran out of context.")
            b.user("continue")
    b.bash('git commit -am "Rate-limit all write endpoints"', "[feature/rate-limit 9f8e7d6] Rate-limit all write endpoints")
    b.asst("All endpoints are done. Next I will write the docs.")
    return b


def test_decisive_early_facts_survive_a_long_session():
    b = long_session()
    t = b.build()
    assert 380 <= len(t.events) <= 420
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == [] and evidence_ok(t, d.facts) == []
    texts = [f.text for f in d.facts]
    assert any(QUIRK in x for x in texts)
    assert any(CONSTRAINT in x for x in texts)
    assert any(FINDING in x for x in texts)
    early = [f for f in d.facts if any(s in f.text for s in (QUIRK, CONSTRAINT, FINDING))]
    assert all(f.evidence.event_index < len(t.events) * 0.05 for f in early)
    assert [(x.status, x.what) for x in d.decisions] == [
        ("APPROVED", "a token bucket in Redis"),
        ("REJECTED", "the in-memory limiter"),
    ]
    assert d.position.current.endswith(" — Next I will write the docs.")
    assert d.position.remaining == []
    assert d.position.done == [f"Apply the limiter to POST /api/{m}" for m in MODULES[-12:-1]] + [
        "Ran `REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api/test_payouts.py` (passed)",
        "Ran `ruff check src tests` (clean)",
        "Apply the limiter to POST /api/payouts",
        'Committed 9f8e7d6 "Rate-limit all write endpoints"',
    ]
    assert d.rederivation[0] == f"Read the transcript: {t.meta.path}"
    assert len([x for x in d.rederivation if x.startswith("Run: ")]) == 10


def test_long_session_weaves_and_validates_without_drops():
    t = long_session().build()
    state = weave.run(distil.run(t), t.meta, now=NOW, trigger="pre-compact")
    result = validate.run(state, t)
    assert result.dropped == []
    assert "Session: 2026-11-29-2031-recovered | Cwd: /home/dev/shop | Repo/Branch: shop@feature/rate-limit | Trigger: pre-compact" in result.text


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = sorted(p for p in CORPUS.iterdir() if p.suffix in (".jsonl", ".json") and p.name != "probes.json")
    files += sorted((CORPUS / "claude-code-2.1.89-main").glob("*.jsonl"))
    return files


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_corpus_transcripts_give_grounded_valid_states(path):
    try:
        t = read_transcript(str(path), max_bytes=50_000_000, warn=False)
    except Exception as exc:  # a format the readers do not know yet is not this engine's concern
        pytest.skip(f"reader: {exc}")
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == [] and evidence_ok(t, d.facts) == []
    state = weave.run(d, t.meta, now=NOW)
    assert validate.run(state, t).dropped == []
    assert len(state.position.done) <= 15 and len(state.facts) <= weave.MAX_FACTS


FIXTURES = sorted((ROOT / "fixtures").glob("*/*.truth.json"))


@pytest.mark.parametrize("truth_path", FIXTURES, ids=lambda p: p.name)
def test_fixture_ground_truth(truth_path):
    """The planted constraints, facts, position and decisions of each realistic fixture come out."""
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    t = read_transcript(str(ROOT / "fixtures" / truth["fixture"]), warn=False)
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == [] and evidence_ok(t, d.facts) == []
    facts = [f.text.lower() for f in d.facts]
    for c in truth.get("constraints", []):
        assert any(c.lower() in f for f in facts), c
    for f in truth.get("facts", []):
        assert any(f["text"].lower() in x for x in facts), f["text"]
    assert d.position.current == truth["current"]
    assert d.position.remaining == truth["remaining"]
    for done in truth.get("done_todos", []):
        assert done in d.position.done
    assert d.approved_workflow.startswith(truth["workflow"][:200])
    for r in truth.get("redirections", []):
        assert r in d.approved_workflow
    statuses = {(x.status, x.evidence.event_index) for x in d.decisions}
    for key, status in (("approved", "APPROVED"), ("rejected", "REJECTED")):
        for item in truth.get(key, []):
            hits = [
                i for i, ev in enumerate(t.events)
                if any(q[:60] in ev.text for q in item["quotes"]) and (status, i) in statuses
            ]
            assert hits, f"{status} {item['what']}"


# --- every entry the engine produces is grounded, whatever the input -------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PIECES = [
    "We're going with Redis because it is shared.", "Ruled out Memcached: no persistence.", "yes, do that", "no",
    "Shall I add a Lua script?", "Option 1: Redis\nOption 2: Postgres", "let's do option 2", "continue",
    "no, don't use localStorage, use cookies", "That didn't work because the port is taken.", "Tried X, it failed.",
    "DECISION: use tenacity - handles jitter", "Root cause: the fixture never flushes db 15.", "never push to main",
    "Next steps:\n- write docs\n- open a PR", "İstanbul DECİSİON: İ going with İ because İ.", "```\ngoing with code\n```",
    "the port is 6380, not 6379", "Key finding: src/a.py:3 calls b() per request.", "  ", "", "…", "a" * 400,
    "Switching to httpx since requests lacks HTTP/2.", "not RabbitMQ, SQS", "- [x] done thing\n- [ ] open thing",
]
KINDS = ["user_prompt", "assistant_text", "reasoning", "tool_result", "compaction", "subagent_result", "assistant_text"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.lists(st.sampled_from(PIECES), min_size=1, max_size=4),
                          st.booleans()), max_size=30))
def test_every_entry_is_grounded_in_its_event(items):
    b = B(timestamps=False)
    for kind, parts, flag in items:
        text = (" " if flag else "\n").join(parts)
        if kind == "tool_result":
            b.bash("pytest -q", text, error=flag)
        elif kind == "subagent_result":
            b.subagent("look", text)
        else:
            b.add(kind, text)
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == [] and evidence_ok(t, d.facts) == []
    state = weave.run(d, t.meta, now=NOW)
    assert validate.run(state, t).dropped == []
