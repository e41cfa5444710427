"""Decision Log of the rules engine (pipeline.stages.rules.decisions / phrases / approvals).

Sessions are hand-made with ``rules_builder.B``; every test asserts the exact entries that come out.
"""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from rules_builder import B, evidence_ok


def decisions_of(b: B):
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == []
    return d.decisions


def rows(decisions):
    return [(d.status, d.what, d.reasoning) for d in decisions]


# --- implicit phrasings in assistant text (one sentence each, realistic wording) ---------------------------
PHRASINGS = [
    (
        "We're going with Redis for the rate-limit counters because it is shared across the API pods.",
        [("APPROVED", "Redis for the rate-limit counters", "it is shared across the API pods")],
    ),
    (
        "Going with option 2 since it keeps the public API unchanged.",
        [("APPROVED", "option 2", "it keeps the public API unchanged")],
    ),
    (
        "After comparing both, I settled on httpx over requests because it supports HTTP/2.",
        [
            ("APPROVED", "httpx", "it supports HTTP/2"),
            ("REJECTED", "requests", "in favour of httpx: it supports HTTP/2"),
        ],
    ),
    (
        "Switching to cookie-based sessions since localStorage is readable by any injected script.",
        [
            ("APPROVED", "cookie-based sessions", "localStorage is readable by any injected script"),
        ],
    ),
    (
        "Let's use the existing `RateLimiter` class from src/shop/limits.py.",
        [("APPROVED", "the existing `RateLimiter` class from src/shop/limits.py", "stated by the assistant")],
    ),
    (
        "I'll use a token bucket instead of a fixed window because bursts are expected at checkout.",
        [
            ("APPROVED", "a token bucket", "bursts are expected at checkout"),
            ("REJECTED", "a fixed window", "in favour of a token bucket: bursts are expected at checkout"),
        ],
    ),
    (
        "I decided to keep the migration reversible so that we can roll back the deploy.",
        [("APPROVED", "keep the migration reversible", "so that we can roll back the deploy")],
    ),
    (
        "I chose SQLite over Postgres for the test database, as it needs no server.",
        [
            # the purpose "for the test database" belongs to both options, so it goes with the chosen one
            ("APPROVED", "SQLite for the test database", "it needs no server"),
            ("REJECTED", "Postgres", "in favour of SQLite for the test database: it needs no server"),
        ],
    ),
    (
        "Opting for a background job here so that the request stays under 200 ms.",
        [("APPROVED", "a background job", "so that the request stays under 200 ms")],
    ),
    (
        "The plan is to add a middleware that counts requests per API key.",
        [("APPROVED", "add a middleware that counts requests per API key", "stated by the assistant")],
    ),
    (
        "We'll use Alembic for the schema migrations.",
        [("APPROVED", "Alembic for the schema migrations", "stated by the assistant")],
    ),
    (
        "A sliding window log is the way to go: it has no boundary bursts.",
        [("APPROVED", "A sliding window log", "it has no boundary bursts")],
    ),
    (
        "The best option is to cache the signing key per worker.",
        [("APPROVED", "cache the signing key per worker", "stated by the assistant")],
    ),
    (
        "Option B it is.",
        [("APPROVED", "Option B", "stated by the assistant")],
    ),
    (
        "Using an explicit list of date formats with datetime.strptime, since the standard library is enough.",
        [("APPROVED", "an explicit list of date formats with datetime.strptime", "the standard library is enough")],
    ),
    (
        "Since the pods share no memory, we're going with Redis for the counters.",
        [("APPROVED", "Redis for the counters", "the pods share no memory")],
    ),
    (
        "Instead of polling the partner API, we'll use their webhooks.",
        [
            ("APPROVED", "their webhooks", "stated by the assistant"),
            ("REJECTED", "polling the partner API", "in favour of their webhooks"),
        ],
    ),
    (
        "We're not going with Kafka because the event volume is a few hundred per day.",
        [("REJECTED", "Kafka", "the event volume is a few hundred per day")],
    ),
    (
        "We decided not to use an ORM because the queries are three simple selects.",
        [("REJECTED", "an ORM", "the queries are three simple selects")],
    ),
]


@pytest.mark.parametrize("sentence,expected", PHRASINGS, ids=[p[0][:40] for p in PHRASINGS])
def test_implicit_phrasing(sentence, expected):
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.asst(f"I looked at the handlers in src/shop/api. {sentence} Next I will write the tests.")
    assert rows(decisions_of(b)) == expected


def test_reason_from_the_next_sentence():
    b = B()
    b.user("Make the export stream rows.")
    b.asst("We'll use a server-side cursor. This keeps memory flat for accounts with millions of rows.")
    assert rows(decisions_of(b)) == [
        ("APPROVED", "a server-side cursor", "This keeps memory flat for accounts with millions of rows")
    ]


def test_reason_rejects_the_thing_that_cannot_do_it():
    b = B()
    b.user("Fix the lost updates in the bucket.")
    b.asst("Switching to a Lua script since MULTI/EXEC doesn't give us the read-modify-write we need.")
    assert rows(decisions_of(b)) == [
        ("APPROVED", "a Lua script", "MULTI/EXEC doesn't give us the read-modify-write we need"),
        ("REJECTED", "MULTI/EXEC", "in favour of a Lua script: MULTI/EXEC doesn't give us the read-modify-write we need"),
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "If we go with Redis, we need a connection pool per worker.",
        "Should we go with Redis or Memcached?",
        "I recommend going with option 2.",
        "I'd go with dateutil.",
        "I'll use the Read tool to look at the handler first.",
        "Let me use grep to find every caller of export_rows.",
        "You could switch to httpx because it supports HTTP/2.",
        "Let's use a more targeted search.",
        "I decided to check the logs first.",
        "The plan is to read the file and then update it.",
        "It seems the build didn't work because of a missing dependency.",
        "I chose to run only the failing test to save time.",
        "Let's go with what we have and see.",
        "Dropping into the debugger since the trace is unclear.",
        "Moving on to the refund endpoint since checkout is done.",
        "Keeping this short since you asked for a summary.",
        "The tests failed because the fixture was missing.",
        "I'll switch to the src directory.",
        "Here's what I'd suggest: go with Postgres.",
        "Picking up with the migration for the index.",
    ],
)
def test_not_a_decision(sentence):
    b = B()
    b.user("Look into the checkout handler.")
    b.asst(sentence)
    assert decisions_of(b) == []


def test_explicit_markers():
    b = B()
    b.user("Plan the pagination.")
    b.asst(
        "Summary of the design:\n"
        "DECISION: cursor pagination on (createdAt, id) - stable while rows are inserted\n"
        "- **REJECTED:** offset pagination because offsets skip rows during infinite scroll\n"
        "APPROVED: 50 items per page by default"
    )
    assert rows(decisions_of(b)) == [
        ("APPROVED", "cursor pagination on (createdAt, id)", "stable while rows are inserted"),
        ("REJECTED", "offset pagination", "offsets skip rows during infinite scroll"),
        ("APPROVED", "50 items per page by default", "stated by the assistant"),
    ]


# --- dead ends -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence,expected",
    [
        (
            "Ruled out the in-memory limiter: it resets on every deploy and each pod would count separately.",
            ("REJECTED", "the in-memory limiter", "it resets on every deploy and each pod would count separately"),
        ),
        (
            "Tried slowapi first, it failed because it needs the Starlette request object and our handlers are plain Flask views.",
            ("REJECTED", "slowapi", "it needs the Starlette request object and our handlers are plain Flask views"),
        ),
        (
            "I tried pinning urllib3 to 1.26, but it still fails with the same SSL error.",
            ("REJECTED", "pinning urllib3 to 1.26", "it still fails with the same SSL error"),
        ),
        (
            "Mocking the clock won't work because the limiter reads time.monotonic directly.",
            ("REJECTED", "Mocking the clock", "the limiter reads time.monotonic directly"),
        ),
        (
            "The fixed-window approach didn't work because bursts at the minute boundary doubled the rate.",
            ("REJECTED", "The fixed-window approach", "bursts at the minute boundary doubled the rate"),
        ),
        (
            "We abandoned the GraphQL gateway after the spike.",
            ("REJECTED", "the GraphQL gateway after the spike", "ruled out by the assistant"),
        ),
    ],
)
def test_dead_end(sentence, expected):
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.asst(sentence)
    assert rows(decisions_of(b)) == [expected]
    assert decisions_of(b)[0].origin == "dead-end"


def test_dead_end_with_a_pronoun_names_the_failed_command():
    b = B()
    b.user("Get the dev stack running.")
    b.bash("docker compose up -d db", "Error: port 5432 is already allocated", error=True)
    b.asst("That didn't work because port 5432 is already taken by the host Postgres.")
    assert rows(decisions_of(b)) == [
        ("REJECTED", "`docker compose up -d db`", "port 5432 is already taken by the host Postgres")
    ]
    assert decisions_of(b)[0].origin == "dead-end"


def test_dead_end_with_a_pronoun_and_no_failed_call_is_dropped():
    b = B()
    b.user("Get the dev stack running.")
    b.asst("That didn't work because port 5432 is already taken.")
    assert decisions_of(b) == []


# --- user approvals of a proposal --------------------------------------------------------------------------
def _proposal_session(reply: str) -> B:
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.asst(
        "Proposal for the bucket key and size: key each bucket by the API key id, falling back to the client IP, "
        "with a capacity of 20 requests.\n\n- Limits come from config.\n\nWant me to go ahead with that?"
    )
    b.user(reply)
    return b


def test_yes_do_that_approves_the_proposal():
    d = decisions_of(_proposal_session("yes, do that"))
    assert rows(d) == [
        (
            "APPROVED",
            "key each bucket by the API key id, falling back to the client IP, with a capacity of 20 requests",
            'user approved ("yes, do that")',
        )
    ]
    assert d[0].origin == "user-approval"
    assert d[0].evidence.event_index == 1  # the proposal
    assert d[0].timestamp == "2026-09-01T10:00:10Z"  # the user's reply


@pytest.mark.parametrize("reply", ["yes", "sounds good", "go ahead", "approved", "ok do it", "lgtm", "Yes please!"])
def test_approval_words(reply):
    d = decisions_of(_proposal_session(reply))
    assert [(x.status, x.origin) for x in d] == [("APPROVED", "user-approval")]
    assert d[0].reasoning == f'user approved ("{reply}")'


@pytest.mark.parametrize("reply", ["continue", "next", "go on", "B", "2", "keep going"])
def test_continue_next_and_a_bare_letter_are_not_approval(reply):
    assert decisions_of(_proposal_session(reply)) == []


def test_approval_needs_a_proposal():
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.asst("I read src/shop/api/checkout.py; the handler has no middleware hook yet.")
    b.user("ok")
    assert decisions_of(b) == []


def test_yes_but_is_not_a_plain_approval():
    b = _proposal_session("yes, but use the client IP only for anonymous calls")
    assert [d.origin for d in decisions_of(b)] == []


def test_shall_i_question_is_the_proposal():
    b = B()
    b.user("The nightly export gets OOM-killed.")
    b.asst("The export builds a list of 2M rows. Shall I make export_rows() a generator over a server-side cursor?")
    b.user("yes")
    assert rows(decisions_of(b)) == [
        ("APPROVED", "make export_rows() a generator over a server-side cursor", 'user approved ("yes")')
    ]


def test_lets_do_option_2_picks_the_second_option():
    b = B()
    b.user("Make the CSV export stream rows.")
    b.asst(
        "Two ways to do it:\n\n"
        "1. Make `export_rows()` a generator over a server-side cursor and feed `csv.writer` row by row.\n"
        "2. Read the rows with `pandas.read_sql(..., chunksize=50_000)` and append each chunk.\n\n"
        "Which one do you prefer?"
    )
    b.user("let's do option 2")
    d = decisions_of(b)
    assert rows(d) == [
        (
            "APPROVED",
            "Read the rows with `pandas.read_sql(..., chunksize=50_000)` and append each chunk",
            'user chose option 2 ("let\'s do option 2")',
        ),
        (  # of two options, the other is turned down
            "REJECTED",
            "Make `export_rows()` a generator over a server-side cursor and feed `csv.writer` row by row",
            'user chose option 2 instead ("let\'s do option 2")',
        ),
    ]
    assert d[0].evidence.quote.startswith("2. Read the rows")


def test_option_letter_with_a_verb_picks_it():
    b = B()
    b.user("Fix the flaky session test.")
    b.asst("**Option A:** move the fake timers into beforeEach\n**Option B:** add `retry: 2` to the test\n\nWhich one?")
    b.user("go with A")
    assert rows(decisions_of(b)) == [  # of two options, the other is turned down
        ("APPROVED", "move the fake timers into beforeEach", 'user chose option a ("go with A")'),
        ("REJECTED", "add `retry: 2` to the test", 'user chose option a instead ("go with A")'),
    ]


# --- user rejections ---------------------------------------------------------------------------------------
def test_no_dont_use_x_use_y():
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.asst("I'd start with a fixed-window counter in Redis, 60 requests per minute per API key.")
    reply = (
        "no, don't use a fixed window, use the token bucket. a fixed window lets a client send 2x the limit "
        "across the minute boundary"
    )
    b.user(reply)
    d = decisions_of(b)
    assert rows(d) == [
        ("REJECTED", "a fixed window", f'user said "{reply}"'),
        ("APPROVED", "the token bucket", f'user\'s instruction ("{reply}")'),
    ]
    assert [x.origin for x in d] == ["user", "user"]
    assert d[0].evidence.event_index == 2


def test_no_use_y_instead_rejects_the_proposal():
    b = B()
    b.user("Store the session token.")
    b.asst("I suggest keeping the session token in localStorage so the SPA can read it.")
    b.user("no, use an httpOnly cookie instead")
    assert rows(decisions_of(b)) == [
        ("REJECTED", "keeping the session token in localStorage so the SPA can read it", 'user said "no, use an httpOnly cookie instead"'),
        ("APPROVED", "an httpOnly cookie", 'user\'s instruction ("no, use an httpOnly cookie instead")'),
    ]


def test_not_x_y():
    b = B()
    b.user("Pick a queue for the webhooks.")
    b.asst("Options are RabbitMQ or SQS.")
    b.user("not RabbitMQ, SQS")
    assert rows(decisions_of(b)) == [
        ("REJECTED", "RabbitMQ", 'user said "not RabbitMQ, SQS"'),
        ("APPROVED", "SQS", 'user\'s instruction ("not RabbitMQ, SQS")'),
    ]


def test_plain_dont_use_x_in_a_prompt():
    b = B()
    b.user("Parse the EU dates. don't add python-dateutil, we ship a single exe with pyinstaller")
    assert rows(decisions_of(b)) == [
        ("REJECTED", "python-dateutil", 'user said "don\'t add python-dateutil, we ship a single exe with pyinstaller"')
    ]


def test_no_pandas_after_a_message_naming_it():
    b = B()
    b.user("Make the export stream.")
    b.asst("Option A: a generator with csv.writer. Option B: pandas chunks with to_csv.")
    b.user("no pandas. we don't add new dependencies to the cli")
    assert [(x.status, x.what) for x in decisions_of(b)] == [
        ("REJECTED", "pandas"),
        ("REJECTED", "new dependencies to the cli"),
    ]


def test_user_declined_tool_call():
    b = B()
    b.user("Return 429 when a client is over the limit.")
    b.edit("/home/dev/shop/src/shop/payments/gateway.py")
    b.events[-1].is_error = True
    b.events[-1].text = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    b.user("don't touch the payments module, that's owned by the payments team")
    assert rows(decisions_of(b)) == [
        (
            "REJECTED",
            "editing src/shop/payments/gateway.py",
            'user declined the tool call: "don\'t touch the payments module, that\'s owned by the payments team"',
        )
    ]


# --- reversal, dedupe, sources -----------------------------------------------------------------------------
def test_reversal_final_state_wins():
    b = B()
    b.user("Store the session token.")
    b.asst("We're going with localStorage for the session token because the SPA reads it directly.")
    b.user("no, don't use localStorage, use an httpOnly cookie. XSS can read localStorage")
    d = decisions_of(b)
    assert [(x.status, x.what) for x in d] == [
        ("APPROVED", "localStorage for the session token"),
        ("REJECTED", "localStorage"),
        ("APPROVED", "an httpOnly cookie"),
    ]
    assert d[0].reasoning == "the SPA reads it directly (later rejected)"
    assert [x.timestamp for x in d] == sorted(x.timestamp for x in d)


def test_reapproval_after_rejection_is_kept():
    b = B()
    b.user("Pick the cache.")
    b.asst("We're going with Redis because it is already deployed.")
    b.asst("Ruled out Redis: the staging cluster is full.")
    b.asst("Going with Redis after all, since ops added a node.")
    assert [(x.status, x.what) for x in decisions_of(b)] == [
        ("APPROVED", "Redis"),
        ("REJECTED", "Redis"),
        ("APPROVED", "Redis after all"),
    ]


def test_duplicated_history_is_deduped():
    b = B()
    b.user("Add rate limiting.")
    b.asst("We're going with a token bucket in Redis because it survives restarts.")
    b.asst("Ruled out the in-memory limiter: it resets on every deploy.")
    b.compaction("This session is being continued from a previous conversation that ran out of context.")
    b.asst("We're going with a token bucket in Redis because it survives restarts.")  # replayed
    b.asst("We're  going with a Token Bucket in Redis, because it survives restarts!")  # same, other punctuation
    b.asst("Ruled out the in-memory limiter: it resets on every deploy.")
    assert [(x.status, x.what) for x in decisions_of(b)] == [
        ("APPROVED", "a token bucket in Redis"),
        ("REJECTED", "the in-memory limiter"),
    ]


def test_no_decision_from_subagents_reasoning_tool_output_or_tool_calls():
    b = B()
    b.user("Investigate the Redis usage.")
    b.think("We're going with Redis because it is shared. DECISION: use Lua")
    b.subagent("Audit Redis usage", "We're going with a Lua script because MULTI is not atomic. APPROVED: Lua scripts")
    b.asst("We decided to use Kafka because of volume.", agent="general-purpose")  # sub-agent chatter
    b.call("Write", "docs/adr/0001.md", "file_path: docs/adr/0001.md\ncontent: DECISION: use Postgres because of JSONB")
    b.result("DECISION: use Postgres. We're going with SQLite because it is simple. Ruled out MySQL: licensing.")
    assert decisions_of(b) == []


def test_compaction_summary_paraphrase_is_not_used_when_history_is_present():
    b = B()
    b.user("Add rate limiting.")
    b.asst("Looking at src/shop/api first.")
    b.asst("We're going with a token bucket in Redis because it survives restarts.")
    b.asst("Tests pass.")
    b.compaction(
        "This session is being continued from a previous conversation.\n"
        "The assistant decided to use a token bucket stored in Redis. The user approved keying buckets by API key."
    )
    assert [(x.status, x.what, x.origin) for x in decisions_of(b)] == [
        ("APPROVED", "a token bucket in Redis", "implicit")
    ]


def test_compaction_summary_only_decision_is_allowed_with_origin():
    b = B()
    b.compaction(
        "This session is being continued from a previous conversation that ran out of context.\n"
        "Summary:\n1. We decided to use cursor pagination on (createdAt, id) because offsets skip rows.\n"
        "2. The user rejected offset pagination."
    )
    b.user("continue")
    b.asst("Picking up with the migration for the index.")
    d = decisions_of(b)
    assert [(x.status, x.what, x.reasoning, x.origin) for x in d] == [
        ("APPROVED", "use cursor pagination on (createdAt, id)", "offsets skip rows", "compaction-summary"),
        ("REJECTED", "offset pagination", "user rejected it (per the compaction summary)", "compaction-summary"),
    ]
    assert {x.evidence.event_index for x in d} == {0}


def test_compaction_decision_dropped_when_an_original_carries_it():
    b = B()
    b.compaction("Summary: We decided to use cursor pagination because offsets skip rows.")
    b.user("continue")
    b.asst("We decided to use cursor pagination because offsets skip rows during infinite scroll.")
    assert [(x.what, x.origin) for x in decisions_of(b)] == [("use cursor pagination", "implicit")]


def test_timestamps_normalized_and_filled_from_earlier_events():
    b = B()
    b.user("Pick the cache.")
    b.asst("We're going with Redis because it is already deployed.", timestamp=None)
    b.asst("Ruled out Memcached: no persistence.", timestamp="2026-09-01T12:30:00+02:00")
    d = decisions_of(b)
    assert [x.timestamp for x in d] == ["2026-09-01T10:00:00Z", "2026-09-01T10:30:00Z"]


def test_long_what_and_reasoning_are_one_line_and_bounded():
    b = B()
    b.user("Plan it.")
    long_option = " ".join(["very-long-option-name"] * 12)
    b.asst(f"We're going with {long_option}\nbecause " + " ".join(["reason"] * 80) + ".")
    d = decisions_of(b)
    assert len(d) == 1
    assert len(d[0].what) <= 160 and "\n" not in d[0].what
    assert len(d[0].reasoning) <= 200 and d[0].reasoning.endswith("…")
    assert len(d[0].evidence.quote) <= 300


def test_text_whose_lower_case_changes_length():
    b = B()
    b.user("Pick the İstanbul mirror.")
    b.asst("İstanbul mirror is slow. We're going with the Frankfurt mirror because it is closer.")
    assert rows(decisions_of(b)) == [("APPROVED", "the Frankfurt mirror", "it is closer")]


@pytest.mark.parametrize("reply, what", [
    ("let's go with Postgres", "Postgres"),
    ("let's go with Postgres because it is already deployed", "Postgres"),
    ("lets go with the token bucket", "the token bucket"),
    ("let's go for option B", "option B"),
])
def test_lets_go_with_x_is_a_choice_not_a_bare_approval(reply, what):
    # "let's go" alone approves a proposal; "let's go with X" names the choice (it was read as "let's go" + noise)
    b = B()
    b.user("the job queue needs a backend")
    b.asst("Reading the current setup.")
    b.user(reply)
    assert [(d.status, d.what) for d in decisions_of(b)] == [("APPROVED", what)]


def test_lets_go_still_approves_a_proposal():
    b = B()
    b.user("the job queue needs a backend")
    b.asst("I propose a Postgres table with SKIP LOCKED for the job queue. Shall I add it?")
    b.user("let's go")
    assert [(d.status, d.origin) for d in decisions_of(b)] == [("APPROVED", "user-approval")]
