"""Decisions stated in a text, sentence by sentence (DESIGN.md "Stages": "implicit decisions ('we're going with
option 2 because X'), dead ends ('that didn't work because…')").

Explicit markers (``APPROVED: / DECISION: / DECIDED: / REJECTED:``) are read line by line; implicit phrasings
come from ``catalog`` (a trigger plus the side the option is on) and are cut into option, alternative and
reasoning by ``clauses``.

Guards: questions, hypotheticals ("if / whether / could / might / should we / I suggest / I'd…" before the
trigger) and proposals are not decisions; a negation right before an approving trigger ("we're not going with
X") makes it a rejection.  An agent's inability right before the trigger ("I am unable to proceed with X", "I
cannot go ahead with X") is no decision at all (from the user it is a negation).  Tool-usage chatter ("I'll use
grep to…") is not a decision.

``hits_in(text, origin)`` is linear in ``len(text)``: one combined trigger search over the lower-cased text
decides which lines are split into sentences at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.factprune import distinctive
from pipeline.stages.rules.catalog import APPROVED, BY_KEY, PATTERNS, REJECTED, TRIGGER, TRIGGER_ANYCASE, Pat, trigger_keys
from pipeline.stages.rules.clauses import (
    FAIL_AFTER,
    INVESTIGATE,
    IT_IS_BAD,
    LEMMA,
    NEG_SUBJECT,
    NEXT_REASON,
    PHRASAL,
    PLAN_OBJECT,
    REASON_ONLY,
    RUNLIKE,
    clean,
    reason_text,
    sentence_reason,
    split_tail,
    subject_before,
    vague,
)
from pipeline.stages.rules.text import clip, local_spans, norm_key, span_index_at, strip_markup

WHAT_LIMIT = 160  # characters (Decision.what)
REASON_LIMIT = 200  # characters (Decision.reasoning)
#: phrasings that record a dead end (origin "dead-end" rather than "implicit")
DEAD_ENDS = frozenset({"ruled-out", "abandoned", "dropped", "revert", "tried", "didnt-work", "failed-because", "dead-end"})

__all__ = ["APPROVED", "REJECTED", "Hit", "hits_in", "explicit_hits", "analyze", "WHAT_LIMIT", "REASON_LIMIT"]


@dataclass(slots=True)
class Hit:
    """One decision found in a text: status, option, reasoning (None when the text gives none), the span
    ``[start, end)`` of the text to quote as evidence, the trigger offset ``focus``, and whether ``what`` is only
    a pronoun ("that didn't work") the caller must resolve."""

    status: str
    what: str
    reasoning: str | None
    start: int
    end: int
    focus: int
    origin: str
    pronoun: bool = False


#: the labels of a decision line: English, and Portuguese, Spanish, Chinese, Japanese, Korean ("决定：", "결정:")
_DECISION_LABELS = r"DECISION|DECIDED|DECIS[ÃA]O|DECISI[ÓO]N|DECIDIDO|决定|決定|결정"
_EXPLICIT_LINE = lazy_re(
    r"^[ \t>]*(?:[-*+]\s+)?(?:\*\*|__)?(APPROVED|" + _DECISION_LABELS + r"|REJECTED|RULED OUT)(?:\*\*|__)?\s*[:：]\s*"
    r"(?:\*\*|__)?\s*(\S.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_EXPLICIT_WORDS = ("approved", "decision", "decided", "rejected", "ruled out", "decisão", "decisao", "decisión",
                   "decision", "decidido", "决定", "決定", "결정")
#: "X, not Y" in a decision line: Y is what was turned down (any of the languages of the labels)
_NOT_Y = lazy_re(
    r"^(?P<x>.+?)[,，、]?\s*(?:\bnot\b|\binstead\s+of\b|\brather\s+than\b|\bem\s+vez\s+d[eoa]s?\b|\bn[ãa]o\b|"
    r"\ben\s+(?:lugar|vez)\s+de\b|\bno\b|而不是|不用|不是|ではなく|대신)\s*(?:(?:o|a|os|as|el|la|the)\s+)?(?:(?:de|do|da)\s+)?"
    r"(?P<y>[^,，。.;]+)",
    re.IGNORECASE,
)
_EXPLICIT_INLINE = lazy_re(r"(?<![A-Za-z])(APPROVED|DECISION|DECIDED|REJECTED):[ \t]+(\S[^\n]*)")
_EXPLICIT_SPLIT = lazy_re(
    r"\s+[-–—]{1,2}\s+|\s*;\s*(?=because|since)|\s+(?:because|since|porque|pois)\s+|\s*\(\s*(?=because|since)"
    r"|[,，]?\s*(?:因为|由于)|[,、]?\s*(?:なので|ため)|[,]?\s*때문에\s*",
    re.IGNORECASE,
)

_HYPOTHETICAL = lazy_re(
    r"\b(?:if|whether|unless|could|might|may|maybe|perhaps|should\s+(?:we|I)|would\s+(?:you|we|it|I)|do\s+you|did\s+you|"
    r"shall|recommend|suggest|propos(?:e|ing)|option\s*\w+\s*[:)]|consider(?:ing)?|either|wonder(?:ing)?|"
    r"thinking\s+about|what\s+about|how\s+about|you\s+(?:could|can|might|want)|don't\s+think|do\s+not\s+think|"
    r"not\s+sure|doubt|want\s+me\s+to|like\s+me\s+to|let\s+me\s+know|in\s+case|would\s+be|to\s+decide|"
    r"need\s+to\s+decide|haven't|have\s+not|yet\s+to|would|I'd|we'd|you'd)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL_WEAK = lazy_re(r"\b(?:when|whenever|once|until|can|any|whichever|or\s+not)\b", re.IGNORECASE)
_NEGATED = lazy_re(r"(?:\bnot|n't|\bnever|\bno\s+longer)\s+(?:\w+\s+)?$", re.IGNORECASE)
#: an inability right before the trigger ("I am unable to proceed with X", "I cannot go ahead with X", "we're not
#: able to switch to X"): from the agent a report of what blocks the work, neither a choice nor a rejection
_UNABLE = lazy_re(
    r"(?:\bunable\s+to|\bnot\s+able\s+to|\bcannot|\bcan't|\bcan\s+not|\bcouldn't|\bcould\s+not|\bimpossible\s+to|"
    r"\bno\s+way\s+to|\bfail(?:ed|s)?\s+to|\bwon't\s+be\s+able\s+to)\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_TOOLISH = lazy_re(
    r"^(?:the\s+|a\s+)?(?:\w+[\s-]+)?(?:tool|tools|command|function|script|subagent|agent|mcp)\b|^(?:the\s+)?"
    r"(?:read|edit|write|bash|grep|glob|ls|task|todowrite|todo|webfetch|websearch|multiedit|find|sed|awk|cat|rg|"
    r"search|view|str_replace_editor|apply_patch|this|that|it|them|these|those)\b",
    re.IGNORECASE,
)
_LEAD_ALT = lazy_re(r"\b(?:instead\s+of|rather\s+than)\s+(?P<y>[^,;]{2,80}),\s*", re.IGNORECASE)
_PRONOUN = lazy_re(
    r"^(?:it|that|this|which|they|these|those|the\s+(?:fix|change|attempt|idea|approach|command|test)|"
    r"(?:this|that|the\s+(?:first|second|previous|last))\s+(?:one|approach|attempt|fix|idea|change|option|way|command|try))$",
    re.IGNORECASE,
)


_KEEP_STYLE = lazy_re(
    r"\s(?:minimal|simple|small|short|lean|focused|clean|tidy|consistent|stable|unchanged|as\s+is|intact|readable|"
    r"backwards?[\s-]compatible|private|internal|optional|fast|cheap|boring|flat|dry|separate)$",
    re.IGNORECASE,
)
_PROCEED_SUBJECT = lazy_re(r"\b(?:we|let's|let\s+us|I'll|I'm|I\s+will|I\s+am|we're|we'll|decided\s+to|going\s+to)\b[^.]{0,25}$", re.IGNORECASE)
#: "proceed with the requested Git operations", "go ahead with the remaining steps": the object is the work in hand
#: (a generic work noun heads it, before any "from / in / on …" phrase), so the sentence narrates the task
_TASK_HEAD = lazy_re(
    r"^(?:(?:the|these|those|this|that|my|our|your|all|all\s+the|any)\s+)?(?:[\w.`'/-]+\s+){0,3}?"
    r"(?:operations?|changes?|tasks?|requests?|steps?|work|commands?|edits?|instructions?|updates?|modifications?|"
    r"actions?|process|job|rest|remainder|implementation|execution|procedure|sequence)$",
    re.IGNORECASE,
)
_TASK_TAIL = lazy_re(
    r"\s+(?:from|in|on|for|to|at|of|as|using|into|inside|within|via|by|against|under|across|that|which|now|here|first)\b.*$",
    re.IGNORECASE,
)
_CHOICE_LEAD = lazy_re(r"^(?:move\s+forward\s+with|proceed\s+with|go\s+ahead\s+with|go\s+with|run\s+with|stick\s+with)\s+", re.IGNORECASE)
#: a sentence that states a cause: the reason of a choice in the next sentence
_CAUSE = lazy_re(
    r"\b(?:trac(?:e|es|ed)\s+back\s+to|stem(?:s|med)?\s+from|originat(?:e|es|ed)\s+in|(?:is|are|was|were)\s+(?:all\s+)?due\s+to|"
    r"caused\s+by|comes?\s+from|the\s+(?:root\s+)?(?:cause|problem|issue|culprit)\s+(?:is|was))\b",
    re.IGNORECASE,
)


#: a run named by its command and a run noun at the end: "the `firebase deploy` command", "`npm ci` step"
_RUN_NAMED = lazy_re(r"`[^`]+`\s+(?:command|call|step|run|build|script|job|check|install(?:ation)?|deploy(?:ment)?|"
                     r"request|push)\s*$", re.IGNORECASE)


def hits_in(text: str, origin: str, *, explicit: bool = True) -> list[Hit]:
    """Decisions stated in ``text`` (explicit markers unless ``explicit`` is False, and implicit phrasings), in
    text order."""
    low = text.lower()
    same = len(low) == len(text)
    out = explicit_hits(text, origin, low if same else None) if explicit else []
    matches = list(TRIGGER.finditer(low) if same else TRIGGER_ANYCASE.finditer(text))
    if not matches:
        return out
    spans = local_spans(text, [m.start() for m in matches])
    if not spans:
        return out
    taken = {h.start for h in out}
    keys_at: dict[int, set[str]] = {}
    for m in matches:
        k = span_index_at(spans, m.start())
        if k >= 0 and spans[k][0] not in taken:
            key = "".join(" " if c.isspace() else c for c in text[m.start(): m.start() + 3].lower())
            keys_at.setdefault(k, set()).add(key)
    for k, keys in keys_at.items():
        out.extend(analyze(text, spans, k, origin, keys))
    out.sort(key=lambda h: h.focus)
    return out


def explicit_hits(text: str, origin: str = "explicit", low: str | None = None) -> list[Hit]:
    """``APPROVED: / DECISION: / DECIDED: / REJECTED:`` lines (line start, any case; or inline in capitals).

    ``low`` may pass ``text.lower()`` when the caller has it."""
    hits: list[Hit] = []
    low = text.lower() if low is None else low
    if (":" not in text and "：" not in text) or not any(w in low for w in _EXPLICIT_WORDS):
        return hits
    starts: set[int] = set()
    for rx in (_EXPLICIT_LINE, _EXPLICIT_INLINE):
        for m in rx.finditer(text):
            if m.start(2) in starts:
                continue
            starts.add(m.start(2))
            label = m.group(1).upper()
            body = m.group(2).rstrip()
            parts = _EXPLICIT_SPLIT.split(body, maxsplit=1)
            what = clean(parts[0])
            if not what:
                continue
            reason = reason_text(parts[1]) if len(parts) > 1 else None
            status = REJECTED if label in ("REJECTED", "RULED OUT") else APPROVED
            line_start = text.rfind("\n", 0, m.start(1)) + 1
            kind = "explicit" if origin in ("implicit", "explicit") else origin
            turned_down = _NOT_Y.match(what) if status == APPROVED and label not in ("APPROVED",) else None
            if turned_down and clean(turned_down.group("x")) and clean(turned_down.group("y")):
                # "Decision: the staging DB, not prod": the one chosen, and the one turned down
                x, y = clean(turned_down.group("x")), clean(turned_down.group("y"))
                hits.append(Hit(APPROVED, clip(x, WHAT_LIMIT), reason, line_start, m.end(2), m.start(1), kind))
                hits.append(Hit(REJECTED, clip(y, WHAT_LIMIT), reason or f"in favour of {clip(x, 80)}", line_start,
                                m.end(2), m.start(1), kind))
                continue
            hits.append(Hit(status, clip(what, WHAT_LIMIT), reason, line_start, m.end(2), m.start(1), kind))
    return hits


def analyze(text: str, spans: list[tuple[int, int]], k: int, origin: str, keys: set[str] | None = None) -> list[Hit]:
    """Decisions in sentence ``k`` of ``text``: each phrasing at most once, option ranges not overlapping.

    ``keys`` (first three letters of the trigger words found in the sentence) limits the phrasings tried; when
    None they are computed from the sentence.
    """
    a, b = spans[k]
    if keys is None:
        keys = trigger_keys(text[a:b])
        if not keys:
            return []
    sent = text[a:b].replace("’", "'").replace("‘", "'")
    if sent.rstrip(" *_`)\"'").endswith("?"):
        return []
    hits: list[Hit] = []
    occupied: list[tuple[int, int]] = []
    wanted: set[int] = set()
    for key in keys:
        wanted.update(BY_KEY.get(key, ()))
    pats = tuple(PATTERNS[n] for n in sorted(wanted))
    for pat in pats:
        for m in pat.regex.finditer(sent):
            found = _one(pat, m, sent, text, spans, k, origin)
            if found is None:
                continue
            found_hits, lo, hi = found
            if any(lo < e and s < hi for s, e in occupied):
                continue
            hits.extend(found_hits)
            occupied.append((lo, hi))
            break
    return hits


#: an option that is only a connective or a placeholder ("either", "both", "the following", "this")
_EMPTY_OPTION = lazy_re(r"^(?:either|both|neither|the\s+following|following|one)\W*$", re.I)
#: two alternatives joined by "or" in the option itself
_ALTERNATIVES = lazy_re(r"\s(?:or|ou|o)\s(?!not\b|so\b|more\b|less\b)", re.I)
#: a clause in the agent's own voice or one ending on a pronoun: the option of a misread "… didn't work"
_SELF_CLAUSE = lazy_re(r"^(?:I|we)\s+(?:need|want|have|should|must|will|'ll)\b|\b(?:why|how)\s+(?:it|this|that)$", re.I)


def _guarded(prefix: str, status: str) -> bool:
    """True when the words before a trigger make it hypothetical (weak cues only block approvals)."""
    if _HYPOTHETICAL.search(prefix):
        return True
    return status == APPROVED and bool(_HYPOTHETICAL_WEAK.search(prefix))


def _one(pat: Pat, m: re.Match[str], sent: str, text: str, spans, k: int, origin: str):
    """``(hits, lo, hi)`` for one trigger match (``lo..hi`` = trigger + option in sentence offsets), or None."""
    a, b = spans[k]
    alt = reason = None
    pronoun = False
    status = pat.status
    if pat.side == "after":
        prefix = sent[: m.start()]
        unable = bool(_UNABLE.search(prefix[-60:]))
        if unable and origin != "user":
            return None  # the agent reports what blocks it; the user's "we can't go with X" turns X down
        if (unable or _NEGATED.search(prefix)) and status == APPROVED:
            status = REJECTED
        if _guarded(prefix, status):
            return None
        tail = sent[m.end():]
        if pat.name == "tried":
            f = FAIL_AFTER.search(tail)
            if not f:
                return None
            x = tail[: f.start()]
            rest = tail[f.start():]
            r = REASON_ONLY.search(rest)
            reason = rest[r.end():] if r else re.sub(r"^[,\s]*(?:but|and|which|however)\s+", "", rest, flags=re.I)
            lo, hi = m.start(), len(sent)
        else:
            x, alt, reason = split_tail(tail, over=pat.over)
            lo, hi = m.start(), m.end() + len(x)
    else:
        subject_text = sent[: m.start()]
        if _guarded(subject_text, status):
            return None
        x = subject_before(subject_text)
        rest = sent[m.end():]
        if pat.over:  # "X wins over Y: reason" - the text after the trigger is the alternative, then the reason
            alt, _, reason = split_tail(rest, over=False)
            if reason is None:
                r = REASON_ONLY.search(rest, len(alt))
                reason = rest[r.end():] if r else None
        else:
            r = REASON_ONLY.search(rest)
            if r:
                reason = rest[r.end():]
            elif status == REJECTED and rest.strip(" .!"):
                reason = rest
        lo, hi = m.start() - len(x), m.end()
    what = clean(x)
    if not what or len(what.split()) > 25 or _EMPTY_OPTION.match(what):
        return None  # "the solution is to either:" names no option
    if status == APPROVED and origin != "user" and _ALTERNATIVES.search(what):
        return None  # "use X or conditionally set Y" offers alternatives, it chooses none
    if _SELF_CLAUSE.search(what):
        return None  # "I need to figure out why it (didn't work)": the agent's own clause, no option
    if pat.name == "avoid" and origin != "user" and len(what.split()) > 3 and not distinctive(what):
        return None  # "avoided overengineering while delivering value": a virtue claimed, no option turned down
    if pat.tool_filter and _TOOLISH.match(what):
        return None
    if pat.name in ("failed-because", "didnt-work") and (
        _PRONOUN.match(what) and pat.name == "failed-because" or RUNLIKE.search(what) and len(what.split()) <= 3
        or _RUN_NAMED.search(what)
    ):
        return None  # "the build failed because…", "the `firebase deploy` command failed because…" report a failure,
        # they reject no option
    if pat.side == "after" and PHRASAL.match(what):  # "picking up with…", "dropping into…", "moving on to…"
        return None
    if pat.name == "chose":
        what = re.sub(r"^to\s+", "", what)
    if status == APPROVED and vague(what):
        return None
    if pat.name == "lets-use" and "keep" in m.group(0).lower() and _KEEP_STYLE.search(what):
        return None  # "let's keep the config minimal" states a constraint, it approves no "config minimal"
    if pat.name == "switch-obj":  # "switching the decoder to simdjson" -> "the decoder to simdjson"
        what = f"{m.group('obj')} to {what}"
    if pat.name == "proceed-with" and not _PROCEED_SUBJECT.search(sent[: m.start()]):
        return None  # "let me proceed with the next step" is narration
    if pat.name in ("decided", "opt-for", "plan-is", "best-is"):
        what = _CHOICE_LEAD.sub("", what) or what
    if pat.name == "gerund-lead":
        what = LEMMA.get(m.group("verb").lower(), m.group("verb")) + " " + what
    if pat.name == "it-is" and (len(what.split()) > 3 or IT_IS_BAD.search(what)):
        return None
    if pat.name == "plan-is" and not m.group(0).rstrip().lower().endswith(" to") and not PLAN_OBJECT.match(what):
        return None
    if _PRONOUN.match(what):
        if status == APPROVED:
            return None
        pronoun = True
    if reason is None:
        reason = sentence_reason(sent, m.start())
    start = a
    if reason is None and pat.side == "after":
        before = sent[: m.start()]
        cut = max(before.rfind(";"), before.rfind(" — "), before.rfind(": "), before.rfind(", so "))
        if cut > 0 and len(before[cut + 1:].split()) <= 4 and len(before[:cut].split()) >= 3:
            reason = before[:cut]  # "The timeouts trace back to X; we're going with Y"
        elif k > 0:
            pa, pb = spans[k - 1]
            prev_sent = strip_markup(text[pa:pb].replace("’", "'"))
            if _CAUSE.search(prev_sent) and not prev_sent.rstrip().endswith("?") and b - pa <= 300:
                reason, start = prev_sent, pa  # "The timeouts trace back to X. We're going with Y."
    end = b
    if reason is None or not clean(reason):
        reason = None
        if k + 1 < len(spans):
            na, nb = spans[k + 1]
            nxt = strip_markup(text[na:nb].replace("’", "'"))
            if NEXT_REASON.match(nxt):
                reason = nxt
                if nb - a <= 300:
                    end = nb
    if status == APPROVED and not reason and INVESTIGATE.match(what):
        return None
    if alt is None and pat.side == "after":
        lead = _LEAD_ALT.search(sent[: m.start()])
        if lead:  # "Instead of polling, we'll use webhooks"
            alt = lead.group("y")
    alt_clean = clean(alt) if alt else ""
    if not alt_clean and reason and status == APPROVED and pat.side == "after":
        neg = NEG_SUBJECT.match(clean(reason))
        if neg and norm_key(neg.group("y")) != norm_key(what):  # "switching to X since Y doesn't …": Y rejected
            alt_clean = clean(neg.group("y"))
    if pat.needs == "reason" and not (reason or alt_clean):
        return None
    if pat.name == "proceed-with" and not (reason or alt_clean) and _TASK_HEAD.match(_TASK_TAIL.sub("", what)):
        return None  # "I will proceed with the Git operations from the repo root" carries out the request
    if pat.needs == "alt" and not alt_clean:
        return None
    focus = a + m.start()
    why = reason_text(reason) if reason else None
    own_origin = "dead-end" if origin == "implicit" and pat.name in DEAD_ENDS else origin
    hits = [Hit(status, clip(what, WHAT_LIMIT), why, start, end, focus, own_origin, pronoun)]
    if alt_clean and not _PRONOUN.match(alt_clean) and len(alt_clean.split()) <= 25:
        other = REJECTED if status == APPROVED else APPROVED
        alt_why = f"in favour of {clip(what, 80)}" if other == REJECTED else f"instead of {clip(what, 80)}"
        if why:
            alt_why = f"{alt_why}: {why}"
        hits.append(Hit(other, clip(alt_clean, WHAT_LIMIT), clip(alt_why, REASON_LIMIT), start, end, focus + 1, origin))
    return hits, lo, hi
