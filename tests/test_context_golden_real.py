"""Golden CONTEXT.md of three real sessions merged one after another (issue 26 item 4).

The states are ``fixtures/context/real/*.state.md``: what the rules engine recovered on 2026-12-04 from three
development sessions (``../shared/corpus2``: a C firmware session in English, a web site session, a Korean ML
session), owner names replaced by ``dev``; committed so this golden file follows the CONTEXT.md rules, not the rules
engine, which changes on its own.  ``tests/golden/context/real-sequence.md`` was read entry by entry when written:
Decisions holds the lasting choices only, Glossary nothing, Deferred-Debt the one unfinished build with its status,
Notes the environment traps and the causes found.  Rewrite after a deliberate change:
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_context_golden_real.py`` and review the diff.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from conftest import ROOT, check_golden

from pipeline.context.api import plan
from pipeline.context.changelog import NO_CHANGES, format_dry_run
from pipeline.state.parse import parse

STATES = sorted((ROOT / "fixtures" / "context" / "real").glob("*.state.md"))
TODAY = date(2026, 12, 4)


def in_sequence():
    """The CONTEXT.md after each state merged into the previous result, and each merge's dry-run changelog."""
    text, logs = None, []
    for path in STATES:
        state = parse(path.read_text(encoding="utf-8"), path=str(path))
        outcome = plan(Path("CONTEXT.md"), text, [state], mask=False, today=TODAY)
        logs.append(f"# {path.name}\n{format_dry_run(outcome.changelog, outcome.skipped)}\n")
        text = outcome.after
    return text, logs


def test_three_real_sessions_merged_in_sequence_golden():
    assert [p.name for p in STATES] == ["2026-01-07-1334-recovered.state.md", "2026-05-21-1505-recovered.state.md",
                                        "2026-08-06-2348-recovered.state.md"]
    check_golden("context/real-sequence.md", in_sequence()[0])


def test_the_three_merges_changelogs_with_what_each_left_out_golden():
    check_golden("context/real-sequence.changelog.txt", "\n".join(in_sequence()[1]))


def test_merging_the_three_again_changes_nothing():
    text, _ = in_sequence()
    states = [parse(p.read_text(encoding="utf-8")) for p in STATES]
    assert plan(Path("CONTEXT.md"), text, states, mask=False, today=TODAY).changelog == [NO_CHANGES]
    for state in states:
        assert plan(Path("CONTEXT.md"), text, [state], mask=False, today=TODAY).changelog == [NO_CHANGES]
