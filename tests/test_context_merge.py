"""Merge rules, changelog, bootstrap and the redaction gate (pipeline.context.api.plan and friends).

DESIGN.md "CONTEXT.md (Tier 1)" (merge rules, changelog, bootstrap, TOC) and "Redaction"; issue 5 items 3-5 and 8.
Golden files: tests/golden/context/{bootstrap,merge,supersede}.md and .changelog.txt.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from conftest import check_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.context.api import plan
from pipeline.context.changelog import NO_CHANGES, format_changelog
from pipeline.context.delta import ContextDelta, DeltaDebt, DeltaEntry
from pipeline.context.merge import apply
from pipeline.context.parse import items, parse
from pipeline.context.render import render
from pipeline.errors import InputError, RedactionRefused
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.parse import parse as parse_state

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "context"
PATH = Path("CONTEXT.md")
DAY = date(2026, 3, 12)
SECRET = "sk-proj-Zx9FAKEq7Lm2Vb8Nc4Rt6Yh1Jk3Pw5Sd0"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")


def state(name: str) -> AgentState:
    return parse_state((FIXTURES / "states" / name).read_text(encoding="utf-8"))


RECOVERED = "2026-03-10-1000-recovered.state.md"
FOLLOW_UP = "2026-03-11-0900.state.md"


def merged(before: str | None, *states: AgentState, mask: bool = False):
    return plan(PATH, before, list(states), mask=mask, today=DAY)


def small_state(**fields) -> AgentState:
    return AgentState(stamp="2026-03-12-0800", created="2026-03-12T08:00:00Z", **fields)


# --- golden files -------------------------------------------------------------------------------------------


def test_bootstrap_golden():
    outcome = merged(None, state(RECOVERED))
    assert outcome.before is None and outcome.changed
    check_golden("context/bootstrap.md", outcome.after)


def test_bootstrap_changelog_golden():
    check_golden("context/bootstrap.changelog.txt", format_changelog(merged(None, state(RECOVERED)).changelog) + "\n")


def test_merge_into_existing_file_golden():
    check_golden("context/merge.md", merged(fixture("medium.md"), state(FOLLOW_UP)).after)


def test_merge_changelog_golden():
    outcome = merged(fixture("medium.md"), state(FOLLOW_UP))
    check_golden("context/merge.changelog.txt", format_changelog(outcome.changelog) + "\n")


def test_supersede_golden():
    first = merged(None, state(RECOVERED)).after
    check_golden("context/supersede.md", merged(first, state(FOLLOW_UP)).after)


def test_supersede_changelog_golden():
    first = merged(None, state(RECOVERED)).after
    outcome = merged(first, state(FOLLOW_UP))
    check_golden("context/supersede.changelog.txt", format_changelog(outcome.changelog) + "\n")


def kept_in_order(old: str, new: str, *, except_lines: tuple[str, ...] = ()) -> bool:
    """Every line of ``old`` (but ``except_lines``) is in ``new``, in the same order: nothing was lost."""
    rest = iter(new.splitlines())
    return all(any(line == other for other in rest) for line in old.splitlines() if line not in except_lines)


# --- exact rules --------------------------------------------------------------------------------------------


def test_bootstrap_shape_and_scaffold_lines():
    after = merged(None, state(RECOVERED)).after
    assert after.startswith("# Project Context: shop\n\n## Contents\n- [Goals](#goals)\n")
    assert "## Goals\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit goal\n\n## Decisions\n" in after
    assert "## Glossary\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit term\n" in after
    assert "## Open-Questions\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit question\n" in after
    assert "explicit decision" not in after and "explicit debt" not in after and "explicit note" not in after
    # revised map: 9 decisions, 2 conventions, 1 debt and 9 durable facts (Notes bullets)
    assert "(shop@feature/rate-limit): 21 added, 0 superseded, 0 dropped.\n- Key finding: " in after
    assert after.endswith("- Tried slowapi first, it failed because it needs the Starlette request object and our "
                          "handlers are plain Flask views, it only works on FastAPI/Starlette endpoints that take a "
                          "`request` argument.\n")
    assert "\n\n\n" not in after
    empty = merged(None).after
    assert empty.count("TODO(scaffold)") == 7 and empty.startswith("# Project Context\n")


def test_second_merge_of_the_same_state_changes_nothing():
    first = merged(None, state(RECOVERED))
    again = merged(first.after, state(RECOVERED))
    assert (again.changed, again.changelog, again.after) == (False, [NO_CHANGES], first.after)
    assert format_changelog(again.changelog) == "No changes to CONTEXT.md."
    both = merged(first.after, state(FOLLOW_UP))
    assert merged(both.after, state(RECOVERED), state(FOLLOW_UP)).changelog == [NO_CHANGES]


def test_supersede_records_old_and_new_and_keeps_the_place():
    outcome = merged(merged(None, state(RECOVERED)).after, state(FOLLOW_UP))
    line = next(l for l in outcome.changelog if l.startswith("- Superseded: Decisions key-each-bucket-api"))
    assert "(APPROVED: key each bucket by the API key id, falling back to the client IP for unauthenticated calls, " \
           "with a capacity of 20 requests" in line
    assert "-> APPROVED: key each bucket by the API key id, falling back to the client IP for unauthenticated calls, " \
           "with a capacity of 40 requests and a refill of 10 tokens per second - partner-7 runs a nightly sync " \
           "that bursts to 35 requests)" in line
    decisions = [it.label for it in items(parse(outcome.after).get("Decisions")) if it.kind == "entry"]
    assert decisions.index("key-each-bucket-api") == 5  # same place as before, new ones appended
    assert decisions[-2:] == ["proxyfix-x-for-1", "trusting-every-x-forwarded-for-hop"]
    assert "(date: 2026-03-11)" in next(l for l in outcome.after.splitlines() if "**key-each-bucket-api**" in l)


def test_resolved_question_dropped_with_reason_and_debt_gains_status_only():
    outcome = merged(fixture("medium.md"), state(FOLLOW_UP))
    assert "- Dropped: Open-Questions Document the RATE_LIMIT_* settings in docs/configuration.md " \
           "(done in session 2026-03-11-0900)" in outcome.changelog
    assert "Document the RATE_LIMIT_*" not in outcome.after.split("## Open-Questions")[1]
    assert kept_in_order(fixture("medium.md"), outcome.after, except_lines=(
        "- Document the RATE_LIMIT_* settings in docs/configuration.md (date: 2026-03-02)",
        "- TODO(perf,#41): 2026-02-18 rate-limited requests are not logged, so we cannot see which partner hits the limit"))
    old = fixture("medium.md").splitlines()
    new = outcome.after.splitlines()
    debt_old = old[old.index("## Deferred-Debt") + 1: old.index("## Open-Questions")]
    debt_new = new[new.index("## Deferred-Debt") + 1: new.index("## Open-Questions")]
    # the resolved entry gains its status marker with the date of the state that showed it done (issue 26)
    assert debt_new[:len(debt_old)] == [debt_old[0], debt_old[1] + " (resolved: 2026-03-11) [status: resolved]",
                                        *debt_old[2:-1], debt_new[len(debt_old) - 1]]
    assert debt_new[len(debt_old) - 1].startswith("- TODO(todo): 2026-03-11 Ask the partner team")
    assert "- Superseded: Deferred-Debt TODO(perf,#41): rate-limited requests are not logged, so we cannot see " \
           "which partner hits the limit (no status -> resolved)" in outcome.changelog


def test_keys_dedupe_across_subsections_and_supersede_in_place():
    st_ = small_state(decisions=[Decision(timestamp="2026-03-12T07:00:00Z", status="APPROVED",
                                          what="429 with a Retry-After header", reasoning="SDKs back off on it")])
    outcome = merged(fixture("medium.md"), st_)
    doc = parse(outcome.after)
    entry = next(it for it in items(doc.get("Decisions")) if it.label == "429-retry-after-header")
    assert entry.subsection == "API" and entry.value == "APPROVED: 429 with a Retry-After header - SDKs back off on it"
    assert sum(1 for l in outcome.after.splitlines() if "**429-retry-after-header**" in l) == 1


def test_new_keys_go_above_the_first_subsection_and_new_subsections_at_the_end():
    doc = parse(fixture("medium.md"))
    delta = ContextDelta(entries=[
        DeltaEntry(section="Decisions", key="plain", text="APPROVED: x", date="2026-03-12"),
        DeltaEntry(section="Decisions", key="in-api", text="APPROVED: y", date="2026-03-12", subsection="API"),
        DeltaEntry(section="Decisions", key="in-ops", text="APPROVED: z", date="2026-03-12", subsection="Operations"),
    ])
    changes = apply(doc, [delta], today="2026-03-12")
    assert [(c.kind, c.key) for c in changes] == [("Added", "plain"), ("Added", "in-api"), ("Added", "in-ops")]
    body = "".join(doc.get("Decisions").body)
    assert body.startswith("- **redis-for-locks**: APPROVED: Redis for the checkout locks - already deployed next to "
                           "the API pods (date: 2026-02-02)\n- **plain**: APPROVED: x (date: 2026-03-12)\n\n### API\n")
    assert "matches the search API (date: 2026-02-20)\n- **in-api**: APPROVED: y (date: 2026-03-12)\n\n### Storage\n" in body
    assert body.endswith("(date: 2026-01-22)\n\n### Operations\n- **in-ops**: APPROVED: z (date: 2026-03-12)\n\n")


def test_scaffold_gives_way_to_the_first_entry_and_debt_scaffold_is_marked_resolved():
    boot = merged(None).after
    doc = parse(boot)
    delta = ContextDelta(entries=[DeltaEntry(section="Goals", key="p95", text="under 300 ms")],
                         debts=[DeltaDebt(type="perf", issue="12", date="2026-03-12", what="cache warm-up")])
    changes = apply(doc, [delta], today="2026-03-12")
    text = render(doc)
    assert "## Goals\n- **p95**: under 300 ms\n\n" in text
    assert ("## Deferred-Debt\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit debt [status: resolved]\n"
            "- TODO(perf,#12): 2026-03-12 cache warm-up [status: open]\n") in text
    assert [(c.kind, c.section, c.key) for c in changes] == [
        ("Dropped", "Goals", "TODO(scaffold)"), ("Added", "Goals", "p95"),
        ("Superseded", "Deferred-Debt", "TODO(scaffold)"), ("Added", "Deferred-Debt", "TODO(perf,#12): cache warm-up")]


def test_notes_blocks_are_inserted_in_timestamp_order_never_rewritten():
    older = small_state(decisions=[Decision(timestamp="2026-02-20T10:00:00Z", status="APPROVED", what="gzip the feed",
                                            reasoning="halves the transfer")])
    older = replace(older, stamp="2026-02-20-1000", created="2026-02-20T10:00:00Z")
    outcome = merged(fixture("medium.md"), older)
    notes = outcome.after.split("## Notes\n")[1]
    assert notes.startswith("### 2026-02-12 16:40\nPartner-7 retries failed checkouts in a tight loop; see SHOP-1234.\n\n"
                            "### 2026-02-20 10:00\nMerged state file 2026-02-20-1000-recovered.state.md (unknown@unknown): "
                            "1 added, 0 superseded, 0 dropped.\n\n### 2026-03-02 11:05\n")
    assert kept_in_order(fixture("medium.md"), outcome.after)


def test_merge_of_several_states_is_folded_to_the_net_change():
    outcome = merged(None, state(RECOVERED), state(FOLLOW_UP))
    assert not any(l.startswith("- Superseded") or l.startswith("- Dropped") for l in outcome.changelog)
    # raised by the first state, done in the second: added already resolved, dated with the second state
    assert ("- TODO(docs): 2026-03-10 Document the RATE_LIMIT_* settings in docs/configuration.md "
            "(resolved: 2026-03-11) [status: resolved]\n") in outcome.after
    assert "capacity of 40 requests" in outcome.after and "capacity of 20 requests" not in outcome.after
    assert outcome.after.count("### 2026-03-1") == 2  # each state contributed, each gets its Notes block


def test_above_schema_unknown_sections_and_toc_are_untouched():
    before = fixture("above-and-unknown.md")
    outcome = merged(before, state(FOLLOW_UP))
    old, new = parse(before), parse(outcome.after)
    assert new.above == old.above
    for name in ("Contents", "Architecture", "Links"):
        assert new.get(name).body == old.get(name).body
    stale = before.replace("- [Links](#links)\n", "")
    assert merged(stale, state(FOLLOW_UP)).after.split("## Goals")[0] == stale.split("## Goals")[0]


def test_crlf_file_gets_crlf_lines_and_missing_final_newline_stays_missing():
    outcome = merged(fixture("crlf.md"), state(FOLLOW_UP))
    assert "\n" not in outcome.after.replace("\r\n", "")
    assert outcome.after.replace("\r\n", "\n") == merged(fixture("medium.md"), state(FOLLOW_UP)).after
    bare = fixture("small.md").rstrip("\n")
    result = merged(bare, state(FOLLOW_UP)).after
    assert not result.endswith("\n") and "Merged state file 2026-03-11-0900.state.md" in result
    assert result.startswith(bare.split("## Decisions")[0]) and kept_in_order(bare, result)


def test_stray_text_in_a_section_is_kept_and_not_glued_to_new_entries():
    before = fixture("small.md").replace(
        "(date: 2026-02-02)\n", "(date: 2026-02-02)\nAsk Dana before changing any of these.\n")
    outcome = merged(before, small_state(decisions=[Decision(timestamp="2026-03-12T07:00:00Z", status="APPROVED",
                                                             what="gzip the feed", reasoning="halves the transfer")]))
    assert ("(date: 2026-02-02)\nAsk Dana before changing any of these.\n\n- **gzip-feed**: APPROVED: gzip the feed - "
            "halves the transfer (date: 2026-03-12)\n\n## Conventions") in outcome.after


def test_missing_sections_abort_and_name_them():
    with pytest.raises(InputError) as err:
        merged(fixture("missing-sections.md"), state(FOLLOW_UP))
    message = str(err.value)
    assert err.value.exit_code == 2
    assert message.startswith("CONTEXT.md: missing schema section(s) '## Conventions', '## Notes': run `duck-tape migrate`")
    assert "line 25 has '### Notes': a schema section heading is exactly '## Notes'" in message
    with pytest.raises(InputError, match="missing schema section"):
        merged("# Notes about the project\n\nJust prose.\n", state(FOLLOW_UP))


def test_duplicate_sections_abort():
    with pytest.raises(InputError, match=r"duplicate section '## Notes'"):
        merged(fixture("small.md") + "\n## Notes\n### 2026-03-01 10:00\nx\n", state(FOLLOW_UP))


# --- redaction ----------------------------------------------------------------------------------------------


def secret_state() -> AgentState:
    return small_state(facts=[Fact(text=f"STAGING_KEY: the staging key, {SECRET}")],
                       position=Position(remaining=[f"rotate {SECRET} after the demo"]))


def test_secret_refuses_the_merge_with_the_report():
    with pytest.raises(RedactionRefused) as err:
        merged(fixture("small.md"), secret_state())
    assert err.value.exit_code == 3
    assert err.value.report[0] == "Redaction: detected 1 potential secret(s) in Glossary."
    assert err.value.report[1].startswith("Flagged: openai-api-key at line ") and err.value.report[1].endswith(": sk-p...")
    assert any(line == "Redaction: detected 1 potential secret(s) in Deferred-Debt." for line in err.value.report)
    assert all(SECRET not in line for line in err.value.report)


def test_mask_writes_redacted_counts_it_and_is_idempotent():
    outcome = merged(fixture("small.md"), secret_state(), mask=True)
    assert SECRET not in outcome.after
    assert "- **STAGING_KEY**: the staging key, <REDACTED>" in outcome.after
    assert outcome.changelog[-2:] == ["- Redacted: Glossary 1 secret(s)", "- Redacted: Deferred-Debt 1 secret(s)"]
    assert merged(outcome.after, secret_state(), mask=True).changelog == [NO_CHANGES]


def test_secret_already_in_the_file_is_refused_or_masked():
    before = fixture("small.md").replace("see SHOP-1234.", f"see SHOP-1234. key {SECRET}")
    with pytest.raises(RedactionRefused, match="pass --mask"):
        merged(before, state(FOLLOW_UP))
    outcome = merged(before, state(FOLLOW_UP), mask=True)
    assert SECRET not in outcome.after and outcome.changelog[-1] == "- Redacted: Notes 1 secret(s)"


# --- property: merging twice changes nothing ----------------------------------------------------------------

_words = st.sampled_from(["redis", "token", "bucket", "lua", "script", "limit", "partner", "checkout", "retry",
                          "window", "the", "a", "no", "cache", "#41", "docs", "PR", "main", "fixed"])
_phrase = st.lists(_words, min_size=1, max_size=6).map(" ".join)
# facts of every kind the translation tells apart: one-off, durable (Notes), a rule (Conventions), a term (Glossary)
_fact = st.one_of(_phrase, _phrase.map(lambda p: f"{p} because the cache is cold"),
                  _phrase.map(lambda p: f"never touch {p}"), _phrase.map(lambda p: f"Bucket: the {p}"))
_decision = st.builds(lambda w, r, s, d: Decision(timestamp=f"2026-03-{d:02d}T10:00:00Z", status=s, what=w, reasoning=r),
                      _phrase, _phrase, st.sampled_from(["APPROVED", "REJECTED"]), st.integers(1, 28))
_state = st.builds(
    lambda ds, fs, rem, done, wf, day: AgentState(
        stamp=f"2026-03-{day:02d}-1000", created=f"2026-03-{day:02d}T10:00:00Z", decisions=ds,
        facts=[Fact(text=f) for f in fs], position=Position(remaining=rem, done=done), approved_workflow=wf),
    st.lists(_decision, max_size=4), st.lists(_fact, max_size=4), st.lists(_phrase, max_size=3),
    st.lists(_phrase, max_size=3), st.one_of(st.none(), _phrase), st.integers(1, 28))


@settings(max_examples=60, deadline=None)
@given(st.lists(_state, min_size=1, max_size=3), st.sampled_from([None, "small.md", "medium.md", "crlf.md"]))
def test_merge_idempotence_property(states, base):
    before = None if base is None else fixture(base)
    first = merged(before, *states)
    second = merged(first.after, *states)
    assert second.changelog == [NO_CHANGES] and second.after == first.after
    assert render(parse(first.after)) == first.after
