"""Read an Agent State file into plain data (DESIGN.md "Agent State file (Tier 2)").

This is THE reader of the state file format: ``pipeline.state.parse.parse`` builds its ``AgentState`` from
``read_sections``, and the restore hook (``duck-tape restore``, issue 7) uses ``read_sections`` directly, with
the standard library alone (its budget is 0.15 s with process start).
One reader, two consumers: the two cannot drift.  The layout constants (``TITLE``, ``NONE``,
``SECTION_NAMES``, ``HEADINGS``, ``OPTIONAL_SECTIONS``) live here for the same reason; ``pipeline.state.model``
and ``pipeline.state.render`` re-export them.

Tolerated on input (hand-written or edited manual files): CRLF or CR line ends, a missing final newline, a
UTF-8 BOM, trailing whitespace, extra blank lines, the optional ``## Suggested Skills`` section missing,
``* `` as well as ``- `` bullets, list lines without a bullet (taken whole), an inline
``- **Done:** <item>``, Position labels left out.  A section body that is the single line ``None`` is empty.
Only the exact heading lines ``## <section name>`` start a section; other ``#`` lines are body text.

Everything else raises ``InputError`` (exit 2) naming the path and the 1-based line and saying what was
expected: a first line other than ``# Agent State``, a bad ``Session:``/``Created:`` header line, text before
the first section, a missing, duplicated or out-of-order section, a Position line that is not one of its
labels or an indented item, a Decision Log line not of the form
``<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>``.  A decision line splits at its first `` - ``.

Light module (hook path): standard library plus ``pipeline.state.store`` and ``pipeline.errors`` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.errors import InputError
from pipeline.state.store import is_iso_timestamp, split_session_label

TITLE = "# Agent State"
NONE = "None"
SECTION_NAMES: tuple[str, ...] = (
    "Approved Workflow",
    "Position",
    "Decision Log",
    "Established Facts",
    "Re-derivation",
    "Suggested Skills",
)
"""The ``##`` sections of a state file, in file order."""
HEADINGS: tuple[str, ...] = tuple(f"## {name}" for name in SECTION_NAMES)
"""The section heading lines, in file order; only these exact lines start a section."""
OPTIONAL_SECTIONS: frozenset[str] = frozenset({"Suggested Skills"})

Line = tuple[int, str]  # (1-based line number, text without line end and trailing whitespace)

_HEADER_RE = re.compile(
    r"Session: (?P<session>\S+) \| Cwd: (?P<cwd>.*) \| Repo/Branch: (?P<rb>.*?)(?: \| Trigger: (?P<trigger>.*?))?"
    r"(?: \| Session-Id: (?P<session_id>.*))?"
)
_CREATED_RE = re.compile(r"Created: (?P<created>\S+)")
_DECISION_RE = re.compile(r"(?P<timestamp>\S+) (?P<status>APPROVED|REJECTED): (?P<rest>.*)")
_POSITION_LABEL_RE = re.compile(r"- \*\*(?P<label>Current|Done|Remaining):\*\*(?: (?P<value>.*))?")
_POSITION_ITEM_RE = re.compile(r"\s+[-*](?: (?P<item>.*))?")
_BULLET_RE = re.compile(r"[-*] (?P<item>.*)")

_HEADER_SHAPE = ("'Session: <YYYY-MM-DD-HHMM>[-auto|-recovered] | Cwd: <path> | Repo/Branch: <repo>@<branch>"
                 "[ | Trigger: <trigger>][ | Session-Id: <id>]'")
_DECISION_SHAPE = "'<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>'"
_POSITION_SHAPE = "'- **Current:** <step>', '- **Done:**', '- **Remaining:**' or an indented '  - <item>'"


@dataclass(slots=True)
class DecisionEntry:
    """One Decision Log line: ISO-8601 ``timestamp``, ``status`` APPROVED|REJECTED, ``what``, ``reasoning``."""

    timestamp: str
    status: str
    what: str
    reasoning: str


@dataclass(slots=True)
class StateSections:
    """A state file as read: header fields and section contents as plain strings and lists.

    ``stamp`` UTC ``YYYY-MM-DD-HHMM``; ``kind`` manual | auto | recovered; ``created`` ISO-8601 as written;
    ``trigger`` None when absent; ``session_id`` the harness session the file belongs to (None when the header
    has no ``Session-Id`` field: a file of an older version or written by hand); ``approved_workflow`` the section's lines joined by ``"\\n"`` (None when the
    section is ``None``); ``current`` None when ``None``; ``facts`` one string per line; list items without
    their bullet.  Same field names as ``pipeline.state.model.AgentState`` (``current``/``done``/``remaining``
    are ``AgentState.position``'s).
    """

    stamp: str
    kind: str
    cwd: str
    repo: str
    branch: str
    trigger: str | None
    created: str
    session_id: str | None = None
    approved_workflow: str | None = None
    current: str | None = None
    done: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    decisions: list[DecisionEntry] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    rederivation: list[str] = field(default_factory=list)
    suggested_skills: list[str] = field(default_factory=list)


class _Reader:
    """Builds the ``InputError`` for a line; without a path the text is called ``<string>`` so the line shows."""

    def __init__(self, path: str | None) -> None:
        self.path = path or "<string>"

    def fail(self, line: int, message: str) -> InputError:
        return InputError(message, path=self.path, line=line)


def read_sections(text: str, *, path: str | None = None) -> StateSections:
    """Read Agent State file ``text`` into a ``StateSections``.

    ``path`` is only used in error messages (``<path>:<line>: <what was expected>``; ``<string>`` when None).
    Raises ``InputError`` (module docstring lists the cases).
    """
    reader = _Reader(path)
    lines: list[Line] = [(n, raw.rstrip()) for n, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1)]
    eof = max(len(lines), 1)
    filled = [(n, line) for n, line in lines if line]

    if not filled or filled[0][1] != TITLE:
        raise reader.fail(filled[0][0] if filled else 1, f"expected '{TITLE}' as the first line")
    if len(filled) < 2:
        raise reader.fail(eof, f"expected the header line {_HEADER_SHAPE} after '{TITLE}'")
    header = _parse_header(reader, filled[1])
    if len(filled) < 3:
        raise reader.fail(eof, "expected 'Created: <ISO-8601>' after the Session header line")
    created = _parse_created(reader, filled[2])

    bodies = _split_sections(reader, lines, after=filled[2][0], eof=eof)
    current, done, remaining = _parse_position(reader, bodies["Position"])
    return StateSections(
        **header,
        created=created,
        approved_workflow=_parse_workflow(bodies["Approved Workflow"]),
        current=current,
        done=done,
        remaining=remaining,
        decisions=[_parse_decision(reader, line) for line in _entries(bodies["Decision Log"])],
        facts=[text for _, text in _entries(bodies["Established Facts"])],
        rederivation=_parse_list(bodies["Re-derivation"]),
        suggested_skills=_parse_list(bodies.get("Suggested Skills", [])),
    )


def _parse_header(reader: _Reader, line: Line) -> dict[str, str | None]:
    number, text = line
    match = _HEADER_RE.fullmatch(text)
    if match is None:
        raise reader.fail(number, f"expected the header line {_HEADER_SHAPE}")
    label = split_session_label(match["session"])
    if label is None:
        raise reader.fail(number, "expected 'Session: <YYYY-MM-DD-HHMM>', '<YYYY-MM-DD-HHMM>-auto' or '-recovered' (UTC stamp)")
    repo, at, branch = match["rb"].partition("@")
    if not at:
        raise reader.fail(number, "expected 'Repo/Branch: <repo>@<branch>' in the header line")
    stamp, kind = label
    return {
        "stamp": stamp,
        "kind": kind,
        "cwd": match["cwd"],
        "repo": repo,
        "branch": branch,
        "trigger": match["trigger"] or None,
        "session_id": (match["session_id"] or "").strip() or None,
    }


def _parse_created(reader: _Reader, line: Line) -> str:
    number, text = line
    match = _CREATED_RE.fullmatch(text)
    if match is None or not is_iso_timestamp(match["created"]):
        raise reader.fail(number, "expected 'Created: <ISO-8601>' (e.g. Created: 2026-11-29T20:31:00Z)")
    return match["created"]


def _split_sections(reader: _Reader, lines: list[Line], *, after: int, eof: int) -> dict[str, list[Line]]:
    """Map each section name present to its body lines (leading/trailing blank lines removed).

    Checks that sections come in ``SECTION_NAMES`` order, once each, with only blank lines before the first and
    every section but the optional ones present.
    """
    rest = [(n, line) for n, line in lines if n > after]
    starts = [(i, n, line[3:]) for i, (n, line) in enumerate(rest) if line in HEADINGS]
    first = starts[0][0] if starts else len(rest)
    for n, line in rest[:first]:
        if line:
            raise reader.fail(n, f"expected a section heading ('{HEADINGS[0]}') after the header")

    present = {name for _, _, name in starts}
    bodies: dict[str, list[Line]] = {}
    previous = -1
    for k, (i, number, name) in enumerate(starts):
        if name in bodies:
            raise reader.fail(number, f"duplicate section '## {name}': each section appears once")
        index = SECTION_NAMES.index(name)
        _require(reader, SECTION_NAMES[previous + 1 : index], present, number, "before this line")
        previous = index
        end = starts[k + 1][0] if k + 1 < len(starts) else len(rest)
        bodies[name] = _trim(rest[i + 1 : end])
    _require(reader, SECTION_NAMES[previous + 1 :], present, eof, "at the end of the file")
    return bodies


def _require(reader: _Reader, skipped: tuple[str, ...], present: set[str], number: int, where: str) -> None:
    """Fail when a required section that belongs before ``number`` was skipped: out of order or missing."""
    missing = [name for name in skipped if name not in OPTIONAL_SECTIONS]
    if not missing:
        return
    names = ", ".join(f"'## {name}'" for name in missing)
    if any(name in present for name in missing):
        order = ", ".join(SECTION_NAMES)
        raise reader.fail(number, f"section(s) {names} out of order, expected {where} (order: {order})")
    raise reader.fail(number, f"missing required section(s) {names}, expected {where}")


def _trim(body: list[Line]) -> list[Line]:
    start, end = 0, len(body)
    while start < end and not body[start][1]:
        start += 1
    while end > start and not body[end - 1][1]:
        end -= 1
    return body[start:end]


def _is_none(body: list[Line]) -> bool:
    return not body or (len(body) == 1 and body[0][1] == NONE)


def _entries(body: list[Line]) -> list[Line]:
    """The non-blank lines of a one-entry-per-line section (none for a ``None`` body)."""
    return [] if _is_none(body) else [(n, line) for n, line in body if line]


def _parse_workflow(body: list[Line]) -> str | None:
    return None if _is_none(body) else "\n".join(line for _, line in body)


def _parse_list(body: list[Line]) -> list[str]:
    items = []
    for _, line in _entries(body):
        match = _BULLET_RE.fullmatch(line)
        items.append(match["item"] if match else line)
    return items


def _parse_position(reader: _Reader, body: list[Line]) -> tuple[str | None, list[str], list[str]]:
    """``(current, done, remaining)`` of the Position section."""
    current: str | None = None
    lists: dict[str, list[str]] = {"Done": [], "Remaining": []}
    target: list[str] | None = None
    seen: set[str] = set()
    for number, line in _entries(body):
        label = _POSITION_LABEL_RE.fullmatch(line)
        if label is not None:
            name, value = label["label"], (label["value"] or "").strip()
            if name in seen:
                raise reader.fail(number, f"duplicate '- **{name}:**' in Position")
            seen.add(name)
            value = "" if value == NONE else value
            if name == "Current":
                current, target = value or None, None
            else:
                target = lists[name]
                if value:
                    target.append(value)
            continue
        item = _POSITION_ITEM_RE.fullmatch(line)
        if item is None or target is None:
            raise reader.fail(number, f"expected {_POSITION_SHAPE} in Position")
        if item["item"]:
            target.append(item["item"])
    return current, lists["Done"], lists["Remaining"]


def _parse_decision(reader: _Reader, line: Line) -> DecisionEntry:
    number, text = line
    match = _DECISION_RE.fullmatch(text)
    if match is None or not is_iso_timestamp(match["timestamp"]) or " - " not in match["rest"]:
        raise reader.fail(number, f"expected a Decision Log line {_DECISION_SHAPE}")
    what, _, reasoning = match["rest"].partition(" - ")
    return DecisionEntry(timestamp=match["timestamp"], status=match["status"], what=what, reasoning=reasoning)


def header_session_id(head: str) -> str | None:
    """The ``Session-Id`` of a state file from the start of its text (the first few kB are enough): the value of
    the header line's ``| Session-Id:`` field, None when the header has none or ``head`` is not a state file's
    start.  Never raises; for checking which session a file belongs to without reading it whole (issue 14)."""
    return header_fields(head)[0]


def header_fields(head: str) -> tuple[str | None, str | None]:
    """``(Session-Id, Cwd)`` of a state file from the start of its text, each None when absent (or ``head`` is not
    a state file's start).  Never raises (issue 22: which session and which folder a file says it belongs to)."""
    filled = []
    for line in head.removeprefix("\ufeff").splitlines():
        if line.strip():
            filled.append(line.rstrip())
            if len(filled) == 2:
                break
    if len(filled) < 2 or filled[0] != TITLE:
        return None, None
    match = _HEADER_RE.fullmatch(filled[1])
    if match is None:
        return None, None
    return (match["session_id"] or "").strip() or None, match["cwd"].strip() or None
