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
    """Revised rigid map (DESIGN.md "Translation", 2026-12-04; issue 26): lasting decisions only, user rules to
    Conventions, durable facts to Notes, Remaining to Deferred-Debt, the workflow (a task list) not translated."""
    delta = translate(state("2026-03-10-1000-recovered.state.md"))
    assert (delta.session, delta.origin, delta.stamp) == (
        "2026-03-10-1000-recovered", "shop@feature/rate-limit", "2026-03-10 10:00")
    decisions = [e for e in delta.entries if e.section == "Decisions"]
    by_key = {e.key: e for e in decisions}
    assert not any(e.key.startswith("workflow-") for e in delta.entries)
    assert by_key["token-bucket"].text.startswith("APPROVED: the token bucket - user's instruction")
    assert by_key["fixed-window"].text.startswith("REJECTED: a fixed window - user said")
    assert by_key["fixed-window"].date == "2026-03-10"
    assert list(by_key) == ["fixed-window", "token-bucket", "token-bucket-redis", "in-memory-limiter", "slowapi",
                            "key-each-bucket-api", "429-retry-after-header", "lua-script", "multi-exec"]
    conventions = {e.key: e.text for e in delta.entries if e.section == "Conventions"}
    assert conventions == {
        "never-push-main-directly": "never push to main directly, open a PR when the whole thing is done",
        "dont-touch-payments-module": "don't touch the payments module, that's owned by the payments team."}
    assert not [e for e in delta.entries if e.section in ("Glossary", "Goals")]
    facts = [f.text for f in delta.facts]
    assert len(facts) == 9 and facts[0].startswith("Key finding: the Redis client in src/shop/cache.py")
    assert "Found it: redis-server in this dev container listens on port 6380, not 6379." in facts
    assert [(d.type, d.what, d.status) for d in delta.debts] == [
        ("docs", "Document the RATE_LIMIT_* settings in docs/configuration.md", "open")]
    assert delta.questions == []
    skipped = [(s.source, s.text[:41], s.reason) for s in delta.skipped]
    assert skipped == [
        ("Approved Workflow", "We keep getting hammered on POST /api/che", "task list"),
        ("Decision Log", "REJECTED: edit shop/payments/gateway.py", "declined session action"),
        ("Decision Log", "REJECTED: changing the checkout lock", "declined session action"),
        ("Established Facts", "no, don't use a fixed window, use the tok", "one-off request"),
        ("Established Facts", "stick to the api layer", "one-off request"),
        ("Established Facts", "leave the checkout lock as is, thats a se", "one-off request"),
        ("Position.Remaining", "Push feature/rate-limit and open a PR aga", "procedural step")]
    assert "Run /review on src/shop/api" in delta.done


def test_translate_follow_up_state_keeps_terms_and_drops_pasted_output():
    delta = translate(state("2026-03-11-0900.state.md"))
    glossary = {e.key: e.text for e in delta.entries if e.section == "Glossary"}
    assert glossary == {"Retry-After": "seconds until the bucket holds one token again, rounded up"}
    assert [f.text for f in delta.facts] == [
        "The ingress adds exactly one X-Forwarded-For hop (set in deploy/ingress/values.yaml)."]
    assert [s.reason for s in delta.skipped if s.source == "Established Facts"] == ["pasted output"] * 3
    assert [(d.type, d.what) for d in delta.debts] == [
        ("todo", "Ask the partner team whether 40 requests per bucket is enough for the nightly sync")]
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
                    facts=[Fact(text=f"never commit {secret} or any other staging key")],
                    position=Position(remaining=[f"rotate {secret}"]))
    from pipeline.context.gate import masker

    delta = translate(st, masker=masker)
    entry = delta.entries[0]
    assert entry.section == "Conventions" and secret not in entry.text and secret.lower() not in entry.key
    assert (entry.text, entry.redacted) == ("never commit <REDACTED> or any other staging key", 1)
    assert (delta.debts[0].what, delta.debts[0].redacted) == ("rotate <REDACTED>", 1)


def test_rules_of_a_state_that_took_in_a_prompt_template_are_the_templates():
    """Rule-like facts beside three or more lines in a prompt's words (RFC 2119 MUST, "the user") come from a pasted
    prompt or command template, not from the user (issue 26: Conventions hold the user's rules)."""
    template = ["Agents MUST read the spec before coding.", "You MUST keep the user input verbatim.",
                "Each phase MUST end with a checkpoint.", "Always operate on the existing spec file."]
    delta = translate(AgentState(
        stamp="2026-03-12-0800", created="2026-03-12T08:00:00Z", facts=[Fact(text=t) for t in template],
        decisions=[Decision(timestamp="2026-03-12T07:00:00Z", status="REJECTED", what="two low-impact questions",
                            reasoning="Ensure coverage balance: cover the highest impact areas first")]))
    assert [e for e in delta.entries if e.section in ("Conventions", "Decisions")] == []
    assert [s.reason for s in delta.skipped] == ["prompt text, not the user's words"] * 5
    own = translate(AgentState(stamp="2026-03-12-0800", created="2026-03-12T08:00:00Z",
                               facts=[Fact(text=template[0]), Fact(text="Always operate on the existing spec file.")]))
    assert [(e.key, e.text) for e in own.entries] == [("always-operate-existing-spec",
                                                      "Always operate on the existing spec file.")]
