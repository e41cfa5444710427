"""Bootstrap a missing CONTEXT.md, add missing schema sections, keep the TOC (DESIGN.md "CONTEXT.md (Tier 1)").

A new file is ``# Project Context[: <repo>]``, a blank line, ``## Contents`` linking the sections, then the seven
sections; a section still empty after the merge gets the scaffold line
``- TODO(scaffold): <date> context bootstrap pending first explicit <noun>`` (Goals and Conventions are never
inferred, so they keep theirs until someone writes one).  The TOC is regenerated only when the set of ``##``
headings changes; it lists every ``##`` heading after ``## Contents``, in file order.
"""

from __future__ import annotations

from pipeline.context import edit
from pipeline.context.changelog import Change
from pipeline.context.model import CONTENTS, SCHEMA, ContextDoc, Section
from pipeline.context.parse import strip_end
from pipeline.context.render import scaffold_line, toc_lines

DEFAULT_TITLE = "# Project Context"


def title_for(repos: list[str | None]) -> str:
    """``# Project Context: <repo>`` for the first known repository name, else ``# Project Context``."""
    repo = next((r for r in repos if r and r != "unknown"), None)
    return f"{DEFAULT_TITLE}: {repo}" if repo else DEFAULT_TITLE


def skeleton(title: str = DEFAULT_TITLE, newline: str = "\n") -> ContextDoc:
    """A new document: title, ``## Contents`` with the TOC, the seven sections with empty bodies."""
    doc = ContextDoc(above=[title + newline, newline], newline=newline)
    doc.sections.append(Section(CONTENTS, f"## {CONTENTS}{newline}", [line + newline for line in toc_lines(list(SCHEMA))] + [newline]))
    for name in SCHEMA:
        doc.sections.append(Section(name, f"## {name}{newline}", [newline]))
    doc.sections[-1].body = []
    return doc


def _empty(section: Section) -> bool:
    return not any(strip_end(line).strip() for line in section.body)


def fill_scaffold(doc: ContextDoc, date: str, names: list[str] | None = None) -> list[Change]:
    """Give each empty schema section among ``names`` (default: all seven) its scaffold line; one ``Added`` change each."""
    changes = []
    for name in names if names is not None else SCHEMA:
        section = doc.get(name)
        if section is not None and _empty(section):
            edit.insert_entry(section, scaffold_line(name, date), doc.newline)
            changes.append(Change("Added", name, "TODO(scaffold)"))
    return changes


def add_sections(doc: ContextDoc, names: list[str]) -> None:
    """Insert empty ``## <name>`` sections for the schema ``names`` missing from ``doc``, each after the schema
    section that precedes it in ``SCHEMA`` order (after ``## Contents`` or at the end of the file otherwise).
    Keeps one blank line between sections and none at the end of the file."""
    newline = doc.newline
    for name in names:
        if doc.get(name) is not None:
            continue
        earlier = [s for s in SCHEMA[: SCHEMA.index(name)] if doc.get(s) is not None]
        later = [s for s in SCHEMA[SCHEMA.index(name) + 1 :] if doc.get(s) is not None]
        if earlier:
            at = doc.sections.index(doc.get(earlier[-1])) + 1  # type: ignore[arg-type]
        elif later:
            at = doc.sections.index(doc.get(later[0]))  # type: ignore[arg-type]
        else:
            at = len(doc.sections)
        _separate(doc, at)
        last = at == len(doc.sections)
        doc.sections.insert(at, Section(name, f"## {name}{newline}", [] if last else [newline]))


def _separate(doc: ContextDoc, at: int) -> None:
    """Make sure what precedes position ``at`` (a section body or the lines above) ends with a blank line."""
    if at > 0:
        body = doc.sections[at - 1].body
        if not body or strip_end(body[-1]).strip():
            body.append(doc.newline)
    elif doc.above and strip_end(doc.above[-1]).strip():
        doc.above.append(doc.newline)


def ensure_toc(doc: ContextDoc, old_names: list[str]) -> bool:
    """Regenerate ``## Contents`` when the set of ``##`` headings differs from ``old_names``; add it before the
    first schema section when it is missing.  Returns True when the TOC was (re)written."""
    if set(doc.names()) == set(old_names) and doc.get(CONTENTS) is not None:
        return False
    contents = doc.get(CONTENTS)
    if contents is None:
        first = next((i for i, s in enumerate(doc.sections) if s.name in SCHEMA), len(doc.sections))
        _separate(doc, first)
        contents = Section(CONTENTS, f"## {CONTENTS}{doc.newline}", [doc.newline])
        doc.sections.insert(first, contents)
    start = doc.sections.index(contents) + 1
    edit.set_lines(contents, toc_lines([s.name for s in doc.sections[start:]]), doc.newline)
    if not contents.body or strip_end(contents.body[-1]).strip():
        contents.body.append(doc.newline)
    return True
