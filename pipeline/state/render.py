"""Render an ``AgentState`` as the Agent State markdown file (DESIGN.md "Agent State file (Tier 2)").

The layout is fixed byte for byte (other tools parse it)::

    # Agent State

    Session: <stamp>[-auto|-recovered] | Cwd: <path> | Repo/Branch: <repo>@<branch>[ | Trigger: <trigger>][ | Session-Id: <id>]
    Created: <ISO-8601>

    ## Approved Workflow
    <text as is, possibly several lines, or None>

    ## Position
    - **Current:** <one line or None>
    - **Done:**            (or "- **Done:** None")
      - <item, oldest first>
    - **Remaining:**       (or "- **Remaining:** None")
      - <item, next first>

    ## Decision Log
    <ISO-8601> APPROVED|REJECTED: <what> - <reasoning>

    ## Established Facts
    <one fact per line>

    ## Re-derivation
    - <item>

    ## Suggested Skills       (omitted when there are none)
    - <item>

An empty section body is the single line ``None``; exactly one blank line between sections; no trailing
whitespace; the file ends with exactly one ``"\\n"``.

Normalisations render applies so that ``parse`` reads every field back unambiguously (``render(parse(render(s)))
== render(s)`` for every state render accepts):

* single-line fields (header values, Current, list items, decision what/reasoning, facts) go through
  ``one_line``; items that end up empty are dropped, an empty Current is ``None``;
* a decision ``what`` never contains `` - `` (nor ends with `` -``): the hyphen becomes an en dash ``–``, so the
  line splits at its first `` - ``; an empty ``what`` or ``reasoning`` is written ``None``;
* ``|`` in repo, branch and trigger becomes ``¦`` (the header is split at `` | `` labels) and ``@`` in repo becomes
  ``＠`` (U+FF20; ``<repo>@<branch>`` splits at its first ``@``, branch names may hold ``@``); an empty cwd, repo
  or branch is written ``unknown``; an empty trigger is left out;
* ``Session-Id`` (issue 14: which harness session the file belongs to) comes last, so that the fixed fields before
  it stay byte for byte what they were; an older reader sees it as the end of the Trigger (or branch) value.  Its
  value is one line without ``|``; no session id, no field;
* Approved Workflow keeps its lines and their indentation, minus trailing whitespace and leading/trailing blank
  lines; any workflow line or fact that reads exactly like a section heading (``## Position``...) gets one more
  ``#`` (``### Position``) so it cannot end its section.

Structural fields are not repaired but refused with ``ValueError`` (they come from code, not from the
transcript): ``stamp`` must be ``YYYY-MM-DD-HHMM``, ``created`` and decision timestamps ISO-8601.
Evidence, origin and fact kinds are not part of the file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pipeline.state.sections import HEADINGS, NONE, TITLE
from pipeline.state.store import is_iso_timestamp, session_label

if TYPE_CHECKING:
    from pipeline.state.model import AgentState, Decision

# TITLE, NONE and HEADINGS (the section heading lines, in file order) come from pipeline.state.sections, the
# reader of the format, so that the writer and the reader share one definition.
CURRENT_LABEL = "- **Current:**"
DONE_LABEL = "- **Done:**"
REMAINING_LABEL = "- **Remaining:**"
LIST_INDENT = "  "

# Every character str.splitlines() breaks at, with the whitespace around it.
_LINE_BREAK_RUN = re.compile(r"\s*[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]\s*")
_SEPARATOR_HYPHEN = re.compile(r" -(?= )")


def one_line(s: str) -> str:
    """``s`` on one line: each run of whitespace that contains a line break becomes one space; ends stripped.

    Line breaks are every boundary ``str.splitlines`` knows (``\\n``, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``,
    ``\\x85``, ``\\u2028``, ``\\u2029``).  Other whitespace inside the text is kept as is.
    """
    return _LINE_BREAK_RUN.sub(" ", s).strip()


def _decision_what(what: str) -> str:
    """``what`` on one line with every separator hyphen (`` - `` and a final `` -``) turned into `` – ``."""
    text = one_line(what)
    return _SEPARATOR_HYPHEN.sub(" –", text + " ")[:-1] or NONE


def _guard_heading(line: str) -> str:
    """A body line that reads as a section heading gets one more ``#``."""
    return "#" + line if line in HEADINGS else line


def _header_value(value: str | None) -> str:
    """A header value on one line without ``|`` (may be empty)."""
    return one_line(value or "").replace("|", "¦")


def _header(state: AgentState) -> list[str]:
    if not is_iso_timestamp(state.created):
        raise ValueError(f"created {state.created!r} is not ISO-8601 (e.g. 2026-11-29T20:31:00Z)")
    cwd = one_line(state.cwd) or "unknown"
    repo = (_header_value(state.repo) or "unknown").replace("@", "＠")
    branch = _header_value(state.branch) or "unknown"
    trigger = _header_value(state.trigger)
    line = f"Session: {session_label(state.stamp, state.kind)} | Cwd: {cwd} | Repo/Branch: {repo}@{branch}"
    if trigger:
        line += f" | Trigger: {trigger}"
    session_id = _header_value(state.session_id)
    if session_id:
        line += f" | Session-Id: {session_id}"
    return [line, f"Created: {state.created}"]


def _items(values: list[str]) -> list[str]:
    """Non-empty one-line items."""
    return [text for text in (one_line(v) for v in values) if text]


def _workflow(text: str | None) -> list[str]:
    lines = [line.rstrip() for line in (text or "").splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return [_guard_heading(line) for line in lines] or [NONE]


def _position(state: AgentState) -> list[str]:
    out = [f"{CURRENT_LABEL} {one_line(state.position.current or '') or NONE}"]
    for label, values in ((DONE_LABEL, state.position.done), (REMAINING_LABEL, state.position.remaining)):
        items = _items(values)
        if items:
            out.append(label)
            out.extend(f"{LIST_INDENT}- {item}" for item in items)
        else:
            out.append(f"{label} {NONE}")
    return out


def decision_line(decision: Decision) -> str:
    """The Decision Log line ``<timestamp> APPROVED|REJECTED: <what> - <reasoning>`` for ``decision``.

    Applies render's normalisations to ``what`` and ``reasoning`` (module docstring) but does not check the
    timestamp, so a caller can test the line's shape itself; ``render`` refuses a non-ISO-8601 timestamp.
    """
    reasoning = one_line(decision.reasoning) or NONE
    return f"{one_line(decision.timestamp)} {decision.status}: {_decision_what(decision.what)} - {reasoning}"


def _checked_decision_line(decision: Decision) -> str:
    if not is_iso_timestamp(decision.timestamp):
        raise ValueError(f"decision timestamp {decision.timestamp!r} is not ISO-8601 (e.g. 2026-09-01T10:00:00Z)")
    return decision_line(decision)


def _bullets(values: list[str]) -> list[str]:
    return [f"- {item}" for item in _items(values)] or [NONE]


def render(state: AgentState) -> str:
    """The Agent State file text for ``state`` (format and normalisations: module docstring).

    Pure.  Returns text with ``"\\n"`` line ends and one final ``"\\n"``.  Raises ``ValueError`` for a bad stamp,
    kind, ``created`` or decision timestamp.
    """
    sections: list[tuple[str, list[str]]] = [
        ("Approved Workflow", _workflow(state.approved_workflow)),
        ("Position", _position(state)),
        ("Decision Log", [_checked_decision_line(d) for d in state.decisions] or [NONE]),
        ("Established Facts", [_guard_heading(f) for f in _items([fact.text for fact in state.facts])] or [NONE]),
        ("Re-derivation", _bullets(state.rederivation)),
    ]
    skills = _items(state.suggested_skills)
    if skills:
        sections.append(("Suggested Skills", [f"- {item}" for item in skills]))
    lines = [TITLE, "", *_header(state)]
    for name, body in sections:
        lines += ["", f"## {name}", *body]
    return "\n".join(lines) + "\n"
