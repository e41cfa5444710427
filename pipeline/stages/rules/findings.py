"""Sentence families for Established Facts that carry no cue word of ``facts``'s older rules (issue 13, §2),
each a shape that holds across wording and language:

* **gap** — what is still not done or not right, counted or pointed at: "There's one uncovered region in
  math_utils.rs", "two tests are still skipped on Windows", "还有 2 个测试失败", "ainda há um teste falhando";
* **placement** — where a thing lives when that is not where one would look: "`CLAUDE.md` lives at the project
  root rather than inside `.claude/`", "the broker answers on 5673, not 5672", "o arquivo fica em X, não em Y";
* **measured change** — a quantity with a change word: "p95 dropped from 900 ms to 120 ms", "slight increase
  (-2.4%)", "cut the build from 14 min to 6 min", "延迟下降了 40%";
* **dead end** — an attempt that did not help: "made no difference", "still fails with", "was no faster",
  "não adiantou", "没有效果", "효과가 없", "no sirvió";
* **cause** — a cause without "root cause": "stems from", "traces back to", "is due to", "originates in",
  "because the worker reuses the socket" (a plain verb after *because*), "原因是", "por causa de", "때문에";
* **environment** — a capability or setting of the machine: "HOME is not set inside the build container",
  "the box has no GPU", "prod runs MySQL 5.7", "não tem GPU", "没有 GPU".

``kind_of(sentence)`` names the family ("" for none); ``CUE`` finds the positions worth splitting into
sentences (so only those sentences are tested).  A user's hindsight lesson ("we should have committed before
running the script", "next time run the migration first", "下次先提交") is a constraint: ``LESSON``.
``pasted_failure`` picks the failing lines of a log the user pasted.  Pure functions; patterns compile on first use.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.litgate import gated_re
from pipeline.stages.rules import paste

_N = r"(?:one|two|three|four|five|a\s+single|a\s+few|several|\d+)"
_BAD = (
    r"(?:uncovered|failing|failed|missing|unused|skipped|broken|remaining|untested|flaky|unresolved|unhandled|"
    r"not\s+covered|still\s+failing|left)"
)
_FAMILIES: tuple[tuple[str, object], ...] = (
    (
        "gap",
        gated_re(
            r"\bthere(?:'s|\s+is|\s+are|\s+remains?)\s+(?:still\s+)?" + _N + r"\s+(?:\w+\s+){0,2}?" + _BAD + r"\b|"
            r"\b" + _N + r"\s+(?:\w+\s+){0,2}?(?:is|are)\s+still\s+(?:\w+\s+)?" + _BAD + r"\b|"
            r"\b" + _N + r"\s+\w+\s+(?:remains?|is|are)\s+(?:un\w+|not\s+\w+ed)\b|"
            r"\bsingle\s+\w+\s+(?:not\s+covered|uncovered|failing|left)\b|"
            r"还有\s*\S{0,3}\s*个.{0,20}?(?:失败|未覆盖|没有|缺少)|仍有.{0,20}?(?:失败|未覆盖)|まだ.{0,20}?(?:失敗|未カバー|残って)|"
            r"아직.{0,20}?(?:실패|누락|남아)|\bainda\s+(?:h[áa]|falta\w*|falha\w*|resta\w*)\b|\btodav[íi]a\s+(?:hay|falla\w*|falta\w*|queda\w*)\b",
            re.I,
        ),
    ),
    (
        "placement",
        gated_re(
            r"\b(?:lives?|sits?|goes|belongs|resides?|is\s+(?:stored|kept|located|placed|defined|configured|read))\s+"
            r"(?:at|in|under|on|inside|from)\s+[^;]{1,80}?\b(?:rather\s+than|instead\s+of|not\s+(?:in|at|under|inside|on))\b|"
            r"\b(?:listens|answers|runs|binds)\s+on\s+(?:port\s+)?`?\d+`?,?\s+not\s+`?\d+|"
            r"\bfica\s+(?:em|no|na)\s+[^;]{1,60}?\bn[ãa]o\s+(?:em|no|na)\b|\bvive\s+en\s+[^.;]{1,60}?\bno\s+en\b|"
            r"(?:在|位于).{1,40}?而不是|.{1,40}?ではなく.{1,40}?にある",
            re.I,
        ),
    ),
    (
        "measured",
        gated_re(
            r"\b(?:increase[sd]?|decrease[sd]?|drop(?:ped|s)?|fell|rose|reduc(?:ed|es|tion)|faster|slower|improve[sd]?|"
            r"worse|regress\w*|speed-?up|went|cut|grew|shrank|halved|doubled)\b[^.;|]{0,40}?"
            r"[(]?[+\-−]?\d+(?:[.,]\d+)?\s?(?:%|ms|s\b|sec|min|x\b|×|[KMG]B\b)|"
            r"[+\-−]?\d+(?:[.,]\d+)?\s?(?:%|ms|sec|min|×|[KMG]B)[^.;|]{0,30}?\b(?:faster|slower|smaller|larger|less|more|"
            r"reduction|increase|drop|improvement|speed-?up)\b|"
            r"(?:下降|降低|提升|减少|增加|缩短)了?\s*\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?\s?%\s*(?:減|増|短縮|改善|감소|증가|향상)|"
            r"\b(?:caiu|subiu|reduziu|aumentou|bajó|subió|redujo|aumentó)\b[^.;]{0,30}?\d+(?:[.,]\d+)?\s?(?:%|ms|s\b|min)",
            re.I,
        ),
    ),
    (
        "dead_end",
        gated_re(
            r"\bmade\s+no\s+difference\b|\bdoesn't\s+change\s+anything\b|\bdid(?:n't|\s+not)\s+(?:help|change\s+anything|fix\s+it)\b|"
            r"\bisn't\s+working\b|\bwas\s+no\s+(?:faster|better|different)\b|\bstill\s+(?:fails|failing|crashes|hangs|errors|times\s+out)\b|"
            r"\bhad\s+no\s+effect\b|\bno\s+luck\b|\bn[ãa]o\s+(?:adiantou|funcionou|resolveu|mudou\s+nada)\b|\bcontinua\s+(?:falhando|dando\s+erro)\b|"
            r"\bno\s+(?:sirvi[óo]|funcion[óo]|cambi[óo]\s+nada|ayud[óo])\b|\bsigue\s+fallando\b|没有(?:效果|用|变化)|仍然(?:失败|报错)|还是(?:失败|报错)|"
            r"効果がな|変わらな|まだ失敗|효과가\s*없|여전히\s*실패|소용없",
            re.I,
        ),
    ),
    (
        "cause",
        gated_re(
            r"\b(?:stems|stemmed|originates|originated|traces|traced|comes|came)\s+(?:back\s+)?(?:from|in|to)\b|"
            r"\b(?:is|was|are|were)\s+(?:all\s+)?due\s+to\b|\bbecause\s+(?:the|a|an|our|its|this|that)\s+\w+(?:\s+\w+)?\s+\w+s\b|"
            r"原因是|是因为|由于.{1,30}?(?:导致|所以)|が原因|のせいで|때문에|원인은|\bpor\s+causa\s+d[aeo]s?\b|\bdevido\s+a\b|"
            r"\bse\s+debe\s+a\b|\bdebido\s+a\b|\bo\s+motivo\s+(?:é|foi)\b|\bla\s+causa\s+(?:es|fue)\b",
            re.I,
        ),
    ),
    (
        "environment",
        gated_re(
            r"\b(?:is|are)\s+not\s+set\s+(?:in|inside|on|within)\b|\b(?:box|machine|server|host|container|vm|runner|image|node)\s+"
            r"(?:has|have)\s+no\b|\bhas\s+no\s+(?:gpu|cuda|display|internet|network|docker|sudo|root)\b|"
            r"\b(?:prod|production|staging|ci|the\s+server|the\s+container)\s+(?:runs|uses|is\s+on)\s+[A-Za-z][\w.-]*\s+v?\d|"
            r"\b(?:is|are)\s+not\s+available\s+(?:in|on|inside)\b|\bn[ãa]o\s+tem\s+(?:gpu|cuda|acesso|internet|docker)\b|"
            r"\bno\s+tiene\s+(?:gpu|cuda|acceso|internet|docker)\b|没有\s*(?:GPU|CUDA|网络|权限|Docker)|(?:GPU|CUDA|Docker)\s*(?:がない|がありません|가\s*없)",
            re.I,
        ),
    ),
)
#: a position worth cutting a sentence around (the union of the families; searched once per message)
CUE = gated_re("|".join(f"(?:{p.pattern})" for _, p in _FAMILIES), re.I)
#: a user's hindsight lesson, a rule for the rest of the work
LESSON = gated_re(
    r"\b(?:we|you|i)\s+(?:should|shoud|shuold|ought\s+to)\s+(?:have|'ve)\s+\w+|\bshould'?ve\s+\w+|\bnext\s+time\b|"
    r"\bfrom\s+now\s+on\b|\bremember\s+to\b|\bgoing\s+forward\b|"
    r"\bdever[íi]amos\s+ter\b|\bda\s+pr[óo]xima\s+vez\b|\bdeber[íi]amos\s+haber\b|\bla\s+pr[óo]xima\s+vez\b|"
    r"应该先|下次|以后(?:都|要)|次(?:から|回)は|今後は|다음부터|앞으로는|했어야",
    re.I,
)
_HYPO = lazy_re(r"^(?:if|whether|maybe|perhaps|possibly|unless|could|would|should\s+we)\b|\?$", re.I)


def kind_of(sentence: str) -> str:
    """The family of ``sentence`` (module rules), or "" when it is none or is hypothetical."""
    if _HYPO.search(sentence.strip()):
        return ""
    for name, pattern in _FAMILIES:
        if pattern.search(sentence):
            return name
    return ""


def pasted_failure(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the failing lines of a log the user pasted into ``text`` (the first hard failure and a
    "not found" / warning line next to it), or None when ``text`` holds no pasted log.  The span covers the lines
    from the first to the last picked (at most 300 characters)."""
    if not paste.is_paste(text) and paste.own_words(text) == text.strip():
        return None
    own = {ln.strip() for ln in paste.own_words(text).splitlines() if ln.strip()}
    picked: list[tuple[int, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.strip()
        if len(body) < 8 or body in own or not paste.is_log_line(body) and not paste.error_line(body):
            continue
        if paste.error_line(body):
            lead = len(line) - len(line.lstrip())
            picked.append((start + lead, start + lead + len(body)))
            if len(picked) == 2:
                break
        elif picked:
            break
    if not picked:
        return None
    a, b = picked[0][0], picked[-1][1]
    if b - a > 300:
        b = picked[0][1]
    return a, b
