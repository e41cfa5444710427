"""The harness's own question and plan tools, answered by the user (issue 13 §1.1).

* **A question tool** (Claude Code ``AskUserQuestion``, Copilot ``ask_user``, ``ask_followup_question``): the
  call lists the options (``"label": "…"``), the result carries the answer (Claude Code: ``"<question>"="<answer>"``
  pairs; others: the answer text, perhaps after "User selected:").  The picked option is APPROVED with the
  question as its reason; when the question offered exactly two options, the other is REJECTED.  An answer that
  is none of the options is the user's own choice, APPROVED in their words.
* **A plan** (``ExitPlanMode``'s ``plan``, a ``<proposed_plan>`` block, a "## Plan" heading) the user accepts: the
  tool's non-error result, a prompt "implement the plan" / "Implement the following plan:" (the accept-and-clear
  flow starts a new context with it), in any of the languages read here.  APPROVED "the plan: <its title>" — and a
  declined ``ExitPlanMode`` that such a prompt follows is that flow, not a rejection (``is_accept_flow``).

Returned as ``(status, what, reason, ev, start, end, at)``: ``ev`` is the event quoted (``start..end`` in its
text), ``at`` the event whose time the entry takes.
"""

from __future__ import annotations

import json
import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.text import clip, strip_markup

WHAT_LIMIT = 160
QUESTION_TOOLS = frozenset({"askuserquestion", "ask_user", "askuser", "ask_followup_question", "ask_question", "question"})
PLAN_TOOLS = frozenset({"exitplanmode", "exit_plan_mode"})

_LABEL = lazy_re(r'"label"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
_QUESTION = lazy_re(r'"question"\s*:\s*"((?:[^"\\]|\\.){1,400})"')
_CHOICES = lazy_re(r'^(?:choices|options)\s*:\s*(\[.*\])\s*$', re.MULTILINE)
#: ``"<question>"="<answer>"``; a question may quote words itself (``como "o primeiro"?``)
_PAIR = lazy_re(r'"(?P<q>(?:[^"\n]|"(?!\s*=\s*")){3,400}?)"\s*=\s*"(?P<a>[^"\n]{1,300})"')
_ANSWER_LEAD = lazy_re(
    r"^\s*(?:the\s+)?user\s+(?:selected|responded|answered|chose|replied|picked)(?:\s+with)?\s*[:\-]?\s*", re.IGNORECASE
)
_IMPLEMENT = lazy_re(
    r"^\s*(?:ok(?:ay)?[,.!]?\s+|yes[,.!]?\s+|great[,.!]?\s+|please\s+)?(?:implement|execute|carry\s+out|start\s+(?:on|implementing)|"
    r"proceed\s+with|go\s+ahead\s+with|build)\s+(?:the\s+following|the|this|that|your|our)\s+plan\b"
    r"|^\s*(?:implemente|execute|pode\s+implementar|implementa|ejecuta|pon\s+en\s+marcha)\s+(?:o|el|este|esse|ese)\s+(?:plano|plan)\b"
    r"|^\s*(?:执行|实施|按照?)(?:这个|该)?计划|^\s*계획대로|^\s*プランを実行|^\s*その計画で",
    re.IGNORECASE,
)
_PLAN_BLOCK = lazy_re(r"<proposed_plan>\s*(?P<body>.*?)(?:</proposed_plan>|$)", re.DOTALL)
_PLAN_HEAD = lazy_re(r"^[ \t]*#{1,4}[ \t]*(?:\S+[ \t]+)?(?:implementation\s+)?plan\b[^\n]*$", re.IGNORECASE | re.MULTILINE)


def _unescape(s: str) -> str:
    try:
        return json.loads(f'"{s}"')
    except ValueError:
        return s


def _title(plan: str) -> str:
    """A plan's title: its first heading or first non-empty line, markup gone."""
    for line in plan.splitlines():
        t = strip_markup(line).strip(" :#")
        if t:
            return clip(re.sub(r"^(?:plan|implementation\s+plan)\s*[:\-–—]\s*", "", t, flags=re.I) or t, 120)
    return ""


def plan_title(call_text: str) -> str:
    """The title of a plan tool call's ``plan`` argument."""
    return _title(re.sub(r"^plan\s*:\s*", "", call_text.lstrip(), flags=re.I))


def in_plan_block(text: str, pos: int) -> bool:
    """True when offset ``pos`` sits inside a ``<proposed_plan>`` block: the assistant's own plan, wrapped in the
    harness's tag (not pasted text), so only the injection screen applies to it."""
    if "<proposed_plan>" not in text:
        return False
    return any(m.start() <= pos < m.end() for m in _PLAN_BLOCK.finditer(text))


def is_accept_flow(events, call: int) -> bool:
    """True when a plan tool call at ``call`` is followed (before the next assistant message) by a prompt that
    implements the plan: the harness's accept-and-clear flow, whatever the tool result says."""
    for j in range(call + 1, min(len(events), call + 8)):
        ev = events[j]
        if ev.kind == "user_prompt":
            return bool(_IMPLEMENT.search(ev.text))
        if ev.kind == "assistant_text":
            return False
    return False


def _answers(text: str) -> list[tuple[str, str, int, int]]:
    """``(question, answer, start, end)`` pairs of a question tool's result."""
    got = [(m.group("q"), m.group("a"), m.start(), m.end()) for m in _PAIR.finditer(text)]
    if got:
        return got
    body = text.strip()
    if body.startswith("{"):  # Gemini CLI ask_user: {"answers": {"0": "<label>"}}
        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        answers = obj.get("answers") if isinstance(obj, dict) else None
        values = list(answers.values()) if isinstance(answers, dict) else answers if isinstance(answers, list) else []
        out = []
        for v in values:
            if isinstance(v, str) and v.strip():
                k = text.find(json.dumps(v, ensure_ascii=False)[1:-1])
                if k >= 0:
                    out.append(("", v.strip(), k, k + len(v)))
        if out:
            return out
    if not body or len(body) > 300 or "\n" in body.strip():
        return []
    lead = _ANSWER_LEAD.match(body)
    a0 = text.find(body)
    ans = body[lead.end():] if lead else body
    return [("", ans.strip().strip('"'), a0, a0 + len(body))]


def _options(call_text: str) -> list[tuple[str, int, int]]:
    found = [(_unescape(m.group(1)), m.start(), m.end()) for m in _LABEL.finditer(call_text)]
    if found:
        return found
    m = _CHOICES.search(call_text)  # ask_user: choices: ["A", "B"]
    if m:
        try:
            items = json.loads(m.group(1))
        except ValueError:
            return []
        out = []
        for it in items:
            if isinstance(it, str):
                k = call_text.find(json.dumps(it, ensure_ascii=False)[1:-1])
                if k >= 0:
                    out.append((it, k, k + len(it)))
        return out
    return []


#: an answer the harness gave for an absent user ("The user is not available to respond…"): it speaks of the user
_HARNESS_ANSWER = lazy_re(r"\bthe\s+user\s+(?:is|has|was|will|did|does)\b", re.I)


#: the label an agent marks its own recommendation with
_RECOMMENDED = lazy_re(r"\((?:recommended|recomendad[oa]|recommandée?|empfohlen|推荐|推薦|권장|추천|おすすめ|推奨)[^)]{0,60}\)",
                       re.IGNORECASE)


def _group_of(call_text: str, opts: list[tuple[str, int, int]], chosen: tuple[str, int, int]) -> list[tuple[str, int, int]]:
    """The options of the question ``chosen`` belongs to: those between the nearest ``"question"`` keys around it
    (a call may ask several questions, each with its own options)."""
    starts = sorted(m.start() for m in _QUESTION.finditer(call_text))
    labels = [o for o in opts if o[1] >= 0]
    if len(starts) <= 1:
        return labels
    # each question object holds its options; the options before a "question" key belong to it when the key
    # follows them (``{"options": [...], "question": …}``), else to the one before
    after = all(any(o[1] < q for o in labels) for q in starts[:1])
    bounds = [0] + starts + [len(call_text)] if not after else [0] + [q + 1 for q in starts] + [len(call_text)]
    for a, b in zip(bounds, bounds[1:]):
        if a <= chosen[1] < b:
            return [o for o in labels if a <= o[1] < b]
    return labels


def from_question(events, call: int, result: int) -> list[tuple[str, str, str, int, int, int, int]]:
    """Entries of a question tool call answered by its result."""
    ctext, rtext = events[call].text or "", events[result].text or ""
    opts = _options(ctext)
    qs = [_unescape(m.group(1)) for m in _QUESTION.finditer(ctext)]
    out: list[tuple[str, str, str, int, int, int, int]] = []
    for q, a, s0, s1 in _answers(rtext):
        q = q or (qs[0] if len(qs) == 1 else (events[call].target or ""))
        picked = [o for o in opts if o[0].strip().lower() == a.strip().lower()]
        if not picked:
            picked = [o for o in opts if a.lower().startswith(o[0].lower()) and len(o[0]) >= 3]
        ctx = f' for "{clip(strip_markup(q), 100)}"' if q else ""
        if picked:
            label = picked[0][0]
            out.append(("APPROVED", clip(label, WHAT_LIMIT), f"user picked it{ctx}", result, s0, s1, result))
            group = _group_of(ctext, opts, picked[0])
            turned_down = [o for o in group if o is not picked[0]] if len(group) == 2 else [
                o for o in group if o is not picked[0] and _RECOMMENDED.search(o[0])]
            for other in turned_down:  # the one alternative, or the option the agent recommended
                out.append(("REJECTED", clip(other[0], WHAT_LIMIT), f'user picked "{clip(label, 60)}" instead{ctx}',
                            call, other[1], other[2], result))
        elif a and len(a.split()) <= 25 and not _HARNESS_ANSWER.search(a):
            out.append(("APPROVED", clip(a, WHAT_LIMIT), f"user's answer{ctx}", result, s0, s1, result))
    return out


def from_plan_tool(events, call: int, result: int | None) -> list[tuple[str, str, str, int, int, int, int]]:
    """The plan of a plan tool call, when the user accepted it (a non-error result or the accept flow)."""
    ev = events[call]
    accepted = is_accept_flow(events, call) or (result is not None and not events[result].is_error)
    if not accepted:
        return []
    text = ev.text or ""
    title = plan_title(text)
    if not title:
        return []
    k = text.find(title[:40].rstrip("…"))
    k = max(k, 0)
    at = result if result is not None else call
    return [("APPROVED", clip(f"the plan: {title}", WHAT_LIMIT), "user approved the plan (plan mode)", call, k,
             min(len(text), k + len(title)), at)]


def from_prompt(events, prompt: int, prev: int | None) -> list[tuple[str, str, str, int, int, int, int]]:
    """A prompt that implements a plan: the plan of the assistant message before it (a ``<proposed_plan>``
    block or a plan heading), or the plan pasted after "Implement the following plan:"."""
    text = events[prompt].text
    m = _IMPLEMENT.search(text)
    if not m:
        return []
    rest = text[m.end():].lstrip(" :\n")
    if len(rest) > 40:  # accept-and-clear: the plan follows in the prompt itself
        title = _title(rest)
        k = text.find(title[:40].rstrip("…")) if title else -1
        if title and k >= 0:
            return [("APPROVED", clip(f"the plan: {title}", WHAT_LIMIT), f'user: "{clip(m.group(0).strip(), 60)}"',
                     prompt, k, k + len(title), prompt)]
    if prev is None:
        return []
    ptext = events[prev].text
    block = _PLAN_BLOCK.search(ptext)
    if block:
        body = block.group("body")
        title = _title(body)
        k = ptext.find(title[:40].rstrip("…")) if title else -1
    else:
        head = _PLAN_HEAD.search(ptext)
        if head is None:
            return []
        title, k = _title(ptext[head.start():]), head.start()
    if not title or k < 0:
        return []
    return [("APPROVED", clip(f"the plan: {title}", WHAT_LIMIT), f'user: "{clip(text.strip(), 60)}"', prev, k,
             k + len(title), prompt)]
