"""Position: Current / Done / Remaining (DESIGN.md "Agent State file": "one step in flight", "newest last",
"next first"), read from the session's episodes (``episodes``; issue 21 item 1).

Rules:
* the latest ``todo_list`` event wins, even when it was written before a compaction and the session went on;
* **Current** = its first ``in_progress`` item when the list was written after the user's latest task (an older
  list's step is not where a later task stopped); else a status list's in-progress line; else the state of the
  last episode (``current``);
* **Done** = the latest list's completed items (placed where each was first seen completed) plus the main
  accomplished steps read from the tool calls (``done.outcomes``: edit runs, passing checks, commits, pushes,
  what a CLI created).  At most ``MAX_DONE``, newest last; over the cap the newest todo items are kept, leaving
  at least ``MIN_TOOL_STEPS`` slots to the newest tool steps;
* **Remaining** = ``remaining.build``: the question the session ends on, the latest list's pending items (else
  a status list's next items, else the open items the agent stated), a checklist file's open boxes, failures,
  unverified and uncommitted edits, TODO markers left, loose ends of earlier episodes;
* with no todo list at all, a status list in one of the last assistant messages ("- done: …", "- in progress:
  …", "- next: …", or ``- [x]`` / ``- [ ]`` check boxes) stands in for one;
* with no todo list, a command sequence the user handed over and the agent is working through (``sequence``)
  names its next line in Current (after the agent's own "Next, I will…" sentence) and its later lines first in
  Remaining.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import current as current_rules
from pipeline.stages.rules import done as done_rules
from pipeline.stages.rules import episodes, remaining, sequence, workflow
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, strip_markup

MAX_DONE = 15
MAX_REMAINING = remaining.MAX_REMAINING
MIN_TOOL_STEPS = 3  # Done keeps at least this many accomplished tool steps (commits, passing runs) when there are any
CURRENT_LOOKBACK = 5
ITEM_LIMIT = 200  # characters per item

_STATUS = {
    "in_progress": "in_progress", "in-progress": "in_progress", "inprogress": "in_progress", "active": "in_progress",
    "doing": "in_progress", "running": "in_progress", "completed": "completed", "complete": "completed",
    "done": "completed", "finished": "completed",
}
_STATUS_LINE = lazy_re(
    r"^[ \t]*[-*+][ \t]+(?:\[(?P<box>[ xX])\][ \t]*)?(?:(?:\*\*|__)?(?P<label>done|completed|complete|finished|fixed|"
    r"in[ -]progress|doing|current|wip|working on|now|next|then|later|after that|todo|to do|pending|remaining|blocked|"
    r"up next)(?:\*\*|__)?"
    r"[ \t]*[:\-–—][ \t]*)?(?P<body>\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)

def _status(raw: str | None) -> str:
    return _STATUS.get((raw or "pending").strip().lower(), "pending")


def _todo_key(item) -> str:
    return item.id or " ".join(item.content.lower().split())

def build(s: Scan) -> tuple[str | None, list[str], list[str]]:
    """``(current, done, remaining)`` for the transcript behind ``s`` (module rules)."""
    latest = s.todo_lists[-1] if s.todo_lists else None
    todos = (s.events[latest].todos or []) if latest is not None else []
    status_at, st_done, st_current, st_next = (None, [], None, []) if todos else _status_list(s)
    tasks = workflow.tasks(s)
    fresh = latest is not None and (not tasks or latest > tasks[-1])
    current = next((clip(t.content, ITEM_LIMIT) for t in todos if _status(t.status) == "in_progress"), None) \
        if fresh else None
    nxt, later = (None, []) if todos else sequence.position(s)
    if current is None:
        current = st_current or current_rules.build(s, nxt)
    tool_steps, failures = done_rules.outcomes(s)
    done = _done(s, latest, todos, extra=[(status_at, x) for x in st_done] if status_at is not None else [],
                 tool_steps=tool_steps)
    planned = [clip(t.content, ITEM_LIMIT) for t in todos if _status(t.status) == "pending"] or st_next
    rest = remaining.build(s, episodes.episodes(s), planned, failures, tool_steps, latest)
    return current, done, list(dict.fromkeys(later + rest))[:MAX_REMAINING]


def _status_list(s: Scan) -> tuple[int | None, list[str], str | None, list[str]]:
    """``(event index, done items, in-progress item, next items)`` of the latest of the last
    ``CURRENT_LOOKBACK`` assistant messages that holds a status list; ``(None, [], None, [])`` when none does."""
    for i in reversed(s.assistants[-CURRENT_LOOKBACK:]):
        done: list[str] = []
        current: str | None = None
        nxt: list[str] = []
        for m in _STATUS_LINE.finditer(s.events[i].text):
            box, label, body = m.group("box"), (m.group("label") or "").lower(), strip_markup(m.group("body"))
            if not body or (box is None and not label):
                continue
            if box is not None and not label:
                (done if box.lower() == "x" else nxt).append(clip(body, ITEM_LIMIT))
            elif label in ("done", "completed", "complete", "finished", "fixed"):
                done.append(clip(body, ITEM_LIMIT))
            elif label in ("in progress", "in-progress", "doing", "current", "wip", "working on", "now"):
                current = current or clip(body, ITEM_LIMIT)
            else:
                nxt.append(clip(body, ITEM_LIMIT))
        if len(done) + len(nxt) + (current is not None) >= 2:
            return i, done, current, nxt
    return None, [], None, []

def _done(s: Scan, latest: int | None, todos, extra: list[tuple[int, str]] | None = None,
          tool_steps: list[tuple[int, str]] | None = None) -> list[str]:
    """Done items merged chronologically; planned items (todo list, else a status list) preferred over the cap."""
    todo_steps: list[tuple[int, str]] = list(extra or [])
    if latest is not None:
        completed = {_todo_key(t): t for t in todos if _status(t.status) == "completed"}
        first_seen: dict[str, int] = {}
        for i in s.todo_lists:
            for t in s.events[i].todos or []:
                k = _todo_key(t)
                if k in completed and k not in first_seen and _status(t.status) == "completed":
                    first_seen[k] = i
        for k, t in completed.items():
            todo_steps.append((first_seen.get(k, latest), clip(t.content, ITEM_LIMIT)))
    if tool_steps is None:
        tool_steps = done_rules.steps(s)
    room = max(MIN_TOOL_STEPS, MAX_DONE - len(todo_steps))
    tool_part = tool_steps[-room:] if tool_steps else []
    todo_part = sorted(todo_steps, key=lambda p: p[0])[-(MAX_DONE - len(tool_part)):]
    picked = todo_part + tool_part
    picked.sort(key=lambda p: p[0])
    out: list[str] = []
    for _, text in picked:
        if text not in out:
            out.append(text)
    return out
