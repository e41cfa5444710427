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
  …", "- next: …", or ``- [x]`` / ``- [ ]`` check boxes) stands in for one;
* with no todo list, a command sequence the user handed over and the agent is working through (``sequence``)
  names its next line in Current (after the agent's own "Next, I will…" sentence) and its later lines first in
  Remaining.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import current as current_rules
from pipeline.stages.rules import tools
from pipeline.stages.rules import branches, edits, sequence
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
# Open-item heads (issue 12 §2.4, §2.6), in English and the common Portuguese / Spanish / French / German /
# Chinese / Japanese / Korean words; a head opens a line or follows a sentence end in it ("Build is green. Still
# to do: …").
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
_STATUS_LINE = lazy_re(
    r"^[ \t]*[-*+][ \t]+(?:\[(?P<box>[ xX])\][ \t]*)?(?:(?:\*\*|__)?(?P<label>done|completed|complete|finished|fixed|"
    r"in[ -]progress|doing|current|wip|working on|now|next|then|later|after that|todo|to do|pending|remaining|blocked|"
    r"up next)(?:\*\*|__)?"
    r"[ \t]*[:\-–—][ \t]*)?(?P<body>\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_OPEN_HEAD_NOCOLON = lazy_re(r"^[ \t]*#+\s*(?:\*\*|__)?(?:" + _HEADS + r")(?:\*\*|__)?\s*$", re.IGNORECASE)


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
    nxt, later = (None, []) if todos else sequence.position(s)
    if nxt and (current is None or nxt.split("`")[1] not in current) and not (current or "").startswith(
            "Answer the user's last request"):
        current = clip(f"{current.rstrip('.')} — {nxt}" if current else f"Run {nxt}", ITEM_LIMIT)
    tool_steps, failures = _tool_outcomes(s)
    done = _done(s, latest, todos, extra=[(status_at, x) for x in st_done] if status_at is not None else [],
                 tool_steps=tool_steps)
    remaining = _remaining(s, latest, todos, st_next, failures)
    remaining = list(dict.fromkeys(later + remaining))
    return current, done, remaining[:MAX_REMAINING]


def _remaining(s: Scan, latest: int | None, todos, st_next: list[str], failures: list[tuple[int, str]]) -> list[str]:
    """Remaining, next first (issue 12 §2.4 "Remaining is what is really open"):

    1. the agent's question or offer that ends the session unanswered (``pending_question``): the next thing
       that happens is the user's answer;
    2. the latest todo list's pending items, else a status list's next items, else the open items the latest
       assistant message after the list states (``open_items_in``: "Next steps:", "Still to do:",
       "Próximos passos:", "下一步："…);
    3. checks whose last run failed and deploys / pushes whose last attempt failed (``_tool_outcomes``).
    """
    out: list[str] = []
    asked = pending_question(s)
    if asked:
        out.append(asked)
    planned = [clip(t.content, ITEM_LIMIT) for t in todos if _status(t.status) == "pending"] or st_next
    if not planned:
        planned = _open_items(s, after=latest if latest is not None else -1)
    out.extend(planned)
    out.extend(text for _, text in failures)
    return list(dict.fromkeys(out))


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
    """Accomplished steps from tool calls, chronological (``_tool_outcomes``'s first half)."""
    return _tool_outcomes(s)[0]


def _tool_outcomes(s: Scan) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(done steps, open failures)`` from the tool calls, each ``(event index, text)``, chronological.

    Done steps (issue 12 §2.5, "the tests pass" is not "I ran the tests"):

    * edit runs (one line per run of file edits; a pure deletion adds what it removed, ``edits.gist``): edit
      tools, and shell writes (``cat > f <<EOF``, ``tee``,
      ``sed -i``, ``cp``, ``mv``, ``apply_patch``; ``tools.shell_edits``); a failed call edits nothing;
    * ``Ran `<check>` (passed|clean|succeeded)`` for a test/lint/build command whose latest run passed
      (``tools.check_runs``): a runner failure line marks a run failed whatever its exit code, and a filtered
      run (``| tail``, ``|| true``, ``; echo done``) proves a pass only by a runner summary.  A run whose
      outcome is not shown is left out of Done (never written as passed), and does not clear an earlier
      failure;
    * ``Committed <sha> "<message>"`` (the id from git's ``[branch sha] title`` line), ``Pushed <remote
      branch>`` (a rejected or failed push is not done), what a CLI created (``gh pr/issue create``, deploys,
      publishes, tickets) with the URL / key it printed, commits a sub-agent reports with their ids;
    * ``Checked <local url> (curl): <first line of the body>`` for the latest successful request to each
      local URL (curl, wget, httpie, Invoke-WebRequest).

    Open failures (Remaining): a check whose latest decisive run failed, and a deploy / publish / push whose
    latest attempt failed, each naming the command and the runner's failure line.
    """
    cwd = s.meta.cwd
    steps: list[tuple[int, str]] = []
    run_paths: list[str] = []
    run_created: set[str] = set()
    run_gists: list[str] = []
    run_last = -1
    seg_pass: dict[str, tuple[int, str, str]] = {}  # segment -> (index, kind, runner key) of its latest pass
    runner: dict[str, tuple[int, str, str, str, str]] = {}  # key -> (index, outcome, kind, segment, reason)
    shipped: dict[str, tuple[int, bool, str, str]] = {}  # key -> (index, ok, what, reason)
    fetched: dict[str, tuple[int, str]] = {}  # url -> (index, text)

    def flush() -> None:
        nonlocal run_paths, run_created, run_last, run_gists
        if run_paths:
            created = [p for p in run_paths if p in run_created]
            edited = [p for p in run_paths if p not in run_created]
            parts = []
            if edited:
                parts.append("Edited " + _list(edited))
            if created:
                parts.append(("created " if parts else "Created ") + _list(created))
            what = "; ".join(dict.fromkeys(run_gists))
            steps.append((run_last, clip("; ".join(parts) + (f" ({what})" if what else ""), ITEM_LIMIT)))
        run_paths, run_created, run_last, run_gists = [], set(), -1, []

    def add_edits(i: int, paths: list[tuple[str, bool]]) -> None:
        nonlocal run_last
        for p, created in paths:
            rp = tools.relative(p, cwd)
            if rp.startswith(("/tmp/", "/var/tmp/", "/private/tmp/")):
                continue  # a scratch file outside the session's folder
            if rp in run_paths:
                run_paths.remove(rp)
            run_paths.append(rp)
            if created:
                run_created.add(rp)
        run_last = i

    call_set = set(s.calls)
    gone = branches.abandoned(s.events)  # edits of a branch the user rewound away from are not Done
    for i in sorted(call_set | set(s.users) | set(s.todo_lists)):
        ev = s.events[i]
        if i in gone:
            continue
        if ev.kind != "tool_call":
            flush()
            continue
        result = s.events[s.result_of[i]] if i in s.result_of else None
        paths = tools.edit_paths(ev)
        if paths:
            if result is not None and result.is_error:
                continue
            add_edits(i, [(p, tools.is_create(ev)) for p in paths])
            said = edits.gist(ev)
            if said:
                run_gists.append(said)
            continue
        cmd = tools.command_of(ev)
        if not cmd:
            continue
        raw = tools.raw_command(ev)
        checks = tools.check_runs(raw, result)
        if checks:
            flush()
            for kind, key, seg, outcome in checks:
                if outcome == "passed":
                    seg_pass[seg] = (i, kind, key)
                if outcome != "unknown":
                    reason = tools.failure_reason(result) if outcome == "failed" else ""
                    runner[key] = (i, outcome, kind, seg, reason)
            continue
        shell_paths = tools.shell_edits(raw, ev.text)
        if shell_paths:
            if result is None or tools.failed(result):
                continue
            add_edits(i, shell_paths)
            continue
        got = tools.fetch_check(raw, result)
        if got:
            url, body = got
            fetched.pop(url, None)
            fetched[url] = (i, f"Checked {url} ({raw.split()[0].rsplit('/', 1)[-1]})" + (f": {body}" if body else ""))
            continue
        made = tools.created_ref(raw, result)
        if made:
            label, ident, ok = made
            flush()
            if ok:
                steps.append((i, clip(f"{label}: {ident}" if ident else label, ITEM_LIMIT)))
            if result is not None:
                shipped[label] = (i, ok, label, "" if ok else tools.failure_reason(result))
            continue
        if "git" not in cmd:
            continue
        msg = tools.commit_message(cmd, ev.text)
        push = tools.push_target(cmd)
        if msg is None and push is None:
            continue
        flush()
        if msg is not None:
            got_commit = tools.commit_done(raw, result)
            if got_commit is not None:
                sha, title = got_commit
                text = msg or title
                steps.append((i, clip("Committed" + (f" {sha}" if sha else "") + (f' "{text}"' if text else
                                                                                     (" changes" if not sha else "")),
                                      ITEM_LIMIT)))
        if push is not None and result is not None:
            ok = tools.push_done(raw, result)
            if ok:
                steps.append((i, clip(f"Pushed {push}".strip(), ITEM_LIMIT)))
            shipped["git push"] = (i, ok, f"git push {push}".strip(), "" if ok else tools.failure_reason(result))
    flush()
    verbs = {"test": "passed", "lint": "clean", "build": "succeeded"}
    for seg, (i, kind, key) in seg_pass.items():
        if runner[key][1] == "failed" and runner[key][0] > i:
            continue  # a later run of the same runner failed: this pass is stale
        steps.append((i, clip(f"Ran `{seg}` ({verbs[kind]})", ITEM_LIMIT)))
    steps.extend(fetched.values())
    steps.extend(_subagent_commits(s))
    steps.sort(key=lambda p: p[0])
    wants = {"test": "passing", "lint": "clean", "build": "succeeding"}
    failures: list[tuple[int, str]] = []
    for key, (i, outcome, kind, seg, reason) in runner.items():
        if outcome != "failed":
            continue
        shown = seg if len(seg) <= 60 else key
        failures.append((i, clip(f"Get `{shown}` {wants[kind]}: last run failed" + (f" — {reason}" if reason else ""),
                                 ITEM_LIMIT)))
    for key, (i, ok, what, reason) in shipped.items():
        if not ok:
            shown = what.split(": ", 1)[0].replace("Deployed with ", "").replace("Published with ", "").strip("`")
            failures.append((i, clip(f"Retry `{shown}`: last attempt failed" + (f" — {reason}" if reason else ""),
                                     ITEM_LIMIT)))
    failures.sort(key=lambda p: p[0])
    return steps, failures


_SHA_ITEM = lazy_re(
    r"^[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*(?:\*\*)?`?(?P<sha>(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12})`?(?:\*\*)?"
    r"[ \t]*(?:—|–|-|:)[ \t]*`?(?P<title>[^`\n]{3,}?)`?[ \t]*$",
    re.MULTILINE,
)
_COMMIT_HEAD = lazy_re(r"\bcommit(?:s|ted)?\b|\bcreated\b|\bmade\b", re.IGNORECASE)
_HISTORY_HEAD = lazy_re(r"\b(?:recent|log|history|previous|existing|earlier|before|prior|upstream|base)\b",
                        re.IGNORECASE)


def _subagent_commits(s: Scan) -> list[tuple[int, str]]:
    """Commits a sub-agent reports having made (its answer lists ``<sha> — <title>`` under a "Commits" /
    "Created commits" head, not under "Recent commits" / "git log"), as ``Committed <sha> "<title>" (<agent>
    sub-agent)``."""
    out: list[tuple[int, str]] = []
    for i in s.subagent_results:
        text = s.events[i].text or ""
        if "commit" not in text.lower():
            continue
        head = ""
        for line in text.split("\n"):
            m = _SHA_ITEM.match(line)
            if m is None:
                if line.strip() and not line.startswith(("  ", "\t")):
                    head = line
                continue
            if not _COMMIT_HEAD.search(head) or _HISTORY_HEAD.search(head):
                continue
            who = f" ({s.events[i].agent} sub-agent)" if s.events[i].agent else " (sub-agent)"
            out.append((i, clip(f'Committed {m.group("sha")} "{m.group("title").strip()}"{who}', ITEM_LIMIT)))
    return out


def _list(paths: list[str], shown: int = 4) -> str:
    if len(paths) <= shown:
        return ", ".join(paths)
    return ", ".join(paths[:shown]) + f" (+{len(paths) - shown} more)"


_OFFER = lazy_re(
    r"\b(?:would you like|do you want|shall i|should i|want me to|let me know (?:if|whether|which|what)|"
    r"i can (?:also |help|set|add|open|write|run|create|make|wire|do)|happy to|if you(?:'d| would) like)\b|"
    r"você (?:quer|prefere|gostaria)|gostaria que|posso (?:ajudar|fazer|criar)|¿?quieres que|te gustaría|"
    r"需要我|要不要|是否需要|我可以|しますか|しましょうか|でしょうか|할까요|하시겠습니까|드릴까요",
    re.IGNORECASE,
)
_SMALL_TALK = lazy_re(
    r"\b(?:anything else|any (?:other )?questions|something else|further (?:help|assistance|questions)|"
    r"help with anything|if you have (?:any )?(?:questions|issues)|other questions)\b|"
    r"mais alguma coisa|algo más|还有(?:什么|其他)|他に(?:何か|ご質問)|다른 (?:질문|도움)",
    re.IGNORECASE,
)
_CJK = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_QUESTION_TOOLS = frozenset({"askuserquestion", "ask_user", "askuser", "ask_followup_question", "question"})


def pending_question(s: Scan) -> str | None:
    """``Waiting for the user: <question>`` when the session ends on the agent's unanswered question or offer
    (issue 12 §2.4): the final assistant message, with no user prompt and no tool call after it, asks the user
    ("Shall I open the PR against the release branch?", "Does your repo have a fixtures folder?", "Quer que eu
    publique?", "要我提交吗？") or offers the next step ("I can also wire up the CI job.") — its last asking
    sentence, else its last offer; or an ask-the-user tool call left without an answer.  Sign-off small talk
    ("Anything else?", "Let me know if you have questions") is no open item.  A question shorter than 30
    characters (10 in Chinese / Japanese / Korean; "Which one?") keeps the sentence before it in its paragraph."""
    if not s.assistants or not any(is_real_prompt(s.events[i].text) for i in s.users):
        return None
    last = s.assistants[-1]
    later_user = next((i for i in reversed(s.users) if i > last), None)
    last_call = s.calls[-1] if s.calls else None
    if last_call is not None and last_call > last:
        ev = s.events[last_call]
        if tools.tool(ev) in _QUESTION_TOOLS and last_call not in s.result_of and later_user is None:
            return clip("Waiting for the user: " + (ev.target or ev.text), ITEM_LIMIT)
        return None
    if later_user is not None and is_real_prompt(s.events[later_user].text):
        return None
    text = s.events[last].text or ""
    spans = [(a, b) for a, b in sentence_spans(text)[-4:] if not text[a:b].lstrip().startswith("```")]
    sentences = [strip_markup(text[a:b]).lstrip("-=*_ ").strip() for a, b in spans]
    asked = None
    for k in range(len(sentences) - 1, max(-1, len(sentences) - 4), -1):
        x = sentences[k]
        if x and x.rstrip("*_` )").endswith(("?", "？")) and not _SMALL_TALK.search(x):
            asked = k
            break
    if asked is None:
        for k in range(len(sentences) - 1, max(-1, len(sentences) - 3), -1):
            if sentences[k] and _OFFER.search(sentences[k]) and not _SMALL_TALK.search(sentences[k]):
                asked = k
                break
    if asked is None:
        return None
    q = sentences[asked]
    if _CJK.search(q):  # the sentence splitter keeps "…写好了。要我…吗？" as one sentence
        pieces = [x for x in re.split(r"(?<=[。！？])", q) if x.strip()]
        q = next((x.strip() for x in reversed(pieces) if x.rstrip().endswith(("?", "？"))), pieces[-1].strip() if pieces else q)
    short = len(q) < (10 if _CJK.search(q) else 30)
    if short and asked > 0 and "\n\n" not in text[spans[asked - 1][0]:spans[asked][0]]:
        q = sentences[asked - 1] + " " + q  # "Which one?" keeps the sentence before it in its paragraph
    return clip("Waiting for the user: " + q, ITEM_LIMIT)


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
