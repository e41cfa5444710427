"""Parse CONTEXT.md text into a ``ContextDoc`` and section bodies into ``Item`` lists (DESIGN.md "CONTEXT.md (Tier 1)").

``render(parse(text)) == text`` for every text ``parse`` accepts: lines are kept raw with their line ends (LF, CRLF,
a missing final newline, a BOM, trailing spaces), so a file the merge does not touch is written back unchanged.

The schema starts at the first ``## Contents`` heading or ``## <schema section>`` heading; every line before it is
"content above the schema" (``ContextDoc.above``).  Headings are recognised at column 0 and outside fenced code
blocks only (a ``## Notes`` line inside a ````` fence is text).  A ``##`` heading that is neither Contents nor a
schema section starts an unknown section, kept byte for byte.

Raises ``InputError`` (exit 2) only for a schema section (or Contents) that appears twice: the merge could not
tell which one is meant.  Everything else is accepted: stray text and list items that are not in the section's
entry format become ``text``/``bullet`` items and are never rewritten; out-of-order sections stay where they are.
Missing sections are reported by the caller (``ContextDoc.missing`` and ``heading_hints``).
"""

from __future__ import annotations

import re

from pipeline.context.model import CONTENTS, KEYED, SCHEMA, ContextDoc, Item, Section
from pipeline.errors import InputError

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_FENCE_OPEN = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})[ \t]*")
_H2 = re.compile(r"##[ \t]+(?P<name>[^ \t].*?)(?:[ \t]+#+)?[ \t]*")
_H3 = re.compile(r"###[ \t]+(?P<name>[^ \t].*?)(?:[ \t]+#+)?[ \t]*")
_ANY_HEADING = re.compile(r"[ \t]*(?P<hashes>#{1,6})[ \t]*(?P<name>.*?)[ \t#]*")
_BULLET = re.compile(r"[-*+][ \t]+(?P<rest>.*)")
_KEYED = re.compile(r"\*\*(?P<key>[^*\n]+?)(?P<c1>:?)\*\*(?P<c2>:?)[ \t]*(?P<value>.*)")
_DATE_SUFFIX = re.compile(r"(?P<text>.*?)[ \t]*\(date:[ \t]*(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})\)[ \t]*")
_DEBT = re.compile(
    r"TODO\((?P<type>[^),#]*?)(?:,[ \t]*#(?P<issue>[^)\s]+))?\):[ \t]*(?:(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})(?:[ \t]+|\Z))?"
    r"(?P<what>.*?)(?:[ \t]*\(resolved:[ \t]*(?P<resolved>[0-9]{4}-[0-9]{2}-[0-9]{2})\))?"
    r"(?:[ \t]*\[status:[ \t]*(?P<status>open|resolved)\])?[ \t]*"
)
_SCAFFOLD = re.compile(r"TODO\(scaffold\):")
_RESOLVED = re.compile(r"\[status:[ \t]*resolved\][ \t]*$")
NOTE_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}")
"""A Notes block heading: ``YYYY-MM-DD HH:MM`` (use ``fullmatch``)."""


def strip_end(line: str) -> str:
    """``line`` without its line end (``\\n`` or ``\\r\\n``)."""
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def norm(text: str) -> str:
    """Whitespace-normalized text: runs of whitespace become one space, ends trimmed."""
    return " ".join(text.split())


def key_of(label: str) -> str:
    """Identity of a keyed entry's label: whitespace-normalized and casefolded (``**Redis port**`` = ``**redis  port**``)."""
    return norm(label).casefold()


def raw_lines(text: str) -> list[str]:
    """``text`` split after each ``\n`` (line ends kept; the last piece may have none).  Unlike ``str.splitlines``
    no other character (``\r`` alone, ``\x0b``, ``\u2028``…) ends a line."""
    return _LINE.findall(text)


def split_lines(text: str) -> tuple[list[str], str, bool]:
    """Split ``text`` into raw lines with their ends; return ``(lines, newline, final_newline)``.

    ``newline`` is the end of the first terminated line (``"\\r\\n"`` or ``"\\n"``; ``"\\n"`` when none is).  When
    the text does not end with ``\\n`` the last line gets ``newline`` appended and ``final_newline`` is False.
    """
    lines = raw_lines(text)
    newline = "\n"
    for line in lines:
        if line.endswith("\n"):
            newline = "\r\n" if line.endswith("\r\n") else "\n"
            break
    final = not lines or lines[-1].endswith("\n")
    if not final:
        lines[-1] += newline
    return lines, newline, final


def fenced(lines: list[str]) -> list[bool]:
    """For each raw line: True when it is a fence line or inside a fenced code block (````` or ``~~~``)."""
    flags: list[bool] = []
    fence: str | None = None
    for raw in lines:
        line = strip_end(raw)
        if fence is None:
            match = _FENCE_OPEN.match(line)
            if match:
                fence = match["fence"]
            flags.append(bool(match))
            continue
        flags.append(True)
        close = _FENCE_CLOSE.fullmatch(line)
        if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence):
            fence = None
    return flags


def h2_name(line: str) -> str | None:
    """The text of a ``## `` heading line (closing ``#``s and spaces trimmed), or None."""
    match = _H2.fullmatch(strip_end(line))
    return match["name"] if match else None


def h3_name(line: str) -> str | None:
    """The text of a ``### `` heading line, or None."""
    match = _H3.fullmatch(strip_end(line))
    return match["name"] if match else None


def parse(text: str, *, path: str | None = None) -> ContextDoc:
    """Parse CONTEXT.md ``text`` (module docstring).  ``path`` only names the file in errors.

    Raises ``InputError`` naming the line when Contents or a schema section appears twice.
    """
    lines, newline, final = split_lines(text)
    flags = fenced(lines)
    heads = [(i, name) for i, (raw, inside) in enumerate(zip(lines, flags)) if not inside and (name := h2_name(raw))]
    start = next((i for i, name in heads if name == CONTENTS or name in SCHEMA), None)
    doc = ContextDoc(newline=newline, final_newline=final)
    if start is None:
        doc.above = lines
        return doc
    doc.above = lines[:start]
    marks = [(i, name) for i, name in heads if i >= start]
    seen: dict[str, int] = {}
    for k, (i, name) in enumerate(marks):
        if (name == CONTENTS or name in SCHEMA) and name in seen:
            raise InputError(
                f"duplicate section '## {name}' (first at line {seen[name]}): each schema section appears once; "
                "move the entries of one into the other and delete the second heading",
                path=path or "<string>",
                line=i + 1,
            )
        seen[name] = i + 1
        end = marks[k + 1][0] if k + 1 < len(marks) else len(lines)
        doc.sections.append(Section(name, lines[i], lines[i + 1 : end], line=i + 1))
    return doc


def heading_hints(doc: ContextDoc, names: list[str]) -> list[str]:
    """Why the schema sections ``names`` were not found: lines that look like them but are not ``## <name>``.

    One message per such line, e.g. ``line 12 has '### Notes': a schema section heading is exactly '## Notes'`` or
    ``line 30 has '## Notes' inside a fenced code block (is a fence left open above it?)``.
    """
    wanted = {name.casefold(): name for name in names}
    lines = list(doc.above)
    for section in doc.sections:
        lines.append(section.heading)
        lines.extend(section.body)
    flags = fenced(lines)
    hints = []
    for number, (raw, inside) in enumerate(zip(lines, flags), 1):
        line = strip_end(raw)
        match = _ANY_HEADING.fullmatch(line)
        if match is None or match["name"].casefold() not in wanted:
            continue
        name = wanted[match["name"].casefold()]
        if inside and h2_name(line) == name:
            hints.append(f"line {number} has '## {name}' inside a fenced code block (is a fence left open above it?)")
        elif not inside:
            hints.append(f"line {number} has '{line.strip()}': a schema section heading is exactly '## {name}'")
    return hints


def items(section: Section) -> list[Item]:
    """Parse ``section.body`` into items (``Item`` lists the kinds), covering every body line exactly once.

    A list item runs from a bullet at column 0 over the following indented lines (a multi-line entry); a line that
    is not indented is not part of it (stray text stays its own item).  In Notes, a ``###`` block runs to the next
    ``###`` heading, trailing blank lines excluded.  Lines inside fenced code blocks are ``text``.
    """
    body = section.body
    flags = fenced(body)
    out: list[Item] = []
    sub: str | None = None
    i, n = 0, len(body)
    while i < n:
        line = strip_end(body[i])
        if flags[i]:
            out.append(Item("text", i, i + 1, subsection=sub))
            i += 1
            continue
        if not line.strip():
            out.append(Item("blank", i, i + 1, subsection=sub))
            i += 1
            continue
        heading = h3_name(line)
        if heading is not None:
            if section.name == "Notes":
                end = _note_end(body, flags, i)
                key = heading if NOTE_STAMP.fullmatch(heading) else None
                out.append(Item("note", i, end, key=key, label=heading))
                i = end
            else:
                sub = heading
                out.append(Item("subsection", i, i + 1, label=heading, subsection=sub))
                i += 1
            continue
        bullet = _BULLET.fullmatch(line)
        if bullet is None:
            out.append(Item("text", i, i + 1, subsection=sub))
            i += 1
            continue
        end = i + 1
        while end < n and strip_end(body[end]).strip() and body[end][:1] in (" ", "\t"):
            end += 1
        more = [strip_end(body[k]).strip() for k in range(i + 1, end)]
        out.append(_entry(section.name, bullet["rest"], more, i, end, sub))
        i = end
    return out


def _note_end(body: list[str], flags: list[bool], start: int) -> int:
    end = start + 1
    while end < len(body) and (flags[end] or h3_name(body[end]) is None):
        end += 1
    while end > start + 1 and not flags[end - 1] and not body[end - 1].strip():
        end -= 1
    return end


def _entry(section: str, rest: str, more: list[str], start: int, end: int, sub: str | None) -> Item:
    """Classify one list item of ``section`` (first line ``rest`` after the bullet, continuation lines ``more``)."""
    if _SCAFFOLD.match(rest):
        status = "resolved" if _RESOLVED.search(rest) else None
        return Item("scaffold", start, end, key="todo(scaffold)", label="TODO(scaffold)", status=status, subsection=sub)
    joined = norm(" ".join([rest, *more]))
    if section in KEYED:
        match = _KEYED.fullmatch(rest)
        if match and (match["c1"] or match["c2"]) and match["key"].strip():
            label = norm(match["key"])
            value = norm(" ".join([match["value"], *more]))
            date = None
            if section == "Decisions":
                dated = _DATE_SUFFIX.fullmatch(value)
                if dated:
                    value, date = dated["text"], dated["date"]
            return Item("entry", start, end, key=key_of(label), label=label, value=value, date=date, subsection=sub)
    elif section == "Deferred-Debt":
        match = _DEBT.fullmatch(rest)
        if match:
            tag = norm(match["type"]) + (f",#{match['issue']}" if match["issue"] else "")
            what = norm(match["what"])
            label = f"TODO({tag}): {what}"
            return Item("debt", start, end, key=label.casefold(), label=label, value=what, date=match["date"],
                        status=match["status"], subsection=sub)
    elif section == "Open-Questions":
        dated = _DATE_SUFFIX.fullmatch(joined)
        text, date = (dated["text"], dated["date"]) if dated else (joined, None)
        return Item("question", start, end, key=norm(text), label=norm(text), date=date, subsection=sub)
    return Item("bullet", start, end, subsection=sub)
