"""The catalogue of decision phrasings (DESIGN.md "Stages": implicit decisions, dead ends).

A phrasing is a *trigger* plus where the option sits relative to it: after it ("going with X", "settled on X",
"decided to X", "ruled out X") or before it ("X is the way to go", "X didn't work").  ``over`` marks the rejected
alternative: after the option for "after" phrasings ("I'll pick X over Y"), after the trigger for "before"
phrasings ("X wins over Y", "X beats Y").  Patterns are written on
sentence structure, not on particular words of a project.  Each phrasing lists the first three letters of the
trigger words that can start it (``keys``), so a sentence is only tried against the phrasings its trigger words
can open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lazyre import LazyPattern, lazy_re

APPROVED = "APPROVED"
REJECTED = "REJECTED"


@dataclass(frozen=True, slots=True)
class Pat:
    """One phrasing: its trigger regex, the status it gives, on which side of the trigger the option sits, what
    it needs to count (a reason or an alternative), whether " over Y" names a rejected alternative, whether
    tool-usage objects are filtered, and its trigger keys."""

    name: str
    regex: LazyPattern
    status: str
    side: str  # "after": option follows the match; "before": option precedes it
    needs: str = ""  # "reason": needs a reason or an alternative; "alt": needs an alternative
    over: bool = False  # " over Y" names the rejected alternative
    tool_filter: bool = False
    keys: tuple[str, ...] = ()  # first three letters of the trigger words that can start this phrasing


def _p(name: str, pattern: str, status: str, side: str = "after", **kw) -> Pat:
    return Pat(name, lazy_re(pattern, re.IGNORECASE), status, side, **kw)


PATTERNS: tuple[Pat, ...] = (
    # --- rejections first: "decided not to" must win over "decided to"
    # "I considered X, but rejected it: <reason>": the option weighed, then turned down by a pronoun pointing back
    _p("considered-rejected", r"\b(?:considered|thought\s+about|looked\s+at|evaluated|weighed)\s+(?:using\s+)?"
       r"(?=[^.!?;]{1,160}?,?\s+but\s+(?:I\s+|we\s+)?(?:(?:rejected|ruled\s+out|dropped|discarded|decided\s+against|abandoned|"
       r"gave\s+up\s+on|passed\s+on|skipped)\s+(?:it|that|this|them)\b|ruled\s+(?:it|that|this|them)\s+out\b))", REJECTED, keys=('con', 'tho', 'loo', 'eva', 'wei')),
    _p("decided-against", r"\b(?:decided|decide|deciding|chose|choosing)\s+(?:not\s+to\s+(?:use\s+|go\s+with\s+)?|against\s+(?:using\s+)?)", REJECTED, keys=('dec', 'cho')),
    _p("ruled-out", r"\brul(?:ed|ing|e)\s+out\s+", REJECTED, keys=('rul',)),
    _p("abandoned", r"\b(?:abandon(?:ed|ing|s)?|gave\s+up\s+on|giving\s+up\s+on|give\s+up\s+on)\s+(?:the\s+idea\s+of\s+|on\s+)?", REJECTED, keys=('aba', 'gav', 'giv')),
    _p("dropped", r"\b(?:dropp(?:ed|ing)|ditch(?:ed|ing)?|scrapp(?:ed|ing)|discard(?:ed|ing))\s+(?:the\s+idea\s+of\s+)?", REJECTED, needs="reason", keys=('dro', 'dit', 'scr', 'dis')),
    _p("wont-use", r"\b(?:we|I)\s*(?:won't|will\s+not|shouldn't|should\s+not|can't|cannot|can\s+not|don't\s+want\s+to|do\s+not\s+want\s+to|mustn't|must\s+not|are\s+not\s+going\s+to|'re\s+not\s+going\s+to|am\s+not\s+going\s+to|'m\s+not\s+going\s+to)\s+use\s+", REJECTED, needs="reason", tool_filter=True, keys=('use',)),
    _p("not-using", r"\b(?:not|no\s+longer)\s+using\s+", REJECTED, needs="reason", tool_filter=True, keys=('usi',)),
    _p("avoid", r"\bavoid(?:ing|ed)?\s+(?:using\s+)?", REJECTED, needs="reason", keys=('avo',)),
    _p("revert", r"\brevert(?:ed|ing)?\s+", REJECTED, needs="reason", keys=('rev',)),
    _p("tried", r"\b(?:tried|trying|attempted)\s+(?:to\s+use\s+|using\s+)?", REJECTED, keys=('tri', 'try', 'att')),
    # --- option after the trigger
    _p("proceed-with", r"\b(?:proceed(?:ing)?|mov(?:e|ing)\s+forward|go(?:ing)?\s+ahead|run(?:ning)?)\s+with\s+", APPROVED, over=True, tool_filter=True, keys=('pro', 'mov', 'go ', 'goi', 'run')),
    _p("switch-obj", r"\b(?:switch(?:ed|ing)?|chang(?:e|ed|ing)|mov(?:e|ed|ing)|bump(?:ed|ing)?|rais(?:e|ed|ing)|lower(?:ed|ing)?)\s+(?P<obj>(?:the|our|its|this)\s+[\w.-]+(?:\s+[\w.-]+)?)\s+(?:over\s+)?(?:to|from\s+\S+\s+to)\s+", APPROVED, needs="reason", keys=('swi', 'cha', 'mov', 'bum', 'rai', 'low')),
    _p("go-with", r"\b(?:go|going|went|gone)\s+with\s+", APPROVED, over=True, keys=('go ', 'goi', 'gon', 'wen')),
    _p("settled-on", r"\bsettl(?:ed|ing|e)\s+on\s+", APPROVED, over=True, keys=('set',)),
    _p("switch-to", r"\bswitch(?:ed|ing)?\s+(?:over\s+)?to\s+", APPROVED, needs="reason", keys=('swi',)),
    _p("move-to", r"\b(?:mov(?:e|ed|ing)|migrat(?:e|ed|ing))\s+(?:over\s+)?to\s+", APPROVED, needs="reason", keys=('mov', 'mig')),
    _p("lets-use", r"\blet(?:'s|\s+us)\s+(?:use|stick\s+with|keep|adopt|pick|choose|go\s+for|standardi[sz]e\s+on)\s+", APPROVED, over=True, tool_filter=True, keys=('let',)),
    _p("we-use", r"\bwe\s*(?:'ll|\s+will|'re\s+going\s+to|\s+are\s+going\s+to|\s+should|'d\s+better|'ll\s+be\s+using|\s+will\s+be\s+using)\s+use\s+", APPROVED, over=True, tool_filter=True, keys=('use',)),
    _p("i-use", r"\bI\s*(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to)\s+(?:use|prefer|pick|choose)\s+", APPROVED, needs="reason", over=True, tool_filter=True, keys=('use', 'pre', 'pic', 'cho')),
    _p("decided", r"\b(?:decided|decide|deciding)\s+(?:to|on)\s+|\bdecision\s+(?:is|was)\s+to\s+", APPROVED, over=True, keys=('dec',)),
    _p("chose", r"\b(?:chose|chosen|choosing|picked|picking|selected|selecting)\s+", APPROVED, over=True, keys=('cho', 'pic', 'sel')),
    _p("prefer", r"\bprefer(?:s|red|ring)?\s+", APPROVED, needs="alt", over=True, keys=('pre',)),
    _p("opt-for", r"\bopt(?:ed|ing|s)?\s+(?:for|to)\s+", APPROVED, over=True, keys=('opt',)),
    _p("plan-is", r"\b(?:the|our|my)\s+(?:plan|approach|strategy|fix|solution|way\s+forward)\s+(?:is|will\s+be)\s+(?:to\s+)?", APPROVED, keys=('pla', 'app', 'str', 'fix', 'sol')),
    _p("stick-with", r"\b(?:stick(?:ing)?|stuck|staying)\s+with\s+", APPROVED, over=True, keys=('sti', 'stu', 'sta')),
    _p("best-is", r"\b(?:the\s+)?(?:best|right|better|cleanest|simplest|safest|preferred|recommended|winning)\s+(?:option|approach|choice|fit|bet|path|solution|call|move|way)\s+(?:here\s+)?(?:is|will\s+be)\s+(?:to\s+)?", APPROVED, keys=('bes', 'bet', 'rig', 'cle', 'sim', 'saf', 'pre', 'rec', 'win')),
    _p("final", r"\bfinal\s+(?:answer|choice|decision|approach|pick)\s*(?:is\s+|:\s*)", APPROVED, keys=('fin',)),
    _p("using-instead", r"\b(?:we're|we\s+are|I'm|I\s+am|now)\s+using\s+", APPROVED, needs="alt", keys=('usi', 'now')),
    _p("using-lead", r"^(?:(?:so|ok(?:ay)?|instead|now)\s*,?\s+)?(?:(?:I'm|I\s+am|we're|we\s+are)\s+)?using\s+", APPROVED, needs="reason", tool_filter=True, keys=('usi',)),
    _p("gerund-lead", r"^(?:(?:so|ok(?:ay)?|instead|now)\s*,?\s+)?(?P<verb>moving|putting|keeping|replacing|storing|caching|wrapping|splitting|pinning)\s+", APPROVED, needs="reason", keys=('mov', 'put', 'kee', 'rep', 'sto', 'cac', 'wra', 'spl', 'pin')),
    _p("use-instead", r"\buse\s+(?=\S.{0,120}?\s(?:instead\s+of|rather\s+than)\s)", APPROVED, tool_filter=True, keys=('use',)),
    _p("used-instead", r"(?:^[\s>*+-]*(?:\*\*)?|\b(?:I|we)\s+(?:have\s+|'ve\s+)?)used\s+(?=\S.{0,120}?\s(?:instead\s+of|rather\s+than)\s)", APPROVED, tool_filter=True, keys=('use',)),
    # --- option before the trigger
    _p("didnt-work", r"\s+(?:didn't|did\s+not|doesn't|does\s+not|don't|do\s+not|won't|will\s+not|wouldn't|would\s+not|isn't\s+going\s+to|is\s+not\s+going\s+to|can't|cannot|never)\s+(?:actually\s+|really\s+)?work(?:s|ed)?\b", REJECTED, side="before", keys=('wor',)),
    _p("works-but", r"\s+(?:would|could|will|does|do)?\s*(?:still\s+)?work(?:s|ed)?\s*,?\s+but\s+(?:it\s+|it's\s+|is\s+|'s\s+|would\s+be\s+|seems\s+|feels\s+)*(?=(?:overly|too|unnecessarily|needlessly|way\s+too|overkill|fragile|brittle|slow|complex|complicated|messy|hacky)\b)", REJECTED, side="before", keys=('wor',)),
    _p("failed-because", r"\s+(?:failed|fails|broke|breaks)\s+(?=because\b|since\b|due\s+to\b|as\s|with\s|when\s)", REJECTED, side="before", keys=('fai', 'bro')),
    _p("dead-end", r"\s+(?:is|was|are|were|seems|turned\s+out\s+to\s+be)\s+(?:a\s+dead\s+end|not\s+(?:an\s+)?(?:option|viable|feasible|workable)|a\s+non-?starter|out\s+of\s+the\s+question|overkill|not\s+worth\s+it|ruled\s+out|abandoned|off\s+the\s+table)\b", REJECTED, side="before", keys=('dea', 'not', 'non', 'ove', 'out', 'off')),
    _p("wins-over", r"\s+(?:wins|win|won)\s+(?:out\s+)?over\s+|\s+beats?\s+(?=(?:a|an|the|using|\S*[`_/.-]\S*)\b)", APPROVED, side="before", over=True, keys=('win', 'won', 'bea')),
    _p("way-to-go", r"\s+(?:is|are|seems\s+like|looks\s+like)\s+(?:definitely\s+|clearly\s+)?the\s+way\s+to\s+go\b", APPROVED, side="before", keys=('way',)),
    _p("best-before", r"\s+(?:is|are)\s+(?:clearly\s+|definitely\s+)?(?:the|our)\s+(?:best|right|better|cleanest|simplest|safest|preferred|winning)\s+(?:option|approach|choice|fit|bet|path|solution|call|way)\b", APPROVED, side="before", keys=('bes', 'bet', 'rig', 'cle', 'sim', 'saf', 'pre', 'win')),
    _p("it-is", r"\s+it\s+is[.!]*$", APPROVED, side="before", keys=('it ',)),
)

#: One search over a whole message (lower-cased) decides which sentences are worth analysing.  Grouped by first
#: letter and anchored at a word start: Python's ``re`` tries alternatives one by one, so this keeps the scan
#: at tens of MB/s.
_TRIGGER_SRC = (
    r"\b(?:a(?:bandon|void|ttempted|pproach\s+is)|co(?:nsidered\s)|e(?:valuated\s)|w(?:eighed\s)|th(?:ought\s+about\s)|lo(?:oked\s+at\s)|r(?:eplacing\s|un(?:ning)?\s+with|ais(?:e|ed|ing)\s)|b(?:est\s|etter\s|roke|eats?\s|ump)|c(?:hose|hoos|leanest|hang)|"
    r"l(?:ower(?:ed|ing)?\s)|"
    r"d(?:ecid|ecision|ropp|itch|iscard|ead\s+end)|f(?:inal\s|ix\s+is|ail)|"
    r"g(?:o(?:ing)?\s+with|o(?:ing)?\s+ahead\s+with|one\s+with|ave\s+up|iving\s+up|ive\s+up)|i(?:t\s+is[.!])|l(?:et(?:'s|’s|\s+us)\s)|"
    r"m(?:igrat|ov(?:e|ed|ing)\s+(?:over\s+)?to|oving\s|ov(?:e|ed|ing)\s+(?:the|our|its|this)\s|ov(?:e|ing)\s+forward)|"
    r"n(?:ot\s+(?:an\s+)?(?:option|viable|feasible|workable)|ot\s+worth|on-?starter|ow\s+using)|"
    r"o(?:pt(?:ed|ing|s)?\s+(?:for|to)|verkill|ut\s+of\s+the\s+question|ff\s+the\s+table)|"
    r"p(?:icked|icking|ick\s|refer|lan\s+is|utting\s|inning\s|roceed)|k(?:eeping\s)|c(?:aching\s)|r(?:ul(?:ed|ing|e)\s+out|evert|ight\s+(?:option|approach|choice|call)|ecommended\s)|"
    r"s(?:ettl|witch|tick|tuck\s+with|taying\s+with|elected|electing|implest|afest|trategy\s+is|olution\s+is|crapp|"
    r"toring\s|plitting\s)|"
    r"t(?:ried|rying)|u(?:se\s|sed\s|sing\s)|w(?:ent\s+with|ay\s+to\s+go|inning|ins?\s+(?:out\s+)?over|on\s+(?:out\s+)?over|ork|rapping\s))"
)
TRIGGER = lazy_re(_TRIGGER_SRC)
TRIGGER_ANYCASE = lazy_re(_TRIGGER_SRC, re.IGNORECASE)


#: trigger key -> indexes of the phrasings it can start (in ``PATTERNS`` order)
BY_KEY: dict[str, tuple[int, ...]] = {}
for _n, _pat in enumerate(PATTERNS):
    for _key in _pat.keys:
        BY_KEY[_key] = BY_KEY.get(_key, ()) + (_n,)


def trigger_keys(sentence: str) -> set[str]:
    """First three letters (lower case, whitespace as a space) of each trigger word in ``sentence``."""
    low = sentence.lower()
    rx = TRIGGER if len(low) == len(sentence) else TRIGGER_ANYCASE
    src = low if rx is TRIGGER else sentence
    return {"".join(" " if c.isspace() else c for c in src[m.start(): m.start() + 3].lower()) for m in rx.finditer(src)}
