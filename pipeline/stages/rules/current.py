"""Position.Current: where the work stopped (DESIGN.md "Agent State file": "one step in flight, single line";
issue 12, 2.3 "Current is where the work stopped").

Read from the shape of the session's end, in this order (the first that applies wins):

1. the latest todo list's ``in_progress`` item, or a status list's in-progress line (``position``);
2. **an unanswered request**: user prompts after the last assistant message, answered by no tool call that
   changes something (reading files is still answering) — the latest that is a task
   (``workflow.task_text``: greetings dropped, a pasted log reduced to its error line) →
   ``Answer the user's last request: …``;
3. **a pending question**: the session ends on an assistant message (no tool call after it) that asks the user
   or offers options, or on an ``AskUserQuestion`` / ``ask_user`` call left without an answer →
   ``<what it is about> — waiting for the user: <the question>``; what it is about is the newest todo item
   touched after the user's last request, else that request;
4. **a stated next step** in that final message, any position in a sentence ("Next up: the retry budget",
   "wiring the exporter next", "running the migration dry-run now"), else its last "I'll / Let me / Now /
   Agora vou / 接下来 / 次に…" sentence;
5. **commands handed to the user**: the final message gives a shell block for the user to run →
   ``<request>: the user runs `<first command>```;
6. **a finished answer**: the final message is a completion (a summary, a verdict; a structured review's
   ``overall_correctness``) → ``Finished: <its first two sentences>`` — never a stale step from before it;
With no request and no todo list at all, rules 3–6 give nothing (an assistant's greeting is no step in flight).

7. **mid-run**: tool calls after the final message (the transcript ends while the agent works) → the last
   "I'll / Let me / Now…" sentence before them, else the last call's own description (``description`` of a
   Bash call) → ``Running: …``.
"""

from __future__ import annotations

import json
import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import workflow
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, sentence_spans, strip_markup

ITEM_LIMIT = 200  # characters
_QUESTION_TOOLS = frozenset({"askuserquestion", "ask_user", "askuser", "ask_followup_question", "question"})

_ASKS = lazy_re(
    r"[?？]\s*(?:\*\*|__|`)?\s*$|\b(?:would you like|do you want|shall i|should i|which (?:one|option|approach)|"
    r"let me know (?:if|which|whether|what)|please (?:confirm|choose|pick)|want me to)\b|"
    r"você (?:quer|prefere|gostaria)|gostaria que|需要我|要不要|是否需要|しますか|でしょうか|할까요|하시겠습니까",
    re.IGNORECASE,
)
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
_SHELL_FENCE = lazy_re(r"```(?:bash|sh|shell|zsh|console|powershell|ps1|cmd|bat)?[ \t]*\n(.*?)```", re.DOTALL)
_CMD_LINE = lazy_re(r"^\s*(?:[$>]\s+|!\s*)?([a-zA-Z][\w.-]*(?:\s+\S+)+)\s*$")
_VERDICT_KEYS = ("overall_correctness", "verdict", "status", "result", "summary", "overall_explanation")


def build(s: Scan) -> str | None:
    """Current from the end of the session (rules 2–7 of the module); None when nothing applies."""
    last_user = next((i for i in reversed(s.users) if workflow.is_real_prompt(s.events[i].text)), None)
    last_asst = s.assistants[-1] if s.assistants else None
    request = workflow.active_task(s)
    last_call = s.calls[-1] if s.calls else None
    if last_user is not None and (last_asst is None or last_user > last_asst):
        # tool calls that change something answer the request (a commit, an edit, a run); reading is still answering
        acted = last_call is not None and last_call > last_user and not _exploring(s.events[last_call].tool_name)
        pending = None if acted else _unanswered(s, last_asst if last_asst is not None else -1)
        if pending:
            return clip("Answer the user's last request: " + pending, ITEM_LIMIT)
    if last_call is not None and (last_asst is None or last_call > last_asst):
        return _mid_run(s, last_call, last_asst, last_user, request)
    if last_asst is None or (request is None and not s.todo_lists):
        return None  # nothing was asked: a greeting ("How can I help you today?") is no step in flight
    text = s.events[last_asst].text
    question = _question(text)
    if question:
        return clip(f"{_about(s, last_user) or request or 'the last request'} — waiting for the user: {question}",
                    ITEM_LIMIT)
    nxt = _next_step(text) or _doing(text)
    if nxt:
        return clip(nxt, ITEM_LIMIT)
    cmd = _handed_command(text)
    if cmd:
        return clip(f"{request or 'the last request'}: the user runs `{cmd}`", ITEM_LIMIT)
    verdict = _verdict(text)
    if verdict:
        return clip(f"Finished: {verdict}", ITEM_LIMIT)
    return None


def _doing(text: str) -> str | None:
    """The last "I'll / Let me / Now / Next…" sentence (or ``;`` clause) of ``text``, or None."""
    for sentence in reversed(_sentences(text)):
        for clause in reversed([sentence] + [c.strip() for c in sentence.split(";")[1:]]):
            if _DOING.match(clause):
                return clause.rstrip(":")
    return None


def _exploring(tool: str | None) -> bool:
    """Whether a tool only reads (Read, Grep, Glob, LS, view, search, fetch…)."""
    name = (tool or "").lower()
    return any(w in name for w in ("read", "grep", "glob", "search", "view", "list", "find", "fetch")) or name == "ls"


def _unanswered(s: Scan, after: int) -> str | None:
    for i in reversed(s.users):
        if i < after:
            break
        text = s.events[i].text
        if not workflow.is_real_prompt(text):
            continue
        own = workflow.prompt_task_text(s, i)
        if own and not workflow.is_chatter(own):
            return own
    return None


def _about(s: Scan, last_user: int | None) -> str | None:
    """The newest todo item touched after the user's last request (in progress, else completed)."""
    lists = [i for i in s.todo_lists if last_user is None or i > last_user]
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


def _question(text: str) -> str | None:
    """The final message's question to the user (its last asking sentence), or None."""
    if not _ASKS.search(text.strip()[-600:]) and "?" not in text[-600:] and "？" not in text[-600:]:
        return None
    for sentence in reversed(_sentences(text)[-3:]):
        if _ASKS.search(sentence) or sentence.rstrip("*_` ").endswith(("?", "？")):
            return sentence
    return None


def _next_step(text: str) -> str | None:
    for sentence in reversed(_sentences(text)[-3:]):
        m = _NEXT_ANYWHERE.search(sentence)
        if m:
            return (m.group(1) or m.group(2)).strip().rstrip(".")
    return None


def _handed_command(text: str) -> str | None:
    """The first command of the final message's shell block (the user is to run it), or None."""
    for m in _SHELL_FENCE.finditer(text):
        for line in m.group(1).splitlines():
            c = _CMD_LINE.match(line)
            if c and not line.lstrip().startswith("#"):
                return c.group(1).strip()
    return None


def _verdict(text: str) -> str | None:
    """A finished answer's gist: a structured verdict's fields, else the first sentence of the message."""
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
    sentences = _sentences(t)
    return " ".join(sentences[:2]) if sentences else None


def _mid_run(s: Scan, last_call: int, last_asst: int | None, last_user: int | None, request: str | None) -> str | None:
    ev = s.events[last_call]
    if (ev.tool_name or "").lower() in _QUESTION_TOOLS and last_call not in s.result_of:
        return clip(f"{request or 'the last request'} — waiting for the user: {ev.target or ev.text}", ITEM_LIMIT)
    if last_asst is not None and (last_user is None or last_asst > last_user):
        doing = _doing(s.events[last_asst].text)
        if doing:
            return clip(doing, ITEM_LIMIT)
    what = _description(ev.text) or ev.target
    return clip(f"Running: {what}", ITEM_LIMIT) if what else None


_DESCRIPTION = lazy_re(r"(?:^|\s)description:\s*(.+?)(?:\s+\w+:\s|$)", re.DOTALL)


def _description(text: str) -> str | None:
    m = _DESCRIPTION.search(text or "")
    return m.group(1).strip() if m else None
