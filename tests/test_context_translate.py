"""Translation of a state file into a ContextDelta (pipeline.context.translate, .keys, .reduce).

DESIGN.md "CONTEXT.md (Tier 1)", "Translation (rigid map)"; issue 5 item 2: deterministic keys, decision-level
detail without rewriting meaning.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.context.keys import assign_keys, slug, split_term
from pipeline.context.reduce import outside_fences, reduce_text
from pipeline.context.translate import translate
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.parse import parse

ROOT = Path(__file__).resolve().parent.parent
STATES = ROOT / "fixtures" / "context" / "states"


def state(name: str) -> AgentState:
    return parse((STATES / name).read_text(encoding="utf-8"))


def test_slug_keeps_significant_words_and_negations():
    assert slug("a token bucket in Redis") == "token-bucket-redis"
    assert slug("the in-memory limiter") == "in-memory-limiter"
    assert slug("no, don't use a fixed window, use the token bucket.") == "no-dont-use-fixed"
    assert slug("MULTI/EXEC") == "multi-exec"
    assert slug("edit /home/dev/shop/src/shop/payments/gateway.py") == "edit-gateway"
    assert slug("`get_redis()` (src/shop/cache.py:9-11) calls") == "get-redis-cache-calls"
    assert slug("the of a") == slug("the  of a")
    assert slug("the of a").startswith("item-") and len(slug("the of a")) == len("item-") + 8
    assert len(slug("x" * 200)) == 48


def test_split_term_keeps_real_terms_only():
    assert split_term("Retry-After: seconds until the bucket holds one token") == (
        "Retry-After", "seconds until the bucket holds one token")
    assert split_term("Root cause: tests share a bucket") == (None, "tests share a bucket")
    assert split_term("Key finding: the client is per request") == (None, "the client is per request")
    assert split_term("2026-02-12: partner-7 retries") == (None, "2026-02-12: partner-7 retries")
    assert split_term("it failed, so: retry") == (None, "it failed, so: retry")
    assert split_term("see https://example.org/x") == (None, "see https://example.org/x")
    assert split_term("at 10:30 we met") == (None, "at 10:30 we met")


def test_assign_keys_separates_colliding_texts_and_merges_equal_ones():
    keys = assign_keys(["use Redis for the locks", "use Redis for the locks and the limiter",
                        "use  Redis for the locks", "Redis port"])
    assert keys == ["use-redis-locks", "use-redis-locks-limiter", "use-redis-locks", "redis-port"]
    assert assign_keys(["Fixed window!", "fixed window?"]) == ["fixed-window", "fixed-window-2"]


def test_reduce_text_drops_output_hashes_and_long_path_prefixes_only():
    assert reduce_text("Fixed (3f9a2c1) in /home/dev/shop/src/shop/ratelimit.py") == "Fixed in src/shop/ratelimit.py"
    assert reduce_text("from the log:\n```\n10.2.7.14 POST 409\n```\nabout 40 req/s") == "about 40 req/s"
    keep = "SHOP-1234 on port 6380, id 550e8400-e29b-41d4-a716-446655440000, see https://a.example/b/c/d/e.md"
    assert reduce_text(keep) == keep
    assert reduce_text("docs/configuration.md and tests/api/test_x.py") == "docs/configuration.md and tests/api/test_x.py"
    assert reduce_text("") == ""
    assert outside_fences(["Full output:", "```", "40 passed", "```", "after"]) == [False, False, False, False, True]


def test_translate_recovered_state_rigid_map():
    delta = translate(state("2026-03-10-1000-recovered.state.md"))
    assert (delta.session, delta.origin, delta.stamp) == (
        "2026-03-10-1000-recovered", "shop@feature/rate-limit", "2026-03-10 10:00")
    decisions = [e for e in delta.entries if e.section == "Decisions"]
    assert decisions[0].key == "workflow-keep-getting-hammered-post"
    assert decisions[0].text.startswith("We keep getting hammered on POST /api/checkout")
    assert "10.2.7.14" not in decisions[0].text and "from the ingress log" not in decisions[0].text
    assert "also cover the /refund endpoint" in decisions[0].text
    by_key = {e.key: e for e in decisions}
    assert by_key["token-bucket"].text.startswith("APPROVED: the token bucket - user's instruction")
    assert by_key["fixed-window"].text.startswith("REJECTED: a fixed window - user said")
    assert by_key["fixed-window"].date == "2026-03-10"
    assert by_key["edit-gateway"].text.startswith("REJECTED: edit shop/payments/gateway.py - user declined")
    assert len(decisions) == 12  # workflow + 11 Decision Log lines
    glossary = [e for e in delta.entries if e.section == "Glossary"]
    assert len(glossary) == 14
    assert all(e.section in ("Decisions", "Glossary") for e in delta.entries)
    assert [q.text for q in delta.questions] == [
        "Document the RATE_LIMIT_* settings in docs/configuration.md",
        "Push feature/rate-limit and open a PR against main"]
    assert "Run /review on src/shop/api" in delta.done


def test_translate_follow_up_state_keeps_terms_and_drops_pasted_output():
    delta = translate(state("2026-03-11-0900.state.md"))
    glossary = {e.key: e.text for e in delta.entries if e.section == "Glossary"}
    assert glossary == {
        "Retry-After": "seconds until the bucket holds one token again, rounded up",
        "ingress-adds-exactly-one": "The ingress adds exactly one X-Forwarded-For hop (set in deploy/ingress/values.yaml).",
    }
    assert "Committed with the new capacity" in delta.done
    assert not any("b41c9e07" in d for d in delta.done)


def test_same_state_translates_to_the_same_keys_and_keys_ignore_other_states():
    one = translate(state("2026-03-10-1000-recovered.state.md"))
    two = translate(state("2026-03-10-1000-recovered.state.md"))
    assert one == two
    single = AgentState(stamp="2026-03-12-0800", created="2026-03-12T08:00:00Z",
                        decisions=[Decision(timestamp="2026-03-12T07:59:00Z", status="APPROVED", what="a Lua script",
                                            reasoning="atomic")])
    assert [e.key for e in translate(single).entries] == ["lua-script"]
    assert {e.key for e in one.entries} >= {"lua-script"}


def test_translate_masker_masks_before_keys_and_counts():
    secret = "sk-proj-Zx9FAKEq7Lm2Vb8Nc4Rt6Yh1Jk3Pw5Sd0"
    st = AgentState(stamp="2026-03-12-0800", created="2026-03-12T08:00:00Z",
                    facts=[Fact(text=f"{secret} is the staging key")],
                    position=Position(remaining=[f"rotate {secret}"]))
    from pipeline.context.gate import masker

    delta = translate(st, masker=masker)
    entry = delta.entries[0]
    assert secret not in entry.text and secret.lower() not in entry.key
    assert (entry.text, entry.redacted) == ("<REDACTED> is the staging key", 1)
    assert (delta.questions[0].text, delta.questions[0].redacted) == ("rotate <REDACTED>", 1)
