"""``duck-tape prune``: list Notes blocks and remove chosen ones (DESIGN.md "CONTEXT.md (Tier 1)": prune removes
chosen Notes blocks only).

A block is chosen by its heading timestamp ``YYYY-MM-DD HH:MM`` (``YYYY-MM-DDTHH:MM`` is accepted too); every block
with that heading goes.  Nothing outside the Notes section is touched; the blank line that separated a removed
block goes with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.context import edit
from pipeline.context.changelog import Change, changelog_lines
from pipeline.context.parse import NOTE_STAMP, items, norm, parse, strip_end
from pipeline.context.render import render
from pipeline.errors import InputError


@dataclass(frozen=True, slots=True)
class NoteInfo:
    """A Notes block: heading text (the timestamp), number of text lines, first text line (whitespace-normalized)."""

    stamp: str
    lines: int
    first: str


def list_notes(text: str, *, path: str) -> list[NoteInfo]:
    """The Notes blocks of CONTEXT.md ``text`` in file order.  Raises ``InputError`` when there is no Notes section."""
    doc = parse(text, path=path)
    notes = doc.get("Notes")
    if notes is None:
        raise InputError("has no '## Notes' section: nothing to prune (run `duck-tape migrate` first)", path=path)
    out = []
    for item in items(notes):
        if item.kind != "note":
            continue
        body = [norm(strip_end(line)) for line in notes.body[item.start + 1 : item.end]]
        filled = [line for line in body if line]
        out.append(NoteInfo(item.label or "", len(filled), filled[0] if filled else ""))
    return out


def normalize_stamp(value: str) -> str:
    """``YYYY-MM-DD HH:MM`` from ``value`` (``T`` accepted for the space).  Raises ``InputError`` otherwise."""
    stamp = value.strip().replace("T", " ", 1)
    if not NOTE_STAMP.fullmatch(stamp):
        raise InputError(f"--drop {value!r}: expected a Notes timestamp 'YYYY-MM-DD HH:MM' (see `duck-tape prune --list`)")
    return stamp


def plan_prune(text: str, drops: list[str], *, path: str) -> tuple[str, list[str]]:
    """Remove the Notes blocks whose heading is one of ``drops``; return ``(new_text, changelog_lines)``.

    Changelog: ``- Dropped: Notes <stamp> (pruned)`` per removed block.  Raises ``InputError`` for a malformed
    stamp, a missing Notes section, or a stamp that matches no block (listing the ones that exist).
    """
    wanted = list(dict.fromkeys(normalize_stamp(value) for value in drops))
    doc = parse(text, path=path)
    notes = doc.get("Notes")
    if notes is None:
        raise InputError("has no '## Notes' section: nothing to prune", path=path)
    present = [it.key for it in items(notes) if it.kind == "note"]
    unknown = [stamp for stamp in wanted if stamp not in present]
    if unknown:
        have = ", ".join(k for k in present if k) or "none"
        raise InputError(f"no Notes block at {', '.join(unknown)} (blocks: {have})", path=path)
    changes = []
    for stamp in wanted:
        while (block := next((it for it in items(notes) if it.kind == "note" and it.key == stamp), None)) is not None:
            edit.remove_item(notes, block, tidy=True)
            changes.append(Change("Dropped", "Notes", stamp, reason="pruned"))
    return render(doc), changelog_lines(changes)
