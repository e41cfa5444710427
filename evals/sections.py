"""A state file's text cut into the views probes are checked against (layout: DESIGN.md "Agent State file").

Works on the text, not on a parsed ``AgentState``, so it scores any engine's file the same way and survives a
file that would not parse.  Views are lists of *entries*: the Approved Workflow and Current are one entry each,
the Done / Remaining / Re-derivation items, Decision Log lines and Established Facts lines one entry per line,
``file`` the whole text.  A section that holds only ``None`` has no entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DECISION = re.compile(r"^(?:\S+\s+)?(APPROVED|REJECTED):\s*(.*)$")
_LABEL = re.compile(r"^- \*\*(Current|Done|Remaining):\*\*\s*(.*)$")


@dataclass(slots=True)
class Decision:
    """One Decision Log line: its status, ``what`` (text before the first `` - ``) and the whole line."""

    status: str
    what: str
    line: str


@dataclass(slots=True)
class Views:
    """Entries per section name (``suite.Section``); ``decisions`` keeps each line's status for the
    approved / rejected views."""

    entries: dict[str, list[str]] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)

    def get(self, section: str) -> list[str]:
        return self.entries.get(section, [])


def _body(lines: list[str]) -> list[str]:
    rows = [ln.rstrip() for ln in lines]
    while rows and not rows[0].strip():
        rows.pop(0)
    while rows and not rows[-1].strip():
        rows.pop()
    return [] if [r.strip() for r in rows] == ["None"] else rows


def split_sections(text: str) -> dict[str, list[str]]:
    """``{heading: body lines}`` for each ``## `` section of ``text`` (headings as written, e.g. "Decision Log")."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out.setdefault(current, [])
        elif current is not None:
            out[current].append(line)
    return out


def _position(lines: list[str], entries: dict[str, list[str]]) -> None:
    label = None
    for line in lines:
        m = _LABEL.match(line.strip())
        if m:
            label, rest = m.group(1).lower(), m.group(2).strip()
            if label == "current":
                entries["current"] = [] if rest in ("", "None") else [rest]
            elif rest and rest != "None":
                entries[label].append(rest)
            continue
        item = line.strip()
        if label in ("done", "remaining") and item.startswith("- "):
            entries[label].append(item[2:].strip())


def views(text: str) -> Views:
    """The views of a state file's ``text`` (see module docstring)."""
    sections = split_sections(text)
    entries: dict[str, list[str]] = {k: [] for k in ("current", "done", "remaining")}
    workflow = _body(sections.get("Approved Workflow", []))
    entries["workflow"] = ["\n".join(workflow)] if workflow else []
    _position(_body(sections.get("Position", [])), entries)
    decisions: list[Decision] = []
    for line in _body(sections.get("Decision Log", [])):
        m = _DECISION.match(line.strip())
        if m:
            what = m.group(2).split(" - ", 1)[0]
            decisions.append(Decision(m.group(1), what, line.strip()))
    entries["decisions"] = [d.line for d in decisions]
    entries["approved"] = [d.line for d in decisions if d.status == "APPROVED"]
    entries["rejected"] = [d.line for d in decisions if d.status == "REJECTED"]
    entries["facts"] = [ln.strip() for ln in _body(sections.get("Established Facts", [])) if ln.strip()]
    entries["rederivation"] = [
        ln.strip()[2:].strip() if ln.strip().startswith("- ") else ln.strip()
        for ln in _body(sections.get("Re-derivation", []))
        if ln.strip()
    ]
    entries["file"] = [text]
    return Views(entries=entries, decisions=decisions)
