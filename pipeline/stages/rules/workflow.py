"""Approved Workflow: the user's tasks in order, the latest marked active (DESIGN.md "Agent State file": "what
was approved, in the user's terms"; issue 12, 2.1 "The workflow is the list of tasks, not the first prompt").

Rules:
* the first real prompt is the first ``user_prompt`` that is not a harness control (``/clear``, ``/model``,
  ``/compact``…), not an interruption marker, not a continuation word (``continue``, ``go on``) and not a pasted
  compaction summary; it is kept in the user's words and lines, cut at about ``FIRST_PROMPT_LIMIT`` characters;
* every later top-level prompt that starts new work is a task line, in order: ``Task <ISO-8601>: …``, or
  ``Redirected <ISO-8601>: …`` when it changes or extends scope ("actually…", "instead…", "scratch that");
  the newest is labelled ``Active task`` (or ``Active redirection``); at most ``MAX_TASKS`` (the newest) are
  kept, with a line counting those left out.  A custom slash command (``/ai-commit``, ``/write-issue …``) is a
  task; the harness's own controls are not;
* not a task: a side question the agent settled before the work began — a short question (``_ASKING``)
  answered by assistant messages alone (no tool call before the next prompt) and sharing no content word
  with the next task ("whats my localhost address" before "remove the BoundaryNote import…"); the latest
  task is always kept;
* not a task: the same task sent again with small changes (a typo fixed; ``_resent``): the later one stands;
* not a task: a later greeting ("oi", "你好") or a single word with no identifier ("thanks!"); a short answer to the agent's question ("yes", "both", "1", "sim", "好的") — short means at
  most ``ANSWER_WORDS`` words (or ``ANSWER_CHARS`` characters of CJK text) right after an assistant message
  that asks or offers options; a bare option pick anywhere; the same prompt again (duplicated history);
* a task that is only shell command lines is shown as ```cd app`; `git init`; …`` (one line per task);
* context is not content (``paste``): an expanded template is never task text, and a prompt's pasted logs
  and code are cut away, leaving the user's own words; a prompt that is only a paste becomes
  ``Pasted output: <its first error line>`` or is left out;
* when the early prompts are gone (the file starts with a compaction summary, or there is no real prompt) and
  the user did not clear the context after it (``/clear``), the harness's summary supplies the request ("Primary Request and Intent") and its "Pending Tasks", each
  marked ``From the compaction summary:``.  Later summaries (repeated or copied from other sessions) add
  nothing: the prompts after them are in the file.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import paste, untrusted
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, clip_block, one_line, strip_markup, tokens

_BARE_SLASH = lazy_re(r"^/[\w:.-]+\s*$")
_CONTROL = lazy_re(
    r"^(?:continue|go on|keep going|carry on|next|proceed|resume|ok|okay|yes|y|go|hi|hello|hey|thanks|thank you)"
    r"[.!]*$",
    re.IGNORECASE,
)
_NOT_A_PROMPT = lazy_re(
    r"^(?:\[Request interrupted by user|This session is being continued from a previous conversation|"
    r"<local-command-|<command-name>|Caveat: The messages below)",
)
_LEAD = r"^(?:(?:ok(?:ay)?|oh|hmm+|wait|so|and|also|but|hey|right|alright|well|one more thing)[,.!:]*\s+)*"
_REDIRECT = lazy_re(
    _LEAD
    + r"(?:actually\b|instead\b|also\b|scratch that|change of plans?|new plan|on second thought|forget (?:about )?"
    r"(?:it|that|the)\b|never ?mind|let'?s also\b|let us also\b|and also\b|additionally\b|in addition\b|"
    r"one more thing|while you'?re at it|before (?:you|that|we)\b|after that\b|(?:can|could|would) you also\b|"
    r"please also\b|rather than\b|don'?t bother\b|drop the\b|skip the\b|stop\b|pivot\b|let'?s switch\b|"
    r"let'?s (?:not|change)\b|change the plan\b|plan change\b)",
    re.IGNORECASE,
)
_REDIRECT_ANYWHERE = lazy_re(
    r"\b(?:change of plans?|scratch that|instead of\b|on second thought|let'?s also|also (?:cover|add|handle|"
    r"include|support|update|fix|test|do|make|check|implement|write|remove|rename|migrate|port)\b|"
    r"no longer (?:need|want)|don'?t bother with|forget about|new requirement|requirements? changed|"
    r"expand (?:the )?scope|out of scope|descope|pivot to)",
    re.IGNORECASE,
)
_SUMMARY_REQUEST = lazy_re(
    r"(?:Primary Request and Intent:?|^#+\s*Goal\b:?|<overview>|^\*\*Goal\*\*:?|User'?s? (?:request|goal):)"
    r"\s*(.+?)(?:\n\s*\n|\n\s*(?:\d+\.|#+)\s|</overview>|$)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


_PENDING = lazy_re(
    r"^\s*(?:\d+\.\s*)?(?:\*\*)?Pending Tasks(?:\*\*)?:?\s*\n(.+?)(?:\n\s*\n|\n\s*(?:\d+\.|#+)\s|\Z)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
#: Slash commands of the harnesses themselves (Claude Code, Copilot CLI, opencode, Codex, Gemini CLI): controls,
#: not work.  Anything else after a slash is the user's own command and a task.
_CONTROL_SLASH = frozenset(
    "add-dir agents approvals auth bug chat clear compact compress config context copy cost diff doctor editor "
    "exit export feedback help hooks ide init-verify login logout mcp memory model models new permissions "
    "privacy quit release-notes resume rewind sessions settings share stats status statusline terminal-setup "
    "theme themes tools undo unshare upgrade usage vim".split()
)
_ANSWER_PICK = lazy_re(
    r"^\W*(?:\(?\d{1,2}[.)]?|[a-d][.)]?|option \w+|opção \w+|both|all of them|all|neither|none|either|"
    r"the (?:first|second|third|last|latter|former)(?: one)?|ambos|todos|两个|都|全部|둘 다|両方)\W*$",
    re.IGNORECASE,
)
_CLEAR = lazy_re(r"^/(?:clear|new|reset)\s*$", re.IGNORECASE)
_REPLY_LEAD = lazy_re(
    r"^(?:yes|yeah|yep|yup|sure|ok|okay|no|nope|nah|right|correct|exactly|agreed|go ahead|sounds good|perfect|"
    r"great|thanks|sim|não|nao|claro|isso|pode|sí|si|vale|oui|non|ja|nein|是|好|对|行|可以|不|不要|没问题|네|예|"
    r"아니|좋아|はい|いいえ|うん|お願いします)(?:\W|$)",
    re.IGNORECASE,
)
_IDENT = lazy_re(r"[\d/_#@]|\w[.-]\w")
_PROHIBIT = lazy_re(
    r"^(?:(?:ok(?:ay)?|and|also|but|hmm+|wait|please|thanks|great|good)[,.!:]*\s+)*"
    r"(?:no\b|nope\b|don'?t\b|do not\b|never\b|stop\b|avoid\b|não\b|nao\b|nunca\b|no uses?\b|"
    r"不要|别|不能|하지 ?마|しないで|やめて)",
    re.IGNORECASE,
)
_GREETING = lazy_re(
    r"^(?:hi|hello|hey|hi there|hello there|good (?:morning|afternoon|evening)|oi|olá|ola|hola|bom dia|boa tarde|"
    r"buenos días|你好|您好|안녕|안녕하세요|こんにちは|おはよう)\W*$",
    re.IGNORECASE,
)
_MARKER = lazy_re(r"^\W*(?:APPROVED|REJECTED|DECISION|DECIDED)\W*:", re.IGNORECASE)
_CJK = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

FIRST_PROMPT_LIMIT = 1200  # characters of the first prompt at least
FIRST_PROMPT_MAX = 2400  # characters of the first prompt at most, when the task lines leave room
TASK_LIMIT = 220  # characters per task line (after the prefix) at least
TASK_LIMIT_MAX = 400  # characters per task line at most, when there are few
ACTIVE_LIMIT = 600  # characters of the active (latest) task line
BUDGET = 4000  # characters the section aims at: the task lines share what the first prompt leaves
MAX_TASKS = 12
KEEP_NEWEST = 4  # task lines always kept when there are more than MAX_TASKS
#: a question the agent settled in one reply: it asks (ends with "?", or opens with an interrogative word in one of
#: the languages the rules read), and is short
SIDE_QUESTION_WORDS = 25
_ASKING = lazy_re(
    r"^(?:what|whats|what's|how|where|which|who|whose|why|when|is|are|can|could|does|do|did|should|"
    r"qual|quais|como|onde|o que|por ?que|quanto|qué|que|cómo|dónde|cuál|cuánto|quel|quelle|comment|où|pourquoi|"
    r"est-ce|was|wie|wo|welche[rsn]?|warum|wann|ist|gibt)\b|"
    r"什么|怎么|如何|哪|为什么|吗[?？]?$|何|どう|どこ|ですか|ますか|뭐|무엇|어떻게|어디|나요[?？]?$",
    re.IGNORECASE,
)
ANSWER_WORDS = 4
ANSWER_CHARS = 8  # CJK text has no spaces: a reply this short is an answer


def is_real_prompt(text: str) -> bool:
    """True when ``text`` is a prompt with content: not empty, not a harness control slash command, not a
    continuation word, not a harness wrapper or interruption marker."""
    t = text.strip()
    if not t or _CONTROL.match(t) or _NOT_A_PROMPT.match(t):
        return False
    if _BARE_SLASH.match(t) and t[1:].split(":")[0].strip().lower() in _CONTROL_SLASH:
        return False
    return True


def first_prompt_index(s: Scan) -> int | None:
    """Index of the first real user prompt that is not only a paste or a template, or None."""
    for i in s.users:
        if is_real_prompt(s.events[i].text) and prompt_task_text(s, i):
            return i
    return None


def is_redirection(text: str) -> bool:
    """True when a later prompt changes or extends the approved scope (see module rules)."""
    t = text.strip()
    return bool(_REDIRECT.match(t) or _REDIRECT_ANYWHERE.search(t[:400]))


def task_text(text: str) -> str:
    """The user's own words of a prompt: the arguments the user typed into an expanded command template
    (``template_args``), ``<lead> <title> (files: …)`` for a document handed over under a line of the user's
    (``lead_document``: "Implement the following plan:" and the plan), else "" for a template, a pasted document or
    an explicit decision line (``APPROVED: …``, which the Decision Log takes); pasted, quoted and fetched blocks and
    paragraphs that address a model cut away (``untrusted.own_words``); ``Pasted output: <error line>`` for a pasted
    log."""
    if _MARKER.match(text):
        return ""
    if paste.is_template(text):
        args = template_args(text)
        if args and not untrusted.address_problem(args):
            return args
        led = lead_document(text)
        return led if led and not untrusted.address_problem(led) else ""
    screened = untrusted.own_words(text)
    if screened is not text:  # pasted, quoted or fetched blocks, and paragraphs addressing a model, blanked
        text = "\n".join(ln for ln in screened.splitlines() if ln.strip())
        if not text:
            return ""
    if paste.is_paste(text):
        lead = paste.lead_words(text)
        err = paste.error_line(text[len(lead):] if lead and text.startswith(lead) else text)
        pasted = f"Pasted output: {err}" if err else ""
        return " ".join(x for x in (lead, pasted) if x)
    return paste.own_words(text) or text.strip()


_TEMPLATE_ARGS = lazy_re(r"\A\s*(?:#{1,4}[^\n]*\n\s*)+(?:```|~~~)[\w-]*[ \t]*\n(.*?)\n?[ \t]*(?:```|~~~)", re.DOTALL)
_HEADING_LINE = lazy_re(r"^#{1,4}\s+(\S.*)$")
_DOC_PATH = lazy_re(r"`((?:[\w.@~-]+/)+[\w.@-]+|[\w-]+\.[A-Za-z]\w{0,5})`")
MAX_DOC_PATHS = 3


def template_args(text: str) -> str:
    """The arguments the user typed into an expanded command template: the first fenced block when only headings
    come before it (spec-kit's ``## User Input`` block, and templates shaped like it), stripped; "" when the
    template has none or they are empty."""
    m = _TEMPLATE_ARGS.match(text)
    return m.group(1).strip() if m else ""


def lead_document(text: str) -> str:
    """``<lead> <title> (files: a, b)`` for a prompt that is a line or two of the user's (or the harness's
    "Implement the following plan:") over a markdown document: the lead, the document's first heading, and the
    first paths it names in code spans (at most ``MAX_DOC_PATHS``); "" when the prompt opens with a heading or a
    fence (a template), or its lead is longer than a few lines."""
    lines = text.strip().splitlines()
    lead: list[str] = []
    for k, line in enumerate(lines[:6]):
        h = _HEADING_LINE.match(line.strip())
        if h:
            if not lead:
                return ""
            rest = "\n".join(lines[k + 1:])
            paths: list[str] = []
            for m in _DOC_PATH.finditer(rest):
                p = m.group(1)
                if not any(p == q or q.endswith("/" + p) for q in paths):  # `installer.py` after `src/x/installer.py`
                    paths.append(p)
            paths = paths[:MAX_DOC_PATHS]
            head = one_line(" ".join(lead) + " " + strip_markup(h.group(1)))
            return head + (f" (files: {', '.join(paths)})" if paths else "")
        if line.lstrip().startswith(("```", "~~~")):
            return ""
        if line.strip():
            lead.append(line.strip())
    return ""


def prompt_task_text(s: Scan, index: int) -> str:
    """``task_text`` of event ``index``'s text, computed once per scan."""
    got = s.task_texts.get(index)
    if got is None:
        got = s.task_texts[index] = task_text(s.events[index].text)
    return got


def _is_short(text: str) -> bool:
    t = text.strip()
    if _CJK.search(t):
        return len(t) <= ANSWER_CHARS
    return len(t.split()) <= ANSWER_WORDS


def is_chatter(text: str) -> bool:
    """A greeting, or a single word with no identifier (digit, path, slash command, dotted or dashed name):
    too little to be a task."""
    t = text.strip()
    if _GREETING.match(t):
        return True
    if _IDENT.search(t):
        return False
    return len(t) <= 2 if _CJK.search(t) else len(t.split()) <= 1


def is_answer(s: Scan, index: int) -> bool:
    """Whether prompt ``index`` answers the agent rather than starting work (see module rules)."""
    text = s.events[index].text.strip()
    if _ANSWER_PICK.match(text):
        return True
    return _is_short(text) and bool(_REPLY_LEAD.match(text))


def is_correction(text: str) -> bool:
    """Whether a prompt corrects or forbids ("no, don't use a fixed window…", "ok. and don't change the
    numbering", "never push to main", "não use pandas", "不要改接口"): a decision or a constraint, not new work
    (the Decision Log and Established Facts take it)."""
    return bool(_PROHIBIT.match(text.strip()))


def tasks(s: Scan) -> list[int]:
    """Indexes of the prompts that start work, in order (the first real prompt included); computed once per scan."""
    if s.tasks_memo is None:
        s.tasks_memo = _tasks(s)
    return list(s.tasks_memo)


def _tasks(s: Scan) -> list[int]:
    out: list[int] = []
    seen: set[str] = set()
    for i in s.users:
        text = s.events[i].text
        if not is_real_prompt(text):
            continue
        if out and (is_answer(s, i) or is_correction(text)):
            continue
        own = prompt_task_text(s, i)
        if not own or (out and is_chatter(own)):
            continue
        key = one_line(own).lower()
        if key in seen:
            continue
        seen.add(key)
        out.append(i)
    return [i for k, i in enumerate(out)
            if k == len(out) - 1 or not (_side_question(s, i, out[k + 1]) or _resent(s, i, out[k + 1]))]


RESENT_SIMILARITY = 0.8  # character-bigram overlap (Jaccard) from which a task sent again replaces the one before
RESENT_MIN_CHARS = 30  # shorter tasks differ by a word and mean something else ("tests for refunds" / "returns")


def _resent(s: Scan, i: int, nxt: int) -> bool:
    """Whether task ``nxt`` is task ``i`` sent again with small changes (a typo fixed, a word translated): their
    own words, each at least ``RESENT_MIN_CHARS`` long, share ``RESENT_SIMILARITY`` of their character bigrams (any
    script) and differ in length by under a third.  The later one stands."""
    a, b = one_line(prompt_task_text(s, i)).lower(), one_line(prompt_task_text(s, nxt)).lower()
    if min(len(a), len(b)) < RESENT_MIN_CHARS or abs(len(a) - len(b)) * 3 > max(len(a), len(b)):
        return False
    x, y = {a[k:k + 2] for k in range(len(a) - 1)}, {b[k:k + 2] for k in range(len(b) - 1)}
    return bool(x and y) and len(x & y) / len(x | y) >= RESENT_SIMILARITY


def _side_question(s: Scan, i: int, nxt: int) -> bool:
    """Whether task prompt ``i`` is a side question settled before task ``nxt`` (module rules)."""
    own = prompt_task_text(s, i)
    if len(own.split()) > SIDE_QUESTION_WORDS or not (own.rstrip().endswith(("?", "？")) or _ASKING.search(own.strip())):
        return False
    replied = False
    for j in range(i + 1, nxt):
        kind = s.events[j].kind
        if kind in ("tool_call", "subagent_call", "todo_list"):
            return False
        replied = replied or (kind == "assistant_text" and bool(s.events[j].text.strip()))
    return replied and not (tokens(own) & tokens(prompt_task_text(s, nxt)))


def build(s: Scan) -> str | None:
    """The Approved Workflow text, or None when the transcript holds no request at all (module rules)."""
    found = tasks(s)
    lines: list[str] = []
    first = found[0] if found else None
    before = [c for c in s.compactions if first is None or c < first]
    if before and not _cleared(s, before[0], first):
        lines.extend(_from_summary(s.events[before[0]].text))
    if first is None:
        return "\n".join(lines) or None
    opening = None if lines else prompt_task_text(s, first)
    later: list[tuple[int, str, str]] = [(i, "task", _as_commands(prompt_task_text(s, i)))
                                         for i in (found[1:] if opening is not None else found)]
    later += [(i, "plan", text) for i, text in approved_plans(s)]
    later = _deduped(sorted(later))
    if len(later) > MAX_TASKS:
        lines_left = len(later) - MAX_TASKS
        later = _kept_tasks(later)
        note = f"({lines_left} task(s) left out)"
    else:
        note = ""
    per = max(TASK_LIMIT, min(TASK_LIMIT_MAX, (BUDGET - min(len(opening or ""), FIRST_PROMPT_LIMIT)) // max(1, len(later))))
    shown = [clip(text, TASK_LIMIT if _pasted(text) else ACTIVE_LIMIT if n == len(later) - 1 else per)
             for n, (_, _, text) in enumerate(later)]
    if opening is not None:
        room = BUDGET - sum(len(x) + 40 for x in shown)
        lines.append(clip_block(opening, max(FIRST_PROMPT_LIMIT, min(FIRST_PROMPT_MAX, room))))
    if note:
        lines.append(note)
    for n, ((i, kind, text), line) in enumerate(zip(later, shown)):
        label = "Approved plan" if kind == "plan" else ("Redirected" if is_redirection(text) else "Task")
        if n == len(later) - 1:
            label = "Active " + label.lower().replace("redirected", "redirection")
        lines.append(f"{label} {s.ts(i) or 'unknown-time'}: {line}")
    return "\n".join(lines)


def _deduped(items: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """``items`` without a plan line whose text the next task repeats ("Implement the following plan: <title>"
    after the plan was approved)."""
    out = []
    for k, item in enumerate(items):
        nxt = items[k + 1] if k + 1 < len(items) else None
        if item[1] == "plan" and nxt is not None and item[2].split(" (files:")[0] in nxt[2]:
            continue
        out.append(item)
    return out


def _pasted(text: str) -> bool:
    """Whether a task holds two or more log-like lines (a pasted console log or build output): its line stays
    short, whatever room there is."""
    return sum(1 for ln in text.splitlines() if paste.is_log_line(ln)) >= 2


def _kept_tasks(items: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """The ``MAX_TASKS`` task lines kept when there are more, in order: the newest ``KEEP_NEWEST`` always, the
    rest the most substantial of the older ones (``_substance``: own words, names, plans), so a short nudge ("a
    bit lower", "try again") or a pasted log gives way before a request that names a file."""
    newest = items[-KEEP_NEWEST:]
    older = items[:-KEEP_NEWEST]
    room = MAX_TASKS - len(newest)
    picked = sorted(sorted(older, key=lambda it: -_substance(it))[:room])
    return picked + newest


def _substance(item: tuple[int, str, str]) -> float:
    """How much a task line says: its length in words (a CJK character counting a third of one) without its
    log-like lines, times one plus the names it holds (a file name, a path, a code span; at most three), divided
    by one plus the number of log-like lines (a pasted console log is no request); a plan counts high."""
    _, kind, text = item
    if kind == "plan":
        return 100.0
    prose = "\n".join(ln for ln in text.splitlines() if not paste.is_log_line(ln))
    words = len(prose.split()) + len(_CJK_ALL.findall(prose)) / 3
    names = len(_NAME.findall(prose))
    return min(words, 40) * (1 + min(names, 3)) / (1 + text.count("\n") - prose.count("\n"))


_CJK_ALL = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_NAME = lazy_re(r"`[^`\n]+`|\b\w[\w/-]*\.[A-Za-z][A-Za-z0-9]{0,5}\b|\b\w+/\w[\w/.-]*")
_PLAN_TOOLS = frozenset({"exitplanmode", "exit_plan_mode"})
_PLAN_ARG = lazy_re(r"^(?:plan|plan_filename):\s*", re.MULTILINE)


def _plan_mode(s: Scan) -> list[tuple[int, str]]:
    """``(event index, plan text)`` of each plan the user approved through the harness's plan mode (Claude Code
    ``ExitPlanMode`` with the plan in its arguments, Gemini CLI ``exit_plan_mode`` naming the plan file the agent
    wrote before it): a call whose result is not an error (a refused plan is the Decision Log's)."""
    out: list[tuple[int, str]] = []
    for i in s.calls:
        ev = s.events[i]
        if (ev.tool_name or "").lower() not in _PLAN_TOOLS or i not in s.result_of:
            continue
        if s.events[s.result_of[i]].is_error:
            continue
        text = ev.text or ""
        m = _PLAN_ARG.match(text)
        if m and text.startswith("plan_filename"):
            name = text[m.end():].strip().splitlines()[0] if text[m.end():].strip() else ""
            text = _written(s, i, name) if name else ""
        elif m:
            text = text[m.end():]
        if text.strip():
            out.append((i, text))
    return out


def plan_texts(s: Scan) -> list[tuple[int, str]]:
    """``(event index, plan text)`` of every plan the user approved (``_plan_mode``) or handed over (a prompt that
    is a lead line over a document, ``lead_document``), oldest first."""
    handed = [(i, s.events[i].text) for i in s.users
              if paste.is_template(s.events[i].text) and lead_document(s.events[i].text)]
    return sorted(handed + _plan_mode(s))


def approved_plans(s: Scan) -> list[tuple[int, str]]:
    """``(event index, "<title> (files: …)")`` for each plan approved in plan mode (``_plan_mode``)."""
    out: list[tuple[int, str]] = []
    for i, text in _plan_mode(s):
        got = lead_document("Plan:\n" + text.lstrip())
        if got and not untrusted.address_problem(got):
            out.append((i, got[len("Plan: "):]))
    return out


def _written(s: Scan, before: int, name: str) -> str:
    """The content of the latest file named ``name`` a call wrote before event ``before`` ("" when none)."""
    for i in reversed(s.calls):
        if i >= before:
            continue
        ev = s.events[i]
        if (ev.target or "").replace("\\", "/").endswith("/" + name) or ev.target == name:
            at = (ev.text or "").find("content: ")
            if at >= 0:
                return ev.text[at + 9:]
    return ""


def _as_commands(text: str) -> str:
    """A prompt that is only command lines (``sequence.command_lines``), as ```a`; `b`…`` on one line (a task line
    is one line; a space between the commands would run them together); other text unchanged."""
    from pipeline.stages.rules import sequence  # sequence reads is_real_prompt from here

    cmds = sequence.command_lines(text)
    if not cmds or len(cmds) != sum(1 for x in text.splitlines() if x.strip() and not x.lstrip().startswith("```")):
        return text
    return "; ".join(f"`{c}`" for c in cmds)


def _cleared(s: Scan, start: int, end: int | None) -> bool:
    """Whether the user cleared the context (``/clear``, ``/new``, ``/reset``) between events ``start`` and ``end``:
    the summary before it no longer describes the work."""
    return any(
        start < i and (end is None or i < end) and _CLEAR.match(s.events[i].text.strip()) for i in s.users
    )


def active_task(s: Scan) -> str | None:
    """The latest task's text (the user's own words, on one line), or None."""
    found = tasks(s)
    return one_line(prompt_task_text(s, found[-1])) if found else None


def _from_summary(text: str) -> list[str]:
    """The request and pending tasks a compaction summary states, each line marked as the summary's."""
    out: list[str] = []
    m = _SUMMARY_REQUEST.search(text)
    if m and m.group(1).strip():
        out.append("From the compaction summary: " + clip(m.group(1), FIRST_PROMPT_LIMIT // 2))
    p = _PENDING.search(text)
    if p:
        items = [strip_markup(x) for x in p.group(1).splitlines() if x.strip()]
        items = [x for x in items if x]
        if items:
            out.append("From the compaction summary, pending: " + clip("; ".join(items), TASK_LIMIT))
    return out
