"""Choices and rejections stated in Portuguese, Spanish, Chinese, Korean and Japanese (issue 13 §2, non-English).

The English phrasings live in ``catalog``; this module reads the common cue words of the other languages on the
same sentence shapes:

* **Y instead of X** — "vamos usar Y em vez de X", "usaremos Y en lugar de X", "用 Y 而不是 X", "X 대신 Y",
  "X 말고 Y", "Xではなく Y", "Xの代わりに Y": Y APPROVED, X REJECTED;
* **not X, Y** — "不要用 X，改用 Y", "不用 X，用 Y", "não use X, use Y", "no uses X, usa Y": X REJECTED, Y APPROVED;
* **a choice verb with its reason** — "decidimos usar Y porque …", "optamos por Y", "我们决定用 Y，因为 …",
  "Y로 하기로 했습니다", "Yを使うことにしました": Y APPROVED (an assistant's needs a reason or an alternative);
* **considered, then turned down** — "consideré X, pero lo descarté porque …", "考虑过 X，但放弃了", "X도
  고려했지만 … 제외했습니다", "Xも検討しましたが…見送りました": X REJECTED;
* **a rejection verb** — "descartamos X", "desistimos de X", "放弃了 X", "不考虑 X", "X는 쓰지 않기로", "Xは使わない
  ことにした": X REJECTED.

Questions and conditionals ("se", "si", "如果", "만약", "もし", a trailing "?") are no decision.  Spans are
offsets into the text for the evidence quote.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.clauses import clean
from pipeline.stages.rules.text import clip

WHAT_LIMIT = 160

#: a noun phrase in a Latin-script language: up to 6 words, stops at punctuation and at the clause words
_NP = r"(?:(?:o|a|os|as|el|la|los|las|um|uma|un|una)\s+)?[`\w.+#/-]+(?:\s+(?!(?:em|en|ao|no|porque|pois|para|por|que|y|e|pero|mas)\b)[`\w.+#/-]+){0,5}?"
#: a noun in CJK text: a Latin identifier, or a run of CJK characters without particles and punctuation
_CJK_NP = r"`?[A-Za-z0-9_.+#/-][A-Za-z0-9_.+#/ -]{0,30}?[A-Za-z0-9_+#`]|[\u4e00-\u9fff\uac00-\ud7af\u30a0-\u30ff]{1,10}?"
_REASON = r"(?:\s*[,，]?\s*(?:porque|pois|já\s+que|ya\s+que|dado\s+que|因为|由于|때문에|ので|から)\s*(?P<r>[^.。!！?？\n]{3,160}))?"

_PATTERNS: tuple[tuple[str, object], ...] = (
    # Y instead of X (Latin)
    ("y-instead", lazy_re(
        r"(?:vamos|vou|decidimos|optamos\s+por|preferimos|prefiro|melhor|mejor|usaremos|usemos|vamos\s+a|voy\s+a|decid[ií]|"
        r"elegimos|escolhemos|use|usa|utilize|utiliza)\s+(?:(?:usar|utilizar|adotar|adoptar|ficar\s+con?|quedarnos\s+con|"
        r"manter|mantener|usa|use)\s+)?(?P<y>" + _NP + r")\s+(?:em\s+vez\s+de|ao\s+inv[eé]s\s+de|no\s+lugar\s+de|"
        r"en\s+lugar\s+de|en\s+vez\s+de)\s+(?P<x>" + _NP + r")(?:\s+(?:para|pra|por)\s+[^,.;:!]{1,40}?)?"
        r"(?=\s*(?:[,.;:!]|$|porque|pois|ya|já|dado))" + _REASON,
        re.IGNORECASE)),
    # not X, Y (Latin)
    ("not-x-y", lazy_re(
        r"(?:^|[,.;:!]\s*)(?:n[aã]o|no)\s+(?:vamos\s+|vou\s+|voy\s+a\s+)?(?:use|uses|usemos|usar|utilize|utilizes)\s+(?P<x>" + _NP
        + r")\s*[,;.]\s*(?:e\s+sim\s+|sino\s+|mas\s+|pero\s+)?(?:use|usa|usemos|vamos\s+usar|utilize|utiliza)\s+(?P<y>" + _NP
        + r")(?=\s*(?:[,.;:!]|$))" + _REASON,
        re.IGNORECASE)),
    # rejection verb (Latin)
    ("dropped", lazy_re(
        r"(?:descartamos|descartei|descart[eé]|desistimos\s+de|desist[ií]\s+de|abandonamos|n[aã]o\s+vamos\s+usar|"
        r"no\s+vamos\s+a\s+usar|n[aã]o\s+use|no\s+uses|no\s+usemos)\s+(?:(?:o|a|el|la)\s+(?:ideia|idea)\s+de\s+)?"
        r"(?P<x>" + _NP + r")(?=\s*(?:[,.;:!]|$|porque|pois|ya\s+que|já\s+que|dado))" + _REASON,
        re.IGNORECASE)),
    # considered, then turned down (Latin): "consideré X, pero lo descarté porque …", "considerei X, mas descartei"
    ("considered", lazy_re(
        r"(?:consider[eé]|considerei|consideramos|pens[eé]\s+en|pensei\s+em|avaliei|evalu[eé])\s+(?:usar\s+|utilizar\s+)?"
        r"(?P<x>[^,.;:!?]{2,80}?)\s*,?\s+(?:mas|pero)\s+(?:(?:o|a|lo|la|os|las)\s+)?(?:descartei|descart[eé]|descartamos|"
        r"rejeitei|rechac[eé]|abandonei|abandon[eé]|desist[ií])" + _REASON,
        re.IGNORECASE)),
    # choice verb (Latin) — the reason or an alternative is needed for the assistant
    ("chose", lazy_re(
        r"(?:decidimos|decid[ií]|optamos\s+por|optei\s+por|opt[eé]\s+por|escolhemos|escolhi|elegimos|eleg[ií]|"
        r"vamos\s+(?:usar|adotar|ficar\s+com)|vamos\s+a\s+usar|usaremos|vou\s+usar|voy\s+a\s+usar)\s+(?:(?:usar|utilizar|adotar|adoptar)\s+)?"
        r"(?P<y>" + _NP + r")(?=\s*(?:[,.;:!]|$|porque|pois|ya\s+que|já\s+que|dado))" + _REASON,
        re.IGNORECASE)),
    ("zh-considered", lazy_re(
        r"(?:考虑过|考虑了|想过|评估过)(?:用|使用|采用)?\s*(?P<x>" + _CJK_NP + r")\s*[，,]?\s*(?:但|但是|不过)[^。.!！]{0,20}?"
        r"(?:放弃|否决|排除|没有采用|不采用)了?" + _REASON)),
    # zh: 不要用 X，改用 Y / 不用 X，用 Y / 用 Y，不用 X / 用 Y 而不是 X / 改用 Y / 决定用 Y / 放弃 X
    ("zh-not-x-y", lazy_re(
        r"(?:不要|别|不用|不再|不使用|不要再)(?:用|使用|采用)?\s*(?P<x>" + _CJK_NP + r")\s*(?:了)?\s*[，,、；;]?\s*(?:而是|请|就)?(?:改用|换成|换用|改成|用|使用|采用)\s*(?P<y>"
        + _CJK_NP + r")(?=\s*(?:[，,。.！!；;]|$|吧|因为))" + _REASON)),
    ("zh-y-not-x", lazy_re(
        r"(?:决定|选择|打算|我们|就)?(?:用|使用|采用|改用)\s*(?P<y>" + _CJK_NP + r")\s*(?:[，,]\s*不用|而不是|而非|代替|来代替|替代|替换)\s*(?P<x>"
        + _CJK_NP + r")(?=\s*(?:[，,。.！!；;]|$|因为))" + _REASON)),
    ("zh-chose", lazy_re(
        r"(?:决定|选择了?|选定|最终|改为)(?:用|使用|采用)?\s*(?P<y>" + _CJK_NP + r")(?=\s*(?:[，,。.！!；;]|$|因为))" + _REASON)),
    ("zh-dropped", lazy_re(
        r"(?:放弃了?|不考虑|排除了?|弃用)(?:使用|用)?\s*(?!了)(?P<x>" + _CJK_NP + r")(?=\s*(?:[，,。.！!；;]|$|因为))" + _REASON)),
    # ko: X 대신 Y / X 말고 Y
    ("ko-y-instead", lazy_re(
        r"(?P<x>" + _CJK_NP + r")\s*(?:을|를|은|는)?\s*(?:대신(?:에)?|말고|보다는)\s*(?P<y>" + _CJK_NP
        + r")\s*(?:을|를|로|으로)?\s*(?:쓰|사용|하|갑|가)")),
    ("ko-considered", lazy_re(r"(?P<x>" + _CJK_NP + r")\s*(?:도|를|을)?\s*고려했(?:지만|으나)\s*(?:(?P<r>[^.。]{2,60}?)\s*"
                              r"(?:때문에|므로)\s*)?[^.。]{0,20}?(?:제외|포기|채택하지)")),
    ("ko-dropped", lazy_re(r"(?P<x>" + _CJK_NP + r")\s*(?:은|는|을|를)?\s*(?:쓰지\s*(?:마|말|않)|사용하지\s*(?:마|말|않)|제외하)")),
    # ja: X ではなく Y / X の代わりに Y
    ("ja-y-instead", lazy_re(
        r"(?P<x>" + _CJK_NP + r")\s*(?:ではなく|じゃなくて|じゃなく|の代わりに|をやめて)\s*(?P<y>" + _CJK_NP
        + r")\s*(?:を|で|に)")),
    ("ja-considered", lazy_re(r"(?P<x>" + _CJK_NP + r")\s*(?:も|を)?\s*検討(?:しました|した)が[、,]?\s*(?:(?P<r>[^。]{2,60}?)"
                              r"(?:ため|ので)[、,]?\s*)?[^。]{0,20}?(?:見送|却下|やめ|採用しな)")),
    ("ja-dropped", lazy_re(r"(?P<x>" + _CJK_NP + r")\s*(?:は|を)?\s*(?:使わない|使いません|使うのをやめ|採用しない|見送)")),
)
_STATUS = {
    "y-instead": "both", "not-x-y": "both", "chose": "APPROVED", "dropped": "REJECTED", "zh-not-x-y": "both",
    "zh-y-not-x": "both", "zh-chose": "APPROVED", "zh-dropped": "REJECTED", "ko-y-instead": "both",
    "ko-dropped": "REJECTED", "ja-y-instead": "both", "ja-dropped": "REJECTED", "considered": "REJECTED",
    "zh-considered": "REJECTED", "ko-considered": "REJECTED", "ja-considered": "REJECTED",
}
_LATIN = frozenset({"y-instead", "not-x-y", "chose", "dropped", "considered"})
_COND = lazy_re(r"(?:^|\s)(?:se|si|talvez|quizás|quizá|caso)\s|如果|假如|是否|可能|만약|もし|かもしれ", re.IGNORECASE)
#: cheap pre-filters: a text is split into sentences only when it holds a cue word of one of these languages
_HINT_LATIN = lazy_re(  # on lower-cased text, grouped by first letter (one dispatch per word start)
    r"\b(?:e(?:m\s+vez|n\s+lugar|n\s+vez|scolh|legimos|leg[ií]\b)|a(?:o\s+inv|bandonamos)|"
    r"n(?:o\s+lugar\s+de|[aã]o\s+(?:use|vamos|vou)|o\s+(?:uses|usemos|use|vamos)\b)|d(?:ecid(?:imos|[ií]\b)|escart|esist)|"
    r"o(?:pt(?:amos|ei|[eé])\s+por)|v(?:amos\s|ou\s+usar|oy\s+a\s+usar)|u(?:saremos|semos)|m(?:elhor|ejor)\s|"
    r"c(?:onsider(?:[eé]|ei|amos)\s)|p(?:ens[eé]\s+en|ensei\s+em)|a(?:valiei)|e(?:valu[eé]))"
)
_HINT_CJK = lazy_re(r"[用弃排选决改]|考虑|想过|评估|고려|検討|대신|말고|보다는|쓰지|사용하지|제외|ではなく|じゃな|代わり|使わ|やめ|採用|見送")
#: an inability stated around the choice ("não consigo usar X em vez de Y", "无法用 X 代替 Y", "X 대신 Y를 사용할 수
#: 없습니다", "YではなくXを使うことができません"): a report of what blocks the work, no decision
_UNABLE_BEFORE = lazy_re(
    r"(?:(?:n[aã]o|no)\s+(?:consigo|conseguimos|consegui|posso|podemos|pude|puedo|pudimos|consegue|puede|"
    r"foi\s+poss[ií]vel|[eé]\s+poss[ií]vel|es\s+posible|fue\s+posible)|incapaz(?:es)?\s+de|imposs[ií]vel|imposible)"
    r"\s+(?:\w+\s+){0,2}$|(?:无法|不能|没法|没办法|不可能)\s*$",
    re.IGNORECASE,
)
_UNABLE_AFTER = lazy_re(r"^\S{0,6}\s*(?:수\s*(?:가\s*)?없|못\s*하|못했|ことができ(?:ません|ない)|できません|できない|できず|られません)")
_SENT = lazy_re(r"[^.。!！?？\n]+[.。!！?？]?")
_PARTICLE = lazy_re(r"(?:을|를|은|는|이|가|로|으로|を|は|が|で|に|の)$")


def _tidy(x: str) -> str:
    return _PARTICLE.sub("", clean(x)).strip()


def hits(text: str) -> list[tuple[str, str, str | None, str | None, int, int]]:
    """``(status, what, alternative, reason, start, end)`` for each decision stated in ``text``; ``start..end``
    is the sentence.  ``alternative`` is the rejected option of an approval (or the approved one of a
    rejection) when the sentence names it."""
    out: list[tuple[str, str, str | None, str | None, int, int]] = []
    latin = bool(_HINT_LATIN.search(text.lower()))
    cjk = not text.isascii() and bool(_HINT_CJK.search(text))
    if not (latin or cjk):
        return out
    for sm in _SENT.finditer(text):
        sent = sm.group(0)
        if sent.rstrip().endswith(("?", "？")) or _COND.search(sent):
            continue
        lat = latin and bool(_HINT_LATIN.search(sent.lower()))
        if not lat and not (cjk and _HINT_CJK.search(sent)):
            continue
        taken: list[tuple[int, int]] = []
        for name, rx in _PATTERNS:
            if (name in _LATIN) != lat and not (lat and cjk):
                continue
            for m in rx.finditer(sent):
                if any(a < m.end() and m.start() < b for a, b in taken):
                    continue
                if _UNABLE_BEFORE.search(sent[max(0, m.start() - 40): m.start()]) or (
                    not lat and _UNABLE_AFTER.match(sent[m.end(): m.end() + 20])
                ):
                    continue
                kind = _STATUS[name]
                gd = m.groupdict()
                y = _tidy(gd.get("y") or "")
                x = _tidy(gd.get("x") or "")
                reason = clean(gd.get("r") or "") or None
                if kind == "both":
                    if not x or not y or x.lower() == y.lower():
                        continue
                    out.append(("APPROVED", clip(y, WHAT_LIMIT), x, reason, sm.start(), sm.end()))
                    out.append(("REJECTED", clip(x, WHAT_LIMIT), y, reason, sm.start(), sm.end()))
                elif kind == "APPROVED" and y:
                    out.append(("APPROVED", clip(y, WHAT_LIMIT), None, reason, sm.start(), sm.end()))
                elif kind == "REJECTED" and x:
                    out.append(("REJECTED", clip(x, WHAT_LIMIT), None, reason, sm.start(), sm.end()))
                else:
                    continue
                taken.append((m.start(), m.end()))
    return out
