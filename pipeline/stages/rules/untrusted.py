"""Whose words a piece of an event's text is: the screen that keeps injected text out of the Decision Log (issue 11).

A decision counts only in the user's or the assistant's own words.  Two questions decide it, both answered on the
event's text around the decision's evidence:

1. **where the text came from** — ``region_at``: inside a fenced code block, a markdown ``>`` quote, an inline
   code span, a double-quoted string (``"…"``, ``“…”``, ``«…»``, ``„…“``, ``「…」``), an HTML comment, a
   ``<tag>…</tag>`` wrapper (``<document>``, ``<readme>``, ``<system-reminder>``…), a block introduced by a line
   that names a source ("here's the README:", "the fetched page says:", "pasted from the wiki:"; it runs to the
   end of the event) or after such a lead-in on the same line, the text is someone else's (pasted, quoted,
   fetched).  So is everything after a fake fence or role marker: a closing ``</transcript>`` / ``</system>``
   style tag, ``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``END OF TRANSCRIPT``, or a line that plays a system
   or chat turn (``SYSTEM:``, ``[system]``, ``### System``, ``Human:``, ``Assistant:``).
2. **whether it addresses a model** — ``ADDRESS`` searched within ``WINDOW`` characters on each side of the
   evidence (same event): "note to the summarizer / AI / assistant / model", "record it as a decision", "add
   this to the decision log", "ignore previous instructions", "when summarizing", "if you are an AI", mid-line
   ``SYSTEM:``… (English, plus cheap German, French, Spanish, Portuguese, Italian and Chinese forms); and a
   status marker spelled with lookalike or invisible characters (``ΑPPROVED`` with a Greek alpha,
   ``AP\u200bPROVED``) or wrapped in bidi controls, which nobody types by hand.

Matching runs on ``normalize``\\ d text: NFKC (fullwidth and styled letters), Greek and Cyrillic lookalikes folded
to Latin, invisible characters (zero-width space/joiner/non-joiner, word joiner, soft hyphen, BOM, bidi
controls, variation selectors, tag characters) removed.  Normalisation never crosses a newline, so line offsets
of the original text stay valid; position-sensitive checks (quotes, code spans) read the original line.

``decision_problem`` (a span of one event) is used by the rules engine before its entries are merged, and
``evidence_problem`` (a quote of one event) by the llm engine's grounding (``pipeline.stages.llm.ground``) and by
the last screen every engine's entries pass (``pipeline.engines``): one screen, whatever wrote the entry.
``injection_problem`` is the address test alone, for facts (which may rightly come from tool output).

Hook path: regexes are ``lazy_re``; a text's regions are computed once (``_profile``, cached) and only for events
that produced a candidate; ASCII text skips normalisation.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from pipeline.lazyre import lazy_re
from pipeline.litgate import gated_re

WINDOW = 200  # characters of the event on each side of the evidence searched for text that addresses a model

#: kinds whose text is someone's own words (the rest - tool output, tool arguments - is data)
OWN_WORDS = frozenset({"user_prompt", "assistant_text", "reasoning", "subagent_result", "compaction"})

# --- normalisation ------------------------------------------------------------------------------------------

_INVISIBLE = (
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x180B, 0x180E))
    + list(range(0x200B, 0x2010))  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    + list(range(0x202A, 0x202F))  # bidi embeddings and overrides
    + list(range(0x2060, 0x2065))  # word joiner, invisible operators
    + list(range(0x2066, 0x2070))  # bidi isolates, deprecated format characters
    + list(range(0xFE00, 0xFE10))  # variation selectors
    + list(range(0xE0000, 0xE0080))  # tag characters
)
# Greek and Cyrillic letters that look like Latin ones (after NFKC); the common "confusables" of a spoofed word.
_LOOKALIKES = {
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X", "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ϲ": "c", "Ϲ": "C", "ϳ": "j",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O", "Р": "P",
    "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "а": "a", "с": "c", "е": "e", "і": "i",
    "ј": "j", "о": "o", "р": "p", "ѕ": "s", "х": "x", "у": "y", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
    "Ӏ": "I", "ı": "i", "ɑ": "a", "ɡ": "g", "օ": "o", "Ꭺ": "A", "Ꭼ": "E", "Ꮪ": "S", "Ꭰ": "D",
}
_TABLE: dict[int, str | None] = {cp: None for cp in _INVISIBLE}
_TABLE.update({ord(k): v for k, v in _LOOKALIKES.items()})


def normalize(text: str) -> str:
    """``text`` as it reads: NFKC, lookalike letters folded to Latin, invisible characters removed.

    Never adds or removes a newline.  ASCII text is returned as is (no work)."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFKC", text).translate(_TABLE)


# --- text that addresses a model ------------------------------------------------------------------------------

_MODEL = (r"(?:summari[sz]ers?|summari[sz]ation|ais?|a\.i\.|assistants?|models?|llms?|language\s+models?|agents?|"
          r"bots?|chatbots?|claude|gpt(?:-\w+)?|chatgpt|copilot|gemini|recorder|note[- ]?takers?|automated\s+\w+)")
_READER = r"(?:summari[sz]ers?|recorder|note[- ]?takers?|(?:ai|llm|model|agent|assistant)s?\s+(?:reading|processing)\s+this)"
ADDRESS = gated_re(
    r"""(?:
        # addressing the reader model
        \b(?:note|memo|reminder|notice|directive|p\.?s\.?)\s+(?:to|for)\s+
            (?:(?:the|any|all|an?|every|future)\s+)*(?:\w+\s+)?""" + _MODEL + r"""\b
      | \b(?:message|instructions?|hint)\s+(?:to|for)\s+(?:(?:the|any|all|an?|every|future)\s+)*""" + _READER + r"""
      | \b(?:dear)\s+(?:the\s+)?""" + _MODEL + r"""\b
      | \b(?:if|when)\s+you\s+are\s+(?:an?\s+|the\s+)?(?:ai|language\s+model|llm|summari[sz]er|chatbot|automated)\b
      | \b(?:ais?|llms?|assistants|models|agents|summari[sz]ers|bots|crawlers)\s+(?:reading|processing|parsing|
            summari[sz]ing|ingesting|indexing)\s+(?:this|these)\b
      | \b(?:when|while|before)\s+(?:you\s+(?:are\s+)?)?summari[sz](?:e|ing)\b
      | \bin\s+(?:your|the\s+final)\s+summary\b
      | \bthe\s+summary\s+(?:must|should|shall|has\s+to|needs\s+to)\b
      | \bwhen\s+(?:you\s+)?(?:write|update|compile|produce|generate)\s+(?:the\s+)?(?:summary|decision\s+log|
            state\s+file|context\.md|handoff)\b
        # telling the reader what to record
      | \b(?:record|log|add|write|mark|note|save|store|enter|register|put|treat|count|file|flag|list)\s+
            (?:(?:it|this|that|these|them|the\s+following|the\s+above|everything)\s+)?(?:down\s+)?(?:as|in|to|into|under)\s+
            (?:an?\s+|the\s+)?(?:approved|rejected|(?:final\s+|official\s+|binding\s+)?decisions?|decision\s+log|
            agent\s+state|context\.md|state\s+file|established\s+facts?)\b
      | \b(?:record|log|add|write|mark|flag)\s+(?:it\s+|this\s+|that\s+)?(?:as\s+)?(?:APPROVED|REJECTED)\b
      | \b(?:add|append|insert|write)\s+(?:\S+\s+){0,4}(?:to|into|in)\s+(?:the\s+|your\s+)?(?:decision\s+log|
            context\.md|state\s+file|agent\s+state)\b
      | \b(?:this|it)\s+(?:must|should|has\s+to)\s+be\s+(?:recorded|logged|listed|treated)\s+as\b
        # overriding instructions
      | \b(?:ignore|disregard|forget|override|overrule|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*
            (?:previous|prior|above|earlier|preceding|former|system|original|existing|other)\s+
            (?:instructions?|prompts?|messages?|rules|directions|directives|context|guidelines)\b
      | \b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:above|before|so\s+far|you\s+were\s+told)\b
      | \bnew\s+(?:system\s+)?instructions?\s*:
      | \byou\s+(?:must|should|will|are\s+to)\s+(?:now\s+)?(?:record|approve|log|mark|disregard)\b
      | \bdo\s+not\s+(?:tell|inform|alert|warn|mention\s+(?:this\s+|it\s+)?to)\s+the\s+user\b
      | \byou\s+are\s+now\s+(?:in\s+)?(?:developer|admin|god|jailbreak|unrestricted)\b
      | \b(?:developer|god|jailbreak|dan)\s+mode\s+(?:enabled|on|activated)\b
        # role-play of system messages, anywhere in a line
      | (?:^|[.!?]\s+|[\[(<{*_#]\s*)(?-i:SYSTEM|DEVELOPER|SISTEMA|SYST[EÈ]ME|SYSTEMNACHRICHT)\s*[:\]>]
      | (?:^|[.!?]\s+|[\[(<{*_#]\s*)(?:system|developer)\s+(?:message|prompt|note|notice|override|instruction|update|
            alert)\s*[:\]>]
      | [\[<(]\s*system\s*[\]>)]
      | ^\W*system\s*:.*\b(?:APPROVED|REJECTED|DECISION|the\s+user|you|assistant|agent|model)\b
      | \b(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:system|new|admin|developer)\s+(?:message|prompt|instructions?)\b
        # German
      | \bignorier(?:e|en|t)?\s+(?:alle\s+|die\s+)*(?:vorherigen|bisherigen|obigen|fr[üu]heren)\s+(?:anweisungen|befehle)\b
      | \b(?:notiz|hinweis|nachricht)\s+(?:an|f[üu]r)\s+(?:den|die|das)\s+(?:zusammenfasser|ki|assistenten|modell|agenten)\b
      | \bals\s+(?:eine\s+)?entscheidung\s+(?:festhalten|eintragen|protokollieren|vermerken|aufnehmen|speichern)\b
      | \b(?:halte|trage|vermerke|protokolliere)\s+(?:das|dies|es)\s+als\s+(?:eine\s+)?entscheidung\b
        # French
      | \bignore[rz]?\s+(?:toutes\s+)?(?:les\s+)?instructions\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures)\b
      | \bnote\s+(?:au|[àa]\s+l['’]|pour\s+l[ea]\s+|pour\s+l['’])\s*(?:r[ée]sumeur|ia|assistant|mod[èe]le|agent)\b
      | \b(?:enregistre[rz]?|consigne[rz]?|note[rz]?|inscri(?:s|re|vez))\s+(?:le|la|cela|ceci|[çc]a)?\s*comme\s+
            (?:une\s+)?d[ée]cision\b
        # Spanish / Portuguese / Italian
      | \bignor[ae](?:r)?\s+(?:todas\s+)?(?:las|as|le)\s+(?:instrucciones|instru[çc][õo]es|istruzioni)\s+
            (?:anteriores|previas|precedenti)\b
      | \bnota\s+(?:para|al|ao|per)\s+(?:el\s+|la\s+|o\s+|a\s+|il\s+|l['’])?(?:resumidor|ia|asistente|assistente|
            modelo|modello|agente)\b
      | \breg[ií]str[ae](?:r|lo|la)?\s+(?:esto\s+|isso\s+|questo\s+)?(?:como|come)\s+(?:una?\s+)?decis(?:i[óo]n|[ãa]o|ione)\b
        # Chinese / Japanese
      | (?:忽略|无视)(?:之前|以前|上面|先前)的?(?:所有)?(?:指令|指示|说明)
      | (?:系统|系統|システム)\s*[:：]
      | (?:记录|記錄|記録)为?(?:一个|一項)?(?:决定|決定)
    )""",
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
#: a line that plays a system or chat turn; it and everything after it in the event are not the speaker's words
_ROLE_LINE = lazy_re(
    r"^[ \t>*_#-]*(?:SYSTEM|DEVELOPER|SISTEMA|SYST[EÈ]ME)\s*[:\]]"
    r"|^[ \t>*_-]*(?:\[|<|\(|#{1,6}[ \t]*)[ \t]*(?i:system|developer)[ \t]*(?i:message|prompt)?[ \t]*[\]>)]?[ \t]*:?[ \t]*$"
    r"|^[ \t>*_-]*[\[<(][ \t]*(?i:system|developer)[ \t]*[\]>)]"
    r"|^[ \t>*_#-]*(?i:system|developer)[ \t]+(?i:message|prompt|note|notice|override|instructions?|update|alert)[ \t]*[:\]]"
    r"|^[ \t>*_]*(?:Human|Assistant|HUMAN|ASSISTANT)[ \t]*:"
)
#: fake fences: the end of the data the reader was given, a chat-template token, a system block
_FAKE_FENCE = gated_re(
    r"</\s*(?:transcript|conversation|chat|chat[_-]?history|history|context|document|documents|data|input|user|"
    r"user[_-]?(?:message|input|query)|human|assistant|system|system[_-]?prompt|instructions?|session|messages?|"
    r"untrusted[\w-]*|prompt|tool[_-]?(?:output|result)s?|function[_-]?results?|search[_-]?results?)\s*>"
    r"|<\s*(?:system|system[_-]?prompt|instructions?|admin|developer)\s*>"
    r"|<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\s*\|>"
    r"|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>"
    r"|\b(?:END|CLOSE)\s+OF\s+(?:THE\s+)?(?:TRANSCRIPT|CONVERSATION|DOCUMENT|CONTEXT|INPUT|USER\s+INPUT|DATA|CHAT)\b"
    r"|\bBEGIN\s+(?:SYSTEM|NEW|ADMIN|DEVELOPER)\s+(?:PROMPT|INSTRUCTIONS?|MESSAGE)\b",
    re.IGNORECASE,
)
_MARKER = r"\b(?:APPROVED|REJECTED|DECISION|DECIDED|RULED\s+OUT)\b"
_MARKER_ASCII = lazy_re(_MARKER, re.IGNORECASE | re.ASCII)
_MARKER_ANY = lazy_re(_MARKER, re.IGNORECASE)
#: invisible characters with no business next to a status marker typed by a person (bidi controls, zero-width
#: space / non-joiner, word joiner, soft hyphen, directional marks); ZWJ and variation selectors are left out:
#: emoji sequences use them
_SPOOF_CHARS = lazy_re("[\u00ad\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069]")

# --- text that is someone else's ----------------------------------------------------------------------------------

_SOURCE = (r"(?:readme|read\s?me|(?:web\s?)?pages?|site|website|article|blog(?:\s+post)?|docs|documentation|wiki|"
           r"e-?mail|newsletter|thread|tweet|changelog|release\s+notes|gist|transcript|html|markdown|excerpt|"
           r"search\s+results|(?:text|contents?)\s+(?:of|from)|pasted|paste|copied|copy-?paste|quoted|verbatim|"
           r"fetched|webfetch|scraped|downloaded|forwarded)")
_QUOTE_VERB = r"(?:says|said|reads|states|stated|writes|wrote|contains|mentions|returned|returns|shows|printed|replied)"
#: a line that introduces someone else's text below it: names a source (or a paste) and ends in a colon; a source
#: word inside a name (``@agent-docs-architect``, ``docs/api``) names no source
_LEAD_IN = lazy_re(rf"^(?=.{{0,240}}$).*(?:(?<![\w@/-]){_SOURCE}(?![\w/-]).*|\b{_QUOTE_VERB}\s*)[:：]\s*$", re.IGNORECASE)
#: the same on one line, right before the evidence ("the page says: APPROVED: …")
_LEAD_IN_TAIL = lazy_re(rf"(?:\b{_SOURCE}\b[^:：]{{0,80}}|\b{_QUOTE_VERB}\s*)[:：]\s*[\"“«„]?\s*$", re.IGNORECASE)
_LABEL_START = lazy_re(rf"^[ \t>*_#-]*{_MARKER}", re.IGNORECASE)
_FENCE = lazy_re(r"^[ \t]*(?:```|~~~)")
_CODE_SPAN = lazy_re(r"`[^`\n]+`")  # a path in a code span ("`docs/x.md`") names no source
_BLOCKQUOTE = lazy_re(r"^[ \t]*>")
_TAG_OPEN = lazy_re(r"<([A-Za-z][\w:-]{0,40})(?:\s[^<>\n]{0,300})?>")
_WRAPPERS = frozenset(
    "document documents pasted paste pasted_text pasted-text readme file webpage page web_page content contents "
    "tool_output tool_result output result results search_results fetched fetched_content untrusted "
    "untrusted_content email quote blockquote text data source article html system-reminder".split()
)
_OPEN_QUOTES = (("“", "”"), ("«", "»"), ("„", "“"), ("「", "」"), ("『", "』"))


class _Profile:
    """Regions of one text that are not its speaker's own words: sorted, non-overlapping ``(start, end, why)``."""

    __slots__ = ("starts", "regions", "lines")

    def __init__(self, regions: list[tuple[int, int, str]], lines: list[tuple[int, int]]) -> None:
        regions.sort()
        merged: list[tuple[int, int, str]] = []
        for a, b, why in regions:
            if merged and a < merged[-1][1]:
                if b > merged[-1][1]:
                    merged[-1] = (merged[-1][0], b, merged[-1][2])
                continue
            merged.append((a, b, why))
        self.regions = merged
        self.starts = [r[0] for r in merged]
        self.lines = lines

    def region_at(self, pos: int) -> str | None:
        k = bisect_right(self.starts, pos) - 1
        if k >= 0 and pos < self.regions[k][1]:
            return self.regions[k][2]
        return None


def _lines(text: str) -> list[tuple[int, int]]:
    out = []
    pos = 0
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        out.append((pos, end))
        if nl < 0:
            break
        pos = nl + 1
    return out


@lru_cache(maxsize=64)
def _profile(text: str) -> _Profile:
    n = len(text)
    lines = _lines(text)
    regions: list[tuple[int, int, str]] = []
    fence_at = -1
    for ls, le in lines:
        raw = text[ls:le]
        if _FENCE.match(raw):
            if fence_at < 0:
                fence_at = ls
            else:
                regions.append((fence_at, le, "inside a code block"))
                fence_at = -1
            continue
        if fence_at >= 0:
            continue
        line = normalize(raw)
        if _FAKE_FENCE.search(line):
            regions.append((ls, n, "after a fake transcript fence or chat-template token"))
            break
        if _ROLE_LINE.match(line):
            regions.append((ls, n, "in a role-played system or chat turn"))
            break
        if _BLOCKQUOTE.match(raw):
            regions.append((ls, le, "inside a '>' quote"))
            continue
        if _LEAD_IN.match(_CODE_SPAN.sub("`…`", line).strip()) and not _LABEL_START.match(line):
            if text[le:].strip():
                regions.append((le, n, "in pasted or fetched text introduced by " + repr(raw.strip()[:60])))
                break
    if fence_at >= 0:
        regions.append((fence_at, n, "inside a code block"))
    if "<!--" in text:
        for m in re.finditer(r"<!--", text):
            end = text.find("-->", m.end())
            regions.append((m.start(), n if end < 0 else end + 3, "inside an HTML comment"))
    if "<" in text:
        low = text.lower()
        if len(low) != n:  # a few letters change length when lowered: keep the offsets
            low = text
        for k, m in enumerate(_TAG_OPEN.finditer(text)):
            if k >= 500:
                break
            name = m.group(1).lower()
            close = low.find(f"</{name}>", m.end())
            if close >= 0:
                regions.append((m.start(), close + len(name) + 3, f"inside a <{name}> block"))
            elif name in _WRAPPERS:
                regions.append((m.start(), n, f"inside a <{name}> block"))
    return _Profile(regions, lines)


def _inline_quoted(text: str, ls: int, pos: int) -> str | None:
    """Why offset ``pos`` sits inside an inline code span, a double-quoted string or after a same-line lead-in."""
    before = text[ls:pos]
    if before.count("`") % 2:
        return "inside an inline code span"
    if before.count('"') % 2:
        return "inside a quoted string"
    for op, cl in _OPEN_QUOTES:
        if before.rfind(op) > before.rfind(cl):
            return "inside a quoted string"
    if _LEAD_IN_TAIL.search(normalize(before)):
        return "quoted after " + repr(before.strip()[:60])
    return None


def region_at(text: str, pos: int) -> str | None:
    """Why offset ``pos`` of ``text`` is not its speaker's own words (pasted, quoted, fetched, role-played), or None."""
    prof = _profile(text)
    why = prof.region_at(pos)
    if why:
        return why
    k = bisect_right([ls for ls, _ in prof.lines], pos) - 1 if prof.lines else -1
    ls = prof.lines[k][0] if k >= 0 else 0
    return _inline_quoted(text, ls, pos)


def own_words(text: str) -> str:
    """``text`` with its pasted, quoted, fetched and role-played regions, and its paragraphs that address a model,
    blanked out (offsets kept): what can support a decision."""
    blank = [(a, b) for a, b, _ in _profile(text).regions]
    start = 0
    for m in _PARAGRAPH_BREAK.finditer(text + "\n\n"):
        if m.start() > start and address_problem(text[start:m.start()]):
            blank.append((start, m.start()))
        start = m.end()
    if not blank:
        return text
    chars = list(text)
    for a, b in blank:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


_PARAGRAPH_BREAK = lazy_re(r"\n[ \t]*\n")


def address_problem(window: str) -> str | None:
    """Why ``window`` (raw text) addresses a model, or None: an ``ADDRESS`` phrase, or a spoofed status marker."""
    norm = normalize(window)
    m = ADDRESS.search(norm)
    if m:
        return f"addresses a model ({m.group(0).strip()[:40]!r})"
    if norm is not window:
        markers = len(_MARKER_ANY.findall(norm))
        if markers > len(_MARKER_ASCII.findall(window)):
            return "holds a status marker spelled with lookalike or invisible characters"
        if markers and _SPOOF_CHARS.search(window):
            return "holds a status marker among invisible or bidi control characters"
    return None


def decision_problem(text: str, start: int, end: int, focus: int | None = None, *fields: str) -> str | None:
    """Why a decision whose evidence is ``text[start:end]`` (its trigger at ``focus``) is not its speaker's own
    decision, or None.  ``fields`` (the entry's what/reasoning) must not address a model either."""
    for f in fields:
        if f:
            why = address_problem(f)
            if why:
                return f"its text {why}"
    at = start if focus is None else focus
    why = region_at(text, at)
    if why is None and focus is not None and focus != start:
        why = _profile(text).region_at(start)
    if why:
        return f"its evidence is not the speaker's own words ({why})"
    window = text[max(0, start - WINDOW): end + WINDOW]
    why = address_problem(window)
    if why:
        return f"its evidence sits in text that {why} (prompt injection)"
    return None


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` sits in ``text`` (exactly, else whitespace-insensitively), or None."""
    q = quote.strip()
    if not q:
        return None
    at = text.find(q)
    if at >= 0:
        return at, at + len(q)
    words = q.split()
    if len(words) > 200:
        return None
    m = re.search(r"\s+".join(map(re.escape, words)), text)
    return (m.start(), m.end()) if m else None


def evidence_problem(kind: str, text: str, quote: str, *fields: str) -> str | None:
    """``decision_problem`` for an entry citing ``quote`` of an event of ``kind`` with ``text``: not the speaker's
    words when the event is data (tool output), when the quote sits in pasted/quoted/fetched text, or near text
    that addresses a model.  A quote not found in the text is screened as if it spanned the whole event."""
    if kind not in OWN_WORDS:
        return injection_problem(quote, text, *fields)
    span = locate(text, quote)
    if span is None:
        for f in fields:
            if f and address_problem(f):
                return f"its text {address_problem(f)}"
        why = address_problem(text)
        return f"its evidence sits in text that {why} (prompt injection)" if why else None
    return decision_problem(text, span[0], span[1], None, *fields)


def injection_problem(quote: str, event_text: str, *fields: str) -> str | None:
    """Why an entry with ``quote`` from ``event_text`` reads as planted by a prompt injection, or None: ``fields``
    or the event within ``WINDOW`` characters of the quote address a model (the whole event when the quote is not
    found in it).  Where the text came from is not asked: a fact may rightly come from tool output."""
    for f in fields:
        if f:
            why = address_problem(f)
            if why:
                return "reads as an instruction to a model (prompt injection)"
    span = locate(event_text, quote)
    window = event_text if span is None else event_text[max(0, span[0] - WINDOW): span[1] + WINDOW]
    if address_problem(window):
        return "its evidence sits in text that instructs a model (prompt injection)"
    return None
