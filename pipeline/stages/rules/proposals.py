"""What an assistant message proposes, for the user's reply to approve or reject (DESIGN.md "Approval").

* ``options_in``: the options of a message — "Option 2: …" heads, else a numbered or lettered list of at least
  two items;
* ``pick_label``: which option a reply picks ("option 2", "let's do B", "go with 2", "the second one"); a bare
  letter or number alone picks nothing;
* ``proposal_in``: the proposal a message ends on — the last non-generic question ("Shall I / Should I / Want
  me to / Would you like me to … ?"), else the last recommendation ("I propose / I suggest / I recommend…",
  "Proposal: …"), else a generic question ("Shall I proceed?") resolved to the message's list or plan sentence;
  a question whose object is a pronoun ("Want me to add it as a migration?") after a recommendation is that
  recommendation;
* ``plan_in``: the last plan a message states ("I'll add X…"), what a "no" turns down when nothing was proposed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import clauses
from pipeline.stages.rules.text import clip, is_list_item, sentence_spans, strip_markup

WHAT_LIMIT = 160  # characters (Decision.what)

_OPTION_REF = lazy_re(
    r"\b(?:option|approach|choice|alternative|variant)\s*#?\s*([0-9]+|[A-Za-z])\b|(?:#|\bnumber\s+|\bplan\s+)([0-9]+|[A-Z])\b"
)
_PICK = lazy_re(
    r"^\s*(?:let'?s\s+|i'?ll\s+|we'?ll\s+|please\s+|ok(?:ay)?,?\s+|yes,?\s+)?(?:go\s+(?:with|for)|do|pick|choose|take|"
    r"use|try|prefer|want)\s+(?:#\s*)?([0-9]+|[A-Z])(?![\w'’])"
)
_LEAD_PICK = lazy_re(
    r"^\s*(?:#\s*)?([0-9]+|[A-Z])\s*[,.!:-]?\s*(?:please|sounds\s+good|it\s+is|is\s+(?:fine|good|better|best)|works|"
    r"looks\s+good|go\s+ahead|then)\b"
)
_ORDINAL = lazy_re(
    r"\b(first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\s+(?:one|option|approach|choice|proposal|alternative)\b",
    re.I,
)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}

_OPTION_LABELED = lazy_re(
    r"^[ \t>]*(?:[-*+]\s+)?(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:Option|Approach|Choice|Alternative|Variant)\s+([0-9]+|[A-Za-z])\b"
    r"\s*(?:\*\*|__)?\s*[:.)\-–—]*\s*(?:\*\*|__)?\s*(.*)$",
    re.I | re.M,
)
_OPTION_LISTED = lazy_re(r"^[ \t]*(?:\*\*|__)?([0-9]{1,2}|[A-Za-z])[.)]\s+(?:\*\*|__)?(.+)$", re.M)
#: a markdown table row whose first cell is an option label: "| A | the option |"
_OPTION_ROW = lazy_re(r"^[ \t]*\|\s*(?:\*\*)?(?:option\s+)?([0-9]{1,2}|[A-Za-z])(?:\*\*)?\s*\|\s*([^|\n]+?)\s*\|", re.I | re.M)
#: the option an agent marks as its recommendation ("**Recommended:** Option B - …")
RECOMMENDED = lazy_re(r"\brecommended\b\W{0,6}(?:option\s+)?([0-9]{1,2}|[A-Z])\b", re.I)

_Q_PROPOSAL = lazy_re(
    r"(?:^|\b)(?:(?:so|then|ok(?:ay)?),?\s+)?(?:(?:shall|should)\s+(?:I|we)|(?:do|would)\s+you\s+(?:like|want)\s+me\s+to|"
    r"want\s+me\s+to|is\s+it\s+ok(?:ay)?\s+(?:if\s+I|to)|ok(?:ay)?\s+(?:if\s+I|to)|can\s+I|may\s+I|ready\s+for\s+me\s+to|"
    r"how\s+about|what\s+about|should\s+I\s+go\s+ahead\s+and|"
    r"(?:voc[eê]\s+)?quer(?:es)?\s+que\s+eu|posso|devo|gostaria\s+que\s+eu|¿?\s*quieres\s+que|¿?\s*puedo|¿?\s*debo|"
    r"¿?\s*te\s+gustar[ií]a\s+que)\s+(?P<x>.+?)\s*[?？]+\s*$"
    r"|^(?:要|需要|是否需要|要不要)?我(?:来|现在|先)?(?P<xz>.+?)(?:吗|么)?\s*[?？]+\s*$"
    r"|^(?P<xk>.+?)(?:할까요|해\s*드릴까요|하시겠어요)\s*[?？]+\s*$"
    r"|^(?P<xj>.+?)(?:しましょうか|してもいいですか|しますか)\s*[?？]+\s*$",
    re.I,
)
_S_PROPOSAL = lazy_re(
    r"(?:\b(?:I|we)\s+(?:would\s+|'d\s+|strongly\s+)?(?:propose|suggest|recommend)(?:s|ed)?\s+(?:that\s+)?(?:we\s+|you\s+|I\s+)?"
    r"|\bmy\s+(?:recommendation|suggestion|proposal)\s*(?:is|would\s+be|:)\s*(?:to\s+|that\s+we\s+)?"
    r"|^(?:recommendation|proposal|suggestion|plan|recommended(?:\s+(?:approach|fix|option))?|suggested\s+(?:approach|fix|plan)|"
    r"proposed\s+(?:approach|fix|plan|change))(?:\s+for\s+[^:]{1,60})?\s*:\s*"
    r"|\blet\s+me\s+know\s+if\s+you(?:'d\s+like|\s+want)\s+me\s+to\s+"
    r"|\bI\s+can\s+(?=.+\bif\s+you(?:'d)?\s+(?:like|want))"
    r"|^(?:if\s+you(?:'d)?\s+(?:like|want|prefer)(?:\s+it)?|if\s+(?:useful|helpful|needed))\s*,?\s*I\s+can\s+(?:also\s+)?)(?P<x>.+)",
    re.I,
)
_PROPOSAL_LEAD = lazy_re(
    r"^(?:go\s+ahead\s+and|proceed\s+(?:with|and)|to\s+go\s+with|going\s+with|go\s+with|with)\s+|^(?:改成|换成|改用|换用|使用|用)\s*", re.I
)
_PROPOSAL_TAIL = lazy_re(r"\s*(?:,?\s*if\s+you(?:'d)?\s+(?:like|want)|,?\s*or\s+(?:not|something\s+else)|now|next|first)\s*[.?!]*$", re.I)
_GENERIC = lazy_re(
    r"^(?:proceed(?:\s+with\s+(?:it|this|that|these|them))?|go\s+ahead(?:\s+with\s+(?:it|this|that|these|them))?|continue|"
    r"start|begin|do\s+(?:it|that|this|so)|implement\s+(?:it|this|that|these|them|"
    r"the\s+(?:changes?|fix|plan))|make\s+(?:the|these|those)\s+changes?|apply\s+(?:it|this|that|the\s+(?:changes?|fix))|"
    r"go\s+on|move\s+on|get\s+started|continue\s+with\s+(?:the\s+)?(?:next|rest)\b.*)\W*$",
    re.I,
)
#: a proposal to start the work itself ("Shall I start building the importer?", "Quer que eu comece a criar o
#: programa?", "¿Quieres que empiece a escribir los tests?", "要我开始写代码吗？", "구현을 시작할까요?", "実装を始めま
#: しょうか？"): a go-ahead for the task, no choice between alternatives
_START_HEAD = lazy_re(
    r"^(?:(?:now|then|just|go\s+ahead\s+and)\s+)?(?:start(?:ing)?|begin(?:ning)?|get\s+started|get\s+going|kick\s+off|"
    r"commence|com(?:e[cç]|ec)(?:e|ar|o|emos)|inici(?:e|ar|o|emos)|empie(?:ce|zo)|empezar|empecemos|comien(?:ce|zo)|"
    r"comenzar|comencemos)(?![\w])|^(?:现在|马上)?(?:开始|着手)",
    re.IGNORECASE,
)
_START_TAIL = lazy_re(r"(?:시작|착수|始め|開始|着手)\s*$")
_CHOICE_WORD = lazy_re(
    r"\b(?:us(?:e|ing|ar|ando)|instead|rather|over|em\s+vez|en\s+lugar|en\s+vez|switch\w*|migr\w*|troc\w*|cambi\w*|substitu\w*|reemplaz\w*)\b|而不是|迁移|改用|代替|替代|换成|대신|ではなく|の代わりに",
    re.IGNORECASE,
)


def is_go_ahead(what: str) -> bool:
    """True when a proposal only offers to start the work ("start creating the program", "comece a criar o
    programa", "开始写代码", "구현을 시작"), naming no choice ("start using Redis instead of Memcached" is one)."""
    what = what.strip()
    return bool(_START_HEAD.match(what) or _START_TAIL.search(what)) and not _CHOICE_WORD.search(what)


#: a question whose object is a pronoun ("add it as a migration", "do that now") points back at the proposal
_PRONOUN_OBJECT = lazy_re(r"^(?:\w+\s+){1,2}(?:it|this|that|them|these|those)\b", re.I)
_PLAN_SENTENCE = lazy_re(
    r"^(?:(?:so|ok(?:ay)?|now|next)\s*,?\s+)?(?:I'll|I\s+will|I\s+plan\s+to|I'd\s+like\s+to|I'm\s+going\s+to|we'll|we\s+will|"
    r"we're\s+going\s+to|(?:the|my|our)\s+plan\s+is\s+to|plan:)\s+(?P<x>.+)",
    re.I,
)


#: a heading that announces a recommendation ("### Recommended consolidation:", "**Proposed fix**", "## 推荐方案");
#: its proposal is the first sentence of the paragraph under it
_HEAD_PROPOSAL = lazy_re(
    r"^[ \t]*(?:#{1,6}[ \t]*|\*\*|__)[^\n]{0,30}?(?:recommend(?:ed|ation)?|propos(?:al|ed)|suggest(?:ed|ion)|"
    r"recomenda(?:do|da|ção|cion|ción)?|propuesta|proposta|sugerencia|sugestão|建议|推荐|추천|제안|提案|推奨|おすすめ)"
    r"[^\n]{0,40}$",
    re.IGNORECASE | re.MULTILINE,
)
_LEAD_INSTEAD = lazy_re(
    r"^(?:instead\s+of|rather\s+than|em\s+vez\s+de|en\s+lugar\s+de|en\s+vez\s+de)\s+(?P<y>[^,]{2,60}),\s*(?P<x>.+)$", re.I
)


def _heading_proposal(text: str) -> tuple[str, int, int] | None:
    """The proposal under the last recommendation heading: ``(what, start, end)`` of its first sentence."""
    found = None
    for m in _HEAD_PROPOSAL.finditer(text):
        if "?" in m.group(0):
            continue
        pos = m.end()
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = strip_markup(text[pos:end].replace("’", "'")).rstrip(" :：")
        if not line or is_list_item(text[pos:end]) or line.endswith("?") or len(line.split()) > 30:
            continue
        line = re.split(r"(?<=[.!])\s+", line, maxsplit=1)[0].rstrip(".!")
        lead = _LEAD_INSTEAD.match(line)
        if lead:
            line = f"{lead.group('x').rstrip(' :')} instead of {lead.group('y')}"
        x = clauses.clean(line)
        if x and not _GENERIC.match(x):
            found = (clip(x, WHAT_LIMIT), m.start(), end)
    return found


def options_in(text: str) -> list[tuple[str, str, int, int]]:
    """Options a message offers: ``(label, text, start, end)`` from "Option 2: …" heads, else from a numbered or
    lettered list of at least two items, else from a table whose rows open with the label ("| A | … |")."""
    found = [(m.group(1).lower(), m.group(2), m.start(), m.end()) for m in _OPTION_LABELED.finditer(text)]
    if not found:
        found = [(m.group(1).lower(), m.group(2), m.start(), m.end()) for m in _OPTION_LISTED.finditer(text)]
        if len(found) < 2:
            found = [(m.group(1).lower(), m.group(2), m.start(2), m.end(2)) for m in _OPTION_ROW.finditer(text)]
            if len(found) < 2:
                return []
    out = []
    for label, body, start, end in found:
        body_clean = strip_markup(body).strip(" :.-–—")
        if not body_clean:  # "### Option 2" heading: the option is the next non-empty line
            nxt = text.find("\n", end)
            while 0 <= nxt < len(text):
                line_end = text.find("\n", nxt + 1)
                line_end = len(text) if line_end < 0 else line_end
                candidate = strip_markup(text[nxt + 1:line_end])
                if candidate:
                    body_clean, end = candidate, line_end
                    break
                nxt = line_end if line_end < len(text) else -1
        if body_clean:
            out.append((label, clip(body_clean, WHAT_LIMIT), start, end))
    return out


#: picking an option in the other languages the rules read: "选 2", "用方案B", "Aを採用", "B案で", "A로 가자",
#: "vamos com a B", "opción 2", "prefiero la A"
_PICK_INTL = lazy_re(
    r"(?:选|選|选择|選擇|用|采用|採用|就)\s*(?:方案|选项|選項)?\s*([0-9]|[A-Z])(?![A-Za-z0-9])|"
    r"(?<![A-Za-z0-9])([0-9]|[A-Z])\s*(?:案)?\s*(?:を採用|にします|でお願い|でいこう|で進め|로\s*(?:가|해|진행|할게|하자)|으로\s*(?:가|해|진행|하자)|안으로)|"
    r"\b(?:vamos\s+(?:com|de|pela?|por)|fico\s+com|prefiro|quero|opção|opcion|opción|prefiero|quiero|elijo|escolho)\s+"
    r"(?:(?:a|o|la|el)\s+)?(?:op(?:ção|ción|cion)\s+)?([0-9]|[A-Z])\b"
)


def pick_label(reply: str) -> str | None:
    """The option label a reply picks, lower case ("2", "b", or "last"), or None."""
    m = _OPTION_REF.search(reply)
    if m:
        return (m.group(1) or m.group(2)).lower()
    for rx in (_PICK, _LEAD_PICK):
        m = rx.match(reply)
        if m:
            return m.group(1).lower()
    if len(reply) <= 200:
        m = _PICK_INTL.search(reply.translate(_FULLWIDTH))
        if m:
            return next(g for g in m.groups() if g).lower()
    m = _ORDINAL.search(reply)
    if m:
        word = m.group(1).lower()
        return "last" if word == "last" else str(_ORDINALS[word])
    return None


_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF10, 0xFF3B)}  # "Ａ", "２" typed by a CJK keyboard


def resolve_option(text: str, label: str) -> tuple[str, int, int] | None:
    """``(option text, start, end)`` of option ``label`` among the options of ``text`` ("option 2" of an A/B/C list
    is its second item); None when ``text`` lists no such option."""
    opts = options_in(text)
    if not opts:
        return None
    if label == "last":
        _, body, a, b = opts[-1]
        return body, a, b
    for lab, body, a, b in opts:
        if lab == label:
            return body, a, b
    if label.isdigit() and all(not lab.isdigit() for lab, *_ in opts):  # "option 2" of an A/B/C list
        n = int(label)
        if 1 <= n <= len(opts):
            _, body, a, b = opts[n - 1]
            return body, a, b
    return None


def plan_in(text: str) -> tuple[str, int, int] | None:
    """The last plan an assistant message states ("I'll add X…", "I will…", "I plan to…", "The plan is to X"):
    ``(what, start, end)`` of its sentence, or None.  A "no" to such a message turns the plan down."""
    found = None
    for a, b in sentence_spans(text):
        m = _PLAN_SENTENCE.match(strip_markup(text[a:b].replace("’", "'")))
        if m:
            x = clauses.clean(clauses.split_tail(m.group("x"), over=False)[0])
            if x and not _GENERIC.match(x):
                found = (clip(x, WHAT_LIMIT), a, b)
    return found


@lru_cache(maxsize=64)
def proposal_in(text: str) -> tuple[str, int, int] | None:
    """The proposal an assistant message ends on: ``(what, start, end)`` of the sentence to quote, or None.

    Preference: the last non-generic question ("Shall I add X?"), else the last recommendation ("I suggest X"),
    else a generic question ("Shall I proceed?") resolved to the message's list or plan sentence.  A question
    offering alternatives ("X or Y?") is ambiguous and yields None.
    """
    spans = sentence_spans(text)
    if not spans:
        return None
    questions: list[tuple[str, int, int]] = []
    statements: list[tuple[str, int, int]] = []
    generic: tuple[int, int] | None = None
    for a, b in spans[-25:]:
        sent = strip_markup(text[a:b].replace("’", "'"))
        q = _Q_PROPOSAL.search(sent)
        if q:
            x = q.group("x") or q.group("xz") or q.group("xk") or q.group("xj") or ""
            x = _PROPOSAL_TAIL.sub("", _PROPOSAL_LEAD.sub("", x.strip()))
            if _GENERIC.match(x):
                generic = (a, b)
            elif re.search(r"\b(?:or|ou)\b|还是|아니면|それとも", x):
                questions.append(("", a, b))
            else:
                questions.append((x, a, b))
            continue
        st = _S_PROPOSAL.search(sent)
        if st and not sent.rstrip().endswith("?"):
            x = _PROPOSAL_TAIL.sub("", _PROPOSAL_LEAD.sub("", st.group("x").strip()))
            x = re.sub(r"\s+if\s+you(?:'d)?\s+(?:like|want).*$", "", x, flags=re.I)
            if x and not _GENERIC.match(x):
                statements.append((x, a, b))
    head = _heading_proposal(text)
    if head is not None and (not statements or statements[-1][1] < head[1]):
        statements.append(head)
    pick = questions[-1] if questions else (statements[-1] if statements else None)
    if questions and statements and _PRONOUN_OBJECT.match(questions[-1][0]) and statements[-1][1] < questions[-1][1]:
        pick = statements[-1]  # "I propose X. Want me to add it as a migration?": "it" is the proposal X
    if pick is not None:
        x, a, b = pick
        if not x:
            return None
        ref = re.match(r"^(?:option|approach|choice)\s*#?\s*([0-9]+|[A-Za-z])\b", x, re.I)
        if ref:
            resolved = resolve_option(text, ref.group(1).lower())
            if resolved:
                x = resolved[0]
        x = clauses.clean(x)
        return (clip(x, WHAT_LIMIT), a, b) if x else None
    if generic is not None:
        items = [strip_markup(line) for line in text.split("\n") if is_list_item(line)]
        items = [i for i in items if i]
        if items:
            return clip("the proposed plan: " + "; ".join(items[:3]), WHAT_LIMIT), generic[0], generic[1]
        for a, b in spans:
            m = _PLAN_SENTENCE.match(strip_markup(text[a:b]))
            if m:
                return clip(clauses.clean(m.group("x")), WHAT_LIMIT), generic[0], generic[1]
    return None
