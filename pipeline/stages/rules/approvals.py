"""Decisions the user makes in a prompt: approving or rejecting the assistant's proposal, picking an option,
and direct instructions ("no, don't use X, use Y", "not X, Y", "instead of X, use Y").

Rules (DESIGN.md "Approval" and "Stages"; task brief):
* approval = a reply that starts with an approval word (yes, ok, sounds good, go ahead, approved, lgtm, do it…)
  right after an assistant message that proposed something ("I propose / I suggest / I recommend…",
  "Shall I / Should I / Want me to / Would you like me to…?", a list of options).  The entry is
  ``APPROVED: <the proposal> - user approved ("<reply>")``.  "continue", "next", "go on" or a bare letter or
  number alone are not approval, except a bare label answering a message that lists options and ends on a
  question ("Which one?" - "2": option 2 APPROVED, of two options the other REJECTED); a proposal that only
  offers to start the work ("Shall I start building it?", "Quer que eu comece?") is a go-ahead, not a decision;
  "yes, but…" is not a plain approval (its instructions are read instead);
* "option 2" / "let's do B" / "the second one" picks that item of the proposal's numbered or lettered list;
* "no" / "nope" to a proposal (or, when the message proposed nothing, to the plan it stated: "I'll add X…")
  rejects it, unless the reply names what to reject and what to use instead; once a "no" reply has turned
  something down, a plain "use Y" in its later sentences is the replacement (APPROVED Y);
* "don't use X" / "never use X" / "stop using X" -> REJECTED X (reason: the user's words); "use Y" in the same
  breath, "use Y instead", "switch to Y", "go with Y" -> APPROVED Y (reason: the user's instruction).

What a message proposes is read by ``proposals``.

Evidence: for an approval or a "no" the cited event is the assistant's proposal (so the quote supports
``what``) while the timestamp is the user's reply; for an instruction it is the user's own sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lazyre import lazy_re
from pipeline.litgate import gated_re
from pipeline.stages.rules import clauses, corrections, phrases, proposals
from pipeline.stages.rules.phrases import APPROVED, REJECTED
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, quote, sentence_spans, strip_markup

WHAT_LIMIT = phrases.WHAT_LIMIT
REPLY_QUOTE = 80  # characters of the user's reply quoted in an approval's reasoning
WORDS_LIMIT = 170  # characters of the user's words quoted in an instruction's reasoning

_CONTROL_ONLY = lazy_re(
    r"^\s*(?:continue|next|go\s+on|keep\s+going|carry\s+on|resume|more|and\??|[A-Za-z]|\d{1,2})\s*[.!]*\s*$", re.I
)
_APPROVAL_HEAD = lazy_re(
    r"^\s*(?:yes(?:\s+please)?|yep|yeah|yup|sure|ok(?:ay)?|k|alright|all\s+right|sounds\s+(?:good|great|fine|perfect)|"
    r"looks\s+(?:good|great|fine)|lgtm|go\s+ahead|go\s+for\s+it|approved?|do\s+it|do\s+that|please\s+do|"
    r"let'?s\s+do\s+(?:it|that|this)|let'?s\s+go(?!\s+with\b|\s+for\s+(?!it\b))|perfect|great|agreed|agree|makes\s+sense|ship\s+it|proceed|"
    r"please\s+proceed|confirm(?:ed)?|that\s+works|works\s+for\s+me|correct|exactly|absolutely|definitely|"
    r"fine|good|👍|✅|sim|claro|beleza|bora|pode(?:\s+(?:ser|fazer|seguir|ir))?|manda\s+ver|isso|certo|s[ií]|dale|adelante|"
    r"vale|de\s+acuerdo|perfecto|perfeito|h[aá]galo|fa[cç]a(?:\s+isso)?|hazlo|"
    r"好的|好|可以|行|没问题|就这样|同意|네|예|좋아요|좋아|그래요|그래|はい|お願いします|いいね|了解)(?![\w'’])[\s,.!:;，。！、-]*",
    re.I,
)
#: a negation in any of the languages read here (an echoing reply with one is no acceptance)
_ANY_NEG = lazy_re(
    r"\b(?:no|not|don't|dont|never|stop|wait|n[aã]o|nunca|pare|espera|nada)\b|n't|不|别|別|아니|안\s|하지\s*마|いいえ|やめ|ない",
    re.I,
)
#: a question the user asks between two named choices ("Redis or Postgres?", "você ou o gemini?", "A还是B？")
_USER_OR = lazy_re(
    r"(?P<a>`[^`]{1,40}`|[\w.+#/-]{2,40})\s*(?:\s(?:or|ou)\s|还是|아니면|それとも)\s*(?:(?:the|a|an|o|a|os|as|el|la|um|uma)\s+)?"
    r"(?P<b>`[^`]{1,40}`|[\w.+#/-]{2,40})[^?？\n]{0,40}[?？]",
    re.I,
)
_YOU = frozenset({"you", "voce", "você", "vc", "tu", "usted", "ustedes", "你", "您", "너", "당신", "あなた"})
#: the assistant's answer turns a choice down: a negation or a limitation in the sentence naming it
_LIMIT = lazy_re(
    r"\b(?:not|no|cannot|can't|doesn't|does\s+not|lacks|isn't|won't|unable|n[aã]o|sem|sin|no\s+puede|nem)\b|"
    r"不能|无法|没有|不支持|없|못|できない|ない",
    re.I,
)
_BARE_LABEL = lazy_re(r"^\s*(?:#\s*)?([0-9]{1,2}|[A-Za-z])\s*[.)!]*\s*$")
PICK_WINDOW = 800  # characters: the options list must end this close to the end of the question's message
_QUALIFIER = lazy_re(r"^(?:but|though|however|except|although|wait|hold\s+on|actually)\b", re.I)
_CONTRA = lazy_re(r"\b(?:but|instead|don't|do\s+not|not|no|rather|however|wait|hold\s+on|actually|except)\b", re.I)
_REJECT_HEAD = lazy_re(r"^\s*(?:no|nope|nah|not\s+really|no\s+thanks)(?![\w'’])[\s,.!:;-]*", re.I)

_LABEL_ONLY = lazy_re(r"^(?:(?:option|approach|choice|alternative|variant|number|#)\s*)?#?\s*(?:[0-9]+|[A-Za-z])$", re.I)

_DONT = lazy_re(
    r"\b(?:don't|dont|do\s+not|never|stop|let's\s+not|lets\s+not|we\s+shouldn't|you\s+shouldn't|shouldn't|please\s+don't|"
    r"no\s+need\s+to)\s+(?:ever\s+|just\s+|simply\s+)?(?P<verb>use|using|add|adding|go\s+with|pick|choose|switch\s+to|"
    r"introduce|rely\s+on|install|pull\s+in|bring\s+in|store|mock|hardcode|hard-code|depend\s+on|bump|increase|raise|"
    r"disable|skip|silence|suppress|ignore|swallow|monkeypatch|monkey-patch|work\s+around|downgrade|upgrade|pin|vendor|"
    r"rewrite)\s+"
    r"(?P<x>.+)",
    re.I,
)
_KEEP_OBJECT = frozenset(
    {"use", "using", "go with", "pick", "choose", "switch to", "rely on", "depend on", "add", "adding", "install",
     "introduce", "pull in", "bring in"}
)
_USE_Y = lazy_re(
    r"(?:^|[,.;:]\s*|\b(?:just|instead|rather|but|and|please|then|so)\s+)(?P<verb>use|go\s+with|switch\s+to|stick\s+with|"
    r"keep|try|pick|choose|move\s+to)\s+(?P<y>.+)",
    re.I,
)
_USE_ONLY = lazy_re(r"(?:^|[,.;:]\s*|\b(?:just|instead|rather|but|and|please|then|so)\s+)use\s+(?P<y>.+)", re.I)
_PRONOUN_LEAD = lazy_re(r"^(?:it|this|that|them|these|those)\b", re.I)
_NO_X = lazy_re(
    r"^(?:not\s+)?(?P<x>[^,.;]{2,60}?)\s*[,.;]\s*(?:please\s+|just\s+)?(?:use|go\s+with|switch\s+to|try)\s+(?P<y>.+)", re.I
)
_NOT_XY = lazy_re(r"^(?:no[,.!]?\s+)?not\s+(?P<x>[^,;]{1,80}?)\s*[,;]\s*(?:but\s+|use\s+|rather\s+)?(?P<y>[^,;.]{1,120})", re.I)
_INSTEAD_OF = lazy_re(
    r"\binstead\s+of\s+(?P<x>[^,;]{1,80}?)\s*,\s*(?:please\s+|let's\s+|we\s+should\s+|just\s+)?(?:use|go\s+with|switch\s+to|"
    r"try|pick)\s+(?P<y>.+)",
    re.I,
)
_IMPERATIVE = lazy_re(
    r"^(?:please\s+|let's\s+|ok(?:ay)?,?\s+|so\s+)?(?:switch|move|migrate)\s+(?:over\s+)?to\s+(?P<y>.+)|"
    r"^(?:please\s+|let's\s+|ok(?:ay)?,?\s+|so\s+)?(?:go|stick)\s+with\s+(?P<y2>.+)",
    re.I,
)
_NO_NOUN = lazy_re(r"^(?P<x>[\w.`/+#-]+(?:\s+[\w.`/+#-]+){0,3})\s*[.!]*$")
_POLITE = lazy_re(r"\s+(?:please|pls|thanks|thank\s+you)\s*[.!]*$", re.I)
_NOT_NOUNS = frozenset("thanks thank worries problem way idea need need. rush".split())
_LEAVE = lazy_re(
    r"\bleave\s+(?P<x>.{2,80}?)\s+(?:as\s+is|as\s+it\s+is|alone|untouched|unchanged|for\s+now|for\s+later|out\s+of\s+(?:it|this))\b"
    r"|^(?P<x2>.{2,80}?)\s+(?:is|are)\s+out\s+of\s+scope\b|\b(?:skip|drop|forget(?:\s+about)?)\s+(?P<x3>the\s+.{2,60}?)"
    r"\s*(?:for\s+now|[,.;]|$)",
    re.I,
)
_INSTEAD_TAIL = lazy_re(r"\binstead\b\s*[.!]*$|\binstead\s*,", re.I)
_USER_CUE = gated_re(
    r"don't|dont|do\s+not|never|stop|instead|leave|scope|skip|drop|forget|\bnot\b|\bno\b|\buse\b|switch|go\s+with|stick|let'?s|shouldn't|no\s+need|"
    r"going\s+with|decid|settled|chose|rather",
    re.I,
)


@dataclass(slots=True)
class Found:
    """A user-side decision: cited event and span, the event whose time it takes, and the rule that made it."""

    status: str
    what: str
    reasoning: str
    ev: int
    start: int
    end: int
    at: int
    order: int
    origin: str


def _reply(text: str) -> str:
    """The user's reply as the reasoning quotes it: their own words (a pasted terminal or log before them left
    out, ``paste.own_words``), else the whole reply."""
    from pipeline.stages.rules import paste

    own = paste.own_words(text) if len(text) > REPLY_QUOTE else ""
    return clip((own or text).strip(), REPLY_QUOTE)


def _tidy(text: str) -> str:
    return clauses.clean(clauses.split_tail(text, over=False)[0])


def found_in_prompt(s: Scan, i: int) -> list[Found]:
    """Decisions the user's prompt at event ``i`` makes (see module rules)."""
    ev = s.events[i]
    base = len(ev.text) - len(ev.text.lstrip())
    text = ev.text[base:].rstrip()
    if not text:
        return []
    if _CONTROL_ONLY.match(text):
        return _bare_pick(s, i, text)
    prev = s.prev_assistant(i)
    prev_text = s.events[prev].text if prev is not None else ""
    out: list[Found] = []
    reply = _reply(text)

    fixed = corrections.correction(text, prev_text) if prev is not None else None
    if fixed:
        named = [f for f in _instructions(s, i, text, offset=base) if f.status == REJECTED]
        for status, what, why, cite, a, b in fixed:
            if cite == "prev" and named:
                continue  # the reply names what it turns down ("no, don't use X, use Y"): not the whole plan
            ev_i, off = (prev, 0) if cite == "prev" else (i, base)
            out.append(Found(status, what, why, ev_i, off + a, off + b, i, off + a if cite == "user" else 0,
                             "user-rejection" if status == REJECTED else "user"))
        return out + named

    if prev is not None:
        two = _picked_of_two(prev_text, text, prev, i, reply)
        if two:
            return two + [f for f in _instructions(s, i, text, offset=base) if f.status == REJECTED]

    label = proposals.pick_label(text) if prev is not None else None
    if label is not None:
        resolved = proposals.resolve_option(prev_text, label)
        if resolved is None:
            m = re.search(rf"(?im)^.*\boption\s*#?\s*{re.escape(label)}\b.*$", prev_text)
            if m:
                resolved = (clip(strip_markup(m.group(0)), WHAT_LIMIT), m.start(), m.end())
        if resolved is not None:
            what, a, b = resolved
            out.append(Found(APPROVED, what, f'user chose option {label} ("{reply}")', prev, a, b, i, 0, "user-approval"))
            run = _last_run(proposals.options_in(prev_text))
            rec = proposals.RECOMMENDED.search(prev_text)
            others = [o for o in run if o[1] != what]
            passed_over = others if len(run) == 2 else [o for o in others if rec and o[0] == rec.group(1).lower()]
            for other in passed_over:  # the one alternative, or the recommended option the user did not take
                out.append(Found(REJECTED, other[1], f'user chose option {label} instead ("{reply}")', prev, other[2],
                                 other[3], i, 1, "user-rejection"))
            extra = _instructions(s, i, text, offset=base, skip_head=True)
            return out + [f for f in extra if not _LABEL_ONLY.match(f.what)]

    head = _APPROVAL_HEAD.match(text)
    if head is None and prev is not None and _echoes_question(text, prev_text):
        head = re.match(r"", text)  # "crie então o programa" after "Quer que eu comece a criar o programa?"
    if head and prev is not None:
        rest = text[head.end():]
        qualified = bool(_QUALIFIER.match(rest))
        plain = not qualified and not text.rstrip().endswith("?") and (
            len(rest.split()) <= 6 or not _CONTRA.search(rest)
        )
        if plain:
            prop = proposals.proposal_in(prev_text)
            if prop is not None and not proposals.is_go_ahead(prop[0]):  # "yes" to "shall I start?" is workflow
                what, a, b = prop
                out.append(Found(APPROVED, what, f'user approved ("{reply}")', prev, a, b, i, 0, "user-approval"))
            out.extend(_answered_choice(s, i, prev, reply))
        return out + _instructions(s, i, rest, offset=base + head.end())

    no = _REJECT_HEAD.match(text)
    if no and corrections.not_a_correction(text[no.end():]):  # "no problem, go ahead"
        no = None
    if no:
        rest = text[no.end():]
        bare = not re.search(r"[,.!:;-]", text[: no.end()])
        found = _instructions(
            s, i, rest, offset=base + no.end(), after_no=True, bare_no=bare, prev_low=prev_text.lower()
        )
        if not any(f.status == REJECTED for f in found) and prev is not None:
            prop = proposals.proposal_in(prev_text) or proposals.plan_in(prev_text)
            if prop is not None:
                what, a, b = prop
                found.insert(0, Found(REJECTED, what, f'user said "{reply}"', prev, a, b, i, 0, "user-rejection"))
        return found
    return _instructions(s, i, text, offset=base)


def _bare_pick(s: Scan, i: int, text: str) -> list[Found]:
    """A bare "2" / "b" answering an assistant message that lists options and ends on a question ("Which one?"), or
    offers them in a table or with a recommended one: that option APPROVED; of two options the other REJECTED, of
    more the one the agent recommended and the user passed over.  The list must be the message's last one and
    close to its end (``PICK_WINDOW`` characters), so a number never picks an item of an earlier list."""
    m = _BARE_LABEL.match(text)
    prev = s.prev_assistant(i) if m else None
    if prev is None:
        return []
    prev_text = s.events[prev].text.rstrip()
    tail = prev_text[-PICK_WINDOW:]
    explicit = "| " in tail or proposals.RECOMMENDED.search(prev_text) is not None  # a table or a recommended option
    if "?" not in tail[tail.rfind("\n\n") + 1:] and "？" not in tail and not explicit:
        return []
    offered = proposals.options_in(prev_text)
    label = m.group(1).lower()
    if sum(1 for o in offered if o[0] == label) > 1:
        return []  # several questions, each with its own "B": a bare "B" does not say which it answers
    run = _last_run(offered)
    if len(run) < 2 or run[-1][3] < len(prev_text) - PICK_WINDOW:
        return []
    hit = next((o for o in run if o[0] == label), None)
    if hit is None:
        return []
    q = clip(strip_markup(_question_line(prev_text)), 100)
    out = [Found(APPROVED, hit[1], f'user answered "{text.strip()}" to "{q}"', prev, hit[2], hit[3], i, 0, "user-approval")]
    rec = proposals.RECOMMENDED.search(prev_text)
    passed_over = [o for o in run if rec is not None and o[0] == rec.group(1).lower() and o is not hit]
    if len(run) == 2:
        passed_over = [run[1] if run[0] is hit else run[0]]
    for other in passed_over:  # the one alternative, or the option the agent recommended and the user did not take
        out.append(Found(REJECTED, other[1], f'user picked option {label} instead ("{q}")', prev, other[2], other[3], i, 1,
                         "user-rejection"))
    return out


def _question_line(text: str) -> str:
    """The line of ``text`` that asks: its last line ending in a question mark, else its first line (the heading a
    numbered question opens with), else its last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    asking = [ln for ln in lines if ln.rstrip("*_` ").endswith(("?", "？"))]
    if asking:
        return asking[-1]
    return lines[0] if lines else ""


def _last_run(opts: list[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    """The last run of consecutively labelled options (1, 2, 3… or a, b, c…) of ``options_in``."""
    run: list[tuple[str, str, int, int]] = []
    for o in opts:
        prev = run[-1][0] if run else None
        nxt = None if prev is None else (str(int(prev) + 1) if prev.isdigit() else chr(ord(prev) + 1))
        run = run + [o] if o[0] == nxt else [o]
    return run


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"\w{4,}", text.lower()) if not w.isdigit()}


def _echoes_question(reply: str, prev_text: str) -> bool:
    """A short reply that repeats a content word of the proposal question the assistant ended on, with no
    negation and no question of its own, accepts it ("crie então o programa" after "Quer que eu comece a
    criar o programa?", "run the migration then" after "Shall I run the migration?")."""
    if len(reply.split()) > 12 or reply.rstrip().endswith(("?", "？")) or _ANY_NEG.search(reply):
        return False
    spans = sentence_spans(prev_text)
    if not spans:
        return False
    a, b = spans[-1]
    last = prev_text[a:b].strip()
    if not last.endswith(("?", "？")):
        return False
    prop = proposals.proposal_in(prev_text)
    if prop is None or prop[1] != a:
        return False
    words = _content(reply)
    return bool(words & _content(prop[0])) or any(len(w) >= 2 and w in prop[0] for w in re.findall(r"[\u4e00-\u9fff]{2,}", reply))


def _picked_of_two(prev_text: str, reply: str, prev: int, i: int, short: str) -> list[Found]:
    """The assistant ended on "X or Y?" ("Redis or Postgres?", "Redis ou Postgres?", "用 Redis 还是 Postgres？") and
    the reply names exactly one of them without a negation: that one APPROVED, the other REJECTED."""
    spans = sentence_spans(prev_text)
    if not spans or len(reply.split()) > 15:
        return []
    a, b = spans[-1]
    m = _USER_OR.search(prev_text, a, b)
    if m is None:
        return []
    x, y = m.group("a").strip("`"), m.group("b").strip("`")
    low = reply.lower()
    has = [bool(re.search(rf"(?<!\w){re.escape(o.lower())}(?!\w)", low)) for o in (x, y)]
    if has.count(True) != 1 or _ANY_NEG.search(reply) or reply.rstrip().endswith(("?", "？")):
        return []
    pick, other = (x, y) if has[0] else (y, x)
    q = clip(strip_markup(prev_text[a:b]), 100)
    ps, pe = (m.start("a"), m.end("a")) if has[0] else (m.start("b"), m.end("b"))
    os_, oe = (m.start("b"), m.end("b")) if has[0] else (m.start("a"), m.end("a"))
    return [
        Found(APPROVED, pick, f'user picked it ("{short}") when asked "{q}"', prev, ps, pe, i, 0, "user-approval"),
        Found(REJECTED, other, f'user picked "{clip(pick, 60)}" instead when asked "{q}"', prev, os_, oe, i, 1, "user-rejection"),
    ]


def _cjk_split(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` cut again after CJK sentence ends (。！？；), which ``sentence_spans`` does not split on."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        start = a
        for m in re.finditer(r"[。！？；]", text[a:b]):
            out.append((start, a + m.end()))
            start = a + m.end()
        if text[start:b].strip():
            out.append((start, b))
    return out


def _answered_choice(s: Scan, i: int, prev: int, reply: str) -> list[Found]:
    """The user asked "X or Y?", the assistant's answer (``prev``) turned one down in a sentence naming it, and
    the user's reply ``i`` went along: the other is APPROVED (quoting the question) and the one turned down is
    REJECTED with the assistant's sentence as the reason."""
    q = next((j for j in range(prev - 1, max(-1, prev - 30), -1) if s.events[j].kind == "user_prompt"), None)
    if q is None:
        return []
    qtext = s.events[q].text
    m = _USER_OR.search(qtext)
    if m is None:
        return []
    opts = [m.group("a").strip("`"), m.group("b").strip("`")]
    if opts[0].lower() == opts[1].lower():
        return []
    ptext = s.events[prev].text
    hits: dict[int, tuple[int, int]] = {}
    for a, b in _cjk_split(ptext, sentence_spans(ptext)):
        sent = ptext[a:b]
        for k, o in enumerate(opts):
            if o.lower() in _YOU:
                continue
            if re.search(rf"(?<!\w){re.escape(o)}(?!\w)", sent, re.I) and _LIMIT.search(sent) and k not in hits:
                hits[k] = (a, b)
    if len(hits) != 1:
        return []
    (k, (a, b)), = hits.items()
    other = opts[1 - k]
    keep = f'the assistant itself ("{other}")' if other.lower() in _YOU else other
    why = clip(strip_markup(ptext[a:b]), 170)
    return [
        Found(APPROVED, keep, f'user asked "{clip(m.group(0), 80)}" and went along ("{reply}")', q, m.start(), m.end(),
              i, 1, "user-approval"),
        Found(REJECTED, opts[k], f'per the assistant: "{why}"', prev, a, b, i, 2, "user-approval"),
    ]


def _instructions(
    s: Scan, i: int, text: str, *, offset: int = 0, after_no: bool = False, skip_head: bool = False,
    bare_no: bool = False, prev_low: str = "",
) -> list[Found]:
    """Rejections and choices stated in the user's words (sentence by sentence).

    ``after_no``: ``text`` follows a "no"; ``bare_no``: it followed "no" without punctuation ("no pandas"),
    which rejects the named thing when ``prev_low`` (the previous assistant message, lower case) mentions it.
    """
    if not text or not (_USER_CUE.search(text) or bare_no):
        return []
    out: list[Found] = []
    spans = sentence_spans(text)
    for k, (a, b) in enumerate(spans):
        sent = text[a:b].replace("’", "'")
        qa, qb = offset + a, offset + b
        if sent.rstrip().endswith("?"):
            continue
        got: list[tuple[str, str]] = []
        m = _NOT_XY.match(sent)
        if m:
            got += [(REJECTED, _tidy(m.group("x"))), (APPROVED, _tidy(m.group("y")))]
        if not got:
            m = _INSTEAD_OF.search(sent)
            if m:
                got += [(APPROVED, _tidy(m.group("y"))), (REJECTED, _tidy(m.group("x")))]
        if not got:
            m = _DONT.search(sent)
            if m:
                verb = " ".join(m.group("verb").lower().split())
                x_raw = clauses.split_tail(m.group("x"), over=False)[0]
                x = clauses.clean(x_raw)
                got.append((REJECTED, x if verb in _KEEP_OBJECT else f"{verb} {x}"))
                after = sent[m.start("x") + len(x_raw):]
                u = _USE_Y.search(after)
                if u:
                    got.append((APPROVED, _tidy(u.group("y"))))
        if not got and after_no and k == 0:
            m = _NO_X.match(sent)
            n = _NO_NOUN.match(_POLITE.sub("", sent)) if bare_no else None
            noun = n.group("x").rstrip(".!").lower() if n else ""
            if m:
                got += [(REJECTED, _tidy(m.group("x"))), (APPROVED, _tidy(m.group("y")))]
            elif noun and noun not in _NOT_NOUNS and noun in prev_low:
                got.append((REJECTED, _tidy(n.group("x"))))  # "no pandas." after a message naming pandas
            else:
                u = _USE_Y.search(sent)
                if u:
                    got.append((APPROVED, _tidy(u.group("y"))))
        if not got and after_no and k > 0 and any(f.status == REJECTED for f in out):
            # "no, don't add X. keep it in Y, use Z": after the user turned something down, a plain "use Z"
            # (or "switch to / go with Z") in the next sentences names the replacement
            for u in (_USE_ONLY.search(sent), _USE_Y.search(sent)):
                y = _tidy(u.group("y")) if u else ""
                if y and not _PRONOUN_LEAD.match(y):
                    got.append((APPROVED, y))
                    break
        if not got:
            m = _LEAVE.search(sent)
            if m:
                x = _tidy(m.group("x") or m.group("x2") or m.group("x3"))
                if x and not re.match(r"^(?:it|this|that|them)$", x, re.I):
                    got.append((REJECTED, f"changing {x}" if m.group("x") else x))
        if not got:
            u = _USE_Y.search(sent)
            if u and _INSTEAD_TAIL.search(sent):
                got.append((APPROVED, _tidy(re.sub(r"\s+instead\b.*$", "", u.group("y"), flags=re.I))))
        if not got and not skip_head:
            m = _IMPERATIVE.match(sent)
            if m:
                got.append((APPROVED, _tidy(m.group("y") or m.group("y2"))))
        words = clip(_to_line_end(s.events[i].text, offset + a if k else 0), WORDS_LIMIT) if got else ""
        for status, what in got:
            if not what or len(what.split()) > 25:
                continue
            why = f'user said "{words}"' if status == REJECTED else f'user\'s instruction ("{words}")'
            out.append(Found(status, clip(what, WHAT_LIMIT), why, i, qa, qb, i, qa + len(out), "user"))
        if not got:
            for h in phrases.analyze(text, spans, k, "user"):
                if h.pronoun:
                    continue
                if not words:
                    words = clip(_to_line_end(s.events[i].text, offset + a if k else 0), WORDS_LIMIT)
                why = h.reasoning or f'user\'s instruction ("{words}")'
                out.append(Found(h.status, h.what, why, i, offset + h.start, offset + h.end, i, offset + h.focus, "user"))
    return out


def _to_line_end(text: str, start: int) -> str:
    """``text`` from ``start`` (left-trimmed) to the end of that line."""
    while start < len(text) and text[start].isspace():
        start += 1
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def quote_of(s: Scan, f: Found) -> str:
    """The verbatim evidence quote of ``f`` (at most 300 characters of the cited event)."""
    return quote(s.events[f.ev].text, f.start, f.end, focus=f.order if f.ev == f.at else None)
