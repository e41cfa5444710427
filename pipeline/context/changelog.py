"""The merge changelog (DESIGN.md "CONTEXT.md (Tier 1)", "Changelog"), byte for byte.

Printed after every merge: ``Changelog:`` then one line per change::

    - Added: <Section> <key>
    - Superseded: <Section> <key> (<old> -> <new>)
    - Dropped: <Section> <key> (<reason>)
    - Redacted: <Section> <N> secret(s)

or the single line ``No changes to CONTEXT.md.``.  Redacted lines come last, one per section (schema order), and
count the secrets masked with ``<REDACTED>`` in what this merge writes.

A dry run (and the preview before a write) also lists what the translation left out, one line per item:
``- Skipped: <source>: <what> (<reason>)``, e.g. ``- Skipped: Decision Log: APPROVED: commit all these changes
(procedural approval)`` (``skipped_lines``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.context.model import SCHEMA

HEADER = "Changelog:"
NO_CHANGES = "No changes to CONTEXT.md."


@dataclass(frozen=True, slots=True)
class Change:
    """One change the merge made.  ``old``/``new``: the superseded and the new text; ``reason``: why it was
    dropped; ``source``: index of the delta (state) that caused it, None for scaffold and migrate bookkeeping;
    ``redacted``: secrets masked in the written text."""

    kind: Literal["Added", "Superseded", "Dropped"]
    section: str
    key: str
    old: str | None = None
    new: str | None = None
    reason: str | None = None
    source: int | None = None
    redacted: int = 0


def _order(section: str) -> int:
    return SCHEMA.index(section) if section in SCHEMA else len(SCHEMA)


def changelog_lines(changes: list[Change], masked: dict[str, int] | None = None) -> list[str]:
    """The changelog lines after ``Changelog:`` (module docstring), or ``[NO_CHANGES]`` when there is nothing.

    ``changes`` are listed in section order (stable within a section); ``masked`` adds secrets masked outside the
    changed entries (per section name) to the Redacted counts.
    """
    lines = []
    for change in sorted(changes, key=lambda c: _order(c.section)):
        if change.kind == "Added":
            lines.append(f"- Added: {change.section} {change.key}")
        elif change.kind == "Superseded":
            lines.append(f"- Superseded: {change.section} {change.key} ({change.old} -> {change.new})")
        else:
            lines.append(f"- Dropped: {change.section} {change.key} ({change.reason})")
    counts: dict[str, int] = {}
    for change in changes:
        if change.redacted:
            counts[change.section] = counts.get(change.section, 0) + change.redacted
    for section, n in (masked or {}).items():
        counts[section] = counts.get(section, 0) + n
    for section in sorted(counts, key=_order):
        lines.append(f"- Redacted: {section} {counts[section]} secret(s)")
    return lines or [NO_CHANGES]


SKIPPED_WIDTH = 100
"""At most this many characters of a left-out item's text in its ``Skipped:`` line."""


def skipped_lines(skipped: list) -> list[str]:
    """``- Skipped: <source>: <what> (<reason>)`` for each ``DeltaSkip`` (``pipeline.context.delta``) in order,
    repeats once; ``<what>`` is cut to ``SKIPPED_WIDTH`` characters with an ellipsis."""
    lines: list[str] = []
    for item in skipped:
        text = item.text if len(item.text) <= SKIPPED_WIDTH else item.text[: SKIPPED_WIDTH - 1].rstrip() + "…"
        line = f"- Skipped: {item.source}: {text} ({item.reason})"
        if line not in lines:
            lines.append(line)
    return lines


def format_dry_run(lines: list[str], skipped: list[str]) -> str:
    """What a dry run prints: the changelog (``format_changelog``: ``Changelog:`` and its lines, or ``No changes to
    CONTEXT.md.``) followed by the ``Skipped:`` lines."""
    return "\n".join([format_changelog(lines), *skipped])


def format_changelog(lines: list[str]) -> str:
    """What the CLI prints: ``Changelog:`` and the lines, or ``No changes to CONTEXT.md.`` alone (no final newline)."""
    if lines == [NO_CHANGES]:
        return NO_CHANGES
    return "\n".join([HEADER, *lines])
