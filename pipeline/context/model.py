"""CONTEXT.md document model (DESIGN.md "CONTEXT.md (Tier 1)").

A CONTEXT.md is kept as raw lines so that every byte the merge does not touch is written back as it was:
``ContextDoc.above`` holds the lines before the schema (title, free text, unknown sections placed there) and
``ContextDoc.sections`` the ``##`` sections from ``## Contents`` (or the first schema section) on, each as its
raw heading line and raw body lines.  Every raw line keeps its line end (``"\\n"`` or ``"\\r\\n"``).

``Item`` is the parsed view of one piece of a section body (an entry, a Notes block, a subsection heading, stray
text…), produced by ``pipeline.context.parse.items``; edits splice the raw lines and re-parse.
Standard library only (no pydantic): prune and the CLI help stay cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SCHEMA: tuple[str, ...] = ("Goals", "Decisions", "Conventions", "Glossary", "Deferred-Debt", "Open-Questions", "Notes")
"""The seven schema sections, in file order (DESIGN.md "CONTEXT.md (Tier 1)")."""

CONTENTS = "Contents"
"""Name of the table-of-contents section that precedes the seven."""

KEYED: frozenset[str] = frozenset({"Goals", "Decisions", "Conventions", "Glossary"})
"""Sections of ``- **<key>**: <text>`` entries, deduplicated by key."""

NOUNS: dict[str, str] = {
    "Goals": "goal",
    "Decisions": "decision",
    "Conventions": "convention",
    "Glossary": "term",
    "Deferred-Debt": "debt",
    "Open-Questions": "question",
    "Notes": "note",
}
"""What a section holds, for the bootstrap scaffold line (``... pending first explicit <noun>``)."""

ItemKind = Literal["blank", "text", "bullet", "entry", "debt", "question", "scaffold", "subsection", "note"]


@dataclass(slots=True)
class Section:
    """One ``##`` section: ``name`` is the heading text, ``heading`` the raw heading line, ``body`` its raw lines
    up to the next ``##`` heading (blank separator lines included).  ``line`` is the 1-based line number of the
    heading in the parsed text (0 for a section created in memory)."""

    name: str
    heading: str
    body: list[str] = field(default_factory=list)
    line: int = 0


@dataclass(slots=True)
class ContextDoc:
    """A whole CONTEXT.md.

    ``above``: raw lines before the schema (byte for byte).  ``sections``: ``## Contents``, the schema sections and
    unknown sections, in file order.  ``newline``: the line end new lines get (the file's own: ``"\\n"`` or
    ``"\\r\\n"``).  ``final_newline``: False when the parsed text did not end with a line end; the last raw line
    then carries one in memory and ``render`` takes it off again.
    """

    above: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    newline: str = "\n"
    final_newline: bool = True

    def get(self, name: str) -> Section | None:
        """The section called ``name`` (exact heading text), or None."""
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def names(self) -> list[str]:
        """The ``##`` heading names of the schema part, in file order."""
        return [section.name for section in self.sections]

    def missing(self) -> list[str]:
        """Schema sections (``SCHEMA`` order) that have no ``## <name>`` heading."""
        present = set(self.names())
        return [name for name in SCHEMA if name not in present]


@dataclass(frozen=True, slots=True)
class Item:
    """A parsed piece of a section body: raw lines ``body[start:end]``.

    kinds: ``blank`` (one empty line); ``text`` (a stray line, or a line inside a fenced block); ``bullet`` (a list
    item that is not in the section's entry format, kept as is); ``entry`` (``- **<label>**: <value>``, ``date``
    from a trailing ``(date: YYYY-MM-DD)``); ``debt`` (``- TODO(<type>[,#<issue>]): <date> <what> [status: …]``,
    ``label`` = ``TODO(<type>[,#<issue>]): <what>`` and ``value`` = what, both from the first line, ``status``); ``question``
    (``- <question> (date: …)``); ``scaffold`` (a bootstrap ``TODO(scaffold)`` line); ``subsection`` (a ``###``
    heading in a section other than Notes); ``note`` (a ``###`` Notes block with its body, ``label`` = heading
    text, ``key`` = ``YYYY-MM-DD HH:MM`` when the heading is a timestamp).

    ``key`` is the identity used for deduplication (casefolded key, whitespace-normalized question text, normalized
    debt label); ``subsection`` is the ``###`` heading the item sits under (None above the first one).
    """

    kind: ItemKind
    start: int
    end: int
    key: str | None = None
    label: str | None = None
    value: str | None = None
    date: str | None = None
    status: str | None = None
    subsection: str | None = None
