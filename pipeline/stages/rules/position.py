"""Position: Current / Done / Remaining (DESIGN.md "Agent State file": "one step in flight", "newest last",
"next first").

Rules (task brief):
* the latest ``todo_list`` event wins, even when it was written before a compaction and the session went on;
* **Current** = its first ``in_progress`` item; else, when the session ends on a user prompt the assistant
  has not answered yet, that request; else the first sentence (or ``;`` clause) starting "I'll / I'm / Now /
  Next / Let me…" of the latest of the last ``CURRENT_LOOKBACK`` assistant messages that has one, looking no
  further back than the user's latest real prompt (a plan stated before it was answered by it);
* **Done** = the latest list's completed items (placed where each was first seen completed) plus the main
  accomplished steps: runs of file edits (one line per run), test/lint/build commands whose last run passed,
  commits, pushes, pull requests.  At most ``MAX_DONE``, newest last; over the cap the newest todo items are
  kept, leaving at least ``MIN_TOOL_STEPS`` slots to the newest tool steps;
* **Remaining** = the latest list's pending items in list order; when there is no list (or it has nothing
  pending) the open items the assistant stated after it ("Next steps:", "Remaining:", "TODO:"…);
* with no todo list at all, a status list in one of the last assistant messages ("- done: …", "- in progress:
  …", "- next: …", or ``- [x]`` / ``- [ ]`` check boxes) stands in for one.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import current as current_rules
from pipeline.stages.rules import tools
from pipeline.stages.rules import branches
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, is_list_item, sentence_spans, strip_markup
from pipeline.stages.rules.workflow import is_real_prompt

MAX_DONE = 15
MAX_REMAINING = 15
MIN_TOOL_STEPS = 3  # Done keeps at least this many accomplished tool steps (commits, passing runs) when there are any
CURRENT_LOOKBACK = 5
ITEM_LIMIT = 200  # characters per item

_STATUS = {
    "in_progress": "in_progress", "in-progress": "in_progress", "inprogress": "in_progress", "active": "in_progress",
    "doing": "in_progress", "running": "in_progress", "completed": "completed", "complete": "completed",
    "done": "completed", "finished": "completed",
}
_DOING = lazy_re(
    r"^(?:(?:ok(?:ay)?|great|good|perfect|alright|so|now)[,!.]?\s+)?"
    r"(?:I'll|I will|I'm|I am|Now\b|Next\b|Let me|Let's|I need to|Going to|Working on|Currently)",
    re.IGNORECASE,
)
_OPEN_HEAD = lazy_re(
    r"^[ \t>]*(?:#+\s*)?(?:[-*]\s+)?(?:\*\*|__)?(?:Next steps?|Remaining(?: work| tasks| items| steps)?|TODO|To ?do|"
    r"Still to do|Left to do|Outstanding(?: items| work| tasks)?|Open items|Pending(?: work| items)?|"
    r"What'?s left|Follow[- ]ups?)(?:\s*\([^)]*\))?(?:\*\*|__)?\s*:(?:\*\*|__)?[ \t]*(.*)$",
    re.IGNORECASE,
)
_STATUS_LINE = lazy_re(
    r"^[ \t]*[-*+][ \t]+(?:\[(?P<box>[ xX])\][ \t]*)?(?:(?:\*\*|__)?(?P<label>done|completed|complete|finished|fixed|"
    r"in[ -]progress|doing|current|wip|working on|now|next|then|later|after that|todo|to do|pending|remaining|blocked|"
    r"up next)(?:\*\*|__)?"
    r"[ \t]*[:\-–—][ \t]*)?(?P<body>\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_OPEN_HEAD_NOCOLON = lazy_re(
    r"^[ \t]*#+\s*(?:Next steps?|Remaining(?: work| tasks)?|TODO|To ?do|Open items|Follow[- ]ups?)\s*$", re.IGNORECASE
)


def _status(raw: str | None) -> str:
    return _STATUS.get((raw or "pending").strip().lower(), "pending")


def _todo_key(item) -> str:
    return item.id or " ".join(item.content.lower().split())


def build(s: Scan) -> tuple[str | None, list[str], list[str]]:
    """``(current, done, remaining)`` for the transcript behind ``s``.

    Without any todo list, a status list in one of the last assistant messages ("- done: …", "- in progress:
    …", "- next: …", or ``- [x]`` / ``- [ ]`` check boxes) stands in for it.
    """
    latest = s.todo_lists[-1] if s.todo_lists else None
    todos = (s.events[latest].todos or []) if latest is not None else []
    status_at, st_done, st_current, st_next = (None, [], None, []) if todos else _status_list(s)
    current = next((clip(t.content, ITEM_LIMIT) for t in todos if _status(t.status) == "in_progress"), None)
    if current is None:
        current = st_current or current_rules.build(s)
    done = _done(s, latest, todos, extra=[(status_at, x) for x in st_done] if status_at is not None else [])
    remaining = [clip(t.content, ITEM_LIMIT) for t in todos if _status(t.status) == "pending"] or st_next
    if not remaining:
        remaining = _open_items(s, after=latest if latest is not None else -1)
    return current, done, remaining[:MAX_REMAINING]


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


def _done(s: Scan, latest: int | None, todos, extra: list[tuple[int, str]] | None = None) -> list[str]:
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
    tool_steps = _tool_steps(s)
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


def _tool_steps(s: Scan) -> list[tuple[int, str]]:
    """Accomplished steps from tool calls, chronological: edit runs, passing checks, commits, pushes, PRs."""
    cwd = s.meta.cwd
    steps: list[tuple[int, str]] = []
    run_paths: list[str] = []
    run_created: set[str] = set()
    run_last = -1
    last_check: dict[str, tuple[int, bool, str]] = {}  # segment -> (index, passed, kind)

    def flush() -> None:
        nonlocal run_paths, run_created, run_last
        if run_paths:
            created = [p for p in run_paths if p in run_created]
            edited = [p for p in run_paths if p not in run_created]
            parts = []
            if edited:
                parts.append("Edited " + _list(edited))
            if created:
                parts.append(("created " if parts else "Created ") + _list(created))
            steps.append((run_last, clip("; ".join(parts), ITEM_LIMIT)))
        run_paths, run_created, run_last = [], set(), -1

    call_set = set(s.calls)
    gone = branches.abandoned(s.events)  # edits of a branch the user rewound away from are not Done
    for i in sorted(call_set | set(s.users) | set(s.todo_lists)):
        ev = s.events[i]
        if i in gone:
            continue
        if ev.kind != "tool_call":
            flush()
            continue
        paths = tools.edit_paths(ev)
        if paths:
            res = s.result_of.get(i)
            if res is not None and s.events[res].is_error:
                continue
            for p in paths:
                rp = tools.relative(p, cwd)
                if rp in run_paths:
                    run_paths.remove(rp)
                run_paths.append(rp)
                if tools.is_create(ev):
                    run_created.add(rp)
            run_last = i
            continue
        cmd = tools.command_of(ev)
        if not cmd:
            continue
        result = s.events[s.result_of[i]] if i in s.result_of else None
        kind = tools.command_kind(cmd)
        if kind and kind[0] in ("test", "lint", "build"):
            flush()
            last_check[kind[1]] = (i, not tools.failed(result), kind[0])
            continue
        if "git" not in cmd and "gh " not in cmd:
            continue
        msg = tools.commit_message(cmd, ev.text)
        push = tools.push_target(cmd)
        pr = tools.opens_pr(cmd)
        if (msg is None and push is None and not pr) or result is None or tools.failed(result):
            continue
        flush()
        if msg is not None:
            steps.append((i, clip(f'Committed "{msg}"' if msg else "Committed changes", ITEM_LIMIT)))
        if push is not None:
            steps.append((i, clip(f"Pushed {push}".strip(), ITEM_LIMIT)))
        if pr:
            steps.append((i, "Opened a pull request (gh pr create)"))
    flush()
    verbs = {"test": "passed", "lint": "clean", "build": "succeeded"}
    for seg, (i, passed, kind) in last_check.items():
        if passed:
            steps.append((i, clip(f"Ran `{seg}` ({verbs[kind]})", ITEM_LIMIT)))
    steps.sort(key=lambda p: p[0])
    return steps


def _list(paths: list[str], shown: int = 4) -> str:
    if len(paths) <= shown:
        return ", ".join(paths)
    return ", ".join(paths[:shown]) + f" (+{len(paths) - shown} more)"


def _open_items(s: Scan, after: int) -> list[str]:
    """Open items from the latest assistant message (after event ``after``) that states some."""
    for i in reversed(s.assistants):
        if i <= after:
            break
        items = open_items_in(s.events[i].text)
        if items:
            return items
    return []


def open_items_in(text: str) -> list[str]:
    """Items listed under a "Next steps:" / "Remaining:" / "TODO:" head in ``text`` (inline or as a list)."""
    if not text:
        return []
    lines = text.split("\n")
    items: list[str] = []
    in_code = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            i += 1
            continue
        m = None if in_code else _OPEN_HEAD.match(line)
        head_only = not in_code and m is None and _OPEN_HEAD_NOCOLON.match(line)
        if not m and not head_only:
            i += 1
            continue
        inline = m.group(1).strip() if m else ""
        if inline:
            items.extend(p for p in (strip_markup(x) for x in re.split(r";\s+", inline)) if p)
        j = i + 1
        block_code = False
        started = False
        while j < len(lines):
            ln = lines[j]
            if ln.lstrip().startswith(("```", "~~~")):
                block_code = not block_code
                j += 1
                continue
            if block_code:
                j += 1
                continue
            if not ln.strip():
                j += 1
                continue
            if is_list_item(ln):
                started = True
                item = strip_markup(ln)
                if item:
                    items.append(item)
                j += 1
                continue
            if started and ln.startswith(("  ", "\t")):  # continuation / sub-item detail
                j += 1
                continue
            break
        i = j
    return [clip(x.rstrip(":"), ITEM_LIMIT) for x in dict.fromkeys(items)][:MAX_REMAINING]
