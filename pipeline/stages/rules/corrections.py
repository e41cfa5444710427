"""A user's correction of what the assistant just planned or did (issue 13 §1.3).

Shape: the user's prompt opens, after at most one interjection ("Hmm,", "Thanks, but", "Ok.", "Well,", "嗯，",
"Obrigado, mas"), with a correction head: "no" / "nope" / "no <thing>" / "actually" / "stop" / "wait" / "that's
wrong" / "não" / "no," / "不" / "别" / "아니" / "いや".  Then:

* the assistant's plan or proposal just before (``proposals``) is REJECTED, reason the user's words; when the
  user names the thing ("no Docker for this", "no ORM") and the plan does not mention it, the named thing is
  the rejected entry instead;
* what the user asks for in its place — a later sentence or clause that opens with an imperative ("use Y",
  "just Y", "let's Y", "keep Y", "go with Y", "switch to Y", "usa Y", "改用 Y") or says "Y is fine / enough" —
  is APPROVED, reason the user's instruction.

A plain "no" with nothing else is left to ``approvals`` (its older rule turns the proposal down the same way).
Returned as ``(status, what, reason, cite, start, end)``: ``cite`` is "prev" (the assistant's message, whose
quoted span supports ``what``) or "user" (the prompt itself).
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import proposals
from pipeline.stages.rules.clauses import clean, split_tail
from pipeline.stages.rules.text import clip, sentence_spans

WHAT_LIMIT = 160
WORDS_LIMIT = 170

_INTERJECTION = (
    r"(?:(?:hmm+|hm+|um+|uh+|ah+|oh+|well|ok(?:ay)?|thanks|thank\s+you|sorry|yeah|yes|sure|so|"
    r"obrigad[oa]|gracias|valeu|嗯|谢谢|好的?|음|고마워요?|うーん|ありがとう)\s*(?:[,.!…]+\s*|\s+)(?:but\s+|mas\s+|pero\s+|但是?\s*)?)?"
)
_HEAD = lazy_re(
    r"^\s*" + _INTERJECTION + r"(?P<head>no(?![\w'’])|nope|nah|actually|stop|that'?s\s+(?:wrong|not\s+(?:right|it|what\s+I))|"
    r"n[aã]o(?![\w])|para(?=[,.!])|en\s+realidad|na\s+verdade|不对|不是|不要(?=[，,。！!\s])|别(?=[，,])|아니(?:요)?|いや|違う)"
    r"[\s,.!:;…，。！、-]*",
    re.IGNORECASE,
)
#: "no Docker for this" / "no ORM" right after the head: the thing named
_NO_THING = lazy_re(
    r"^(?P<x>(?!(?:I|we|you|it|that|this|the|a|an|need|problem|worries|thanks|way|more|longer|wait|one|sir)\b)"
    r"[`\w.+#/-]+(?:\s+[`\w.+#/-]+){0,2}?)(?:\s+(?:for\s+(?:this|now|that|it|the\s+\w+)|here|please|thanks|at\s+all|yet))?\s*(?:[.!:;,]|$)",
    re.IGNORECASE,
)
_INSTEAD = lazy_re(
    r"(?:^|[,.;:]\s*|\b(?:just|instead|rather|but|and|please|then|so)\s+)(?:let'?s\s+|we\s+should\s+|you\s+should\s+|please\s+)?"
    r"(?P<verb>use|go\s+with|switch\s+to|stick\s+with|keep|move\s+to|put|store|try|write|make|do|add|run|"
    r"usa|use|usar|utilize|mant[eé]n|mantenha|改用|换成|用)\s+(?P<y>.+)",
    re.IGNORECASE,
)
_IS_FINE = lazy_re(r"^(?P<y>.{3,80}?)\s+(?:is|are|would\s+be|will\s+be)\s+(?:fine|enough|ok(?:ay)?|good\s+enough|plenty|all\s+we\s+need)\b", re.I)
#: "no problem, go ahead", "actually, also add…": not a correction
_NOT_A_CORRECTION = lazy_re(
    r"^(?:problem|worries|rush|need\s+to\s+apologi|doubt|also|and\b|too\b|that'?s\s+(?:fine|great|good|perfect)|"
    r"looks\s+good|problema|pasa\s+nada|hay\s+problema|tem\s+problema|问题|没事)",
    re.IGNORECASE,
)
_PRONOUN_ONLY = lazy_re(r"^(?:it|this|that|them)$", re.I)


def not_a_correction(rest: str) -> bool:
    """True when the text after a "no" is a pleasantry ("no problem", "no worries"), not a correction."""
    return bool(_NOT_A_CORRECTION.match(rest.lstrip(" ,.!")))


def _words(text: str, start: int) -> str:
    end = text.find("\n", start)
    return clip(text[start:] if end < 0 else text[start:end], WORDS_LIMIT)


def correction(text: str, prev_text: str) -> list[tuple[str, str, str, str, int, int]] | None:
    """The entries of a correcting prompt ``text`` (left-trimmed) after assistant message ``prev_text``, or None
    when the prompt does not open with a correction or says nothing beyond a bare "no"."""
    m = _HEAD.match(text)
    if m is None:
        return None
    head = m.group("head").lower()
    rest = text[m.end():]
    if not rest.strip() and head in ("no", "nope", "nah"):
        return None  # a bare "no" is the older rule's
    if _NOT_A_CORRECTION.match(rest):
        return None
    words = _words(text, 0)
    out: list[tuple[str, str, str, str, int, int]] = []
    plan = proposals.proposal_in(prev_text) or proposals.plan_in(prev_text) if prev_text else None
    thing = None
    if head in ("no", "não", "nao", "不要", "别"):
        t = _NO_THING.match(rest)
        if t and not _INSTEAD.match(rest):
            thing = clean(t.group("x"))
    why = f'user said "{words}"'
    if plan is not None and (thing is None or thing.lower()[:4] in plan[0].lower()):
        out.append(("REJECTED", plan[0], why, "prev", plan[1], plan[2]))
    elif thing:
        a = m.end() + text[m.end():].find(thing)
        out.append(("REJECTED", clip(thing, WHAT_LIMIT), why, "user", a, a + len(thing)))
    elif plan is None:
        return None
    base = m.end()
    for a, b in sentence_spans(rest):
        sent = rest[a:b].replace("’", "'").rstrip()
        if sent.endswith(("?", "？")):
            continue
        for part_start, part in _clauses(sent):
            got = _instead(part)
            if got:
                s0 = base + a + part_start
                out.append(("APPROVED", got, f'user\'s instruction ("{words}")', "user", s0, s0 + len(part)))
                return out
    return out


def _clauses(sent: str):
    """The sentence, and the part after its first ":" / ";" / ", " (where the replacement often sits)."""
    yield 0, sent
    for mm in re.finditer(r"[:;，,]\s*", sent):
        yield mm.end(), sent[mm.end():]


def _instead(part: str) -> str | None:
    m = _INSTEAD.search(part)
    if m:
        y = clean(split_tail(re.sub(r"\s+instead\b.*$", "", m.group("y"), flags=re.I), over=False)[0])
        verb = " ".join(m.group("verb").lower().split())
        if y and not _PRONOUN_ONLY.match(y) and len(y.split()) <= 20:
            return clip(y if verb in ("use", "usa", "usar", "utilize", "go with", "switch to", "stick with", "改用", "换成", "用")
                        else f"{verb} {y}", WHAT_LIMIT)
    f = _IS_FINE.match(part.strip())
    if f:
        y = clean(f.group("y"))
        if y and not _PRONOUN_ONLY.match(y):
            return clip(y, WHAT_LIMIT)
    return None
