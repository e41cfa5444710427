"""Established Facts of the rules engine (pipeline.stages.rules.facts)."""

from __future__ import annotations

from pipeline.stages import distil
from rules_builder import B, evidence_ok

AUDIT = (
    "## Redis usage audit\n\n"
    "**Key finding:** the Redis client in src/shop/cache.py is created per request, so INCR/EXPIRE pairs are not "
    "atomic; use a Lua script or MULTI.\n\nDetails:\n\n"
    "1. `get_redis()` (src/shop/cache.py:9-11) calls `redis.Redis.from_url(...)` on every call.\n"
    "2. The checkout lock (src/shop/api/checkout.py:28-30) is `GET` then `SET ... EX 30`.\n"
    "3. I looked at a few other modules.\n\nNo Redis access in src/shop/payments/."
)


def facts(b: B):
    t = b.build()
    out = distil.run(t).facts
    assert evidence_ok(t, out) == []
    return [(f.kind, f.text) for f in out]


def test_constraints_quote_the_user_sentence():
    b = B()
    b.user("looks good. commit it on this branch, but never push to main directly, open a PR when the whole thing is done")
    b.user("don't touch the payments module, that's owned by the payments team. stick to the api layer")
    b.user("I don't know why partner-7 retries so fast. can you always log the key?")
    assert facts(b) == [
        ("constraint", "commit it on this branch, but never push to main directly, open a PR when the whole thing is done"),
        ("constraint", "don't touch the payments module, that's owned by the payments team."),
        ("constraint", "stick to the api layer"),
    ]


def test_subagent_key_findings_not_the_whole_answer():
    b = B()
    b.user("Audit how we use Redis.")
    b.subagent("Audit Redis usage", AUDIT)
    got = facts(b)
    assert got == [
        ("subagent", "Key finding: the Redis client in src/shop/cache.py is created per request, so INCR/EXPIRE pairs are not atomic; use a Lua script or MULTI."),
        ("subagent", "`get_redis()` (src/shop/cache.py:9-11) calls `redis.Redis.from_url(...)` on every call."),
        ("subagent", "The checkout lock (src/shop/api/checkout.py:28-30) is `GET` then `SET ... EX 30`."),
    ]


def test_root_cause_and_quirks():
    b = B()
    b.user("The checkout tests fail.")
    b.bash("python -m pytest -q tests/api", "E   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379", error=True)
    b.asst("The tests can't connect because nothing listens on 6379. Let me check the container.")
    b.bash("ss -ltnp | grep redis", "LISTEN 0 511 0.0.0.0:6380")
    b.asst("Found it: redis-server in this dev container listens on port 6380, not 6379.")
    b.asst("Root cause: tests/api/test_burst_limits.py leaves the bucket empty, because nothing flushes Redis db 15 between tests.")
    b.asst("Note: pip install needs --break-system-packages in this container.")
    b.asst("The migration must be run from the repo root, otherwise alembic.ini is not found.")
    assert facts(b) == [
        # "The tests can't connect because nothing listens on 6379." is the same finding (port 6379), and the
        # later sentence states the resolution: one fact per finding (factprune "Same finding"); in transcript order
        ("quirk", "Found it: redis-server in this dev container listens on port 6380, not 6379."),
        ("root_cause", "Root cause: tests/api/test_burst_limits.py leaves the bucket empty, because nothing flushes Redis db 15 between tests."),
        ("quirk", "Note: pip install needs --break-system-packages in this container."),
        ("quirk", "The migration must be run from the repo root, otherwise alembic.ini is not found."),
    ]


def test_turns_out_and_the_problem_was():
    b = B()
    b.user("Why does the session test flake?")
    b.asst("Turns out createSession() runs before vi.useFakeTimers(), so expiresAt comes from the real clock.")
    b.asst("The problem was a missing await in the teardown hook.")
    b.asst("The problem is interesting.")  # no failure word: not a root cause
    assert facts(b) == [
        ("root_cause", "Turns out createSession() runs before vi.useFakeTimers(), so expiresAt comes from the real clock."),
        ("root_cause", "The problem was a missing await in the teardown hook."),
    ]


def test_no_facts_from_tool_output_or_reasoning():
    b = B()
    b.user("Check the config.")
    b.think("The root cause is that the port is 6380, not 6379.")
    b.bash("cat README.md", "Note: the root cause was the cache. The server only works with --legacy.")
    assert facts(b) == []


def test_facts_fit_the_budget_constraints_first_and_deduplicated():
    """Over the session's byte budget (``candidates.budget``) the best candidates are kept: every rule the user
    stated (the highest prior), one line per finding, constraints first and the rest in transcript order."""
    from pipeline.stages.rules import candidates
    from pipeline.stages.rules import facts as rules_facts
    from pipeline.stages.rules.scan import scan

    b = B()
    rules = [
        "never call the payments API from tests", "always run ruff before committing", "don't add new dependencies",
        "keep the public API of shop.client unchanged", "only touch files under src/shop/api",
        "do not log API keys in plain text", "never push to main directly", "avoid sleeping in tests",
        "the migration must stay reversible", "don't change the invoice numbering", "always use UTC in timestamps",
        "never disable the CSRF middleware",
    ]
    for rule in rules:
        b.user(rule)
    b.asst("Root cause: the fixture never resets the clock.")
    b.asst("root cause: the fixture never resets the clock!")  # same text
    b.asst("Root cause: the fixture never resets the clock between the tests.")  # near duplicate
    for n in range(40):
        b.subagent(f"look {n}", f"Key finding: module_{n}.py defines handler_{n} in src/app/module_{n}.py:{n + 10}.")
    for n in range(30):
        b.asst(f"Service {n} only works with --flag-{n} set.")
    got = facts(b)
    s = scan(b.build())
    assert sum(len(t.encode()) + 1 for _, t in got) <= candidates.budget(rules_facts.message_chars(s))
    assert [t for k, t in got if k == "constraint"] == rules  # all of them, first, in order
    assert [k for k, _ in got[: len(rules)]] == ["constraint"] * len(rules)
    assert len([t for k, t in got if "resets the clock" in t]) <= 1  # one line for the three statements
    assert 12 < len(got) < 12 + 70  # the budget cut the findings


def test_over_the_budget_the_latest_rules_survive():
    b = B()
    rules = [f"never call endpoint_{n} directly from module_{n} of the billing service" for n in range(120)]
    for rule in rules:
        b.user(rule)
    got = [t for _, t in facts(b)]
    assert 20 < len(got) < 120
    assert got == rules[-len(got):]  # the newest rules stand; in transcript order


def test_ordinary_narration_gives_few_facts():
    b = B()
    b.user("Fix the import error.")
    for sentence in [
        "Let me check the current implementation.", "I need to understand why this fails.",
        "The issue is that we're not awaiting the promise.", "I'll only change the handler.",
        "The tests need to be updated.", "Why does this happen?", "Perfect, that confirms the theory.",
        "This function is only called from the CLI.", "The problem is interesting.",
    ]:
        b.asst(sentence)
    assert facts(b) == [("root_cause", "The issue is that we're not awaiting the promise.")]


# --- a user sentence already in the Decision Log ------------------------------------------------------------
def test_a_user_sentence_that_only_picks_an_option_is_not_repeated_as_a_constraint():
    b = B()
    b.user("Cache the product lookups.")
    b.asst("I'd put an in-process LRU cache in front of the product repository.")
    b.user("nope, don't use an LRU, use memcached. an LRU would differ between the 6 workers")
    b.user("no, don't use pickle for the cache values, use JSON. never deserialize pickle that came over the network")
    b.user("ok. leave the retry decorator as is, that belongs to another PR")
    d = distil.run(b.build()).decisions
    assert [(x.status, x.what, x.origin) for x in d] == [
        ("REJECTED", "an LRU", "user"),
        ("APPROVED", "memcached", "user"),
        ("REJECTED", "pickle for the cache values", "user"),
        ("APPROVED", "JSON", "user"),
        ("REJECTED", "changing the retry decorator", "user"),
    ]
    # the picks are in the Decision Log; the standing rule stated next to one of them stays a fact
    assert facts(b) == [("constraint", "never deserialize pickle that came over the network")]


def test_a_declined_tool_call_keeps_the_broader_rule_the_user_gave():
    b = B()
    b.user("Make the exporter stream rows.")
    b.edit("/home/dev/app/vendor/csvkit/writer.py")
    b.events[-1].is_error = True
    b.events[-1].text = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    b.user("don't edit anything under vendor, it's synced from upstream. put the wrapper in src/export")
    d = distil.run(b.build()).decisions
    assert [(x.status, x.what, x.origin) for x in d] == [
        ("REJECTED", "editing /home/dev/app/vendor/csvkit/writer.py", "user-rejection")
    ]
    assert facts(b) == [("constraint", "don't edit anything under vendor, it's synced from upstream.")]


def test_without_the_decision_log_the_sentence_stays_a_constraint():
    from pipeline.stages.rules import facts as rules_facts
    from pipeline.stages.rules.scan import scan

    b = B()
    b.user("Cache the product lookups.")
    b.asst("I'd put an in-process LRU cache in front of the product repository.")
    b.user("nope, don't use an LRU, use memcached.")
    assert [f.text for f in rules_facts.build(scan(b.build()))] == ["nope, don't use an LRU, use memcached."]


# --- one fact per finding ---------------------------------------------------------------------------------
def test_near_duplicate_findings_keep_the_one_that_states_the_resolution():
    b = B()
    b.user("Fix the search tests.")
    b.bash("npm test -- search", "Error: connect ECONNREFUSED 127.0.0.1:9200", error=True)
    b.asst("The search specs can't reach Elasticsearch on 9200.")
    b.asst("The integration run failed because Elasticsearch was not on 9200; docker-compose.yml maps it to 9201.")
    b.asst("Got it: the elasticsearch container publishes port 9201, not 9200.")
    # the two restatements go; the failed call's own error line (what failed) stays beside the resolution (why)
    assert facts(b) == [
        ("quirk", "`npm test -- search` failed: Error: connect ECONNREFUSED 127.0.0.1:9200"),
        ("quirk", "Got it: the elasticsearch container publishes port 9201, not 9200."),
    ]


def test_different_findings_about_one_file_both_stay():
    b = B()
    b.user("Why are the invoice totals off by a cent?")
    b.asst("Root cause: src/billing/tax.py rounds each line before summing the invoice.")
    b.asst("Note: src/billing/tax.py:40 reads the rate from the TAX_RATE variable, which defaults to 0.2.")
    b.asst("Note: commit 4e1d9a2 moved the rounding into the helper.")
    b.asst("Note: commit 7c2f0b1 moved the rounding tests into tests/billing.")
    assert [t for _, t in facts(b)] == [
        "Root cause: src/billing/tax.py rounds each line before summing the invoice.",
        "Note: src/billing/tax.py:40 reads the rate from the TAX_RATE variable, which defaults to 0.2.",
        "Note: commit 4e1d9a2 moved the rounding into the helper.",
        "Note: commit 7c2f0b1 moved the rounding tests into tests/billing.",
    ]


def test_same_finding_and_better_rules():
    from pipeline.stages.rules.factprune import better, distinctive, same_finding

    assert distinctive("`get_user()` in api/users.py:12-30 returns 404 for id 7") == frozenset(
        {"get_user", "api/users.py", "404"}
    )
    symptom = "The worker can't reach statsd on 8125."
    resolved = "Turns out statsd in this VM listens on 8126, not 8125."
    assert same_finding(symptom, resolved) and same_finding(resolved, symptom)
    assert better(resolved, symptom) and not better(symptom, resolved)
    # a shared two-digit number or a bare product name is too common to tie two facts together
    assert not same_finding("The API returns 50 items per page.", "Only 50 items fit the API cache.")
    assert not same_finding("OpenCode stores sessions as JSON.", "OpenCode sessions are stored per project.")
