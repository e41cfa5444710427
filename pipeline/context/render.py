"""Render a ``ContextDoc`` back to text, and format the lines the merge writes (DESIGN.md "CONTEXT.md (Tier 1)").

Line formats (without line end; callers add the document's own):

* keyed entry: ``- **<key>**: <text>``; a Decisions entry ends ``(date: YYYY-MM-DD)``;
* Open-Questions: ``- <question> (date: YYYY-MM-DD)``;
* Deferred-Debt status marker: `` [status: open|resolved]`` at the end of the entry's first line, a resolved one
  preceded by `` (resolved: YYYY-MM-DD)``, the date of the state that showed it done;
* scaffold: ``- TODO(scaffold): <YYYY-MM-DD> context bootstrap pending first explicit <noun>``;
* Notes block: ``### YYYY-MM-DD HH:MM`` then its text lines;
* TOC: ``- [<Section>](#<anchor>)`` per ``##`` heading after ``## Contents``, anchors as GitHub makes them.
"""

from __future__ import annotations

import re

from pipeline.context.model import NOUNS, ContextDoc
from pipeline.context.parse import strip_end

_STATUS = re.compile(r"(?:[ \t]*\(resolved:[ \t]*[0-9]{4}-[0-9]{2}-[0-9]{2}\))?[ \t]*\[status:[ \t]*(?:open|resolved)\][ \t]*$")


def render(doc: ContextDoc) -> str:
    """The text of ``doc``: its raw lines joined; a doc parsed without a final newline gets none back."""
    parts = list(doc.above)
    for section in doc.sections:
        parts.append(section.heading)
        parts.extend(section.body)
    text = "".join(parts)
    if not doc.final_newline and text.endswith(doc.newline):
        text = text[: -len(doc.newline)]
    return text


def entry_line(key: str, text: str, date: str | None = None) -> str:
    """``- **<key>**: <text>`` plus `` (date: <date>)`` when a date is given (Decisions)."""
    line = f"- **{key}**: {text}"
    return f"{line} (date: {date})" if date else line


def question_line(text: str, date: str) -> str:
    """``- <question> (date: YYYY-MM-DD)``."""
    return f"- {text} (date: {date})"


def scaffold_line(section: str, date: str) -> str:
    """The bootstrap placeholder of an empty section (DESIGN.md: ``TODO(scaffold): <date> context bootstrap ...``)."""
    return f"- TODO(scaffold): {date} context bootstrap pending first explicit {NOUNS[section]}"


def status_marker(status: str, resolved: str | None = None) -> str:
    """`` [status: <status>]``, preceded by `` (resolved: <date>)`` when a resolution date is given."""
    return (f" (resolved: {resolved})" if resolved else "") + f" [status: {status}]"


def with_status(first_line: str, status: str, resolved: str | None = None) -> str:
    """A Deferred-Debt entry's raw first line with its status marker set to ``status`` (line end kept); ``resolved``
    (YYYY-MM-DD): the date a later state showed it done, written before the marker (``… (resolved: 2026-03-11)
    [status: resolved]``)."""
    line = strip_end(first_line)
    ending = first_line[len(line) :]
    return f"{_STATUS.sub('', line)}{status_marker(status, resolved)}{ending}"


def note_heading(stamp: str) -> str:
    """``### YYYY-MM-DD HH:MM``."""
    return f"### {stamp}"


def anchor(name: str) -> str:
    """GitHub's heading anchor: lowercase, punctuation other than ``-``/``_`` dropped, spaces to ``-``."""
    kept = re.sub(r"[^\w\- ]", "", name.strip().lower())
    return kept.replace(" ", "-")


def toc_lines(names: list[str]) -> list[str]:
    """The ``## Contents`` body: one ``- [<name>](#<anchor>)`` line per heading name."""
    return [f"- [{name}](#{anchor(name)})" for name in names]


def debt_line(type_: str, issue: str | None, date: str, what: str, status: str | None = None,
              resolved: str | None = None) -> str:
    """``- TODO(<type>[,#<issue>]): <date> <what>`` (a Deferred-Debt entry), with `` [status: <status>]`` when
    ``status`` is given and `` (resolved: <date>)`` before it when ``resolved`` is."""
    tag = f"{type_},#{issue}" if issue else type_
    line = f"- TODO({tag}): {date} {what}"
    return line + status_marker(status, resolved) if status else line
