"""Merge rules: apply ``ContextDelta``s to a ``ContextDoc`` (DESIGN.md "CONTEXT.md (Tier 1)", "Merge rules").

Deltas are first folded in the order given (``fold``: a later delta supersedes an earlier one on the same key; a
later state's Done resolves an earlier state's Remaining), then applied once, so the changelog states the net
change and merging the same states again changes nothing.  Per section:

* Goals, Decisions, Conventions, Glossary: dedupe by key (across ``###`` subsections); an incoming text that
  differs (whitespace-normalized, the Decisions date aside) supersedes the entry in place; new keys are added
  (``edit.insert_entry``).  The first real entry replaces the section's bootstrap scaffold line.
* Deferred-Debt: append-only; an existing entry only gains ``[status: resolved]`` when a Done item resolves it
  (same text, or it names the entry's ``#<issue>``); the scaffold line is marked resolved by the first debt.
* Open-Questions: dedupe by whitespace-normalized text; a question matched by a Done item (case, whitespace and
  final punctuation aside) is dropped with the reason ``done in session <label>``.
* Notes: new blocks only, in timestamp order, never rewritten; every merged state that changed something gets a
  block ``Merged state file <session>.state.md (<repo>@<branch>): <n> added, <n> superseded, <n> dropped.``
  (``ContextDelta.file`` in place of ``<session>.state.md`` when the caller named the file: batch).

The caller checks that every schema section exists (``ContextDoc.missing``) before ``apply``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.context import edit
from pipeline.context.changelog import Change
from pipeline.context.delta import ContextDelta, DeltaDebt, DeltaEntry, DeltaNote, DeltaQuestion
from pipeline.context.model import KEYED, NOUNS, SCHEMA, ContextDoc, Item, Section
from pipeline.context.parse import items, key_of, norm, strip_end
from pipeline.context.render import debt_line, entry_line, question_line

SCAFFOLD = "TODO(scaffold)"


def match_key(text: str) -> str:
    """How a Done item is matched to a question or a debt: whitespace-normalized, casefolded, final ``.?!`` off."""
    return norm(text).casefold().rstrip(" .?!")


@dataclass(slots=True)
class Folded:
    """The deltas folded into one: each value carries the index of the delta it comes from."""

    entries: dict[tuple[str, str], tuple[DeltaEntry, int]] = field(default_factory=dict)
    questions: dict[str, tuple[DeltaQuestion, int]] = field(default_factory=dict)
    debts: dict[str, tuple[DeltaDebt, int]] = field(default_factory=dict)
    notes: list[tuple[DeltaNote, int]] = field(default_factory=list)
    done: dict[str, tuple[str, int]] = field(default_factory=dict)


def fold(deltas: list[ContextDelta]) -> Folded:
    """Fold ``deltas`` in order: last text wins per (section, key); a question keeps its first date; Done items of
    a later delta remove earlier questions, and a later Remaining item re-opens an earlier Done one."""
    folded = Folded()
    for index, delta in enumerate(deltas):
        for entry in delta.entries:
            folded.entries[(entry.section, key_of(entry.key))] = (entry, index)
        for item in delta.done:
            key = match_key(item)
            folded.done[key] = (item, index)
            for text in [t for t in folded.questions if match_key(t) == key]:
                del folded.questions[text]
        for question in delta.questions:
            folded.done.pop(match_key(question.text), None)
            folded.questions.setdefault(norm(question.text), (question, index))
        for debt in delta.debts:
            folded.debts.setdefault(_debt_label(debt).casefold(), (debt, index))
        folded.notes.extend((note, index) for note in delta.notes)
    return folded


def apply(doc: ContextDoc, deltas: list[ContextDelta], *, today: str) -> list[Change]:
    """Apply ``deltas`` to ``doc`` in place; return the changes in section order.  ``today``: YYYY-MM-DD for
    Decisions entries that carry no date.  Raises ``KeyError`` when a schema section is missing."""
    folded = fold(deltas)
    newline = doc.newline
    changes: list[Change] = []
    for name in SCHEMA:
        section = doc.get(name)
        if section is None:
            raise KeyError(name)
        if name in KEYED:
            changes += _keyed(section, folded, newline, today)
        elif name == "Deferred-Debt":
            changes += _debts(section, folded, newline)
        elif name == "Open-Questions":
            changes += _questions(section, folded, deltas, newline)
    notes = doc.get("Notes")
    assert notes is not None
    changes += _notes(notes, folded, deltas, changes, newline)
    return changes


def _find(section: Section, kind: str, key: str) -> Item | None:
    return next((it for it in items(section) if it.kind == kind and it.key == key), None)


def _drop_scaffold(section: Section, source: int | None) -> list[Change]:
    scaffold = _find(section, "scaffold", SCAFFOLD.casefold())
    if scaffold is None:
        return []
    edit.remove_item(section, scaffold)
    return [Change("Dropped", section.name, SCAFFOLD, reason=f"first {NOUNS[section.name]} merged", source=source)]


def _keyed(section: Section, folded: Folded, newline: str, today: str) -> list[Change]:
    changes: list[Change] = []
    dated = section.name == "Decisions"
    for (name, key), (entry, source) in folded.entries.items():
        if name != section.name:
            continue
        date = (entry.date or today) if dated else None
        existing = _find(section, "entry", key)
        if existing is not None:
            if norm(existing.value or "") == norm(entry.text):
                continue
            label = existing.label or entry.key
            edit.replace_item(section, existing, [entry_line(label, entry.text, date)], newline)
            changes.append(Change("Superseded", section.name, label, old=existing.value, new=entry.text,
                                  source=source, redacted=entry.redacted))
            continue
        changes += _drop_scaffold(section, source)
        edit.insert_entry(section, entry_line(entry.key, entry.text, date), newline, subsection=entry.subsection)
        changes.append(Change("Added", section.name, entry.key, source=source, redacted=entry.redacted))
    return changes


def _debt_label(debt: DeltaDebt) -> str:
    tag = f"{debt.type},#{debt.issue}" if debt.issue else debt.type
    return f"TODO({tag}): {norm(debt.what)}"


def _resolver(item: Item, done: dict[str, tuple[str, int]]) -> int | None:
    """Index of the delta whose Done item resolves Deferred-Debt ``item`` (same text, or names its #issue)."""
    issue = re.search(r",#([^)\s]+)\)", item.label or "")
    if match_key(item.value or "") in done:
        return done[match_key(item.value or "")][1]
    if issue:
        pattern = re.compile(rf"(?<![\w#])#{re.escape(issue.group(1))}(?!\w)")
        for text, source in done.values():
            if pattern.search(text):
                return source
    return None


def _debts(section: Section, folded: Folded, newline: str) -> list[Change]:
    changes: list[Change] = []
    for item in items(section):
        if item.kind != "debt" or item.status == "resolved":
            continue
        source = _resolver(item, folded.done)
        if source is not None:
            edit.set_status(section, item, "resolved")
            changes.append(Change("Superseded", section.name, item.label or "", old=item.status or "no status",
                                  new="resolved", source=source))
    for key, (debt, source) in folded.debts.items():
        if _find(section, "debt", key) is not None:
            continue
        scaffold = _find(section, "scaffold", SCAFFOLD.casefold())
        if scaffold is not None and scaffold.status != "resolved":
            edit.set_status(section, scaffold, "resolved")
            changes.append(Change("Superseded", section.name, SCAFFOLD, old="no status", new="resolved", source=source))
        edit.insert_entry(section, debt_line(debt.type, debt.issue, debt.date, norm(debt.what)), newline)
        changes.append(Change("Added", section.name, _debt_label(debt), source=source, redacted=debt.redacted))
    return changes


def _questions(section: Section, folded: Folded, deltas: list[ContextDelta], newline: str) -> list[Change]:
    changes: list[Change] = []
    while True:
        resolved = next((it for it in items(section) if it.kind == "question" and match_key(it.label or "") in folded.done), None)
        if resolved is None:
            break
        source = folded.done[match_key(resolved.label or "")][1]
        session = deltas[source].session
        edit.remove_item(section, resolved)
        changes.append(Change("Dropped", section.name, resolved.label or "",
                              reason=f"done in session {session}" if session else "done", source=source))
    for key, (question, source) in folded.questions.items():
        if _find(section, "question", key) is not None:
            continue
        changes += _drop_scaffold(section, source)
        edit.insert_entry(section, question_line(norm(question.text), question.date), newline)
        changes.append(Change("Added", section.name, norm(question.text), source=source, redacted=question.redacted))
    return changes


def _has_note(section: Section, note: DeltaNote) -> bool:
    """True when a block with the same stamp and the same text lines already exists."""
    for item in items(section):
        if item.kind == "note" and item.key == note.stamp:
            body = [strip_end(line) for line in section.body[item.start + 1 : item.end]]
            if body == note.lines:
                return True
    return False


def _notes(section: Section, folded: Folded, deltas: list[ContextDelta], changes: list[Change], newline: str) -> list[Change]:
    added: list[Change] = []
    blocks: list[tuple[DeltaNote, int]] = [pair for pair in folded.notes if not _has_note(section, pair[0])]
    for source in sorted({c.source for c in changes if c.source is not None}):
        delta = deltas[source]
        if delta.session and delta.stamp:
            mine = [c for c in changes if c.source == source and c.key != SCAFFOLD]
            counts = {kind: sum(1 for c in mine if c.kind == kind) for kind in ("Added", "Superseded", "Dropped")}
            name = delta.file or f"{delta.session}.state.md"
            text = (f"Merged state file {name} ({delta.origin}): {counts['Added']} added, "
                    f"{counts['Superseded']} superseded, {counts['Dropped']} dropped.")
            blocks.append((DeltaNote(stamp=delta.stamp, lines=[text]), source))
    for note, source in blocks:
        added += _drop_scaffold(section, source)
        edit.insert_note(section, note.stamp, note.lines, newline)
        added.append(Change("Added", section.name, note.stamp, source=source, redacted=note.redacted))
    return added
