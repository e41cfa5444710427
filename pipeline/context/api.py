"""Merge state files into CONTEXT.md: the API the commands (``merge``, ``recover --merge``, ``batch --merge``) call.

``plan_merge`` reads the file and computes the new text and the changelog without writing (bootstrap, translate,
merge rules, redaction gate); ``apply_merge`` writes it safely (lock, re-plan when the file changed meanwhile,
atomic replace with a backup).  DESIGN.md "CONTEXT.md (Tier 1)", "Redaction"; issue 5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path

from pipeline.context.bootstrap import fill_scaffold, skeleton, title_for
from pipeline.context.changelog import NO_CHANGES, Change, changelog_lines, skipped_lines
from pipeline.context.merge import apply
from pipeline.context.parse import heading_hints, key_of, parse
from pipeline.context.render import render
from pipeline.context.safewrite import read_context, update
from pipeline.errors import InputError
from pipeline.state.model import AgentState


@dataclass
class MergeOutcome:
    """The result of planning a merge.

    ``changelog``: exactly the lines printed after ``Changelog:`` (or ``["No changes to CONTEXT.md."]``);
    ``before``: the file's text when planned (None when it did not exist: bootstrapped); ``after``: the new text;
    ``changed``: whether ``after`` differs from ``before``.  Added fields (defaults): ``redaction`` holds the
    redaction report lines of secrets masked by ``mask=True`` (print them on stderr); ``states``, ``mask`` and
    ``today`` are what was planned, kept so ``apply_merge`` can re-plan; ``names`` (added, default None): the
    state files' names given to ``plan_merge``, kept for the same reason.  ``changes`` (added, default empty): the
    ``Change`` records the changelog lines were worded from; ``kept`` (added, default empty): ``(section, key)`` of
    the states' Goals, Decisions, Conventions and Glossary entries that CONTEXT.md already held with the same text
    (``duck-tape merge --json`` reports both).  ``skipped`` (added, default empty): the ``- Skipped: …`` lines of
    what the translation left out (``changelog.skipped_lines``), for the preview and the dry run; ``left_out``
    (added): the same as ``DeltaSkip`` records for ``--json``.
    """

    changelog: list[str]
    before: str | None
    after: str
    changed: bool
    redaction: list[str] = field(default_factory=list)
    states: list[AgentState] = field(default_factory=list, repr=False, compare=False)
    mask: bool = field(default=False, repr=False, compare=False)
    today: date | None = field(default=None, repr=False, compare=False)
    names: list[str | None] | None = field(default=None, repr=False, compare=False)
    changes: list[Change] = field(default_factory=list, repr=False, compare=False)
    kept: list[tuple[str, str]] = field(default_factory=list, repr=False, compare=False)
    skipped: list[str] = field(default_factory=list, repr=False, compare=False)
    left_out: list = field(default_factory=list, repr=False, compare=False)


def _utc_today() -> date:
    return datetime.now(timezone.utc).date()


def missing_sections_message(doc_missing: list[str], hints: list[str]) -> str:
    """``missing schema section(s) '## Goals', ...: run `duck-tape migrate` to add them`` plus the heading hints."""
    names = ", ".join(f"'## {name}'" for name in doc_missing)
    message = f"missing schema section(s) {names}: run `duck-tape migrate` to add them, then merge again"
    return message + "".join(f"; {hint}" for hint in hints)


def plan(path: Path, before: str | None, states: list[AgentState], *, mask: bool, today: date,
         names: list[str | None] | None = None) -> MergeOutcome:
    """Plan merging ``states`` (in order) into the CONTEXT.md text ``before`` (None or blank: bootstrap).

    ``names``: the state files' names, one per state (None: ``<session>.state.md``), for the Notes blocks.

    Raises ``InputError`` (exit 2) for a file missing schema sections (named, with hints about look-alike
    headings) or with a duplicated section, ``RedactionRefused`` (exit 3) when the new text holds a potential
    secret and ``mask`` is False.
    """
    from pipeline.context.gate import gate, masker
    from pipeline.context.translate import translate

    deltas = [translate(state, masker=masker if mask else None) for state in states]
    for delta, name in zip(deltas, names or ()):
        delta.file = name
    day = today.isoformat()
    if before is None or not before.strip():
        doc = skeleton(title_for([delta.repo for delta in deltas]))
        changes = apply(doc, deltas, today=day) + fill_scaffold(doc, day)
    else:
        doc = parse(before, path=str(path))
        missing = doc.missing()
        if missing:
            raise InputError(missing_sections_message(missing, heading_hints(doc, missing)), path=str(path))
        changes = apply(doc, deltas, today=day)
    written, masked, report = gate(render(doc), mask_secrets=mask, path=str(path))
    kept = unchanged_entries(deltas, changes)
    left_out = [item for delta in deltas for item in delta.skipped]
    skipped = skipped_lines(left_out)
    if before is not None and written == before:
        return MergeOutcome([NO_CHANGES], before, before, False, [], list(states), mask, today, names, [], kept,
                            skipped, left_out)
    return MergeOutcome(changelog_lines(changes, masked), before, written, True, report, list(states), mask, today,
                        names, changes, kept, skipped, left_out)


def unchanged_entries(deltas: list, changes: list[Change]) -> list[tuple[str, str]]:
    """``(section, key)`` of the deltas' keyed entries that no change touched, in delta order without repeats: the
    merge rules leave an entry alone only when CONTEXT.md holds its key with the same text."""
    touched = {(change.section, key_of(change.key)) for change in changes}
    kept: dict[tuple[str, str], tuple[str, str]] = {}
    for delta in deltas:
        for entry in delta.entries:
            ident = (entry.section, key_of(entry.key))
            if ident not in touched:
                kept.setdefault(ident, (entry.section, entry.key))
    return list(kept.values())


def plan_merge(context_path: Path, states: list[AgentState], *, mask: bool = False, today: date | None = None,
               names: list[str | None] | None = None) -> MergeOutcome:
    """Plan merging ``states`` into the CONTEXT.md at ``context_path``; nothing is written.

    Reads the file (a missing one is bootstrapped), translates each state with the rigid map, merges them in the
    order given, and runs the redaction gate.  ``mask``: write ``<REDACTED>`` in place of secrets (the changelog
    then says ``- Redacted: <Section> <N> secret(s)``) instead of refusing.  ``today``: the UTC date for scaffold
    lines and undated entries (default: now).  ``names``: the state files' names, one per state, for the
    ``Merged state file <name>`` Notes lines (default, or a None item: ``<session>.state.md``, the name in a
    ``.duck-tape`` store; ``batch`` passes its ``<session id>.state.md``).  Raises ``InputError`` naming missing
    sections or an unreadable file, ``RedactionRefused`` (see ``plan``).
    """
    path = Path(context_path)
    return plan(path, read_context(path), list(states), mask=mask, today=today or _utc_today(),
                names=list(names) if names is not None else None)


def apply_merge(context_path: Path, outcome: MergeOutcome) -> MergeOutcome:
    """Write a planned merge safely and return what was written.

    Takes the file's exclusive lock, re-reads it, and when it changed since ``outcome`` was planned (another merge
    landed meanwhile) plans again from the new text with the same states, so both merges land.  The write is an
    atomic replace with the previous text kept as a backup until it succeeds (``safewrite``).  ``outcome`` is
    updated in place with what was actually written (its changelog too) and returned.  Raises ``InputError`` when
    the file changed and ``outcome`` carries no states to re-plan with, and what ``plan`` raises on a re-plan.
    """
    path = Path(context_path)

    def replan(current: str | None) -> str | None:
        if not outcome.states:
            raise InputError("changed since the merge was planned and there are no states to plan again with", path=str(path))
        fresh = plan(path, current, outcome.states, mask=outcome.mask, today=outcome.today or _utc_today(),
                     names=outcome.names)
        outcome.changelog, outcome.before, outcome.after = fresh.changelog, fresh.before, fresh.after
        outcome.changed, outcome.redaction = fresh.changed, fresh.redaction
        outcome.changes, outcome.kept = fresh.changes, fresh.kept
        outcome.skipped, outcome.left_out = fresh.skipped, fresh.left_out
        return fresh.after if fresh.changed else None

    update(path, outcome.before, outcome.after, replan)
    return outcome
