"""Clause-level parsing of a decision sentence: where the option ends, which alternative it is chosen over,
and the reasoning ("because / since / as / so that / given / due to / : / — …", or a following sentence that
starts "This avoids… / That way… / Because…").  Parentheses and backtick spans are opaque to the boundaries.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.text import clip, strip_markup

REASON_LIMIT = 200  # characters (Decision.reasoning)

_BOUND = lazy_re(
    r"(?P<alt>\s+(?:instead\s+of|rather\s+than|in\s+favou?r\s+of|over)\s+)"
    r"|(?P<reason>\s+(?:because|since|given\s+(?:that\s+)?|due\s+to|as\s+(?=(?:it|the|this|that|we|they|there|our|its|I|"
    r"these|those|both|each|all|nothing|no|a|an|per|otherwise|you|he|she)\b))"
    r"|\s+(?=so\s+(?!far\b|much\b|many\b|on\b|forth\b)\w|which\s+(?:means|gives|avoids|keeps|lets|makes|is)\b|to\s+(?:avoid|prevent|keep|make|ensure|"
    r"reduce|support|handle|allow|match|speed|stay|get\s+rid|fix|work\s+around|survive)\b)"
    r"|\s*[—–]\s*|\s+-{1,2}\s+|\s*:\s+|\s*;\s*|\s+\((?=\s*(?:because|since|as|it|which|faster|simpler|safer))"
    r"|,\s*(?=(?:because|since|as|which|so|given|due\s+to)\b))"
    r"|(?P<stop>,\s+|\s+but\s+(?!also\b|not\b)|\s+(?:for\s+now|for\s+the\s+time\s+being|going\s+forward|from\s+now\s+on|for\s+this|here)\b"
    r"|\s+(?:and|then)\s+(?:then\s+)?(?:I'll|we'll|let\s+me|let's|I\s+will|we\s+will|I'm|we're|run|update|add|"
    r"remove|re-?run|move|rerun|write|start)\b)",
    re.IGNORECASE,
)
REASON_ONLY = lazy_re(
    r"\s+(?:because|since|given\s+(?:that\s+)?|due\s+to)\s+|,\s*(?:as|since|because)\s+|\s*[—–:]\s+|\s+-{1,2}\s+"
    r"|,\s*(?=(?:it|this|that|they)\s+(?:breaks|doesn't|didn't|can't|won't|adds|added|needs|requires|"
    r"costs|leaks|races|deadlocks|crashes|would\s+(?:break|need|add|cost))\b)"
    r"|\s+(?=so\s+that\b|which\s+(?:means|gives|avoids|keeps|lets|makes)\b|to\s+(?:avoid|prevent|keep|ensure|"
    r"reduce|support|allow|match|speed|survive)\b)",
    re.IGNORECASE,
)
_LEAD_REASON = lazy_re(r"^(?:because|since|as|given\s+(?:that\s+)?)\s+(?P<r>[^,]{4,}?),\s+", re.IGNORECASE)
NEXT_REASON = lazy_re(
    r"^(?:because\b|since\b|the\s+reason\b|that\s+way\b|this\s+way\b|"
    r"(?:this|that|it)(?:'s|\s+is)?\s+(?:avoids|keeps|gives|means|lets|makes|ensures|matches|handles|supports|survives|"
    r"scales|removes|prevents|is\s+(?:faster|simpler|safer|cheaper|more|less|better|already|the\s+only)|"
    r"(?:faster|simpler|safer|cheaper|more|less|better|already|the\s+only)))",
    re.IGNORECASE,
)
FAIL_AFTER = lazy_re(
    r"(?:(?:,\s*|\s+)(?:but|and|which|however|only\s+to\s+find)\s+(?:it\s+|that\s+|this\s+|they\s+|the\s+(?:[\w-]+\s+){1,3}?)?|"
    r"(?:,|;|\s+[-—–])\s*(?:it|that|this|they)\s+)"
    r"(?:still\s+|also\s+|just\s+)?(?:fail|didn't|did\s+not|doesn't|does\s+not|broke|no\s+luck|won't|couldn't|could\s+not|"
    r"errored|error|timed?\s+out|crash|hang|hung|same\s+(?:error|problem|issue|result)|gave|returned\s+an?\s+error|"
    r"(?:was|is|got|became|were|ran|made\s+it)\s+(?:much\s+|way\s+|even\s+|\d+(?:\.\d+)?x\s+)?(?:slower|worse|too\s+slow|flaky|"
    r"unreliable|broken)|no\s+(?:faster|better|difference)|didn't\s+help|did\s+not\s+help|"
    r"(?:kept|keeps)\s+(?:coming|happening|failing|appearing|showing\s+up|timing\s+out|crashing)|persisted|came\s+back|"
    r"(?:made|makes)\s+no\s+difference|changed\s+nothing)",
    re.IGNORECASE,
)
_SUBJECT_CUT = lazy_re(
    r"(?:[,;:—–]\s|\s-\s|\b(?:so|but|and|because|since|however|then|unfortunately|sadly|apparently|though|while)\s)",
    re.IGNORECASE,
)
_SUBJECT_LEAD = lazy_re(
    r"^(?:(?:ok(?:ay)?|so|well|hmm|alright|unfortunately|sadly|apparently|it\s+(?:seems|looks)(?:\s+(?:like|that))?|"
    r"looks\s+like|seems\s+like|turns\s+out|i\s+(?:think|see|found|realize[d]?)|(?:that|which)\s+means|clearly|"
    r"yes|no|now|anyway|both)\s*,?\s+)+",
    re.IGNORECASE,
)
_REASON_LEAD = lazy_re(r"^(?:because|since|as|given\s+(?:that\s+)?|due\s+to)\s+", re.IGNORECASE)
_SUBJECT_TRAIL = lazy_re(r"(?:\s+(?:still|also|just|really|actually|simply|even|ever|then))+$", re.IGNORECASE)
_EDGE = " \t'“”‘’*_.,;:!?-–—，。；：、！？"
_TRAIL_WORDS = lazy_re(
    r"\s+(?:for\s+now|for\s+the\s+time\s+being|then|too|here|instead|now|again|anyway|as\s+well|for\s+this|for\s+it|first|"
    r"initially|earlier|already|last\s+(?:year|month|week|sprint)|yesterday)$",
    re.IGNORECASE,
)
LEMMA = {
    "moving": "move", "putting": "put", "keeping": "keep", "replacing": "replace", "storing": "store",
    "caching": "cache", "wrapping": "wrap", "splitting": "split", "pinning": "pin",
}
IT_IS_BAD = lazy_re(
    r"\b(?:is|are|was|what|that|as|so|because|than|how|where|whatever|if|stays|remains|keeps|way|thing|left|it)\s*$|"
    r"\b(?:is|are|was|what|that)\b",
    re.IGNORECASE,
)
PHRASAL = lazy_re(
    r"^(?:up|out|apart|through|on|off|back|over|from|between|among|into|onto|in|at|by|to\s+(?:the|a|an)\b|around|away|down)\b",
    re.IGNORECASE,
)
#: an option with no content of its own ("a more targeted search", "what we have")
VAGUE = frozenset(
    "more different better simpler other new another targeted quick quicker broader narrower specific approach way "
    "method search query command tool pattern look check fix solution option idea thing things one version strategy "
    "bit same similar following above below what have see something everything anything instead alternative "
    "proper right correct good best simple simplest easier easiest first second last next previous current".split()
)
#: investigation steps, not decisions, when no reason is given ("I decided to check the logs first")
INVESTIGATE = lazy_re(
    r"^(?:to\s+)?(?:check|look|read|examine|inspect|investigate|search|verify|review|run|test|explore|start|begin|see|"
    r"try|debug|open|view|list|find|grep|analy[sz]e|understand|figure|re-?run|confirm|take\s+a\s+look|dig|scan|"
    r"print|dump|log|trace)\b",
    re.IGNORECASE,
)
_LABEL = lazy_re(r"^(?:option|approach|choice|alternative|variant|plan)\s*#?\s*[0-9A-Za-z]+$", re.IGNORECASE)
_OBJ_PRONOUN = lazy_re(r"^(?:it|this|that|them|these|those|everything|something|things)\b", re.IGNORECASE)


def vague(what: str) -> bool:
    """True when ``what`` names nothing concrete: only generic words, or a short phrase led by a pronoun."""
    if _LABEL.match(what):  # "option A" names a listed option (resolved later)
        return False
    words = [w for w in re.findall(r"[a-z0-9_]+", what.lower()) if w not in ("a", "an", "the", "to", "we", "and")]
    if not words or all(w in VAGUE for w in words):
        return True
    return bool(_OBJ_PRONOUN.match(what)) and len(what.split()) <= 3
PLAN_OBJECT = lazy_re(r"^(?:a|an|the|\w+ing)\b", re.IGNORECASE)
RUNLIKE = lazy_re(
    r"\b(?:tests?|run|runs|build|ci|job|check|command|suite|step|pipeline|import|request|call|install(?:ation)?|"
    r"connection|deploy(?:ment)?|migration|script|baseline|query|lint|linter|compile|compilation)\b",
    re.IGNORECASE,
)
NEG_SUBJECT = lazy_re(
    r"^(?P<y>(?!(?:it|this|that|they|we|I|you|there|which|the\s+(?:old|current|existing)\s+one)\b)[\w/.`'\-]+"
    r"(?:\s+[\w/.`'\-]+){0,3}?)\s+(?:doesn't|does\s+not|didn't|did\s+not|can't|cannot|won't|will\s+not|isn't|is\s+not|"
    r"wasn't|lacks|has\s+no|doesn't\s+have|is\s+too)\b",
    re.IGNORECASE,
)


def clean(text: str) -> str:
    """An option phrase tidied: markup and edge punctuation gone (paired quotes, backticks and brackets kept),
    trailing filler words dropped, one line."""
    text = strip_markup(text).strip(_EDGE)
    text = _TRAIL_WORDS.sub("", text).strip(_EDGE)
    for _ in range(2):
        if text.count("`") % 2:
            text = text.strip("`").strip(_EDGE)
        if text.count("(") != text.count(")"):
            text = text.strip("()").strip(_EDGE)
        if text.count('"') % 2:
            text = text.strip('"').strip(_EDGE)
    if text.count("`") % 2:
        text = text.replace("`", "")
    if text.count("(") != text.count(")"):
        text = text.replace("(", "").replace(")", "")
    return text


def reason_text(text: str) -> str | None:
    """A reasoning clause tidied for the log (lead "because/since/as" dropped, at most ``REASON_LIMIT``
    characters, one line); None when fewer than 3 characters remain."""
    text = _REASON_LEAD.sub("", clean(text))
    if len(text) < 3:
        return None
    return clip(text, REASON_LIMIT)


def split_tail(tail: str, *, over: bool) -> tuple[str, str | None, str | None]:
    """Split the text after a trigger into ``(option, alternative, reason)`` at clause boundaries.

    The option ends at the first boundary.  An alternative marker (``instead of / rather than / in favour of``,
    and ``over`` when ``over``) starts the alternative, which ends at the next boundary; the reason is the text
    after the first reason marker (``because / since / as <pronoun> / given / due to / so that / to avoid… / : /
    — / ;``) anywhere after the option.
    """
    full = tail
    tail = _mask(tail)
    pos = 0
    while True:
        m = _BOUND.search(tail, pos)
        if m is None:
            return full, None, None
        if m.group("alt") is not None and not over and m.group("alt").strip().lower() == "over":
            pos = m.end()
            continue
        break
    x = full[: m.start()]
    if m.group("alt") is not None:
        base = m.end()
        rest = tail[base:]
        n = _BOUND.search(rest)
        while n is not None and n.group("alt") is not None:
            n = _BOUND.search(rest, n.end())
        alt = full[base: base + n.start()] if n else full[base:]
        x, alt, paren = _alt_purpose(x, alt)
        if n is None:
            return x, alt, paren
        if n.group("stop") is None:
            return x, alt, full[base + n.end():]
        r = REASON_ONLY.search(rest, n.start())
        return x, alt, (full[base + r.end():] if r else None)
    if m.group("stop") is not None:
        r = REASON_ONLY.search(tail, m.start())
        return x, None, (full[r.end():] if r else None)
    return x, None, full[m.end():]


_ALT_FOR = lazy_re(r"^(?P<y>(?:[\w`.'/+-]+\s+){0,2}?[\w`.'/+-]*[\w`'])\s+(?P<p>for\s+(?:(?:[\w`.'/+-]|\(\))+\s*){1,5})(?P<rest>.*)$", re.IGNORECASE)
#: verbs whose object is "for …" ("waiting for the lock"): the "for" is not a purpose there
_FOR_VERB = lazy_re(r"\b(?:wait|look|search|ask|check|test|account|pay|allow|call|prepar|hop|aim|opt|vot|argu)\w*$", re.IGNORECASE)
_ALT_PAREN = lazy_re(r"^(?P<y>.*?)\s*\((?P<r>[^()]{3,})\)\s*[.!]*$")


def _alt_purpose(x: str, alt: str) -> tuple[str, str, str | None]:
    """"X instead of Y for Z (why)": the purpose "for Z" belongs to both options, so it moves to the chosen one
    ("X for Z" over "Y"); a parenthesis closing the alternative is the reason.  Returns ``(x, alt, reason)``."""
    reason = None
    p = _ALT_PAREN.match(alt)
    if p and p.group("y").strip():
        alt, reason = p.group("y"), p.group("r")
    f = _ALT_FOR.match(alt.strip())
    if f and not f.group("rest").strip(" .,") and not _FOR_VERB.search(f.group("y")) and x.strip():
        x = f"{x.rstrip()} {f.group('p').strip()}"
        alt = f.group("y")
    return x, alt, reason


_REASON_PAREN = lazy_re(r"\s*(?:because|since|as\s|it\s|which\s|faster|simpler|safer)", re.IGNORECASE)


def _mask(text: str) -> str:
    """``text`` with the inside of parentheses and backtick spans replaced by ``x`` (same length), so clause
    boundaries inside them ("(createdAt, id)", "`a; b`") are not seen; a parenthesis that opens a reason
    ("(because …") is left as is."""
    if "(" not in text and "`" not in text:
        return text
    out = list(text)
    depth = 0
    tick = False
    for k, ch in enumerate(text):
        if ch == "`":
            tick = not tick
            continue
        if tick:
            out[k] = "x"
            continue
        if ch == "(":
            if depth == 0 and _REASON_PAREN.match(text, k + 1):
                continue
            depth += 1
            continue
        if ch == ")" and depth:
            depth -= 1
            continue
        if depth:
            out[k] = "x"
    return "".join(out)


def subject_before(prefix: str) -> str:
    """The noun phrase just before a trailing trigger: text after the last clause boundary, lead words gone."""
    cut = 0
    for m in _SUBJECT_CUT.finditer(prefix):
        if m.end() < len(prefix) - 1:
            cut = m.end()
    subject = _SUBJECT_LEAD.sub("", prefix[cut:].strip())
    return _SUBJECT_TRAIL.sub("", subject)


def sentence_reason(sent: str, trig_start: int) -> str | None:
    """The reason of a sentence that opens with it ("Since the pods share nothing, we're going with Redis"),
    when that clause ends before the trigger at ``trig_start``; else None."""
    m = _LEAD_REASON.match(sent)
    if m and m.end() <= trig_start + 1:
        return m.group("r")
    return None
