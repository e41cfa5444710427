"""Agent State file render/parse (pipeline/state/render.py, parse.py; DESIGN.md "Agent State file (Tier 2)").

Golden files live in tests/golden/state/*.md and are compared byte for byte with ``render``'s output.
After a deliberate format change, rewrite them with::

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_state_render_parse.py

(the golden tests then skip, saying which files were written) and review the diff like code.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import check_golden
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.errors import InputError
from pipeline.state.model import AgentState, Decision, Evidence, Fact, Position
from pipeline.state.parse import parse
from pipeline.state.render import HEADINGS, decision_line, one_line, render
from pipeline.state.store import make_stamp

GOLDEN = Path(__file__).parent / "golden" / "state"


def full_state() -> AgentState:
    return AgentState(
        stamp="2026-11-29-2031",
        kind="recovered",
        cwd="/home/dev/shop",
        repo="shop",
        branch="main",
        trigger="recover, engine: rules",
        created="2026-11-29T20:31:00Z",
        approved_workflow="Add rate limiting to the checkout API, as in docs/specs/rate-limit.md.\n"
        "Redirection: limit per account, not per IP.",
        position=Position(
            current="wire the limiter into the checkout middleware",
            done=["read the checkout handler and its tests", "add the token bucket module with unit tests"],
            remaining=["return 429 with Retry-After from the middleware", "document the limits in README.md"],
        ),
        decisions=[
            Decision(
                timestamp="2026-09-01T10:00:00Z",
                status="APPROVED",
                what="use a token bucket in Redis",
                reasoning="survives restarts and works across 4 pods",
                evidence=Evidence(event_index=12, quote="token bucket in Redis"),
                origin="implicit",
            ),
            Decision(
                timestamp="2026-09-01T10:05:00Z",
                status="REJECTED",
                what="localStorage for the session",
                reasoning="not shared across devices",
                origin="user-approval",
            ),
        ],
        facts=[
            Fact(text="the checkout API runs on 4 pods behind one load balancer"),
            Fact(text="Never call the payment sandbox from unit tests.", kind="constraint"),
        ],
        rederivation=["Read the transcript: /home/dev/.claude/projects/shop/4f1c.jsonl", "Run: pytest -q tests/api"],
        suggested_skills=["redis-patterns"],
    )


def empty_state() -> AgentState:
    return AgentState(
        stamp="2026-11-30-0905", kind="manual", cwd="/home/dev/shop", repo="shop", branch="main", created="2026-11-30T09:05:00Z"
    )


def skills_state() -> AgentState:
    """Auto kind, a cwd with spaces, a branch with '/', and inputs render must normalise."""
    return AgentState(
        stamp="2026-12-01-1744",
        kind="auto",
        cwd="/home/dev/my projects/shop",
        repo="shop",
        branch="feature/rate-limit",
        trigger="pre-compact, engine: rules",
        created="2026-12-01T17:44:09Z",
        approved_workflow="\n  \n",
        position=Position(current="run the API tests again\nafter the fixture change", remaining=["open the pull request", "  "]),
        decisions=[
            Decision(
                timestamp="2026-12-01T17:30:12Z",
                status="APPROVED",
                what="keep the limiter in middleware - not in each handler",
                reasoning="one place to change the limits",
            )
        ],
        facts=[Fact(text="tests/api/conftest.py starts a throwaway Redis on port 6390 ")],
        rederivation=["Run: pytest -q tests/api"],
        suggested_skills=["pytest-fixtures", "", "redis-patterns"],
    )


@pytest.mark.parametrize(
    ("name", "make"), [("full.md", full_state), ("empty.md", empty_state), ("skills.md", skills_state)]
)
def test_render_matches_golden_file(name, make):
    check_golden(f"state/{name}", render(make()))


def test_golden_full_parses_back_to_the_state_without_evidence():
    parsed = parse((GOLDEN / "full.md").read_text(encoding="utf-8"), path="full.md")
    expected = full_state()
    for decision in expected.decisions:
        decision.evidence = None
        decision.origin = None
    for fact in expected.facts:
        fact.kind = "fact"
    assert parsed == expected


def test_golden_empty_parses_back_to_the_empty_state():
    assert parse((GOLDEN / "empty.md").read_text(encoding="utf-8")) == empty_state()


def test_golden_skills_parses_back_to_the_normalised_state():
    parsed = parse((GOLDEN / "skills.md").read_text(encoding="utf-8"))
    assert parsed.kind == "auto" and parsed.stamp == "2026-12-01-1744"
    assert parsed.cwd == "/home/dev/my projects/shop"
    assert parsed.branch == "feature/rate-limit"
    assert parsed.approved_workflow is None
    assert parsed.position == Position(
        current="run the API tests again after the fixture change", done=[], remaining=["open the pull request"]
    )
    assert parsed.decisions[0].what == "keep the limiter in middleware – not in each handler"
    assert parsed.decisions[0].reasoning == "one place to change the limits"
    assert [f.text for f in parsed.facts] == ["tests/api/conftest.py starts a throwaway Redis on port 6390"]
    assert parsed.suggested_skills == ["pytest-fixtures", "redis-patterns"]


# --- one_line and render normalisations --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\nb", "a b"),
        ("a \r\n  b", "a b"),
        ("a\rb", "a b"),
        ("a\u2028b\x85c", "a b c"),
        ("a\n\n\nb", "a b"),
        ("  keep  inner  spaces\t", "keep  inner  spaces"),
        ("\n", ""),
    ],
)
def test_one_line(raw, expected):
    assert one_line(raw) == expected


@pytest.mark.parametrize(
    ("what", "rendered"),
    [
        ("use X - not Y", "use X – not Y"),
        ("a - - b", "a – – b"),
        ("ends with -", "ends with –"),
        ("well-known -flag", "well-known -flag"),
        ("- starts with a bullet", "- starts with a bullet"),
        ("", "None"),
    ],
)
def test_decision_what_never_contains_the_separator(what, rendered):
    state = empty_state()
    state.decisions = [Decision(timestamp="2026-09-01T10:00:00Z", status="APPROVED", what=what, reasoning="r - s")]
    line = render(state).split("## Decision Log\n")[1].split("\n")[0]
    assert line == f"2026-09-01T10:00:00Z APPROVED: {rendered} - r - s"
    decision = parse(render(state)).decisions[0]
    assert (decision.what, decision.reasoning) == (rendered, "r - s")


def test_empty_reasoning_renders_none():
    state = empty_state()
    state.decisions = [Decision(timestamp="2026-09-01T10:00:00Z", status="REJECTED", what="x", reasoning=" \n")]
    assert "2026-09-01T10:00:00Z REJECTED: x - None\n" in render(state)


def test_heading_lines_inside_bodies_are_demoted():
    state = empty_state()
    state.approved_workflow = "## Plan\n## Position\n  ## Decision Log"
    state.facts = [Fact(text="## Established Facts"), Fact(text="# Agent State")]
    text = render(state)
    assert "## Approved Workflow\n## Plan\n### Position\n  ## Decision Log\n\n## Position\n" in text
    assert "## Established Facts\n### Established Facts\n# Agent State\n\n## Re-derivation\n" in text
    parsed = parse(text)
    assert parsed.approved_workflow == "## Plan\n### Position\n  ## Decision Log"
    assert [f.text for f in parsed.facts] == ["### Established Facts", "# Agent State"]


def test_header_values_are_one_line_and_free_of_the_field_separator():
    state = empty_state()
    state.cwd = "/tmp/a | Repo/Branch: b\nc"
    state.repo = "re|p@o"
    state.branch = ""
    state.trigger = "x | Trigger: y"
    header = render(state).split("\n")[2]
    assert header == (
        "Session: 2026-11-30-0905 | Cwd: /tmp/a | Repo/Branch: b c | Repo/Branch: re¦p＠o@unknown | Trigger: x ¦ Trigger: y"
    )
    parsed = parse(render(state))
    assert (parsed.cwd, parsed.repo, parsed.branch, parsed.trigger) == (
        "/tmp/a | Repo/Branch: b c",
        "re¦p＠o",
        "unknown",
        "x ¦ Trigger: y",
    )


def test_workflow_keeps_indentation_and_inner_blank_lines_but_not_trailing_space():
    state = empty_state()
    state.approved_workflow = "\n\nDo this:  \r\n  1. step one\n\n  2. step two\n\n"
    text = render(state)
    assert "## Approved Workflow\nDo this:\n  1. step one\n\n  2. step two\n\n## Position\n" in text
    assert parse(text).approved_workflow == "Do this:\n  1. step one\n\n  2. step two"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("stamp", "2026-11-30 09:05", "stamp"),
        ("created", "yesterday", "created"),
        ("created", "2026-02-30T10:00:00Z", "created"),
    ],
)
def test_render_refuses_bad_structural_fields(field, value, message):
    state = empty_state()
    setattr(state, field, value)
    with pytest.raises(ValueError, match=message):
        render(state)


def test_render_refuses_a_decision_without_iso_timestamp():
    state = empty_state()
    state.decisions = [Decision(timestamp="10:00", status="APPROVED", what="x", reasoning="y")]
    with pytest.raises(ValueError, match="decision timestamp '10:00'"):
        render(state)


# --- parse tolerance -----------------------------------------------------------------------------------------


def test_parse_accepts_crlf_and_a_missing_final_newline():
    text = (GOLDEN / "full.md").read_text(encoding="utf-8")
    crlf = text.rstrip("\n").replace("\n", "\r\n")
    assert parse(crlf) == parse(text)
    assert render(parse(crlf)) == text


def test_parse_accepts_a_hand_written_manual_file():
    text = (
        "\ufeff# Agent State\n\n"
        "Session: 2026-11-30-0905 | Cwd: /home/dev/shop | Repo/Branch: shop@main   \n"
        "Created: 2026-11-30T09:05Z\n\n\n"
        "## Approved Workflow\n\nfix the flaky login test\n\n"
        "## Position\n"
        "- **Current:** None\n"
        "- **Done:** reproduced the flake\n"
        "    * found the race in the session fixture\n"
        "- **Remaining:**\n"
        "  - patch the fixture\n"
        "## Decision Log\n"
        "2026-11-30T09:01:00+01:00 APPROVED: retry-free fix - retries hide the race\n"
        "## Established Facts\n"
        "- the flake shows 1 run in 20\n"
        "## Re-derivation\n"
        "* Run: pytest -q tests/test_login.py -p no:randomly\n"
        "read tests/conftest.py\n"
    )
    state = parse(text, path="manual.state.md")
    assert state.kind == "manual" and state.trigger is None and state.created == "2026-11-30T09:05Z"
    assert state.approved_workflow == "fix the flaky login test"
    assert state.position == Position(
        current=None, done=["reproduced the flake", "found the race in the session fixture"], remaining=["patch the fixture"]
    )
    assert state.decisions == [
        Decision(timestamp="2026-11-30T09:01:00+01:00", status="APPROVED", what="retry-free fix", reasoning="retries hide the race")
    ]
    assert [f.text for f in state.facts] == ["- the flake shows 1 run in 20"]
    assert state.rederivation == ["Run: pytest -q tests/test_login.py -p no:randomly", "read tests/conftest.py"]
    assert state.suggested_skills == []


# --- parse errors: each names the path and the 1-based line --------------------------------------------------

FULL_LINES = (GOLDEN / "full.md").read_text(encoding="utf-8").split("\n")


def _edit(replace: dict[int, str | None]) -> str:
    """The full golden with 1-based lines replaced (None deletes the line)."""
    out = []
    for number, line in enumerate(FULL_LINES, 1):
        if number in replace:
            if replace[number] is not None:
                out.append(replace[number])
        else:
            out.append(line)
    return "\n".join(out)


def _delete(first: int, last: int) -> dict[int, None]:
    return dict.fromkeys(range(first, last + 1))


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", 1, "expected '# Agent State'"),
        (_edit({1: "# Agent state"}), 1, "expected '# Agent State'"),
        (_edit({1: "", 2: "", 3: "Session: x"}), 3, "expected '# Agent State'"),
        ("# Agent State\n", 1, "expected the header line"),
        (_edit({3: "Session: 2026-11-29-2031-recovered Cwd: /home/dev/shop"}), 3, "expected the header line"),
        (_edit({3: FULL_LINES[2].replace("2026-11-29-2031-recovered", "2026-11-29-2031-later")}), 3, "UTC stamp"),
        (_edit({3: FULL_LINES[2].replace("shop@main", "shop/main")}), 3, "<repo>@<branch>"),
        (_edit({4: "Created: 29 Nov 2026"}), 4, "expected 'Created: <ISO-8601>'"),
        (_edit({4: "Created:2026-11-29T20:31:00Z"}), 4, "expected 'Created: <ISO-8601>'"),
        (_edit({5: "stray text"}), 5, "expected a section heading"),
        (_edit(_delete(19, 22)), 19, "missing required section(s) '## Decision Log', expected before this line"),
        (_edit(_delete(26, 33)), 25, "missing required section(s) '## Re-derivation', expected at the end"),
        (_edit({27: "## Position"}), 27, "duplicate section '## Position'"),
        (_edit({10: "## Decision Log", 19: "## Position"}), 10, "'## Position' out of order"),
        (_edit({20: "2026-09-01T10:00:00Z APPROVED: use a token bucket in Redis"}), 20, "expected a Decision Log line"),
        (_edit({21: "2026-09-01 10:05 REJECTED: localStorage - not shared"}), 21, "expected a Decision Log line"),
        (_edit({21: "2026-09-01T10:05:00Z MAYBE: localStorage - not shared"}), 21, "expected a Decision Log line"),
        (_edit({21: "- 2026-09-01T10:05:00Z REJECTED: localStorage - not shared"}), 21, "expected a Decision Log line"),
        (_edit({11: "  - stray item under Current"}), 11, "in Position"),
        (_edit({13: "read the handler"}), 13, "in Position"),
        (_edit({15: "- **Done:** None"}), 15, "duplicate '- **Done:**'"),
    ],
)
def test_parse_errors_name_path_and_line(text, line, expected):
    with pytest.raises(InputError) as info:
        parse(text, path=".duck-tape/x.state.md")
    err = info.value
    assert (err.path, err.line) == (".duck-tape/x.state.md", line)
    assert str(err).startswith(f".duck-tape/x.state.md:{line}: ")
    assert expected in str(err)
    assert err.exit_code == 2


def test_parse_error_without_path_still_shows_the_line():
    with pytest.raises(InputError, match=r"^<string>:1: expected '# Agent State'"):
        parse("hello\n")


def test_parse_error_line_numbers_count_crlf_lines_once():
    text = _edit({20: "broken decision"}).replace("\n", "\r\n")
    with pytest.raises(InputError) as info:
        parse(text, path="x.md")
    assert info.value.line == 20


# --- round-trip property -------------------------------------------------------------------------------------

# Fragments that sit on the format's boundaries, mixed with arbitrary text.
FRAGMENTS = [
    " - ", " -", "- ", "* ", "|", " | ", " | Trigger: ", " | Repo/Branch: ", " | Cwd: ", "@", "None", "## Position",
    "## Decision Log", "# Agent State", "- **Done:**", "\n", "\r\n", "\r", "\u2028", "\x85", "\t", "  ", ": ", "APPROVED: ",
]
texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=6).map("".join)
moments = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(timezone.utc))
iso_times = st.builds(
    lambda dt, fmt: dt.strftime(fmt),
    moments,
    st.sampled_from(["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M:%S.%f+00:00", "%Y-%m-%d"]),
)
decisions = st.builds(Decision, timestamp=iso_times, status=st.sampled_from(["APPROVED", "REJECTED"]), what=texts, reasoning=texts)
states = st.builds(
    AgentState,
    stamp=moments.map(make_stamp),
    kind=st.sampled_from(["manual", "auto", "recovered"]),
    cwd=texts,
    repo=texts,
    branch=texts,
    trigger=st.none() | texts,
    created=iso_times,
    approved_workflow=st.none() | texts,
    position=st.builds(Position, current=st.none() | texts, done=st.lists(texts, max_size=3), remaining=st.lists(texts, max_size=3)),
    decisions=st.lists(decisions, max_size=3),
    facts=st.lists(st.builds(Fact, text=texts), max_size=3),
    rederivation=st.lists(texts, max_size=3),
    suggested_skills=st.lists(texts, max_size=2),
)


BOUNDARY_STATE = AgentState(
    stamp="2026-11-30-0905",
    kind="auto",
    cwd=" /a | Repo/Branch: b@c | Trigger: d ",
    repo="@",
    branch="",
    trigger="| Repo/Branch: x",
    created="2026-11-30",
    approved_workflow="None\n\n## Position\r\n",
    position=Position(current="None", done=["", "None", "- x"], remaining=["\u2028"]),
    decisions=[Decision(timestamp="2026-11-30T09:05Z", status="REJECTED", what=" - a -", reasoning="")],
    facts=[Fact(text="## Established Facts"), Fact(text="None")],
    rederivation=["* y", "None"],
    suggested_skills=["\n"],
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states)
@example(BOUNDARY_STATE)
@example(full_state())
def test_render_parse_render_is_stable(state):
    text = render(state)
    parsed = parse(text, path="prop.state.md")
    assert render(parsed) == text

    # What the file always keeps exactly.
    assert (parsed.stamp, parsed.kind, parsed.created) == (state.stamp, state.kind, state.created)
    assert [(d.timestamp, d.status) for d in parsed.decisions] == [(d.timestamp, d.status) for d in state.decisions]
    assert parsed.cwd == (one_line(state.cwd) or "unknown")
    assert parsed.position.done == [one_line(x) for x in state.position.done if one_line(x)]

    # Layout rules.
    lines = text.split("\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert all(line == line.rstrip() for line in lines)
    for number, line in enumerate(lines):
        if line in HEADINGS:
            assert lines[number - 1] == "" and lines[number - 2] != ""
    assert len(text.splitlines()) == len(lines) - 1  # no line break other than "\n"


def test_branch_may_hold_at_signs():
    state = empty_state()
    state.branch = "renovate/@types-node-22.x"
    assert "Repo/Branch: shop@renovate/@types-node-22.x\n" in render(state)
    assert parse(render(state)).branch == "renovate/@types-node-22.x"


def test_decision_line_formats_without_checking_the_timestamp():
    decision = Decision(timestamp="10:00", status="REJECTED", what="a - b", reasoning="c\nd")
    assert decision_line(decision) == "10:00 REJECTED: a – b - c d"
