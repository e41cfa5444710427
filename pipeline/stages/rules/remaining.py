"""Position.Remaining: what is really open, next first (DESIGN.md "Agent State file"; issue 12 §2.4; issue 21 item 1:
"Position comes from the episodes' states at the end of the transcript").

In this order (``build``), each item at most ``ITEM_LIMIT`` characters, ``MAX_REMAINING`` in all:

1. **the user's answer** — the last episode ends on the agent's question or offer, or on an ask-the-user call
   left without an answer → ``Waiting for the user: <question>`` (``episodes.asks``);
2. **what was planned** — the latest todo list's pending items in list order, else a status list's next items,
   else the open items the latest assistant message after the list states ("Next steps:", "Still to do:",
   "Próximos passos:", "下一步：" …; ``open_items_in``), looking no further back than the latest task the agent
   replied to;
3. **a checklist file the agent works through** — a markdown file whose ``- [ ]`` boxes the agent's own edits
   tick (``tasks.md``, ``TODO.md``, ``PLAN.md``): its boxes still open as the session last read them, after the
   ticks (``checklist``), at most ``MAX_CHECKLIST``;
4. **failures** — checks whose latest run failed, deploys / pushes whose latest attempt failed (``done``);
5. **unverified edits** — code edited after the last run of a check the session uses, with no check run after
   it (or only runs that showed no outcome): ``Re-run `<check>`: <files> changed after its last run``;
6. **uncommitted edits** — files edited after the session's last commit (when it committed at all);
   5 and 6 only when the work is no longer under way (``_in_progress``: the last episode neither runs nor ends
   mid-work, and no todo list of the latest task has open items);
7. **TODO markers the agent left** — a ``TODO`` / ``FIXME`` line an edit added to a file and no later edit
   removed; **plan steps not run** — a step of the latest plan the user approved or handed over that gives a
   command in a fenced block of its own, which no later call or prompt ran (``_plan_steps``);
8. **loose ends of earlier episodes**, newest first, at most ``MAX_LOOSE``: a question or offer naming something
   specific (a code span, a file name, a snake_case / CamelCase name, a word with digits, ``#123``) that the next
   prompt ignored (a new task naming none of those names) and nothing later took up (``_taken_up``); shipping commands (commit,
   push, PR / repository creation, deploy, publish) handed to the user after the agent's own attempt failed or was
   refused, that no later call or ``!`` prompt ran and no later commit / push / creation did.

Items a later episode did are swept: a failure a later run settled, an offer whose names a later step or prompt
carries, a handed command a later call ran.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import edits, tools
from pipeline.stages.rules.episodes import Episode, bare_command, code_path, edited, stale_checks
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, is_list_item, strip_markup, tokens

MAX_REMAINING = 15
MAX_CHECKLIST = 5
MAX_LOOSE = 3
MAX_PLAN_STEPS = 3
ITEM_LIMIT = 200  # characters per item
FILES_SHOWN = 3

_BOX = lazy_re(r"^[ \t]*[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+(?P<item>\S.*?)[ \t]*$", re.MULTILINE)
_PATCH_TICK = lazy_re(r"^\+[ \t]*[-*+][ \t]+\[[xX]\][ \t]+(\S.*?)[ \t]*$", re.MULTILINE)
_MARKER_LINE = lazy_re(r"^[ \t]*(?:#|//|/\*|\*|--|;|<!--|%|')?[ \t]*(?P<body>(?:TODO|FIXME)\b.*?)[ \t]*(?:\*/|-->)?[ \t]*$",
                       re.MULTILINE)
#: a name that identifies something: a code span, a file name with an extension, a snake_case or CamelCase
#: name, a word mixing letters and digits, an issue/PR number
_IDENT = lazy_re(
    r"`[^`\n]{2,}`|\b\w[\w/.-]*\w\.[A-Za-z][A-Za-z0-9]{0,5}\b|\b[A-Za-z0-9]+_\w+\b|\b[a-z]+[A-Z]\w*\b|"
    r"\b[A-Z][a-z0-9]+[A-Z]\w*\b|(?<![\w-])(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{2,}(?![\w-])|#\d+"
)
_CLEAN_TREE = lazy_re(r"\bworking tree clean\b|\bnothing to commit\b")


def build(s: Scan, eps: list[Episode], planned: list[str], failures: list[tuple[int, str]],
          steps: list[tuple[int, str]], latest_todo: int | None) -> list[str]:
    """Remaining, next first (module rules).  ``planned`` is rule 2 from the todo / status list (the open items of
    the latest message stand in when it is empty); ``failures`` and ``steps`` come from ``done.outcomes``."""
    out: list[str] = []
    last = eps[-1] if eps else None
    if last is not None and last.question and last.prompt >= 0 and last.state in ("handed_back", "running", "working"):
        out.append(clip("Waiting for the user: " + last.question, ITEM_LIMIT))
    since = max(latest_todo if latest_todo is not None else -1, _answered_task(eps))
    out.extend(planned or _open_items(s, after=since))
    out.extend(checklist(s)[:MAX_CHECKLIST])
    out.extend(text for _, text in failures)
    if not _in_progress(s, last, latest_todo):
        out.extend(_unverified(s, eps))
        out.extend(_uncommitted(s, eps, steps))
    out.extend(_markers(s))
    out.extend(_plan_steps(s))
    out.extend(_loose_ends(s, eps, steps))
    return [clip(x, ITEM_LIMIT) for x in dict.fromkeys(out)][:MAX_REMAINING]


def _in_progress(s: Scan, last: Episode | None, latest_todo: int | None) -> bool:
    """Whether the work is still under way at the end: the last episode runs or ends mid-work (and neither the
    user nor the harness stopped it), or a todo list written during the latest task still has open items (edits of unfinished work
    are neither checked nor committed yet, and that is no news)."""
    if last is not None and last.state in ("running", "working") and not (last.interrupted or last.denied):
        return True
    if latest_todo is None or (last is not None and last.task is not None and latest_todo < last.task):
        return False
    return any((t.status or "pending") != "completed" for t in s.events[latest_todo].todos or [])


# --- 3. a checklist file ----------------------------------------------------------------------------------------


def _new_text(ev) -> tuple[str, str]:
    """``(old, new)`` text of an edit call: the replaced strings, a patch's ``-`` / ``+`` lines, a whole-file
    write's content (old "")."""
    got = edits.edit_strings(ev)
    if got is not None:
        return got
    text = ev.text or ""
    if tools.tool(ev) in ("apply_patch", "patch") or "*** Begin Patch" in text:
        old = "\n".join(ln[1:] for ln in text.splitlines() if ln.startswith("-") and not ln.startswith("---"))
        new = "\n".join(ln[1:] for ln in text.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
        return old, new
    at = text.find("content: ")
    return "", text[at + 9:] if at >= 0 else ""


def checklist(s: Scan) -> list[str]:
    """The open boxes of the checklist file the agent ticks last (module rule 3), in file order, as
    ``<item> (<file>)``; [] when no edit ticks a box."""
    ticked_in: dict[str, int] = {}  # path -> index of the latest edit that ticks a box in it
    ticked: set[str] = set()
    for i in s.calls:
        ev = s.events[i]
        paths = edited(s, i)
        if not paths or "[" not in (ev.text or ""):
            continue
        old, new = _new_text(ev)
        now = {m.group("item") for m in _BOX.finditer(new) if m.group("mark") != " "}
        before = {m.group("item") for m in _BOX.finditer(old) if m.group("mark") == " "}
        got = (now & before) | {m.group(1) for m in _PATCH_TICK.finditer(ev.text or "")}
        if got:
            ticked |= got
            ticked_in[paths[0]] = i
    if not ticked_in:
        return []
    path, at = max(ticked_in.items(), key=lambda kv: kv[1])
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    for r in reversed([s.result_of[c] for c in s.calls if c < at and c in s.result_of]):
        ev = s.events[r]
        text = ev.text or ""
        call = s.events[s.call_of[r]]
        if "[ ]" not in text or name not in (call.target or "") + (call.text or ""):
            continue
        items = [m.group("item") for m in _BOX.finditer(text) if m.group("mark") == " "]
        items = [x for x in items if x not in ticked]
        if items:
            return [clip(f"{strip_markup(x)} ({name})", ITEM_LIMIT) for x in items]
    return []


# --- 5. unverified, 6. uncommitted, 7. TODO markers --------------------------------------------------------


def _files(paths: list[str]) -> str:
    shown = list(dict.fromkeys(paths))
    more = len(shown) - FILES_SHOWN
    return ", ".join(shown[-FILES_SHOWN:]) + (f" (+{more} more)" if more > 0 else "")


def _project(path: str) -> bool:
    return not (path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", path))


def _all_edits(eps: list[Episode]) -> list[tuple[int, str]]:
    return [e for ep in eps for e in ep.edits]


def _unverified(s: Scan, eps: list[Episode]) -> list[str]:
    """``Re-run `<check>`: <files> changed after its last run`` for the newest check that did not run after the
    session's last code edit (``episodes.stale_checks``)."""
    code = [c for c, p in _all_edits(eps) if code_path(p)]
    stale = stale_checks(s, code[-1]) if code else []
    if not stale:
        return []
    check, since = stale[0]
    changed = [p for c, p in _all_edits(eps) if c > since and code_path(p)]
    return [f"Re-run `{check}`: {_files(changed)} changed after its last run"]


def _uncommitted(s: Scan, eps: list[Episode], steps: list[tuple[int, str]]) -> list[str]:
    """``Commit the changes to <files>: made after the last commit (<sha>)`` when the session committed and
    edited files of the project after its last commit."""
    commits = [(i, text) for i, text in steps if text.startswith("Committed")]
    if not commits:
        return []
    at, text = commits[-1]
    changes = [(c, p) for c, p in _all_edits(eps) if c > at and _project(p)]
    if not changes:
        return []
    last_change = changes[-1][0]
    for r in s.results:  # git itself said so after the last change ("nothing to commit, working tree clean")
        if r > last_change and _CLEAN_TREE.search(s.events[r].text or ""):
            return []
    later = [p for _, p in changes]
    sha = text.split()[1] if len(text.split()) > 1 and re.fullmatch(r"[0-9a-f]{7,40}", text.split()[1]) else ""
    return [f"Commit the changes to {_files(later)}: made after the last commit" + (f" ({sha})" if sha else "")]


def _markers(s: Scan) -> list[str]:
    """``TODO left in <file>: <marker line>`` for each TODO / FIXME line an edit added and no later edit of the
    file removed."""
    found: dict[tuple[str, str], int] = {}
    for i in s.calls:
        ev = s.events[i]
        paths = edited(s, i)
        text = ev.text or ""
        if not paths or ("TODO" not in text and "FIXME" not in text and not found):
            continue
        result = s.events[s.result_of[i]] if i in s.result_of else None
        if result is not None and result.is_error:
            continue
        old, new = _new_text(ev)
        was = {m.group("body") for m in _MARKER_LINE.finditer(old)}
        now = {m.group("body") for m in _MARKER_LINE.finditer(new)}
        path = tools.relative(paths[0], s.meta.cwd)
        for body in was - now:
            found.pop((path, body), None)
        for body in now - was:
            found[(path, body)] = i
    return [f"TODO left in {path}: {body}" for (path, body), _ in sorted(found.items(), key=lambda kv: kv[1])]


_FENCED = lazy_re(r"^[ \t]*(?:```|~~~)[\w-]*[ \t]*\n(.*?)\n[ \t]*(?:```|~~~)", re.DOTALL | re.MULTILINE)
_STEP = lazy_re(r"^[ \t]*(?:\d{1,2}[.)]|[-*+])[ \t]+(?P<body>\S.*)$")
_SLASH = lazy_re(r"^/[\w:.-]+(?:\s+[\w@./:=-]+){0,3}$")
_HEAD = lazy_re(r"^[ \t]*#{1,4}[ \t]+(?P<body>\S.*)$")


def _plan_steps(s: Scan) -> list[str]:
    """``Plan step not run: <step>: `<command>``` for the steps of the latest plan the user approved or handed over
    (``workflow.plan_texts``) that give a command in a short fenced block of their own (one to three lines, each
    a command people type, a ``$`` prompt or a slash command) and that no later call or prompt ran, at most
    ``MAX_PLAN_STEPS``."""
    from pipeline.stages.rules import sequence, workflow

    plans = workflow.plan_texts(s)
    if not plans:
        return []
    at, text = plans[-1]
    later = [tools.command_of(s.events[i]) for i in s.calls if i > at] + [s.events[i].text for i in s.users if i > at]
    out: list[str] = []
    for m in _FENCED.finditer(text):
        lines = [ln.strip().lstrip("$ ").strip() for ln in m.group(1).splitlines() if ln.strip()]
        if not 1 <= len(lines) <= 3 or not all(sequence.is_command_line(ln) or _SLASH.match(ln) for ln in lines):
            continue
        cmd = lines[0]
        if any(cmd in x for x in later):
            continue
        step = _step_name(text[:m.start()].splitlines()[-4:])
        out.append(f"Plan step not run: {step}: `{cmd}`" if step else f"Plan step not run: `{cmd}`")
    return out[:MAX_PLAN_STEPS]


def _step_name(lines: list[str]) -> str:
    """The name of the plan step a fenced block belongs to: the nearest list item or heading among the lines
    before it, else the nearest line of text ("" when none)."""
    text = ""
    for ln in reversed(lines):
        m = _STEP.match(ln) or _HEAD.match(ln)
        if m:
            return strip_markup(m.group("body")).rstrip(":：")
        text = text or strip_markup(ln).rstrip(":：")
    return text


# --- 8. loose ends of earlier episodes ------------------------------------------------------------------------


def _idents(text: str) -> set[str]:
    return {m.group(0).strip("`").lower() for m in _IDENT.finditer(text)}


def _loose_ends(s: Scan, eps: list[Episode], steps: list[tuple[int, str]]) -> list[str]:
    """Module rule 8, newest first."""
    from pipeline.stages.rules.current import label

    out: list[str] = []
    for k in range(len(eps) - 2, -1, -1):
        ep, nxt = eps[k], eps[k + 1]
        if ep.prompt < 0:
            continue
        after = ep.end
        if ep.question and nxt.reply == "task":
            names = _idents(ep.question)
            answer = s.events[nxt.prompt].text.lower()
            if not names or any(n in answer for n in names):
                continue
            if _taken_up(s, names, ep.question, after, steps):
                continue
            out.append(f"Never answered: {ep.question}")
        elif ep.handed and _blocked(s, ep):
            open_cmds = [bare_command(c) for c in ep.handed
                         if _ships(c) and not _ran_later(s, bare_command(c), after) and not _shipped(c, after, steps)]
            if open_cmds:
                out.append(f"{label(s, ep)}: handed to the user — run " + "; ".join(f"`{c}`" for c in open_cmds))
        if len(out) >= MAX_LOOSE:
            break
    return out


def _taken_up(s: Scan, names: set[str], question: str, after: int, steps: list[tuple[int, str]]) -> bool:
    """Whether something after event ``after`` took the question up: a later step sharing a content word of five
    letters or more with it (compared on their first five letters), a later prompt naming one of its names, or a
    later call naming one and sharing such a word (``git worktree add … release_1`` does not take up "merge it
    back to `release_1`?")."""
    words = _stems(question)
    for i, text in steps:
        if i >= after and words & _stems(text):
            return True
    for i in s.users:
        if i >= after and any(n in s.events[i].text.lower() for n in names):
            return True
    verbs = words - {n[:5] for n in names}
    for i in s.calls:
        if i >= after:
            low = ((s.events[i].target or "") + " " + tools.command_of(s.events[i])).lower()
            if any(n in low for n in names) and verbs & _stems(low):
                return True
    return False


def _stems(text: str) -> set[str]:
    """The first five letters of each content word of five letters or more ("commit" ~ "committed")."""
    return {w[:5] for w in tokens(text) if len(w) >= 5}


def _blocked(s: Scan, ep: Episode) -> bool:
    """Whether the episode's own attempt failed or was refused, and no later call got through: one of its last
    two calls failed, and no later call of the same command (program and first argument) succeeded."""
    heads = []
    for c in ep.calls[-2:]:
        if c not in s.result_of or tools.failed(s.events[s.result_of[c]], deep=False):
            cmd = tools.command_of(s.events[c])
            heads.append(_head(cmd) if cmd else "")
    if not heads:
        return False
    return not any(h and _ran_later(s, h, ep.end) for h in heads)


def _ships(cmd: str) -> bool:
    """Whether a command ships work (commits, pushes, opens a PR / issue / repository, deploys, publishes): a step
    the session would show done (``done.outcomes``) had it happened."""
    return tools.commit_message(cmd) is not None or tools.push_target(cmd) is not None or \
        tools.created_ref(cmd, None) is not None


def _shipped(cmd: str, after: int, steps: list[tuple[int, str]]) -> bool:
    """Whether a step after event ``after`` did what ``cmd`` would: a commit, a push, the same kind of creation."""
    made = tools.created_ref(cmd, None)
    wants = [w for w, yes in (("Committed", tools.commit_message(cmd) is not None),
                              ("Pushed", tools.push_target(cmd) is not None),
                              (made[0] if made else "", made is not None)) if yes]
    return any(i >= after and text.startswith(w) for i, text in steps for w in wants)


def _head(cmd: str) -> str:
    """The program and first argument of a command's last segment (``git commit``, ``gh repo``), ``cd`` dropped."""
    parts = tools.split_shell(bare_command(cmd))
    return " ".join(parts[-1][0].split()[:2]) if parts else ""


def _ran_later(s: Scan, cmd: str, after: int) -> bool:
    """Whether a successful call or a ``!`` prompt after event ``after`` ran a command starting like ``cmd``'s
    last segment (its program and first argument)."""
    head = _head(cmd)
    if not head:
        return False
    for i in s.calls:
        if i >= after and head in tools.command_of(s.events[i]):
            r = s.events[s.result_of[i]] if i in s.result_of else None
            if r is not None and not tools.failed(r):
                return True
    return any(i >= after and s.events[i].text[:20].lstrip().startswith("!") and head in s.events[i].text for i in s.users)


# --- 2. open items a message states ---------------------------------------------------------------------------

_HEADS = (
    r"Next steps?|Remaining(?: work| tasks| items| steps)?|TODO|To ?do|Still to do|Left to do|"
    r"Outstanding(?: items| work| tasks)?|Open items|Pending(?: work| items| tasks)?|What'?s left|Follow[- ]ups?|"
    r"Pr[oó]xim[oa]s (?:passos|etapas|pasos)|Siguientes pasos|Pend[eê]nci(?:as|a)|Pendentes?|Pendientes?|"
    r"Tarefas pendentes|Tareas pendientes|A fazer|Falta fazer|O que falta|Por hacer|Lo que falta|Queda por hacer|"
    r"Prochaines [ée]tapes|Reste [àa] faire|[ÀA] faire|N[äa]chste Schritte|Noch zu tun|Offene Punkte|"
    r"下一步(?:计划|工作)?|后续(?:步骤|工作)|待办(?:事项)?|待完成|剩余(?:工作|任务)|未完成(?:事项)?|"
    r"次のステップ|残り(?:の作業|のタスク)?|残作業|残タスク|今後の(?:作業|対応)|未対応|"
    r"다음 단계|남은 (?:작업|일)|할 일|추가 작업"
)
_OPEN_HEAD = lazy_re(
    r"^(?:.*?(?:[.!?][ \t]+|[。！？][ \t]*)|[ \t>]*(?:#+\s*)?(?:[-*]\s+)?)(?:\*\*|__)?(?:" + _HEADS + r")"
    r"(?:\s*\([^)]*\))?(?:\*\*|__)?\s*[:：](?:\*\*|__)?[ \t]*(.*)$",
    re.IGNORECASE,
)
_OPEN_HEAD_NOCOLON = lazy_re(r"^[ \t]*#+\s*(?:\*\*|__)?(?:" + _HEADS + r")(?:\*\*|__)?\s*$", re.IGNORECASE)

def _answered_task(eps: list[Episode]) -> int:
    """The prompt that opened the latest task the agent replied to (-1 when none): open items an agent stated
    before it belong to work the user has moved on from."""
    replied: set[int] = {ep.task for ep in eps if ep.task is not None and ep.report is not None}
    return max(replied) - 1 if replied else -1


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
        top = 0
        wants_cmd = False  # the last item ends with ":" and a command block follows it ("2. **Test the UI:**")
        while j < len(lines):
            ln = lines[j]
            if ln.lstrip().startswith(("```", "~~~")):
                block_code = not block_code
                j += 1
                continue
            if block_code:
                cmd = ln.strip()
                if wants_cmd and cmd and not cmd.startswith(("#", "//", "REM ")):
                    items[-1] = items[-1].rstrip(":").rstrip() + f": `{cmd}`"
                    wants_cmd = False
                j += 1
                continue
            if not ln.strip():
                j += 1
                continue
            if is_list_item(ln):
                depth = len(ln) - len(ln.lstrip())
                if started and depth > top:
                    j += 1  # a sub-item: detail of the item above it
                    continue
                if not started:
                    top = depth
                started = True
                item = strip_markup(ln)
                wants_cmd = False
                if item:
                    items.append(item)
                    wants_cmd = item.endswith(":")
                j += 1
                continue
            if started and ln.startswith(("  ", "\t")):  # continuation / sub-item detail
                j += 1
                continue
            break
        i = j
    return [clip(x.rstrip(":"), ITEM_LIMIT) for x in dict.fromkeys(items)][:MAX_REMAINING]
