"""Merge rules: apply ``ContextDelta``s to a ``ContextDoc`` (DESIGN.md "CONTEXT.md (Tier 1)", "Merge rules").

Deltas are first folded in the order given (``fold``: a later delta supersedes an earlier one on the same key; a
later state's Done resolves an earlier state's Remaining), then applied once, so the changelog states the net
change and merging the same states again changes nothing.  Per section:

* Goals, Decisions, Conventions, Glossary: dedupe by key (across ``###`` subsections); an incoming text that
  differs (whitespace-normalized, the Decisions date aside) supersedes the entry in place; new keys are added
  (``edit.insert_entry``).  A Decisions entry that reverses an existing one under another key (opposite status on
  the same choice, ``match.reverses``) supersedes it in place too.  The first real entry replaces the section's
  bootstrap scaffold line.
* Deferred-Debt: append-only; new entries carry ``[status: open]``; an existing entry only gains
  ``(resolved: <date>) [status: resolved]`` when a later state's Done item resolves it (``match.resolves``: same
  text, its ``#<issue>``, the same command run, all its words), dated with that state's date; a debt raised and
  resolved within the merged states is added resolved.  The scaffold line is marked resolved by the first debt.
* Open-Questions: dedupe by whitespace-normalized text; a question matched by a Done item (case, whitespace and
  final punctuation aside) is dropped with the reason ``done in session <label>``.
* Notes: new blocks only, in timestamp order, never rewritten; every merged state that changed something gets a
  block ``Merged state file <session>.state.md (<repo>@<branch>): <n> added, <n> superseded, <n> dropped.``
  (``ContextDelta.file`` in place of ``<session>.state.md`` when the caller named the file: batch), followed by
  one ``- <fact>`` bullet per durable fact (``ContextDelta.facts``) that no Notes line holds yet (``note_key``).

The caller checks that every schema section exists (``ContextDoc.missing``) before ``apply``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.context import edit
from pipeline.context.changelog import Change
from pipeline.context.delta import ContextDelta, DeltaDebt, DeltaEntry, DeltaFact, DeltaNote, DeltaQuestion
from pipeline.context.match import match_key, note_key, resolves, reverses
from pipeline.context.model import KEYED, NOUNS, SCHEMA, ContextDoc, Item, Section
from pipeline.context.parse import items, key_of, norm, strip_end
from pipeline.context.render import debt_line, entry_line, question_line

SCAFFOLD = "TODO(scaffold)"

__all__ = ["Folded", "apply", "fold", "match_key"]


@dataclass(slots=True)
class Folded:
    """The deltas folded into one: each value carries the index of the delta it comes from."""

    entries: dict[tuple[str, str], tuple[DeltaEntry, int]] = field(default_factory=dict)
    questions: dict[str, tuple[DeltaQuestion, int]] = field(default_factory=dict)
    debts: dict[str, tuple[DeltaDebt, int, int | None]] = field(default_factory=dict)
    """label -> (debt, index of the delta that raised it, index of a later delta whose Done item resolves it)."""
    notes: list[tuple[DeltaNote, int]] = field(default_factory=list)
    done: dict[str, tuple[str, int]] = field(default_factory=dict)


def fold(deltas: list[ContextDelta]) -> Folded:
    """Fold ``deltas`` in order: last text wins per (section, key) and a later decision that reverses an earlier
    one replaces it; a question keeps its first date; Done items of a later delta remove earlier questions and
    resolve earlier debts, and a later Remaining item re-opens an earlier Done one."""
    folded = Folded()
    for index, delta in enumerate(deltas):
        for entry in delta.entries:
            key = key_of(entry.key)
            if entry.section == "Decisions":
                for old in [k for k, (e, _) in folded.entries.items()
                            if k[0] == "Decisions" and k[1] != key and reverses(e.text, entry.text)]:
                    del folded.entries[old]
            folded.entries[(entry.section, key)] = (entry, index)
        for item in delta.done:
            key = match_key(item)
            folded.done[key] = (item, index)
            for text in [t for t in folded.questions if match_key(t) == key]:
                del folded.questions[text]
            for label, (debt, source, resolved) in folded.debts.items():
                if resolved is None and source < index and resolves(debt.what, debt.issue, item):
                    folded.debts[label] = (debt, source, index)
        for question in delta.questions:
            folded.done.pop(match_key(question.text), None)
            folded.questions.setdefault(norm(question.text), (question, index))
        for debt in delta.debts:
            label = _debt_label(debt).casefold()
            if label in folded.debts:
                first, source, resolved = folded.debts[label]
                if resolved is not None and resolved < index:  # listed as remaining again after it was done
                    folded.debts[label] = (first, source, None)
                continue
            folded.debts[label] = (debt, index, None)
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
            changes += _debts(section, folded, deltas, newline, today)
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
        if existing is None and dated:
            existing = next((it for it in items(section) if it.kind == "entry" and reverses(it.value or "", entry.text)),
                            None)
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


def _resolver(item: Item, done: dict[str, tuple[str, int]], deltas: list[ContextDelta]) -> int | None:
    """Index of the first delta whose Done item resolves the Deferred-Debt ``item`` (``match.resolves``), among the
    deltas not older than the entry (its ``TODO(...): <date>``: a state from before the debt was recorded cannot
    show it done) that do not list the same item as remaining themselves."""
    issue = re.search(r",#([^)\s]+)\)", item.label or "")
    what = match_key(item.value or "")
    hits = [source for text, source in done.values()
            if not (item.date and deltas[source].stamp and deltas[source].stamp[:10] < item.date)
            and not any(match_key(debt.what) == what for debt in deltas[source].debts)
            and resolves(item.value or "", issue.group(1) if issue else None, text)]
    return min(hits) if hits else None


def _day(deltas: list[ContextDelta], source: int, today: str) -> str:
    """The date (YYYY-MM-DD) of delta ``source``: its state's ``Created:`` date, else ``today``."""
    stamp = deltas[source].stamp
    return stamp[:10] if stamp else today


def _debts(section: Section, folded: Folded, deltas: list[ContextDelta], newline: str, today: str) -> list[Change]:
    changes: list[Change] = []
    for item in items(section):
        if item.kind != "debt" or item.status == "resolved":
            continue
        if item.key in folded.debts:  # the merged states list it themselves: their order decides
            source = folded.debts[item.key][2]
        else:
            source = _resolver(item, folded.done, deltas)
        if source is not None:
            edit.set_status(section, item, "resolved", _day(deltas, source, today))
            changes.append(Change("Superseded", section.name, item.label or "", old=item.status or "no status",
                                  new="resolved", source=source))
    for key, (debt, source, resolved) in folded.debts.items():
        if _find(section, "debt", key) is not None:
            continue
        scaffold = _find(section, "scaffold", SCAFFOLD.casefold())
        if scaffold is not None and scaffold.status != "resolved":
            edit.set_status(section, scaffold, "resolved")
            changes.append(Change("Superseded", section.name, SCAFFOLD, old="no status", new="resolved", source=source))
        status = "resolved" if resolved is not None else debt.status
        when = _day(deltas, resolved, today) if resolved is not None else None
        edit.insert_entry(section, debt_line(debt.type, debt.issue, debt.date, norm(debt.what), status, when), newline)
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


def _recorded(section: Section) -> set[str]:
    """``note_key`` of every text line of the Notes section (the facts already recorded)."""
    keys = set()
    for line in section.body:
        text = strip_end(line).strip()
        if text and not text.startswith("#"):
            keys.add(note_key(text))
    return keys


def _new_facts(section: Section, folded: Folded, deltas: list[ContextDelta]) -> dict[int, list[DeltaFact]]:
    """Per delta index, its durable facts that no Notes line holds yet and no earlier delta brings."""
    seen = _recorded(section)
    fresh: dict[int, list[DeltaFact]] = {}
    for index, delta in enumerate(deltas):
        for item in delta.facts:
            key = note_key(item.text)
            if key and key not in seen:
                seen.add(key)
                fresh.setdefault(index, []).append(item)
    return fresh


def _notes(section: Section, folded: Folded, deltas: list[ContextDelta], changes: list[Change], newline: str) -> list[Change]:
    added: list[Change] = []
    blocks: list[tuple[DeltaNote, int]] = [pair for pair in folded.notes if not _has_note(section, pair[0])]
    facts = _new_facts(section, folded, deltas)
    for source in sorted({c.source for c in changes if c.source is not None} | set(facts)):
        delta = deltas[source]
        if delta.session and delta.stamp:
            mine = [c for c in changes if c.source == source and c.key != SCAFFOLD]
            counts = {kind: sum(1 for c in mine if c.kind == kind) for kind in ("Added", "Superseded", "Dropped")}
            name = delta.file or f"{delta.session}.state.md"
            new = facts.get(source, [])
            text = (f"Merged state file {name} ({delta.origin}): {counts['Added'] + len(new)} added, "
                    f"{counts['Superseded']} superseded, {counts['Dropped']} dropped.")
            note = DeltaNote(stamp=delta.stamp, lines=[text, *(f"- {norm(f.text)}" for f in new)],
                             redacted=sum(f.redacted for f in new))
            blocks.append((note, source))
    for note, source in blocks:
        added += _drop_scaffold(section, source)
        edit.insert_note(section, note.stamp, note.lines, newline)
        added.append(Change("Added", section.name, note.stamp, source=source, redacted=note.redacted))
    return added
