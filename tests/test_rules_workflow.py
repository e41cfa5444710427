"""Approved Workflow of the rules engine (pipeline.stages.rules.workflow)."""

from __future__ import annotations

from pipeline.stages import distil
from rules_builder import B

TASK = (
    "Add rate limiting to the checkout API: limit per API key, return a proper error when a client is over the "
    "limit, and add tests."
)


def workflow(b: B) -> str | None:
    return distil.run(b.build()).approved_workflow


def test_first_real_prompt_not_the_compaction_summary():
    b = B()
    b.compaction(
        "This session is being continued from a previous conversation that ran out of context. "
        "Primary Request and Intent: the user asked for something else entirely."
    )
    b.user("/clear")
    b.user("continue")
    b.user(TASK)
    b.asst("Looking at src/shop/api/checkout.py first.")
    assert workflow(b) == TASK


def test_slash_command_with_arguments_counts_but_bare_ones_do_not():
    b = B()
    b.user("/compact")
    b.user("/review src/shop/api")
    assert workflow(b) == "/review src/shop/api"


def test_user_words_and_lines_are_kept():
    b = B()
    b.user("Fix the export:\n\n\n- stream rows\n- keep the output byte-identical   \n")
    assert workflow(b) == "Fix the export:\n\n- stream rows\n- keep the output byte-identical"


def test_long_first_prompt_is_cut_at_a_boundary_with_an_ellipsis():
    sentence = "The nightly export job loads every transaction of the account into memory before writing. "
    b = B()
    b.user(sentence * 30)
    text = workflow(b)
    assert len(text) <= 1200
    assert text.endswith("writing.…")
    assert text.startswith(sentence.strip())


def test_redirections_each_on_their_own_line_with_timestamp():
    b = B(step=60)
    b.user(TASK)  # 10:00
    b.asst("Starting with the token bucket.")  # 10:01
    b.user("yes, do that")  # 10:02, not a redirection
    b.user("actually, also cover the /refund endpoint")  # 10:03
    b.user("how many requests does partner-7 send per second?")  # 10:04, a question
    b.user("change of plan: instead of 429 return 503 for the refund endpoint")  # 10:05
    b.user("scratch that, keep 429 everywhere")  # 10:06
    assert workflow(b).split("\n") == [
        TASK,
        "Redirected 2026-09-01T10:03:00Z: actually, also cover the /refund endpoint",
        "Redirected 2026-09-01T10:05:00Z: change of plan: instead of 429 return 503 for the refund endpoint",
        "Redirected 2026-09-01T10:06:00Z: scratch that, keep 429 everywhere",
    ]


def test_redirection_replayed_after_compaction_appears_once():
    b = B(step=60)
    b.user(TASK)
    b.user("let's also log every rate-limited request")
    b.compaction("This session is being continued from a previous conversation.")
    b.user("let's also log every rate-limited request")
    assert workflow(b).split("\n") == [TASK, "Redirected 2026-09-01T10:01:00Z: let's also log every rate-limited request"]


def test_no_prompt_at_all_falls_back_to_the_summary_request():
    b = B()
    b.compaction(
        "This session is being continued from a previous conversation that ran out of context.\n"
        "Analysis: ...\n\nSummary:\n1. Primary Request and Intent:\n   The user asked to add cursor pagination to "
        "GET /notes.\n\n2. Key Technical Concepts:\n   - Prisma"
    )
    assert workflow(b) == "From the compaction summary: The user asked to add cursor pagination to GET /notes."


def test_nothing_at_all_is_none():
    b = B()
    b.asst("Hello.")
    assert workflow(b) is None
