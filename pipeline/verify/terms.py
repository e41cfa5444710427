"""The distinctive terms of an entry: what a summary must repeat for the entry to count as kept.

``distinctive(text)`` picks at most ``MAX_TERMS`` terms, strongest first:

====  ==========================================================================================
rank  term
====  ==========================================================================================
5     a short code span (```npm test```, at most ``SPAN_CHARS`` characters)
4     a path or file name, as its last segment (``/src/api/rate.py`` -> ``rate.py``), a URL's last segment
4     a command-line flag (``--units``); an identifier: ``snake_case``, ``kebab-case`` with a letter, ``dotted.name``, ``camelCase``, ``AOJ-101``,
      a hex id of 7+ characters with a digit (``f98cc10``)
3     a number of two or more digits, a decimal or a range (``6380``, ``0.5``, ``5-6``, ``90.0%``)
2     an acronym (``JWT``) or a capitalised word that does not start a sentence (``Redis``)
1     a content word of four or more letters, not ending in -ly, -ing, -ed (only when no term ranks 2 or more)
====  ==========================================================================================

A single strong term is joined by the entry's longest content word.  Names (rank 2) count only when the text has no term of rank 3 or more.  Terms that hold an ellipsis are split at
it and a word cut by it is dropped; masked values (``<REDACTED>``, ``[REDACTED]``) are never terms; a
term contained in a stronger one already chosen is skipped.  Pure; never raises.
"""

from __future__ import annotations

import re

MAX_TERMS = 3
SPAN_CHARS = 30
#: At most this many content words stand in when an entry has no stronger term.
MAX_WORDS = 2
#: An entry with a single strong term also needs its longest content word (when it has one).
MIN_TERMS = 2

_SPAN = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"[\w./:#@+~%…-]+(?:\([^()\s]*\))?")
_EDGE = ".,:;!?()[]{}\"'<>*"
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_NUMBER = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)*(?:-\d+(?:\.\d+)?)?%?$")
_FLAG = re.compile(r"^--?[A-Za-z][\w-]+$")
_CAMEL = re.compile(r"[a-z][A-Z]")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,9}s?$")
_WORD = re.compile(r"^[^\W\d_]{4,}$")
_SENTENCE_END = re.compile(r"[.!?:;—–]\s*$")
#: Adverbs and verb forms say how, not what: never content-word terms.
_INFLECTIONS = ("ly", "ing", "ed")
_MASKED = re.compile(r"REDACTED", re.IGNORECASE)

#: Capitalised words that are sentence furniture, not names (checked lower-cased).
_COMMON = frozenset(
    """the this that these those then than there their they them when where what which while with without
    would could should will shall must might maybe also after before because since until unless however
    instead rather only just even still other another every each some none most more less many much
    first last next later earlier error errors warning failed failing works worked working done todo
    true false null none yes okay please thanks note notes step steps task tasks plan user users
    approved rejected decided decision chose choose using used uses use make made need needs needed
    create created run running ran read edit edited write wrote added add fixed fix check checked
    waiting current remaining pending completed complete keep give take want stay show tell look find""".split()
)
_STOP_WORDS = _COMMON | frozenset(
    """about above across again against along already although among around asked being below between
    both cannot doing during either enough from further going have having into itself like likely
    never nothing often once onto other ours over same seems several since something sometimes such
    through under upon very want wants wanted well were whether which within yours""".split()
)


def _clean(token: str) -> str:
    token = token.strip(_EDGE)
    if token.endswith("'s"):
        token = token[:-2]
    return token


def _rank(token: str, sentence_start: bool) -> int:
    """The rank of one cleaned token (0: not a term)."""
    if not token or _MASKED.search(token):
        return 0
    if "/" in token or "\\" in token:
        return 4 if len(_last_segment(token)) >= 3 else 0
    if _NUMBER.match(token):
        digits = sum(c.isdigit() for c in token)
        return 3 if digits >= 2 or "." in token or "-" in token.lstrip("+-") else 0
    if _FLAG.match(token):
        return 4
    has_alpha = any(c.isalpha() for c in token)
    if not has_alpha:
        return 0
    if _HEX.match(token) and any(c.isdigit() for c in token):
        return 4
    inner = token.strip("._-")
    if re.search(r"\w[._]\w", inner) or (re.search(r"\w-\w", inner) and any(c.isalpha() for c in inner)) \
            or _CAMEL.search(inner) or (any(c.isdigit() for c in inner) and any(c.isalpha() for c in inner)):
        return 4
    if _ACRONYM.match(token) and token.lower() not in _COMMON:
        return 2
    if token[0].isupper() and not sentence_start and token.lower() not in _COMMON and len(token) >= 3:
        return 2
    low = token.lower()
    if _WORD.match(token) and low not in _STOP_WORDS and not low.endswith(_INFLECTIONS):
        return 1
    return 0


def _last_segment(token: str) -> str:
    parts = [p for p in re.split(r"[/\\]", token.rstrip("/\\")) if p and p not in (".", "..", "~")]
    return parts[-1] if parts else ""


def _term_of(token: str, rank: int) -> str:
    if rank == 4 and ("/" in token or "\\" in token):
        return _last_segment(token).strip(_EDGE)
    return token


def _candidates(text: str) -> list[tuple[int, int, str]]:
    """``(rank, position, term)`` for every term-like token of ``text``, in order of appearance."""
    out: list[tuple[int, int, str]] = []
    spans = []
    for m in _SPAN.finditer(text):
        inner = m.group(1).strip()
        if inner and len(inner) <= SPAN_CHARS and "…" not in inner and not _MASKED.search(inner):
            out.append((5, m.start(), _term_of(inner, 4) if " " not in inner and "/" in inner else inner))
            spans.append((m.start(), m.end()))
    flat = text.replace("`", " ")
    for m in _TOKEN.finditer(flat):
        if any(a <= m.start() < b for a, b in spans):
            continue
        before = flat[: m.start()]
        sentence_start = not before.strip() or bool(_SENTENCE_END.search(before))
        pieces = m.group(0).split("…")
        for n, piece in enumerate(pieces):
            if n < len(pieces) - 1 and piece[-1:].isalnum():
                continue  # a word cut at the ellipsis ("integrat…") is no term
            token = _clean(piece)
            rank = _rank(token, sentence_start)
            if rank:
                term = _term_of(token, rank)
                if term:
                    out.append((rank, m.start(), term))
            sentence_start = False
    return out


def distinctive(text: str) -> list[str]:
    """At most ``MAX_TERMS`` distinctive terms of ``text``, strongest first (see the module docstring).

    ``[]`` when ``text`` has nothing term-like (then no summary can be shown to carry it).
    """
    found = _candidates(text)
    top = max((c[0] for c in found), default=0)
    floor = 3 if top >= 3 else top  # names fill in only where no identifier, path or number does
    tier = [c for c in found if c[0] >= floor]
    if top >= 2:
        pool, limit = sorted(tier, key=lambda c: (-c[0], c[1])), MAX_TERMS
    else:
        pool, limit = sorted(found, key=lambda c: (-len(c[2]), c[1])), MAX_WORDS
    chosen: list[str] = []
    _pick(pool, chosen, limit)
    if top >= 2 and len(chosen) < MIN_TERMS:  # one identifier alone matches too easily: add a content word
        _pick(sorted((c for c in found if c[0] == 1), key=lambda c: (-len(c[2]), c[1])), chosen, MIN_TERMS)
    return chosen


def _pick(pool: list[tuple[int, int, str]], chosen: list[str], limit: int) -> None:
    for _, _, term in pool:
        if len(chosen) >= limit:
            return
        low = term.lower()
        if any(low == c.lower() or _inside(low, c.lower()) or _inside(c.lower(), low) for c in chosen):
            continue
        chosen.append(term)


def _inside(small: str, big: str) -> bool:
    """Whether ``small`` occurs in ``big`` not inside a longer word."""
    start = big.find(small)
    while start >= 0:
        end = start + len(small)
        if (start == 0 or not big[start - 1].isalnum()) and (end == len(big) or not big[end].isalnum()):
            return True
        start = big.find(small, start + 1)
    return False
