"""Episodes: the session cut into the user's requests and what became of each (issue 21, item 1).

An **episode** opens at a real user prompt (``workflow.is_real_prompt``: not a harness control, an interruption
marker or "continue") and runs to the next one; the events before the first prompt (a session resumed from a
compaction summary) form an episode of their own with no prompt.  Its prompt is a **task** (a prompt that starts
work, ``workflow.tasks``), an **answer** to the agent's question or offer (``workflow.is_answer``: "yes", "2",
"B") or a **follow-up** (a correction, a duplicate).  Each episode serves the latest task at or before it.

What an episode did is read from its events, in any language (no phrase lists but the question/offer cues):

* **edits** — file-editing calls and shell writes that succeeded (``tools.edit_paths``, ``tools.shell_edits``);
* **checks** — test / lint / build runs and their outcome (``tools.check_runs``: passed, failed, unknown);
* **pending** — calls with no result when the transcript ends (the harness shows them running: opencode
  ``running``, a Claude Code call cut off), and sub-agents whose answer never came back;
* **background** — jobs started in the background (``run_in_background`` / ``is_background`` / ``mode: async``
  / ``detach`` arguments, or a shell command that puts a segment in the background with ``&``, ``nohup``
  included) and not seen ending: no later ``kill`` naming the job's PID (as its own output printed it) or its
  script, no later kill-shell tool;
* **report** — its final main-thread assistant message, the densest source: the question or offer it ends
  with (``asks``), the shell commands it hands to the user to run (``handed``);
* **interrupted** — the user stopped it (an interruption marker, a tool call the user refused); **denied** — the
  harness's permission check refused one of its calls.

Its **state** at the end of the transcript, the first that applies:

``running``      a call still without result, or a background job still alive (the last episode only);
``working``      the last episode ends on tool calls after its last message (the agent is mid-work);
``unanswered``   no message and no call that changes something after the prompt;
``handed_back``  the report ends with a question or offer to the user, or hands commands to the user to run;
``failed``       a check's latest decisive run failed (and no later run of the same program and kind passed);
``verified``     files were edited and a check passed after the last edit;
``unverified``   files were edited after the last run of a check the session uses (or that run's outcome is not
                 shown);
``abandoned``    interrupted by the user with no report after it;
``done``         anything else that got a reply (an answer, edits in a session that runs no checks, commits).

Position (``current``, ``position``) is read from these states, not from the wording of the last message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import sequence, tools, workflow
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, one_line, sentence_spans, strip_markup

REQUEST_LIMIT = 100  # characters of a request shown in Current / Remaining
_CJK = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
# A question or offer to the user, in the languages the rules read (a sentence ending in "?" always asks).
_OFFER = lazy_re(
    r"\b(?:would you like|do you want|shall i|should i|want me to|let me know (?:if|whether|which|what)|"
    r"please (?:confirm|choose|pick)|which (?:one|option|approach) (?:do|would|should)|"
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
#: calls that end the agent's turn with its report (Copilot CLI ``task_complete``, Cline ``attempt_completion``)
COMPLETION_TOOLS = frozenset({"task_complete", "attempt_completion", "complete_task"})
QUESTION_TOOLS = frozenset({"askuserquestion", "ask_user", "askuser", "ask_followup_question", "question"})
_BG_ARG = lazy_re(r"(?m)^(?:run_in_background|is_background|detach|async): *(?:true|True|1)\b|^mode: *async\b")
_PID = lazy_re(r"(?i)\bpid\b\D{0,12}(\d{2,7})|^\[\d+\]\s+(\d{2,7})\s*$", re.MULTILINE)
_ARG_LEAD = lazy_re(r"^\s*\w+:\s*")
_LONE_AMP = lazy_re(r"(?<![&>|<])&(?![&>])")
_KILL_TOOLS = frozenset({"killshell", "kill_shell", "killbash", "kill_bash", "stop_bash", "stopbash"})
_SHELL_FENCE = lazy_re(r"```(bash|sh|shell|zsh|console|powershell|ps1|pwsh|cmd|bat)?[ \t]*\n(.*?)```", re.DOTALL)
_MARKED = lazy_re(r"^\s*(?:\$|!)\s*\S")
_PROGRAM_WORD = lazy_re(r"^(?:[a-z][\w.-]*|\.{0,2}/\S+|~/\S+)(?:\s|$)")
_CMD_LINE = lazy_re(r"^\s*(?:[$>]\s+|!\s*)?([a-zA-Z.][\w./-]*(?:\s+\S+)+)\s*$")
_CD_LEAD = lazy_re(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_REFUSED = lazy_re(r"^(?:The user doesn't want to proceed|User rejected|The user rejected|Permission denied by user|"
                   r"\[Request interrupted by user)", re.IGNORECASE)
#: a call the user stopped or refused, or the harness's permission check denied: the command never (fully) ran
_NOT_RUN = lazy_re(r"^(?:The user doesn't want to proceed|User rejected|The user rejected|Permission denied by user|"
                   r"\[Request interrupted by user|Permission for this action was denied|"
                   r"(?:Tool|Command) (?:use |execution )?(?:was )?(?:denied|rejected|blocked)\b)", re.IGNORECASE)
_INTERRUPT = "[Request interrupted by user"


@dataclass(slots=True)
class Episode:
    """One episode (module rules).  Indexes are event indexes; lists are ascending.

    ``prompt`` is -1 for the events before the first real prompt; ``end`` is the index after its last event.
    ``reply`` is ``task`` / ``answer`` / ``followup`` / ``none`` (no prompt).  ``checks`` holds ``(call, kind, key,
    segment, outcome)`` per test/lint/build run; ``edits`` ``(call, path)`` per file written (paths relative to the
    session's folder, scratch files left out); ``question`` the question or offer its report ends with;
    ``handed`` the commands its report hands to the user.
    """

    prompt: int
    end: int
    task: int | None = None
    reply: str = "none"
    report: int | None = None
    calls: list[int] = field(default_factory=list)
    edits: list[tuple[int, str]] = field(default_factory=list)
    checks: list[tuple[int, str, str, str, str]] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    background: list[int] = field(default_factory=list)
    interrupted: bool = False
    denied: bool = False
    question: str | None = None
    handed: list[str] = field(default_factory=list)
    state: str = "done"

    def last_call(self) -> int | None:
        return self.calls[-1] if self.calls else None


def episodes(s: Scan) -> list[Episode]:
    """The session's episodes, oldest first (module rules); computed once per scan."""
    got = s.memo.get("episodes")
    if got is None:
        got = s.memo["episodes"] = _build(s)
    return got


def raw(s: Scan, call: int) -> str:
    """``tools.raw_command`` of call ``call`` ("" for a call that runs no shell command), computed once per scan."""
    memo = s.memo.setdefault("raw", {})
    got = memo.get(call)
    if got is None:
        got = memo[call] = tools.raw_command(s.events[call])
    return got


def edited(s: Scan, call: int) -> list[str]:
    """``tools.edit_paths`` of call ``call``, computed once per scan."""
    memo = s.memo.setdefault("edited", {})
    got = memo.get(call)
    if got is None:
        got = memo[call] = tools.edit_paths(s.events[call])
    return got


def check_runs(s: Scan, call: int) -> list[tuple[str, str, str, str]]:
    """``tools.check_runs`` of shell call ``call`` with its result, computed once per scan; a run the user stopped
    or refused, or the harness's permission check denied, has an unknown outcome (it is no failed run)."""
    memo = s.memo.setdefault("checks", {})
    got = memo.get(call)
    if got is None:
        cmd = raw(s, call)
        result = s.events[s.result_of[call]] if call in s.result_of else None
        got = tools.check_runs(cmd, result) if cmd else []
        if got and result is not None and _NOT_RUN.match((result.text or "")[:200].lstrip()):
            got = [(kind, key, seg, "unknown") for kind, key, seg, _ in got]  # stopped or refused: it never ran
        memo[call] = got
    return got


def shell_writes(s: Scan, call: int) -> list[tuple[str, bool]]:
    """``tools.shell_edits`` of shell call ``call`` (``(path, created)``), computed once per scan."""
    memo = s.memo.setdefault("writes", {})
    got = memo.get(call)
    if got is None:
        cmd = raw(s, call)
        got = memo[call] = tools.shell_edits(cmd, s.events[call].text) if cmd else []
    return got


def _build(s: Scan) -> list[Episode]:
    events = s.events
    prompts = [i for i in s.users if workflow.is_real_prompt(events[i].text)]
    tasks = workflow.tasks(s)
    task_set = set(tasks)
    starts = ([-1] if not prompts or prompts[0] > 0 else []) + prompts
    out: list[Episode] = []
    k = 0  # next task index in ``tasks``
    current_task: int | None = None
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(events)
        while k < len(tasks) and tasks[k] <= start:
            current_task = tasks[k]
            k += 1
        ep = Episode(prompt=start, end=end, task=current_task if start >= 0 else None)
        if start >= 0:
            ep.reply = "task" if start in task_set else ("answer" if workflow.is_answer(s, start) else "followup")
        out.append(ep)
    call_set = set(s.calls)
    assistants = set(s.assistants)
    cwd = s.meta.cwd
    ep_at = 0
    for i in sorted(call_set | assistants | set(s.users)):
        while ep_at + 1 < len(out) and i >= out[ep_at + 1].prompt >= 0:
            ep_at += 1
        ep = out[ep_at]
        ev = events[i]
        if i in assistants or tools.tool(ev) in COMPLETION_TOOLS:
            if ev.text.strip():
                ep.report = i  # a completion call (Copilot ``task_complete``) is the agent's report too
            continue
        if ev.kind == "user_prompt":
            if ev.text[:200].lstrip().startswith(_INTERRUPT):
                ep.interrupted = True
            continue
        ep.calls.append(i)
        result = events[s.result_of[i]] if i in s.result_of else None
        if result is None:
            ep.pending.append(i)
        else:
            head = (result.text or "")[:200].lstrip()
            if _REFUSED.match(head):
                ep.interrupted = True
            elif _NOT_RUN.match(head):
                ep.denied = True
        paths = edited(s, i)
        if paths:
            if result is not None and not result.is_error:
                ep.edits.extend((i, p) for p in _kept_paths(paths, cwd))
            continue
        cmd = raw(s, i)
        if not cmd:
            continue
        runs = check_runs(s, i)
        for kind, key, seg, outcome in runs:
            ep.checks.append((i, kind, key, seg, outcome))
        if _background(ev, cmd):
            ep.background.append(i)
        elif not runs and result is not None:
            written = shell_writes(s, i)
            if written and not tools.failed(result):
                ep.edits.extend((i, p) for p in _kept_paths([p for p, _ in written], cwd))
    for ep in out:
        if ep.report is not None and (not ep.calls or ep.report > ep.calls[-1]):
            text = report_text(s, ep)
            ep.question = asks(text)
            ep.handed = [] if ep.question else handed(text)
        elif ep.calls and ep is out[-1]:
            last = events[ep.calls[-1]]
            if tools.tool(last) in QUESTION_TOOLS and ep.calls[-1] not in s.result_of:
                ep.question = one_line(last.target or last.text)
    _alive(s, out)
    if out:
        _waiting_agents(s, out[-1])
    s.memo["all_checks"] = [c for ep in out for c in ep.checks]
    for n, ep in enumerate(out):
        ep.state = _state(s, ep, last=n == len(out) - 1)
    return out


def report_text(s: Scan, ep: Episode) -> str:
    """The text of an episode's report ("" with none); a completion call's argument key (``summary:``) dropped."""
    if ep.report is None:
        return ""
    ev = s.events[ep.report]
    if ev.kind == "tool_call":
        return _ARG_LEAD.sub("", ev.text or ev.target or "", count=1)
    return ev.text


def _waiting_agents(s: Scan, ep: Episode) -> None:
    """Add to the last episode's ``pending`` the sub-agents it started whose answer never came back (a background
    sub-agent still working when the transcript ends)."""
    start = max(ep.prompt, 0)
    answered = {s.events[i].call_id for i in s.subagent_results if i >= start}
    for i in range(start, ep.end):
        ev = s.events[i]
        if ev.kind == "subagent_call" and ev.call_id and ev.call_id not in answered:
            ep.pending.append(i)
    ep.pending.sort()


#: folders of the harnesses' own state (plans, todo files, scratch) inside a home or project folder
_HARNESS_DIRS = lazy_re(r"(?:^|[\\/])(?:\.claude[\\/](?:plans|todos)|\.gemini[\\/]tmp|\.copilot[\\/]session-state|"
                        r"\.local[\\/]share[\\/]opencode)[\\/]")


def scratch(path: str) -> bool:
    """Whether a written path is scratch rather than the session's work: under ``/tmp`` (``/var/tmp``,
    ``/private/tmp``), or in a harness's own state folder (``~/.claude/plans``, ``~/.gemini/tmp``…)."""
    return path.startswith(("/tmp/", "/var/tmp/", "/private/tmp/")) or bool(_HARNESS_DIRS.search(path))


def _kept_paths(paths: list[str], cwd: str | None) -> list[str]:
    out = []
    for p in paths:
        rp = tools.relative(p, cwd)
        if scratch(rp) or not rp.strip():
            continue
        out.append(rp)
    return out


def _background(ev, raw: str) -> bool:
    """Whether shell call ``ev`` starts a job in the background (module rules)."""
    if _BG_ARG.search(ev.text or ""):
        return True
    if not _LONE_AMP.search(raw):
        return False  # no "&" that is not part of "&&", ">&", "&>": nothing goes to the background
    parts = tools.split_shell(raw)
    return any(op == "&" for _, op in parts[:-1]) or (bool(parts) and parts[-1][1] == "&") or any(
        seg.startswith("nohup ") for seg, op in parts if op == "&")


def _alive(s: Scan, eps: list[Episode]) -> None:
    """Drop from each episode's ``background`` the jobs a later call ended (module rules)."""
    jobs = [i for ep in eps for i in ep.background]
    if not jobs:
        return
    ended: set[int] = set()
    for job in jobs:
        result = s.events[s.result_of[job]] if job in s.result_of else None
        pids = {g for m in _PID.finditer(result.text or "") for g in m.groups() if g} if result else set()
        script = _script(raw(s, job))
        for i in s.calls:
            if i <= job:
                continue
            ev = s.events[i]
            if tools.tool(ev) in _KILL_TOOLS:
                ended.add(job)
                break
            cmd = tools.command_of(ev)
            if "kill" in cmd and (any(p in cmd for p in pids) or (script and script in cmd)):
                ended.add(job)
                break
    for ep in eps:
        ep.background = [i for i in ep.background if i not in ended]


def _script(cmd: str) -> str:
    """The most distinctive word of a background command: its first file-like argument's stem
    (``python3 src/training/train_rain.py`` -> ``train_rain``), else its program."""
    for word in cmd.split():
        w = word.strip("'\"")
        if "." in w.rsplit("/", 1)[-1] and not w.startswith(("-", ">", "2>", "&")):
            stem = w.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if len(stem) >= 3:
                return stem
    words = [w for w in cmd.split() if w not in ("nohup", "sudo", "exec")]
    return words[0] if words else ""


def _state(s: Scan, ep: Episode, *, last: bool) -> str:
    """The episode's state (module rules)."""
    events = s.events
    if ep.prompt >= 0 and ep.report is None and not any(not _reads(events[i]) for i in ep.calls):
        return "unanswered"
    if last and (ep.pending or ep.background):
        return "running"
    if last and ep.calls and (ep.report is None or ep.calls[-1] > ep.report):
        return "working"
    if ep.question or ep.handed:
        return "handed_back"
    if failing(ep.checks):
        return "failed"
    if ep.interrupted and (ep.report is None or (ep.calls and ep.calls[-1] > ep.report)):
        return "abandoned"
    code = [c for c, p in ep.edits if code_path(p)]
    if code:
        after = [c for c in ep.checks if c[0] > code[-1] and c[4] != "unknown"]
        if after and all(c[4] == "passed" for c in after):
            return "verified"
        if stale_checks(s, code[-1]):
            return "unverified"
    return "done"


def failing(checks: list[tuple[int, str, str, str, str]]) -> list[tuple[int, str, str, str, str]]:
    """The checks whose latest decisive run failed, with no later passing run of the same kind and program
    (``make increment_build_number`` failed, a later ``make`` passed: settled)."""
    latest: dict[str, tuple[int, str, str, str, str]] = {}
    passed_after: dict[tuple[str, str], int] = {}
    for c in checks:
        if c[4] == "unknown":
            continue
        latest[c[2]] = c
        if c[4] == "passed":
            passed_after[(c[1], c[2].split()[0])] = c[0]
    return [c for c in latest.values()
            if c[4] == "failed" and passed_after.get((c[1], c[2].split()[0]), -1) < c[0]]


def code_path(path: str) -> bool:
    """Whether an edited path is something a check exercises: not prose (.md, .txt, .rst…, README, LICENSE,
    CHANGELOG), not an image, not a VCS / packaging ignore file, not outside the project (an absolute path the
    session folder does not hold)."""
    low = path.replace("\\", "/").lower()
    name = low.rstrip("/").rsplit("/", 1)[-1]
    if low.endswith((".md", ".txt", ".rst", ".adoc", ".markdown", ".png", ".jpg", ".svg")) or name.startswith(
            (".gitignore", ".gitattributes", ".dockerignore", ".npmignore", ".prettierignore", ".eslintignore",
             "license", "changelog", "readme")):
        return False
    return not (path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", path))


def all_checks(s: Scan) -> list[tuple[int, str, str, str, str]]:
    """``(call, kind, key, segment, outcome)`` of every test / lint / build run of the session, in order (the
    episodes' ``checks`` joined), computed once per scan."""
    got = s.memo.get("all_checks")
    if got is None:
        got = s.memo["all_checks"] = [c for ep in episodes(s) for c in ep.checks]
    return got


def stale_checks(s: Scan, last_edit: int) -> list[tuple[str, int]]:
    """``(segment, call)`` of the checks the session ran before event ``last_edit`` (an edit of code), tests first,
    then builds, then lints, newest first within each, when no check of any kind ran with a shown outcome after
    it: the edit is unverified.  [] when one did, or when the session runs no checks."""
    seen: dict[str, tuple[int, str, str]] = {}  # key -> (call, kind, segment) of its latest run before last_edit
    for i, kind, key, seg, outcome in all_checks(s):
        if i < last_edit:
            seen[key] = (i, kind, seg)
        elif outcome != "unknown":
            return []
    order = {"test": 0, "build": 1, "lint": 2}
    out = sorted(seen.values(), key=lambda x: (order.get(x[1], 3), -x[0]))
    return list({seg: (seg, i) for i, _, seg in reversed(out)}.values())[::-1]


def _reads(ev) -> bool:
    """Whether a call only reads (Read, Grep, Glob, LS, view, search, fetch…): reading is still answering."""
    name = (ev.tool_name or "").lower()
    return any(w in name for w in ("read", "grep", "glob", "search", "view", "list", "find", "fetch")) or name == "ls"


# --- the report -------------------------------------------------------------------------------------------


def asks(text: str) -> str | None:
    """The question or offer a report ends with, or None: its last sentence ending in "?" among its last three
    ("Shall I open the PR against the release branch?", "要我提交吗？"), else its last offer among the last two
    ("I can also wire up the CI job.").  Sign-off small talk ("Anything else?", "Let me know if you have
    questions") asks nothing.  A question under 30 characters (10 in Chinese / Japanese / Korean; "Which one?")
    keeps the sentence before it in its paragraph."""
    if not text:
        return None
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
        q = next((x.strip() for x in reversed(pieces) if x.rstrip().endswith(("?", "？"))),
                 pieces[-1].strip() if pieces else q)
    short = len(q) < (10 if _CJK.search(q) else 30)
    if short and asked > 0 and "\n\n" not in text[spans[asked - 1][0]:spans[asked][0]]:
        q = sentences[asked - 1] + " " + q
    return q


def handed(text: str) -> list[str]:
    """The commands a report hands to the user: the first command line of each fenced block, in order.  A line is
    a command when the block is tagged as a shell (```` ```bash ````, ``sh``, ``powershell``…) and the line starts
    with a lower-case word or a path, or, in an untagged block, when it starts with a ``$ `` / ``! `` prompt mark or
    a program people type (``sequence.is_command_line``).  Marks are dropped."""
    out: list[str] = []
    if "```" not in text:
        return out
    for m in _SHELL_FENCE.finditer(text):
        tagged = bool(m.group(1))
        for line in m.group(2).splitlines():
            body = line.strip()
            if not body or body.startswith(("#", "//", "REM ")):
                continue
            c = _CMD_LINE.match(line)
            if c and (_MARKED.match(line) or (tagged and _PROGRAM_WORD.match(c.group(1)))
                      or sequence.is_command_line(body)):
                out.append(c.group(1).strip())
            break
    return out


def bare_command(cmd: str) -> str:
    """``cmd`` without a leading ``cd <dir> &&`` (the folder is the session's)."""
    return _CD_LEAD.sub("", cmd.strip())


# --- what an episode was about -------------------------------------------------------------------------------


def request(s: Scan, ep: Episode, eps: list[Episode] | None = None, limit: int = REQUEST_LIMIT) -> str:
    """What ``ep`` was asked to do, on one line: the task's own words; for an answer, the answer and the question
    it answers ("yes → Would you like me to fix that compilation error as well?"); "" with no prompt."""
    if ep.prompt < 0:
        return ""
    own = one_line(workflow.prompt_task_text(s, ep.prompt) or s.events[ep.prompt].text)
    if ep.reply == "answer" and eps:
        k = eps.index(ep)
        asked = eps[k - 1].question if k else None
        if asked:
            return clip(f"{own} → {asked}", limit)
    return clip(own, limit)
