"""Line-level edits of a section body: insert, replace and remove items without touching other lines.

Every edit splices ``Section.body`` (raw lines with their ends) and writes new lines with the document's newline,
so the lines around an edit stay byte for byte as they were.  Layout rules (DESIGN.md "CONTEXT.md (Tier 1)"):
entries contiguous; a new ``###`` subsection or Notes block is separated from what precedes it by one blank line;
the blank line that separates a section from the next one stays where it is.
"""

from __future__ import annotations

from pipeline.context.model import Item, Section
from pipeline.context.parse import items, norm, strip_end
from pipeline.context.render import note_heading, with_status


def _blank(line: str) -> bool:
    return not strip_end(line).strip()


def _last_filled(body: list[str], lo: int, hi: int) -> int | None:
    """Index of the last non-blank line in ``body[lo:hi]``, or None."""
    for i in range(hi - 1, lo - 1, -1):
        if not _blank(body[i]):
            return i
    return None


def _splice(section: Section, at: int, texts: list[str], newline: str, *, remove: int = 0) -> None:
    section.body[at : at + remove] = [text + newline for text in texts]


def insert_entry(section: Section, line: str, newline: str, *, subsection: str | None = None) -> None:
    """Append entry ``line`` (no line end) to ``section``.

    Without ``subsection``: after the last line above the first ``###`` subsection (right under the heading when
    there is none).  With ``subsection``: at the end of that existing subsection (names compared whitespace-
    normalized), or, when it does not exist yet, as a new ``### <subsection>`` at the end of the section.  A blank
    line is put between the entry and stray text or a ``###`` heading it would otherwise touch.
    """
    parsed = items(section)
    subs = [it for it in parsed if it.kind == "subsection"]
    body = section.body
    if subsection is not None:
        target = next((k for k, it in enumerate(subs) if norm(it.label or "") == norm(subsection)), None)
        if target is None:
            last = _last_filled(body, 0, len(body))
            texts = ([""] if last is not None else []) + [f"### {subsection}", line]
            _splice(section, 0 if last is None else last + 1, texts, newline)
            return
        lo = subs[target].start
        hi = subs[target + 1].start if target + 1 < len(subs) else len(body)
    else:
        lo, hi = 0, (subs[0].start if subs else len(body))
    last = _last_filled(body, lo, hi)
    at = lo if last is None else last + 1
    texts = [line]
    before = next((it for it in parsed if it.start <= at - 1 < it.end), None) if at > 0 else None
    if before is not None and before.kind == "text":
        texts.insert(0, "")
    if at < len(body) and not _blank(body[at]) and any(it.start == at and it.kind == "subsection" for it in parsed):
        texts.append("")
    _splice(section, at, texts, newline)


def replace_item(section: Section, item: Item, texts: list[str], newline: str) -> None:
    """Replace the lines of ``item`` with ``texts`` (each given without a line end)."""
    _splice(section, item.start, texts, newline, remove=item.end - item.start)


def remove_item(section: Section, item: Item, *, tidy: bool = False) -> None:
    """Delete the lines of ``item``.  ``tidy`` (Notes blocks) also removes one blank line that separated it."""
    body = section.body
    start, end = item.start, item.end
    if tidy:
        if start > 0 and _blank(body[start - 1]):
            start -= 1
        elif end < len(body) and _blank(body[end]) and _last_filled(body, end, len(body)) is not None:
            end += 1
    del body[start:end]


def set_status(section: Section, item: Item, status: str, resolved: str | None = None) -> None:
    """Give the Deferred-Debt entry ``item`` the status marker ``[status: <status>]`` on its first line, preceded by
    ``(resolved: <date>)`` when ``resolved`` is given."""
    section.body[item.start] = with_status(section.body[item.start], status, resolved)


def insert_note(section: Section, stamp: str, texts: list[str], newline: str) -> None:
    """Add a Notes block ``### <stamp>`` + ``texts`` in timestamp order: before the first block whose timestamp is
    later than ``stamp``, otherwise after the last line of the section (blocks with the same stamp stay first)."""
    body = section.body
    later = next((it for it in items(section) if it.kind == "note" and it.key is not None and it.key > stamp), None)
    block = [note_heading(stamp), *texts]
    if later is not None:
        at = later.start
        lead = [""] if at > 0 and not _blank(body[at - 1]) else []
        _splice(section, at, lead + block + [""], newline)
        return
    last = _last_filled(body, 0, len(body))
    _splice(section, 0 if last is None else last + 1, ([""] if last is not None else []) + block, newline)


def set_lines(section: Section, texts: list[str], newline: str) -> None:
    """Replace everything of the body up to its trailing blank lines with ``texts`` (used for ``## Contents``)."""
    last = _last_filled(section.body, 0, len(section.body))
    _splice(section, 0, texts, newline, remove=0 if last is None else last + 1)
