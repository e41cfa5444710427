"""What the agent found out by trying, read from the order of the events (issue 21 §2: "a failed call → the
agent's explanation → a changed call that succeeds (the error line and the fix are a fact)"), in any language.

* **Observation** — the agent's first words after a tool result (main-thread assistant text, reasoning), before
  its next call that does more than look around (reads, listings and searches in between are it looking into
  the result).  Each of their first ``READ_SENTENCES`` sentences that is a statement (not a question, a lead-in
  to a list ``…:``, nor the agent announcing its next step: "Let me…", "Now I'll…", "让我…", "이제…", "Vou…")
  and names something distinctive (``factprune.distinctive``) is a candidate.  Its prior says how much the
  shape behind it matters: after a **failure** (``tools.failed``, a user's pasted error log, or an *anomaly*:
  an error line the harness did not flag, "scp: /srv/app: Text file busy", "Invalid API key") it is the
  agent's diagnosis; when the next call **changes something** (an edit, a command that is not a read) the
  agent acted on it; a limiting or causal word (not, only, instead, because, 因为, 때문에…: a closed class of
  grammar words) says it is a finding rather than a status line.  After an ordinary (not failed) result a
  sentence counts only when it speaks of that result (names one of its distinctive tokens, or shares two of its
  words) and either limits or explains (those words) or the agent acted on it: the agent reading what it saw,
  not describing its own plan; or when it reports a measurement against its baseline (two quantities, one read
  off the result: "Peak RSS is 61 MB (it was about 1.8 GB)"), or is the next sentence, no guess, of a diagnosis's
  paragraph (a finding naming a cause goes on: "The burst test sets a refill of 0.01 tokens/s …").  A sentence
  that names nothing but shares a word with an unflagged error line ("I see the binary was busy.") is led by that
  line.  A claim ("is working again", "I have already pushed"), a reassurance ("should already be updated") or a
  guess in the sentence's first clause is no finding (``claimed``, which ``facts`` applies to every fact).
* **Anomaly** — the unflagged error line itself: "`<command>` printed: <line>" (a flagged failure is
  ``trials``' to state).
* **Fixed after** — a command fails (not a test failing on the code under work: ``trials.own_failure``), the agent
  changes things with other calls (commands that are not reads, at least one: edits alone are a code fix, which
  ``git log`` tells), and a later run of the same thing (``_program``) succeeds before the next user prompt: "`<failed>` failed (<error>); it worked after `<change>`, `<change>`" — the changes are the fix
  (a stale cache removed, a service stopped, a dependency installed).

All candidates are ``candidates.Candidate`` lines for ``facts`` to weigh.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import paste, tools, trials
from pipeline.stages.rules.candidates import Candidate
from pipeline.stages.rules.factprune import distinctive
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, strip_markup, tokens

OBSERVED = 1.0  # prior of an observation after an ordinary result
AFTER_FAILURE = 1.0  # added after a failure (a diagnosis)
ACTED = 0.4  # added when the next call changes something
FINDING = 0.5  # added for a limiting or causal word
CAUSE = 0.6  # added for a sentence that names a cause ("the cause is", "原因は", "원인은")
REASONING = -0.4  # added for reasoning text (the agent thinking, not telling)
ANOMALY = 1.4
FIXED_AFTER = 2.4
READ_SENTENCES = 3  # sentences of each message read
MAX_PER_RESULT = 2  # observations proposed per tool result
LOOK = 12  # events after a result searched for the agent's words
FIX_WINDOW = 40  # calls searched for a later success of a failed program
MAX_FIX_SHOWN = 3  # changes named in a "fixed after" line
LIMIT = 300  # characters of a proposed line
_CALLS = frozenset({"tool_call", "subagent_call", "todo_list"})

#: the agent announcing what it does next, not what it found (several languages)
NARRATION = lazy_re(
    r"^(?:[A-Z][\w'’-]*(?:\s+[\w'’./-]+){0,5}:\s+(?=I))?"  # a thought's title ("Examining App Styling: I'm …")
    r"(?:(?:ok(?:ay)?|great|good|perfect|alright|so|now|hmm+|ah|oh|well|right|excellent)\b[,!.]*\s*)*"
    r"(?:(?:before|instead\s+of|rather\s+than|after|since|to|given)\s+[^,]{0,60},\s*)?(?:let\s+me|let['’]s|let\s+us|i['’]ll|i\s+will|i['’]m\s+going|i\s+am\s+going|i\s+need\s+to|"
    r"i\s+should|i\s+could|i['’]m\s+(?:now|currently|still|also|thinking|considering|focused|focusing|working|making|trying|"
    r"reviewing|examining|analyzing|looking|checking|planning|going)|i['’]ve\s+(?:begun|started|decided\s+to)|my\s+next\s+step|"
    r"(?:preparing|planning|adding|updating|checking|considering|examining|analyzing|reviewing|investigating|exploring|"
    r"creating|implementing|refactoring|drafting|writing|fixing|running|verifying|testing|evaluating|inspecting|"
    r"searching|reading|summarizing|finalizing|refining|integrating)\b|"
    r"now\b|next\b|first\b|then\b|time\s+to|trying|retrying|checking|looking|"
    r"让我|我来|我将|我先|我会|现在|接下来|首先|然后|下面|먼저|이제|다음으로|그럼|では|次に|まず|それでは|"
    r"vou\b|agora\b|vamos\b|voy\b|ahora\b|primero\b|je\s+vais\b|ich\s+werde\b)",
    re.IGNORECASE,
)
#: limiting or causal grammar words: a finding, not a status line (several languages)
#: a sentence that names a cause: "the cause is", "原因は", "원인은", "a causa é"
CAUSE_WORDS = lazy_re(
    r"\b(?:root\s+cause|the\s+(?:cause|reason|culprit)|caused\s+by|because|due\s+to|turns?\s+out)\b|"
    r"原因|根本原因|由于|因为|원인|이유|때문|\bcausa\b|\bporque\b|\bparce\s+que\b|\bweil\b",
    re.IGNORECASE,
)
FINDING_WORDS = lazy_re(
    r"\b(?:not|no|never|only|instead|because|since|due\s+to|caused?|so\s+that|but|however|missing|wrong|still|"
    r"already|requires?|needs?|must|can't|cannot|doesn't|isn't|wasn't|won't|expects?)\b|n't\b|"
    r"\b(?:não|porque|pois|sem|só|apenas|porque|sin|solo|sólo|pas|nicht|weil)\b|"
    r"因为|所以|由于|导致|不|没|需要|必须|때문|않|못|없|필요|ない|ため|必要",
    re.IGNORECASE,
)
_CAUSE = lazy_re(r"\b(?:because|since|due\s+to|caused|but|however|although|except|instead)\b|因为|由于|때문|ため", re.IGNORECASE)
#: a status line that only says something worked (no finding in it)
_SUCCESS_ONLY = lazy_re(
    r"^(?:(?:great|perfect|excellent|good|nice|done|ok(?:ay)?)\b[,!.]*\s*)*.{0,60}\b(?:works?|working|pass|passe[sd]|"
    r"passing|succeed\w*|successful(?:ly)?|completed?|created|updated|fixed|done)\b[.!]*$",
    re.IGNORECASE,
)
#: a claim that something went well, or an opinion of how it looks: a status, not a finding (a claim can be false)
_CLAIM = lazy_re(
    r"\bsuccessfully\b|\b(?:has|have)\s+been\s+(?:\w+\s+)?(?:committed|merged|pushed|created|deployed|fixed|completed|"
    r"implemented|resolved|updated|added)\b|\b(?:looks?|seems?|appears?)\s+(?:\w+\s+)?(?:good|great|excellent|"
    r"comprehensive|correct|fine|clean|solid|complete|extensive|user-friendly|well|perfect|right)\b|"
    r"\b(?:is|are|'s)\s+(?:now\s+)?(?:fully\s+)?(?:ready|running\s+cleanly|working|green|done|complete[d]?|clean)\b|"
    r"\b(?:is|are)\s+(?:\w+\s+)?(?:reasonable|appropriate|sensible|solid|robust|production-ready)\b|"
    r"\b(?:i|we)\s+(?:have|'ve)\s+(?:already\s+|now\s+|just\s+)?(?:committed|pushed|implemented|fixed|deployed|merged|"
    r"completed|updated|finished)\b|"
    r"\b(?:seems?|looks?)\s+like\s+(?:the\s+)?(?:best|most|right|simplest|easiest|cleanest|better|good)\b",
    re.IGNORECASE,
)
#: a status-list line ("done: …", "next: …"): Position's, not a finding
_STATUS_LABEL = lazy_re(r"^(?:done|todo|to\s+do|next|now|then|later|in\s+progress|pending|wip)\s*[:：-]", re.IGNORECASE)
#: ``program: object: message`` (how Unix tools print an error)
_UNIX_ERROR = lazy_re(r"^[\w.+/-]{1,40}:\s+(?:[^:\n]{1,200}:\s+)?[A-Z][A-Za-z']*(?:\s+[a-z][\w']*){0,6}\s*$")
#: the C library's error messages (``strerror``) that a tool prints without failing the call
_ERRNO = lazy_re(
    r"\b(?:text\s+file\s+busy|device\s+or\s+resource\s+busy|address\s+already\s+in\s+use|connection\s+(?:refused|"
    r"reset\s+by\s+peer|timed\s+out)|no\s+space\s+left\s+on\s+device|read-only\s+file\s+system|too\s+many\s+open\s+files|"
    r"broken\s+pipe|resource\s+temporarily\s+unavailable|network\s+is\s+unreachable|no\s+route\s+to\s+host|"
    r"operation\s+not\s+permitted|permission\s+denied|no\s+such\s+file\s+or\s+directory|host\s+key\s+verification\s+failed)\b",
    re.IGNORECASE,
)
_ERRNO_KEYS = ("busy", "refused", "denied", "permitted", "no such", "in use", "unreachable", "no space", "read-only",
               "broken pipe", "too many", "temporarily", "verification", "reset by", "timed out", "no route")
#: the first line of a tool's answer that reports a refusal (a non-shell tool: an MCP server, a fetch)
_REFUSAL = lazy_re(
    r"^(?:error\b|invalid\b|unauthori[sz]ed|forbidden|access\s+denied|not\s+found\b|unable\s+to\b|failed\s+to\b|"
    r"\w+(?:Error|Exception)\b)",
    re.IGNORECASE,
)
#: a command that only reads or searches: its output quotes other text, not an error of its own
_READS = lazy_re(
    r"^\s*(?:(?:cd\s+\S+\s*&&\s*)?(?:cat|head|tail|less|grep|rg|ag|find|ls|dir|pwd|sed\s+-n|awk|jq|echo|wc|stat|file|"
    r"which|type|tree|du|df|git\s+(?:log|show|diff|grep|status|branch|remote)|Get-Content|Select-String|Get-ChildItem))\b"
)
#: words that open a ``label: value`` line, not a program's error
_LABELS = frozenset(
    "note warning info hint tip status result output summary description title name version usage error".split()
)
_PREFIX = lazy_re(r"^(?:cd\s+\S+\s*&&\s*|(?:[A-Z_][A-Z0-9_]*=\S*\s+)+|sudo\s+|timeout\s+\d+\w?\s+|env\s+)+")


_CODE_SPAN = lazy_re(r"`[^`]*`")
_WORD = lazy_re(r"[^\W\d_]{2,}")
_CJK_CHAR = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ASKS_USER = lazy_re(r"^(?:please|pls|kindly|por\s+favor|请|麻烦|부탁|お願い)", re.IGNORECASE)


def _statement(sentence: str) -> bool:
    """A sentence that states something: not a question, a lead-in to a list, the agent's next step, a request to
    the user, nor a bare path or code span (three words of prose outside code, or four CJK characters)."""
    s = sentence.strip()
    if len(s) < 12 or s.endswith(("?", "？", ":", "：")) or NARRATION.match(s) or _ASKS_USER.match(s):
        return False
    if s.startswith(("|", "✅", "✔", "☑", "✓")) or (s.startswith("`") and s.rstrip(".").endswith("`") and s.count("`") == 2) \
            or _STATUS_LABEL.match(s):
        return False  # a table row, a check-mark status line, code quoted as a line
    if _ACTION_REPORT.match(s) or _CJK_DONE.search(s) or _CJK_INTENT.search(s):
        return False  # what the agent did (Position's Done) or will do, not what it found
    if HEDGE.search(s):
        return False  # a guess ("this suggests it might be…"), not a finding
    prose = _PATHLIKE.sub(" ", _CODE_SPAN.sub(" ", s))
    return len(_WORD.findall(prose)) >= 3 or len(_CJK_CHAR.findall(prose)) >= 4


_PATHLIKE = lazy_re(r"\S*[/\\.:]\S*[/\\.]\S*")
#: a report of the agent's own action ("Created the tasks file…", "I've updated…", "我已经将…", "…을 수정했습니다")
_ACTION_REPORT = lazy_re(
    r"^(?:this|the)\s+(?:plan|pr|change|commit|patch|update|fix)\s+(?:covers|adds|includes|implements|introduces|will)\b|"
    r"^`?[0-9a-f]{7,40}`?\s*[—–:-]|"  # a commit listed by its hash
    r"^(?:(?:I|we)\s+(?:have\s+|'ve\s+|just\s+)?|✅\s*)?(?:created|added|updated|fixed|implemented|removed|deleted|wrote|written|"
    r"committed|pushed|moved|renamed|changed|modified|refactored|installed|ran|built|generated|replaced|configured|marked|"
    r"set\s+up|cleaned|applied|adjusted|restored|reverted|merged|deployed|saved|copied|enabled|disabled)\b|"
    r"^(?:好的[，,]?\s*)?(?:我|我们)(?:已经|已|现在|刚刚|刚)|^已(?:经)?(?:将|把|完成|修改|删除|添加|更新|创建)",
    re.IGNORECASE,
)
#: the agent saying what it will do, at a CJK sentence's end: "…수정하겠습니다.", "…しましょう。", "…します。"
_CJK_INTENT = lazy_re(
    r"(?:하겠습니다|할게요|겠습니다|해\s*보겠습니다|진행합니다|しましょう|します|しておきます|いたします|進めます)[。.!！]*\s*$"
)
#: a guess rather than a finding
HEDGE = lazy_re(
    r"^(?:(?:so|but|and|hmm+|well)[,]?\s+)?(?:this|that|it|which)\s+(?:suggests|(?:may|might|could)\s+(?:be|have|mean))\b|"
    r"^(?:maybe|perhaps|possibly|probably|likely)\b|^i\s+(?:think|suspect|guess|wonder|believe)\b|^(?:可能|也许|아마)|"
    r"^(?:the|a|one)\s+(?:\w+\s+)?(?:might|may|could)\s+(?:be|have|mean)\b",  # "The problem might be that …"
    re.IGNORECASE,
)  # at the sentence's start: "…, which may have different conventions" still states the version
#: a CJK status line: "…更新完成。", "…완료했습니다", "…しました。"
_CJK_DONE = lazy_re(r"(?:完成|完毕|成功|好了|완료(?:했습니다|됨|되었습니다)?|했습니다|しました|完了)[。.!！]*\s*$")


def looks(s: Scan, call: int) -> bool:
    """Whether a call only looks around (reads a file, lists, searches)."""
    ev = s.events[call]
    if ev.kind != "tool_call":
        return False
    cmd = tools.command_of(ev)
    if cmd:
        return bool(_READS.match(cmd))
    name = tools.tool(ev)
    return any(w in name for w in ("read", "grep", "glob", "search", "view", "list", "fetch")) or name == "ls"


def _anomaly(s: Scan, call: int, result: int) -> tuple[int, int] | None:
    """The span of an error line the harness did not flag (module rules), or None.  Only the first and last three
    lines are read unless the output holds one of the C library's error phrases (``_ERRNO_KEYS``)."""
    ev = s.events[call]
    text = (s.events[result].text or "")[:4000]
    cmd = tools.command_of(ev)
    if not cmd:
        if looks(s, call) and not tools.tool(ev).endswith("fetch"):
            return None
        first = _end_lines(text, 1, 0)
        return first[0] if first and _REFUSAL.match(text[first[0][0]:first[0][1]]) else None
    if _READS.match(cmd):
        return None
    low = text.lower()
    if any(k in low for k in _ERRNO_KEYS):
        for m in re.finditer(r"[^\n]+", text):
            body = m.group(0).strip()
            if body and len(body) <= 300 and _ERRNO.search(body):
                lead = len(m.group(0)) - len(m.group(0).lstrip())
                return m.start() + lead, m.start() + lead + len(body)
    for a, b in _end_lines(text, 3, 3):
        body = text[a:b]
        if ":" in body and len(body) <= 300 and _UNIX_ERROR.match(body) and body.split(":", 1)[0].lower() not in _LABELS:
            return a, b
    return None


def _end_lines(text: str, first: int, last: int) -> list[tuple[int, int]]:
    """Spans (stripped) of the first ``first`` and the last ``last`` non-empty lines of ``text``."""
    out: list[tuple[int, int]] = []
    pos = 0
    while len(out) < first and pos < len(text):
        nl = text.find("\n", pos)
        nl = len(text) if nl < 0 else nl
        line = text[pos:nl]
        if line.strip():
            lead = len(line) - len(line.lstrip())
            out.append((pos + lead, pos + lead + len(line.strip())))
        pos = nl + 1
    tail: list[tuple[int, int]] = []
    end = len(text)
    while len(tail) < last and end > pos:
        nl = text.rfind("\n", pos, end)
        line = text[nl + 1:end]
        if line.strip():
            lead = len(line) - len(line.lstrip())
            tail.append((nl + 1 + lead, nl + 1 + lead + len(line.strip())))
        end = nl if nl >= 0 else pos
    return out + tail[::-1]


def _after(s: Scan, at: int) -> tuple[list[int], int | None]:
    """The agent's words after event ``at`` (assistant text and reasoning before its next call that does more
    than look around) and that call (None when a prompt or the end comes first)."""
    out = []
    events = s.events
    for j in range(at + 1, min(len(events), at + 1 + LOOK)):
        ev = events[j]
        if ev.kind in ("user_prompt", "compaction"):
            return out, None
        if ev.kind in _CALLS and not looks(s, j):
            return out, j
        if ev.kind in ("assistant_text", "reasoning") and ev.agent is None and ev.text.strip():
            out.append(j)
    return out, None


#: words of something going wrong, in a result and in the agent's words about it ("nan", "error", "warning"…)
_WRONG = ("nan", "error", "fail", "warn", "exception", "denied", "refused", "timeout", "timed out", "invalid",
          "unexpected", "overflow", "crash", "panic", "deprecat", "mismatch", "missing", "conflict")


def _anomalous(sentence: str, result: str) -> bool:
    """Whether the sentence speaks of something going wrong that the result shows (a word of ``_WRONG`` in both:
    "Loss went NaN from epoch 3" after a log full of ``nan``)."""
    low_s, low_r = sentence.lower(), result.lower()
    return any(w in low_s and w in low_r for w in _WRONG)


def _heading_line(text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` is a heading: a markdown ``#`` line, or a whole line in bold."""
    start = text.rfind("\n", 0, a) + 1
    end = text.find("\n", b)
    line = text[start:len(text) if end < 0 else end].strip()
    return line.startswith("#") or (line.startswith("**") and line.endswith("**") and line.count("**") == 2)


#: a quantity: a number with a unit of size, time, rate or ratio ("61 MB", "1.8 GB", "6.9s", "40 req/s", "3x", "12%")
_QUANTITY = lazy_re(
    r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?(?:(?:[kKMGT]i?B|bytes?|[mµnu]?s|secs?|seconds?|min(?:utes?)?|h(?:ours?)?|x|"
    r"[A-Za-z]*/s|rps|qps|fps|ops|tokens?|rows?)(?![A-Za-z])|%|×|秒|毫秒|分钟|초|분|分|倍|배)"
)  # a unit ends where Latin letters do: "1873 req/s를" in Korean


#: the words of a guess ("might", "perhaps", "feels like", "I suspect", "也许", "아마", "かも")
_GUESS = r"\b(?:might|maybe|perhaps|possibly|probably|feels?\s+like|i\s+(?:suspect|wonder|guess)|wondering)\b|也许|아마|かも"
#: what the agent supposed, not what it saw: a reassurance of what should be so by now ("your copy should already be
#: updated"), or a guess in the sentence's first clause ("It feels like there might be a naming issue"; a trailing
#: guess after an observation leaves the observation standing)
_SUPPOSED = lazy_re(r"\bshould\s+(?:now|already)\s+(?:be\s+)?(?:work\w*|updated|fixed|fine|ready|in\s+place)\b|"
                    r"^[^,;:—(]*?(?:" + _GUESS + ")", re.IGNORECASE)
#: a guess anywhere in the sentence, "may" and "could" too ("might be related to", "Wondering if", "可能是")
_TENTATIVE = lazy_re(r"\b(?:may|could)\b|可能|" + _GUESS, re.IGNORECASE)


#: a sentence that proposes the remedy rather than going on with the cause ("The quickest fix is `retry: 2`…",
#: "Fix: an autouse fixture…", "解决方法：…", "해결책은…", "対策は…"): a proposal is the Decision Log's to judge
_REMEDY = lazy_re(r"^(?:the\s+|a\s+|one\s+)?(?:\w+\s+)?(?:fix|solution|workaround|remedy)\b|^(?:修正|修复|解决|해결|対策)",
                  re.IGNORECASE)


def claimed(sentence: str) -> bool:
    """Whether ``sentence`` claims or supposes rather than finds: a status or verdict claimed (``_CLAIM``) without a
    cause, or what the agent supposed (``_SUPPOSED``)."""
    return bool(_CLAIM.search(sentence)) and not _CAUSE.search(sentence) or bool(_SUPPOSED.search(sentence))


def _measured(sentence: str, result: str) -> bool:
    """Whether ``sentence`` reports a measurement against a baseline read off ``result``: it names two quantities
    (the reading and what it was or is compared with: "Peak RSS is 61 MB (it was about 1.8 GB)", "从 41.8s 降到
    6.9s") and the digits of one of them, two or more, open a number of the result (61 MB ← "61408 kbytes", 3.2 s ←
    "3.214 s")."""
    found = [re.sub(r"\D", "", m.group(1)) for m in _QUANTITY.finditer(sentence)]
    if len(found) < 2:
        return False
    numbers = {re.sub(r"\D", "", n) for n in re.findall(r"\d+(?:[.,]\d+)*", result)}
    return any(len(q) >= 2 and any(n.startswith(q) for n in numbers) for q in found)  # one digit opens anything


def _reads_result(sentence: str, result: str, acted: bool) -> bool:
    """Whether ``sentence``, after an ordinary ``result``, reads it: a measurement against its baseline, or it
    speaks of the result and limits or explains it, or names something wrong it shows that the agent acted on."""
    return _measured(sentence, result) or _refers(sentence, result) and bool(
        FINDING_WORDS.search(sentence) or (acted and _anomalous(sentence, result)))


def _refers(sentence: str, result: str) -> bool:
    """Whether ``sentence`` speaks of ``result`` (the tool output it follows): it names one of its distinctive
    tokens, or two of its content words occur in it."""
    low = result.lower()
    if any(m in low for m in distinctive(sentence)):
        return True
    return sum(1 for t in tokens(sentence) if len(t) > 2 and t in low) >= 2


def _shown_cmd(s: Scan, call: int) -> str:
    ev = s.events[call]
    what = tools.command_of(ev) or f"{tools.tool(ev)} {ev.target or ''}".strip()
    return clip(what, 70)


def _triggers(s: Scan):
    """``(event, failure error text or "", failed, anomaly span)`` for each tool result and each pasted error
    log of the user, in order."""
    for call in s.calls:
        r = s.result_of.get(call)
        if r is None or not (s.events[r].text or "").strip():
            continue
        res = s.events[r]
        if tools.failed(res, deep=False):
            span = trials.error_span(res.text[:4000])
            err = " ".join(res.text[span[0]:span[1]].split()) if span else ""
            yield r, err, True, None
            continue
        if r + 1 < len(s.events) and s.events[r + 1].kind in _CALLS and not looks(s, r + 1):
            continue  # the agent went straight on to change something: no words of its own about this result
        span = _anomaly(s, call, r)
        err = " ".join(res.text[span[0]:span[1]].split()) if span else ""
        yield r, err, span is not None, span
    for i in s.users:
        text = s.events[i].text
        if paste.is_paste(text):
            err = paste.error_line(text) or ""
            if err:
                yield i, err, True, None


def _observations(s: Scan) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[int] = set()
    call_of_result = s.call_of
    for at, err, failed, anomaly in sorted(_triggers(s), key=lambda t: t[0]):
        if anomaly is not None:
            call = call_of_result.get(at)
            shown = _shown_cmd(s, call) if call is not None else "a call"
            out.append(Candidate("quirk", clip(f"`{shown}` printed: {err}", LIMIT), at, anomaly[0], anomaly[1],
                                 "anomaly", ANOMALY))
        words, nxt = _after(s, at)
        acted = nxt is not None and s.events[nxt].kind == "tool_call"
        seen_text = s.events[at].text[:4000]
        taken = 0
        for j in words:
            if taken >= MAX_PER_RESULT or j in seen:
                break
            ev = s.events[j]
            continued = 0  # where the paragraph of the message's last diagnosis (a sentence naming a cause) ends
            for a, b in s.spans(j)[:READ_SENTENCES]:
                sentence = strip_markup(ev.text[a:b])
                if not _statement(sentence) or _heading_line(ev.text, a, b):
                    continue
                goes_on = continued and a <= continued and not _TENTATIVE.search(sentence) and not _REMEDY.match(sentence)
                if CAUSE_WORDS.search(sentence):  # a diagnosis (taken here or by another rule): its paragraph goes on
                    end = ev.text.find("\n\n", b)
                    continued = len(ev.text) if end < 0 else end
                text = sentence
                if not distinctive(sentence):
                    if anomaly is None or not (tokens(sentence) & tokens(err)):
                        continue  # names nothing: the agent thinking aloud
                    call = call_of_result.get(at)
                    text = f"`{_shown_cmd(s, call) if call is not None else 'a call'}`: {err} — {sentence}"
                elif not failed and not goes_on and not _reads_result(sentence, seen_text, acted):
                    continue  # after an ordinary result: only its reading, or the next sentence of a diagnosis
                elif _SUCCESS_ONLY.match(sentence) or _STATUS_LABEL.match(sentence) or (
                        _CLAIM.search(sentence) and not _CAUSE.search(sentence)):
                    continue
                prior = (OBSERVED + (AFTER_FAILURE if failed else 0.0) + (ACTED if acted else 0.0)
                         + (FINDING if FINDING_WORDS.search(sentence) else 0.0)
                         + (CAUSE if CAUSE_WORDS.search(sentence) else 0.0)
                         + (REASONING if ev.kind == "reasoning" else 0.0))
                kind = "root_cause" if failed else "fact"
                out.append(Candidate(kind, clip(text, LIMIT), j, a, b, "diagnosis" if failed else "observation", prior))
                seen.add(j)
                taken += 1
                if taken >= MAX_PER_RESULT:
                    break
    return out


def _program(cmd: str) -> str:
    """What a shell command runs: its first three words that are not options, after ``cd X &&``, variables and
    ``sudo`` (``make increment_build_number``, ``npm run build``, ``python train.py``; ``make -j4`` is ``make``)."""
    bare = re.split(r"\s*(?:&&|\|\||;|\|)\s*", _PREFIX.sub("", cmd.strip()), maxsplit=1)[0]
    words = [w for w in bare.split() if not w.startswith("-") and not w.startswith(("2>", ">"))]
    if not words:
        return ""
    return " ".join([words[0].rsplit("/", 1)[-1]] + words[1:3])


def _fixed_after(s: Scan) -> list[Candidate]:
    from bisect import bisect_right

    events = s.events
    calls = [c for c in s.calls if c in s.result_of]
    out: list[Candidate] = []
    done: set[str] = set()
    for n, call in enumerate(calls):
        res = events[s.result_of[call]]
        cmd = tools.command_of(events[call])
        if not cmd or not tools.failed(res, deep=False):
            continue
        prog = _program(cmd)
        if not prog or prog in done or _READS.match(cmd) or trials.own_failure(res.text[:4000]):
            continue
        k = bisect_right(s.users, call)
        next_user = s.users[k] if k < len(s.users) else len(events)
        changes: list[int] = []
        for later in calls[n + 1: n + 1 + FIX_WINDOW]:
            if later > next_user:
                break
            lcmd = tools.command_of(events[later])
            failed = tools.failed(events[s.result_of[later]], deep=False)
            if lcmd and _program(lcmd) == prog:
                if failed:
                    changes = []  # it failed again: what came before did not fix it
                    continue
                if changes and any(tools.command_of(events[c]) for c in changes):
                    out.append(_fixed_line(s, call, res, cmd, changes))
                    done.add(prog)
                break
            if not failed and not looks(s, later) and events[later].kind == "tool_call":
                changes.append(later)
    return out


def _fixed_line(s: Scan, call: int, res, cmd: str, changes: list[int]) -> Candidate:
    span = trials.error_span(res.text[:4000])
    err = clip(" ".join(res.text[span[0]:span[1]].split()), 100) if span else ""
    fixes = list(dict.fromkeys(clip(tools.command_of(s.events[c]) or _shown_cmd(s, c), 70) for c in changes))
    shown = ", ".join(f"`{f}`" for f in fixes[:MAX_FIX_SHOWN]) + (
        f" and {len(fixes) - MAX_FIX_SHOWN} more" if len(fixes) > MAX_FIX_SHOWN else "")
    text = f"`{clip(cmd, 70)}` failed" + (f" ({err})" if err else "") + f"; it worked after {shown}"
    a, b = span if span else (0, min(len(res.text), 200))
    return Candidate("root_cause", clip(text, LIMIT), s.result_of[call], a, b, "fixed-after", FIXED_AFTER)


def propose(s: Scan) -> list[Candidate]:
    """Observation, anomaly and fixed-after candidates of ``s`` (module rules)."""
    return _observations(s) + _fixed_after(s)
