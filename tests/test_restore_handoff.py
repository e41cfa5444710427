"""The restore handoff (issue 7, items 1 and 4): budget respected to the byte on every fixture, required parts
first, what was left out named, the SessionStart hook JSON shape, constraint lines recognised by phrasing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.restore.fit import Sizer, shorten
from pipeline.restore.handoff import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, build_handoff, hook_json
from pipeline.restore.parts import HEADINGS, WORKFLOW_SHARE, is_constraint, split_facts
from pipeline.state.sections import DecisionEntry, StateSections, read_sections

from conftest import GOLDEN, ROOT

STATES = sorted((GOLDEN / "recover").glob("*.state.md"))
HAND_MADE = sorted((GOLDEN / "state").glob("*.md"))  # empty sections, guarded headings, skills
TRUTH = {
    "claude-code": "claude-code/checkout-rate-limit",
    "copilot-events": "copilot/events",
    "copilot-legacy": "copilot/legacy-session",
    "opencode-export": "opencode/export",
    "opencode-messages": "opencode/messages",
}
BUDGETS = (MIN_BUDGET, 1001, 1234, 1500, 2000, 2500, 3000, 4096, DEFAULT_BUDGET, 7777, MAX_BUDGET)
FORMATS = ("plain", "claude-code")
REQUIRED = ("workflow", "current", "remaining", "decisions", "constraints")
OPTIONAL = ("facts", "done", "rederivation", "skills")
DRIFT = [
    '- Looks done (Remaining): "Document the RATE_LIMIT_* settings in docs/configuration.md" — commit 1a2b3c4 '
    '"Document the rate limit settings" (2026-03-10T11:00:00+00:00) touches docs/configuration.md',
    "- No longer exists: src/shop/legacy.py (named in Done; deleted in commit 9f8e7d6 \"Drop legacy\")",
    "- Git: 2 commits since 2026-03-10T10:00:00Z (newest first):",
]


def doc_of(path: Path) -> StateSections:
    return read_sections(path.read_text(encoding="utf-8"), path=str(path))


def sections_of(text: str) -> dict[str, list[str]]:
    """Map each handoff part key to the lines under its heading (blank line and footer excluded)."""
    by_heading = {heading: key for key, heading in HEADINGS.items()}
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line in by_heading:
            current = by_heading[line]
            found[current] = []
        elif not line or line.startswith("Left out to fit"):
            current = None
        elif current is not None:
            found[current].append(line)
    return found


def expected_items(doc: StateSections) -> dict[str, list[str]]:
    constraints, facts = split_facts(doc.facts)
    bullets = lambda values: [f"- {v}" for v in values]  # noqa: E731
    return {
        "workflow": [line for line in (doc.approved_workflow or "").splitlines() if line.strip()],
        "current": [doc.current] if doc.current else [],
        "remaining": bullets(doc.remaining),
        "decisions": [f"- {d.status}: {d.what} - {d.reasoning}" for d in doc.decisions],
        "constraints": bullets(constraints),
        "facts": bullets(facts),
        "done": bullets(doc.done),
        "rederivation": bullets(doc.rederivation),
        "skills": bullets(doc.suggested_skills),
    }


def context_of(output: bytes, fmt: str) -> str:
    if fmt == "plain":
        return output.decode("utf-8")
    return json.loads(output)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("state", STATES + HAND_MADE, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("drift", [None, DRIFT], ids=["no-drift", "drift"])
def test_budget_is_respected_to_the_byte_on_every_fixture(state, budget, fmt, drift):
    doc = doc_of(state)
    handoff = build_handoff(doc, source=str(state), budget=budget, fmt=fmt, drift=drift)
    assert len(handoff.output) <= budget
    assert context_of(handoff.output, fmt) == handoff.text
    assert handoff.output.endswith(b"\n")
    if handoff.left_out:  # when something had to go, the budget was used: nothing left unspent beyond one item
        assert len(handoff.output) > budget - 700


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("state", STATES + HAND_MADE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_required_parts_come_before_optional_ones(state, budget, fmt):
    doc = doc_of(state)
    text = build_handoff(doc, source=str(state), budget=budget, fmt=fmt).text
    shown, want = sections_of(text), expected_items(doc)
    if any(shown.get(key) for key in OPTIONAL):
        for key in ("remaining", "decisions", "constraints"):
            assert shown.get(key, []) == want[key], f"{key} incomplete although optional parts are shown"
        workflow_cost = sum(len(line.encode()) + 1 for line in want["workflow"])
        if workflow_cost < WORKFLOW_SHARE * budget - 100:  # else it stopped at its share of the budget, by design
            assert shown.get("workflow", []) == want["workflow"]
    for key, lines in shown.items():  # every shown line is an item of that part, whole or shortened with …
        for line in lines:
            assert line in want[key] or (line.endswith("…") and any(w.startswith(line[:-1]) for w in want[key]))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("state", STATES, ids=lambda p: p.name)
def test_a_tiny_budget_still_carries_the_workflow_and_current(state, fmt):
    doc = doc_of(state)
    text = build_handoff(doc, source=str(state), budget=MIN_BUDGET, fmt=fmt, drift=DRIFT).text
    shown = sections_of(text)
    assert shown["current"][0].removesuffix("…") == doc.current[: len(shown["current"][0]) - 1] or shown["current"] == [doc.current]
    first = doc.approved_workflow.splitlines()[0]
    assert shown["workflow"] and first.startswith(shown["workflow"][0].removesuffix("…"))
    assert len(shown["workflow"][0]) >= 40


def test_everything_fits_at_the_largest_budget_and_nothing_is_named_left_out():
    state = GOLDEN / "recover" / "claude-code.state.md"
    doc = doc_of(state)
    handoff = build_handoff(doc, source=str(state), budget=MAX_BUDGET, fmt="claude-code")
    assert handoff.left_out == [] and "Left out" not in handoff.text
    shown, want = sections_of(handoff.text), expected_items(doc)
    for key in REQUIRED + ("facts", "done", "rederivation"):
        assert shown[key] == want[key]


def test_the_footer_names_what_was_left_out_with_true_counts():
    state = GOLDEN / "recover" / "claude-code.state.md"
    doc = doc_of(state)
    handoff = build_handoff(doc, source=str(state), budget=2500, fmt="plain")
    [footer] = handoff.left_out
    assert handoff.text.rstrip("\n").endswith(footer)
    shown, want = sections_of(handoff.text), expected_items(doc)
    names = {"Approved Workflow": "workflow", "Remaining": "remaining", "Decisions": "decisions",
             "Constraints": "constraints", "Established Facts": "facts", "Done": "done", "Re-derivation": "rederivation"}
    listed = dict(re.findall(r"([A-Z][A-Za-z -]+?) \((?:all (\d+)|\d+ of \d+)(?: lines)?\)", footer.split("; shortened")[0]))
    counts = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(r"([A-Z][A-Za-z -]+?) \((\d+) of (\d+)", footer)}
    for name, key in names.items():
        total, kept = len(want[key]), len(shown.get(key, []))
        if kept == total:
            assert name not in listed, f"{name} is complete but named as left out"
        elif kept == 0:
            assert f"{name} (all {total}" in footer
        else:
            assert counts[name] == (total - kept, total)
    assert f"Done (all {len(want['done'])})" in footer  # the optional parts went first


def test_rejected_decisions_keep_their_reasons():
    state = GOLDEN / "recover" / "claude-code.state.md"
    doc = doc_of(state)
    text = build_handoff(doc, source=str(state), fmt="claude-code").text
    rejected = [d for d in doc.decisions if d.status == "REJECTED"]
    assert len(rejected) == 6
    for d in rejected:
        assert f"- REJECTED: {d.what} - {d.reasoning}\n" in text


def test_hook_json_shape():
    out = hook_json('line one\n"quoted" \\ tab\t é 漢字')
    assert out.endswith(b"\n") and out.count(b"\n") == 1
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                      "additionalContext": 'line one\n"quoted" \\ tab\t é 漢字'}}


def test_header_names_the_state_file_and_the_compaction():
    state = GOLDEN / "recover" / "opencode-messages.state.md"
    doc = doc_of(state)
    text = build_handoff(doc, source=".duck-tape/x.state.md", compaction="2026-03-10T10:05:00Z").text
    lines = text.splitlines()
    assert lines[0] == "# duck-tape: session state restored after compaction"
    assert lines[1].startswith(f"From .duck-tape/x.state.md ({doc.kind} state file, created {doc.created}; "
                               "compaction at 2026-03-10T10:05:00Z) | Cwd: ")


@pytest.mark.parametrize("state", STATES, ids=lambda p: p.name)
def test_truth_constraints_land_in_the_constraints_section(state):
    truth = json.loads((ROOT / "fixtures" / f"{TRUTH[state.name.removesuffix('.state.md')]}.truth.json").read_text())
    doc = doc_of(state)
    shown = sections_of(build_handoff(doc, source=str(state)).text)
    for constraint in truth["constraints"]:
        assert any(constraint in line for line in shown["constraints"]), constraint
    for fact in truth.get("facts", []):  # found facts (sub-agent results, root causes, quirks) are not rules
        if fact.get("kind") != "constraint":
            assert not any(fact["text"][:40] in line for line in shown.get("constraints", [])), fact["text"]


@pytest.mark.parametrize("line, expected", [
    ("commit it on this branch, but never push to main directly", True),
    ("no, don't use a fixed window, use the token bucket.", True),
    ("stick to the api layer", True),
    ("leave the checkout lock as is", True),
    ("we don't add new dependencies to the cli", True),
    ("Please make sure the export stays byte-identical", True),
    ("You must not run migrations on staging", True),
    ("Always run the linter before committing", True),
    ("If the worker dies in between, the key never expires.", False),
    ("it only works on FastAPI/Starlette endpoints", False),
    ("the EU office always writes day first.", False),
    ("I don't know why the build is slow", False),
    ("We don't think the cache matters here", False),
    ("Root cause: parse_date() only tries the month-first format", False),
])
def test_constraint_lines_are_recognised_by_directive_phrasing(line, expected):
    assert is_constraint(line) is expected


def synthetic(workflow: str, n: int = 12) -> StateSections:
    items = [f"étape {k}: «{'漢字' * (k % 5)}» \"quoted\" back\\slash\ttab 🦆 {'x' * (k * 37 % 300)}" for k in range(n)]
    return StateSections(
        stamp="2026-03-10-1000", kind="manual", cwd="/home/dév/проект", repo="r", branch="b", trigger=None,
        created="2026-03-10T10:00:00Z", approved_workflow=workflow, current="Écrire les tests « 🦆 » " * 8,
        done=items, remaining=items[:5], facts=items + ["never push 🦆 to main"],
        decisions=[DecisionEntry("2026-03-10T10:00:00Z", "REJECTED", f"option {k} «x»", "слишком медленно " * k)
                   for k in range(n)],
        rederivation=items)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("budget", range(MIN_BUDGET, MAX_BUDGET + 1, 211))
def test_budget_holds_with_escapes_and_multibyte_text(budget, fmt):
    workflow = "Fais ceci « d'abord » 🦆\n```\nlog \"a\"\tb\\c\n" + "ligne 漢字\n" * 60 + "```\nthen more"
    handoff = build_handoff(synthetic(workflow), source="s", budget=budget, fmt=fmt, drift=DRIFT)
    assert len(handoff.output) <= budget
    assert context_of(handoff.output, fmt) == handoff.text


@pytest.mark.parametrize("budget", [MIN_BUDGET, 1300, 2000, 3000])
def test_a_workflow_cut_inside_a_code_fence_never_leaves_it_open(budget):
    workflow = "Add the importer.\nthe log:\n```\n" + "\n".join(f"row {k} " + "y" * 60 for k in range(80)) + "\n```\nend"
    text = build_handoff(synthetic(workflow, 2), source="s", budget=budget).text
    fences = [line for line in sections_of(text)["workflow"] if line.startswith("```")]
    assert len(fences) % 2 == 0
    assert "Add the importer." in text


def test_budget_and_format_bounds():
    doc = doc_of(STATES[0])
    for bad in (MIN_BUDGET - 1, MAX_BUDGET + 1):
        with pytest.raises(ValueError, match="outside"):
            build_handoff(doc, source="s", budget=bad)
    with pytest.raises(ValueError, match="unknown format"):
        build_handoff(doc, source="s", fmt="xml")


@pytest.mark.parametrize("json_mode", [False, True])
def test_shorten_fits_its_limit_and_cuts_at_characters(json_mode):
    sizer = Sizer(json=json_mode)
    text = 'mot "漢字" \\ 🦆 ' * 40
    for limit in range(48, 400, 7):
        short = shorten(text, limit, sizer)
        assert short is not None and short.endswith("…") and sizer.cost(short) <= limit
        assert text.startswith(short[:-1])
    assert shorten(text, 5, sizer) is None
    assert shorten("short", 100, sizer) == "short"
