"""Position.Current: where the work stopped (DESIGN.md "Agent State file": "one step in flight, single line";
issue 12, 2.3 "Current is where the work stopped"; issue 21 item 1, "Position comes from the episodes' states").

Read from the state of the last episode (``episodes``), in this order (the first that applies wins; the latest
todo list's ``in_progress`` item and a status list's in-progress line come first, ``position``):

1. **unanswered** — the last prompts got no message and no call that changes something (reading is still
   answering): the latest that is a task (``workflow.task_text``: greetings dropped, a pasted log reduced to its
   error line) → ``Answer the user's last request: …``;
2. **waiting** — the report ends with a question or offer to the user, or an ask-the-user call has no answer →
   ``<what it is about> — waiting for the user: <the question>``; what it is about is the newest todo item
   touched after the user's last request, else the request;
3. **running** — a call still without result (``<request> — <the agent's last "I'll / Let me…" sentence, else
   the call's description> — `<command>` still running``), or a background job not seen ending
   (``<request> — `<job>` running in the background: <the report's sentence about it>``);
4. **working** — tool calls after the last message (the transcript ends mid-work) → ``<request> — <the last
   "I'll / Let me / Now…" sentence before them, else the last call's description>``, marked when the user
   interrupted it;
5. **a stated next step** in the report ("Next up: the retry budget", "wiring the exporter next", "Agora vou…",
   "接下来…") → ``<request> — <the step>`` (the agent said what comes next; a failed check stays in Remaining);
6. **failed** — a check's latest run failed and the report names no next step → ``<request> — `<check>` failed:
   <the runner's failure line>`` (whatever the report claims: "the tests pass" is not a run);
7. **commands handed to the user** (a shell block in the report) → ``<request>: the user runs `<command>```;
8. **finished** → ``<request> — finished (<files edited>; `<check>` passed | not re-checked): <the report's
   first sentences>`` (a structured review's ``overall_correctness`` stands in for them).

``<request>`` is the task the episode serves, in the user's words (``episodes.request``), clipped.  When the user
handed over a command sequence the agent is working through (``sequence``), its next line stands in for the
request: ``<the agent's "Next, I will…" sentence> — `<line>` (next of the N commands…)``.  With no
request and no todo list at all, rules 2 and 5–8 give nothing (an assistant's greeting is no step in flight).
"""

from __future__ import annotations

import json
import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import episodes as eps_mod
from pipeline.stages.rules import tools, workflow
from pipeline.stages.rules.episodes import Episode
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, one_line, sentence_spans, strip_markup, tokens

ITEM_LIMIT = 200  # characters
LABEL_LIMIT = 80  # characters of the request in Current
FILES_SHOWN = 2

_DOING = lazy_re(
    r"^(?:(?:ok(?:ay)?|great|good|perfect|alright|so|now)[,!.]?\s+)?"
    r"(?:I'll|I will|I'm|I am|Now\b|Next\b|Let me|Let's|I need to|Going to|Working on|Currently|"
    r"Agora (?:vou|estou)|Vou |Próximo passo|接下来|下一步|现在|次に|これから|다음으로|이제 )",
    re.IGNORECASE,
)
_NEXT_ANYWHERE = lazy_re(
    r"\b(?:next up|up next|next steps?|next)\s*[:\-–—]\s*(\S.{2,})|(\b\w+ing\b[^.!?\n]{2,80}?\b(?:next|now))[.!]?\s*$",
    re.IGNORECASE,
)
_CJK_STOP = lazy_re(r"(?<=[。！？])")
_VERDICT_KEYS = ("overall_correctness", "verdict", "status", "result", "summary", "overall_explanation")
_DESCRIPTION = lazy_re(r"(?:^|\s)description:\s*(.+?)(?:\s+\w+:\s|$)", re.DOTALL)
_REDIRECTS = lazy_re(r"\s+(?:[12]?>>?|&>)\s*\S+|\s+[12]>&[12]")


def build(s: Scan, step: str | None = None) -> str | None:
    """Current from the last episode (module rules); None when nothing applies.  ``step`` is the next line of a
    command sequence the user handed over (``sequence.position``): it stands in for the request and follows the
    agent's own stated step."""
    eps = eps_mod.episodes(s)
    if not eps:
        return None
    last = eps[-1]
    pending = _unanswered(s, eps)
    if pending:
        return clip("Answer the user's last request: " + pending, ITEM_LIMIT)
    if step:
        said = doing(eps_mod.report_text(s, last)) if last.report is not None else None
        if said and step.split("`")[1] not in said:
            return clip(f"{said.rstrip('.')} — {step}", ITEM_LIMIT)
        return clip(said or f"Run {step}", ITEM_LIMIT)
    req = label(s, last)
    lead = f"{req} — " if req else ""
    waiting = f"{_about(s, last) or req or 'the last request'} — waiting for the user: {last.question}"
    if last.state == "running":
        return clip(waiting if last.question else lead + _running(s, last), ITEM_LIMIT)
    if last.state == "working":
        return clip(lead + _working(s, last), ITEM_LIMIT)
    if last.report is None or (not req and not s.todo_lists):
        return None  # nothing was asked: a greeting ("How can I help you today?") is no step in flight
    if last.question:
        return clip(waiting, ITEM_LIMIT)
    text = eps_mod.report_text(s, last)
    nxt = _next_step(text) or doing(text)
    if nxt:
        return clip(lead + nxt, ITEM_LIMIT)
    if last.state == "failed":
        call, _, _, seg, _ = eps_mod.failing(last.checks)[-1]
        reason = tools.failure_reason(s.events[s.result_of[call]]) if call in s.result_of else ""
        return clip(f"{lead}`{seg}` failed" + (f": {reason}" if reason else ""), ITEM_LIMIT)
    if last.handed:
        return clip(f"{req or 'the last request'}: the user runs `{last.handed[0]}`", ITEM_LIMIT)
    gist = _verdict(text)
    outcome = _outcome(s, last)
    head = f"{lead}finished" if lead else "Finished"
    head += f" ({clip(outcome, 90)})" if outcome else ""
    return clip(head + (f": {gist}" if gist else ""), ITEM_LIMIT)


def label(s: Scan, ep: Episode) -> str:
    """The request an episode serves, clipped to ``LABEL_LIMIT``: its own words when it opens a task, else its
    task's ("" with neither)."""
    if ep.reply == "task" or ep.task is None:
        return eps_mod.request(s, ep, limit=LABEL_LIMIT)
    return clip(workflow.prompt_task_text(s, ep.task) or s.events[ep.task].text, LABEL_LIMIT)


def doing(text: str) -> str | None:
    """The last "I'll / Let me / Now / Next…" sentence (or ``;`` clause) of ``text``, or None."""
    for sentence in reversed(_sentences(text)):
        parts = [x.strip() for x in _CJK_STOP.split(sentence) if x.strip()]  # "…客户端。接下来…" is two sentences
        for part in reversed(parts):
            for clause in reversed([part] + [c.strip() for c in part.split(";")[1:]]):
                if _DOING.match(clause):
                    return clause.rstrip(":")
    return None


def _unanswered(s: Scan, eps: list[Episode]) -> str | None:
    """The latest task text among the trailing episodes that got no reply (module rule 1)."""
    for ep in reversed(eps):
        if ep.state != "unanswered":
            break
        own = workflow.prompt_task_text(s, ep.prompt)
        if own and not workflow.is_chatter(own):
            return one_line(own)
    return None


def _about(s: Scan, ep: Episode) -> str | None:
    """The newest todo item touched during the episode's task (in progress, else completed)."""
    since = ep.task if ep.task is not None else ep.prompt
    lists = [i for i in s.todo_lists if i > since]
    if not lists:
        return None
    todos = s.events[lists[-1]].todos or []
    for wanted in ("in_progress", "completed"):
        picked = [t.content for t in todos if (t.status or "") == wanted]
        if picked:
            return picked[0] if wanted == "in_progress" else picked[-1]
    return None


def _sentences(text: str) -> list[str]:
    return [strip_markup(text[a:b]) for a, b in sentence_spans(text)]


def _next_step(text: str) -> str | None:
    for sentence in reversed(_sentences(text)[-3:]):
        m = _NEXT_ANYWHERE.search(sentence)
        if m:
            return (m.group(1) or m.group(2)).strip().rstrip(".")
    return None


def _verdict(text: str) -> str | None:
    """A finished answer's gist: a structured verdict's fields, else its first two sentences that say something
    (a lead-in ending in ":", a bare heading such as "Summary" and table rows are skipped)."""
    t = text.strip()
    if t.startswith("{"):
        try:
            obj = json.loads(t)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            parts = [str(obj[k]) for k in _VERDICT_KEYS if isinstance(obj.get(k), (str, int, float))]
            if parts:
                return "; ".join(parts)
    said = [x for x in _sentences(t) if x and not x.rstrip("*_ ").endswith((":", "：")) and x.count("|") < 2
            and (len(x.split()) > 1 or len(x) >= 8)]
    return " ".join(said[:2]) if said else None


def _files(paths: list[str]) -> str:
    """File names (not folders) of ``paths``, newest last, at most ``FILES_SHOWN``."""
    shown = list(dict.fromkeys(p.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] for p in paths))
    more = len(shown) - FILES_SHOWN
    return ", ".join(shown[-FILES_SHOWN:]) + (f" +{more} more" if more > 0 else "")


def _outcome(s: Scan, ep: Episode) -> str:
    """What the episode committed, proved and changed: ``committed 1a2b3c4 "title"; `pytest -q` passed; edited a,
    b`` (``…; `make` not run since`` when a check the session uses did not run after its last code edit)."""
    from pipeline.stages.rules.done import outcomes

    parts: list[str] = []
    start = max(ep.prompt, 0)
    for i, step in reversed(outcomes(s)[0]):
        if start <= i < ep.end and step.startswith("Committed "):
            parts.append(clip("c" + step[1:], 60))
            break
    if ep.state == "verified":
        passed = [c for c in ep.checks if c[4] == "passed"]
        if passed:
            parts.append(f"`{passed[-1][3]}` passed")
    elif ep.state == "unverified":
        code = [c for c, p in ep.edits if eps_mod.code_path(p)]
        stale = eps_mod.stale_checks(s, code[-1]) if code else []
        if stale:
            parts.append(f"`{stale[0][0]}` not run since")
    if ep.edits:
        parts.append("edited " + _files([p for _, p in ep.edits]))
    return "; ".join(parts)


def _running(s: Scan, ep: Episode) -> str:
    """Module rule 3: a call still without result, else a background job still alive."""
    if ep.pending:
        call = ep.pending[-1]
        ev = s.events[call]
        if ev.kind == "subagent_call":
            return f"the {ev.agent or 'sub-agent'} sub-agent has not answered yet: {one_line(ev.target or ev.text)}"
        cmd = tools.command_of(ev)
        said = _said_before(s, ep, call) or _description(ev.text) or ("" if cmd else ev.target or tools.tool(ev))
        shown = f"`{_plain(cmd)}` still running" if cmd else ""
        return "; ".join(x.rstrip(".") for x in (said, shown) if x) or "a call still running"
    job = ep.background[-1]
    raw = tools.raw_command(s.events[job])
    sent = [seg for seg, op in tools.split_shell(raw) if op == "&"]  # the segment(s) sent to the background
    cmd = _plain(sent[-1] if sent else raw)
    about = _about_job(s, ep, cmd)
    return f"`{cmd}` running in the background" + (f": {about}" if about else "")


def _working(s: Scan, ep: Episode) -> str:
    """Module rule 4: the agent's last stated step before its trailing calls, else the last call's description."""
    call = ep.calls[-1]
    ev = s.events[call]
    said = _said_before(s, ep, call) or _description(ev.text)
    if not said:
        cmd = tools.command_of(ev)
        said = f"last ran `{_plain(cmd)}`" if cmd else f"last call: {ev.tool_name or 'tool'} {one_line(ev.target or '')}"
    return said + (" (interrupted by the user)" if ep.interrupted else " (refused by the harness)" if ep.denied else "")


def _said_before(s: Scan, ep: Episode, call: int) -> str | None:
    """The last "I'll / Let me…" sentence of the latest assistant message of the episode before ``call``."""
    for i in reversed(s.assistants):
        if i < max(ep.prompt, 0):
            break
        if i < call:
            return doing(s.events[i].text)
    return None


def _about_job(s: Scan, ep: Episode, cmd: str) -> str | None:
    """The report's last sentence about a background job: one sharing a content word of five or more letters
    with its command."""
    if ep.report is None:
        return None
    words = {w for w in tokens(cmd.replace("/", " ").replace("_", " ")) if len(w) >= 5}
    for sentence in reversed(_sentences(eps_mod.report_text(s, ep))):
        if words & tokens(sentence):
            return sentence.rstrip(":")
    return None


def _plain(cmd: str) -> str:
    """A command as shown: ``cd <dir> &&`` and output redirections dropped, one line, clipped."""
    return clip(_REDIRECTS.sub("", eps_mod.bare_command(one_line(cmd))).rstrip(" &"), 90)


def _description(text: str) -> str | None:
    m = _DESCRIPTION.search(text or "")
    return m.group(1).strip() if m else None
