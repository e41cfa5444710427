"""Text helpers of the rules engine: sentence spans, clipping, keys for dedupe, timestamps, verbatim quotes.

Everything works on character offsets into the event's own text, so a quote taken from a span is always a
verbatim substring of ``Event.text`` (DESIGN.md "Stages": evidence quotes are checked by ``validate``).
Regexes are compiled once at import; no function here is worse than linear in its input.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from pipeline.lazyre import lazy_re

QUOTE_LIMIT = 300  # characters, Evidence.quote

_FENCE = lazy_re(r"[ \t]*(?:```|~~~)")
# Markdown line markers that are not part of the sentence: bullets, numbers, letters, quotes, headings.
_LINE_MARK = lazy_re(r"[ \t]*(?:(?:[-*+•]|\d{1,3}[.)]|[a-zA-Z][)]|>|#{1,6})[ \t]+)*")
_LIST_ITEM = lazy_re(r"[ \t]*(?:\*\*)?(?:[-*+•]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+")
# A sentence end: terminal punctuation, closing quotes/brackets/markup, whitespace.
_SENT_END = lazy_re(r"[.!?]+[\"'”’)\]*_`]*\s+|[。！？]+[」』）”’)]*\s*")  # CJK full stops need no space after
_ABBREV = frozenset(
    "e.g i.e etc vs cf approx fig mr mrs dr inc ltd jr sr al".split()
)
_WORD_BEFORE = lazy_re(r"([A-Za-z.]+)$")

_KEY_DROP = lazy_re(r"[^a-z0-9]+")
_KEY_LEAD = lazy_re(r"^(?:(?:the|a|an|to|using|use|with|of|for|our|my)\s+)+")
_TOKEN = lazy_re(r"[a-z0-9][a-z0-9_]*")
STOPWORDS = frozenset(
    """a an the and or but of to in on at for with by from as is are was were be been being it its this that these
    those we i you he she they them our my your their me us do does did done so if then than there here not no
    into onto about over under just also only very will would should could can may might must shall have has had
    all any some each more most other such own same too now when while which who whom what where why how let lets
    use using used""".split()
)

_TS = lazy_re(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:[.,]\d+)?[ ]?(Z|[+-]\d{2}:?\d{2}|UTC)?$", re.IGNORECASE
)


def one_line(text: str) -> str:
    """``text`` with every whitespace run (newlines included) collapsed to one space, ends stripped (``str.split``
    and ``\\s`` agree on what whitespace is)."""
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (``…`` included when cut).

    Cuts at the last sentence end within the limit when that keeps at least half of it, else at the last
    word boundary (keeping at least 60 %), else hard; trailing commas/colons are dropped before the ``…``.
    """
    line = one_line(text)
    if len(line) <= limit:
        return line
    room = line[: limit - 1]
    cut = -1
    for m in _SENT_END.finditer(room + " "):
        if m.start() >= limit // 2:
            cut = m.start() + 1
    if cut < 0:
        space = len(room) if line[len(room)] == " " else room.rfind(" ")
        cut = space if space >= limit * 0.6 else len(room)
    return room[:cut].rstrip(" ,;:-–—(") + "…"


def clip_block(text: str, limit: int) -> str:
    """Multi-line ``text`` cut to ``limit`` characters at a sentence or word boundary, lines kept.

    Trailing whitespace of each line and runs of blank lines are squeezed first; ``…`` marks a cut.
    """
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    out: list[str] = []
    for ln in lines:
        if ln or (out and out[-1]):
            out.append(ln)
    block = "\n".join(out).strip()
    if len(block) <= limit:
        return block
    room = block[: limit - 1]
    cut = -1
    for m in _SENT_END.finditer(room + " "):
        if m.start() >= limit // 2:
            cut = m.start() + 1
    if cut < 0:
        space = max(room.rfind(" "), room.rfind("\n"))
        cut = space if space >= limit * 0.6 else len(room)
    return room[:cut].rstrip(" ,;:-–—(\n") + "…"


def strip_markup(text: str) -> str:
    """``text`` without bold/italic markers and leading list/heading markers, on one line."""
    text = text.replace("**", "").replace("__", "")
    text = _LINE_MARK.sub("", text, count=1)
    return one_line(text)


def norm_key(text: str) -> str:
    """Dedupe key: lower case, punctuation and markup gone, leading articles/"use" dropped, spaces collapsed."""
    key = _KEY_DROP.sub(" ", text.lower()).strip()
    return _KEY_LEAD.sub("", key)


def _stem(word: str) -> str:
    """A light stem: ``keying`` -> ``key``, ``buckets`` -> ``bucket``, ``tested`` -> ``test`` (words > 4 letters)."""
    if len(word) > 4:
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


def tokens(text: str) -> frozenset[str]:
    """Content words of ``text`` (lower case, stop words dropped, lightly stemmed), for near-duplicate tests."""
    return frozenset(_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS)


def similar(a: frozenset[str], b: frozenset[str], *, jaccard: float, contain: float) -> bool:
    """True when token sets ``a`` and ``b`` overlap by at least ``jaccard`` (|a∩b|/|a∪b|) or when the smaller
    set (of at least 2 tokens) is covered to ``contain`` (|a∩b|/min(|a|,|b|))."""
    if not a or not b:
        return False
    inter = len(a & b)
    if inter == 0:
        return False
    if inter / len(a | b) >= jaccard:
        return True
    small = min(len(a), len(b))
    return small >= 2 and inter / small >= contain


class SimilarIndex:
    """The sets added so far, queried for one that is ``similar`` to a given set, without comparing against all of
    them (a plain loop makes deduping n sentences cost n² comparisons: 23 s of a 2 MB transcript of user prose).

    Prefix filtering (set-similarity joins): ``similar`` holds only when |a∩b| >= ceil(alpha·|s|), ``s`` the
    smaller set and ``alpha = min(2j/(1+j), contain)`` (Jaccard >= j means |a∩b|·(1+j) >= j·(|a|+|b|) >= 2j·|s|).
    Then any |s| - ceil(alpha·|s|) + 1 tokens of ``s`` include one of the other set, so each set is indexed under all its
    tokens and, separately, under that many of its rarest ones (``rank``: lower is rarer); a query looks its own
    rarest tokens up among the full sets and all its tokens among the prefixes.  Candidates found are then checked
    with ``similar``'s own test (inlined), so the answer is the plain loop's; only rare tokens' lists are long-lived, which keeps
    the work near linear.
    """

    __slots__ = ("_jaccard", "_contain", "_alpha", "_rank", "_sets", "_full", "_prefix", "checked")

    def __init__(self, *, jaccard: float, contain: float, rank: dict[str, int] | None = None) -> None:
        self._jaccard, self._contain = jaccard, contain
        self._alpha = min(2 * jaccard / (1 + jaccard), contain)
        self._rank = rank or {}
        self._sets: list[frozenset[str]] = []
        self._full: dict[str, list[int]] = {}
        self._prefix: dict[str, list[int]] = {}
        self.checked = 0  # sets compared so far (what a test counts instead of timing)

    def _prefix_of(self, toks: frozenset[str]) -> list[str]:
        need = max(1, math.ceil(self._alpha * len(toks) - 1e-9))  # shared tokens a similar set must have
        rank = self._rank
        return sorted(toks, key=lambda t: (rank.get(t, -1), t))[: len(toks) - need + 1]

    def add(self, toks: frozenset[str]) -> None:
        if not toks:
            return
        n = len(self._sets)
        self._sets.append(toks)
        for t in toks:
            self._full.setdefault(t, []).append(n)
        for t in self._prefix_of(toks):
            self._prefix.setdefault(t, []).append(n)

    def has_similar(self, toks: frozenset[str]) -> bool:
        return self.find_similar(toks) is not None

    def find_similar(self, toks: frozenset[str]) -> int | None:
        """The position (order of ``add``) of a set similar to ``toks``, or None."""
        if not toks:
            return None
        seen: set[int] = set()
        sets, jaccard, contain, size = self._sets, self._jaccard, self._contain, len(toks)
        for index, probe in ((self._full, self._prefix_of(toks)), (self._prefix, toks)):
            for t in probe:
                for n in index.get(t, ()):
                    if n in seen:
                        continue
                    seen.add(n)
                    self.checked += 1
                    other = sets[n]
                    inter = len(toks & other)  # ``similar`` inlined: this loop is the hot one
                    if inter / (size + len(other) - inter) >= jaccard:
                        return n
                    small = min(size, len(other))
                    if small >= 2 and inter / small >= contain:
                        return n
        return None


def norm_ts(value: str | None) -> str | None:
    """An ISO-8601 timestamp as UTC ``YYYY-MM-DDTHH:MM:SSZ``; None when absent or not ISO-8601.

    Fractions are dropped, a missing offset is taken as UTC, other offsets are converted.
    """
    if not value:
        return None
    m = _TS.match(value.strip())
    if not m:
        return None
    date, hm, sec, off = m.groups()
    base = f"{date}T{hm}{sec or ':00'}"
    if off is None or off.upper() in ("Z", "UTC", "+00:00", "+0000", "-00:00", "-0000"):
        return base + "Z"
    try:
        dt = datetime.fromisoformat(base + (off if ":" in off else off[:3] + ":" + off[3:]))
    except ValueError:
        return None
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_boundary(text: str, start: int, dot: int, nxt: int) -> bool:
    """Whether the punctuation at ``dot`` ends a sentence that began at ``start`` (next sentence at ``nxt``)."""
    if text.count("`", start, dot) % 2:  # inside a code span
        return False
    if nxt < len(text) and text[nxt].islower() and (text[dot] != "." or text.startswith("..", dot)):
        return False  # "wait! no" and "I tried... and it failed" go on; "done. next" splits (users type lower case)
    if text[dot] == ".":
        m = _WORD_BEFORE.search(text, max(start, dot - 12), dot)
        if m:
            word = m.group(1).lower().strip(".")
            if word in _ABBREV:
                return False
        if dot - start <= 3 and text[start:dot].strip().isdigit():  # "1. " list label
            return False
    return True


def _split_paragraph(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    """Append the sentence spans of ``text[start:end]`` (one paragraph) to ``out``."""
    s = start
    for m in _SENT_END.finditer(text, start, end):
        if m.end() >= end:
            break
        if _is_boundary(text, s, m.start(), m.end()):
            e = m.end()
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                out.append((s, e))
            s = m.end()
    e = end
    while e > s and text[e - 1].isspace():
        e -= 1
    if e > s:
        out.append((s, e))


_SPANS_CACHE: dict[str, list[tuple[int, int]]] = {}
_SPANS_CACHE_SIZE = 256  # texts: the rule modules split the same messages again (a prompt, the answer before it)
_SPANS_CACHE_MIN = 200  # characters: shorter texts split faster than they hash
_SPANS_CACHE_MAX = 50_000  # characters: the cache holds at most ~13 MB of texts, whatever the session's size


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (the rules of ``_sentence_spans``); a message split before gives the same list
    from a small cache (callers read it, never change it)."""
    if not _SPANS_CACHE_MIN <= len(text) <= _SPANS_CACHE_MAX:
        return _sentence_spans(text)
    got = _SPANS_CACHE.get(text)
    if got is None:
        if len(_SPANS_CACHE) >= _SPANS_CACHE_SIZE:
            _SPANS_CACHE.pop(next(iter(_SPANS_CACHE)))  # the oldest
        got = _SPANS_CACHE[text] = _sentence_spans(text)
    return got


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``, in order, skipping fenced code blocks.

    Lines are sentence boundaries (markdown lists, headings), except that a line that does not end in
    punctuation continues into a next line starting in lower case (hard-wrapped prose).  List, quote and heading
    markers at a line start are left out of the span.  Periods after abbreviations, single letters and list
    numbers are not boundaries.
    """
    spans: list[tuple[int, int]] = []
    in_code = False
    para_start = -1
    para_end = -1
    pos = 0
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        if nl < 0:
            nl = n
        line_start, line_end = pos, nl
        pos = nl + 1
        if _FENCE.match(text, line_start, line_end):
            if para_start >= 0:
                _split_paragraph(text, para_start, para_end, spans)
                para_start = -1
            in_code = not in_code
            continue
        if in_code:
            continue
        mark = _LINE_MARK.match(text, line_start, line_end)
        body = mark.end() if mark else line_start
        stripped_end = line_end
        while stripped_end > body and text[stripped_end - 1].isspace():
            stripped_end -= 1
        if stripped_end <= body:  # blank line (or a bare marker)
            if para_start >= 0:
                _split_paragraph(text, para_start, para_end, spans)
                para_start = -1
            continue
        has_marker = body > line_start and not text[line_start:body].isspace()
        if (
            para_start >= 0
            and not has_marker
            and text[body].islower()
            and text[para_end - 1] not in ".!?:;"
        ):
            para_end = stripped_end  # hard-wrapped continuation
            continue
        if para_start >= 0:
            _split_paragraph(text, para_start, para_end, spans)
        para_start, para_end = body, stripped_end
    if para_start >= 0:
        _split_paragraph(text, para_start, para_end, spans)
    return spans


_FENCE_LINE = lazy_re(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


def code_ranges(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of fenced code blocks in ``text`` (an unclosed fence runs to the end)."""
    if "```" not in text and "~~~" not in text:
        return []
    fences = [m.start() for m in _FENCE_LINE.finditer(text)]
    out = []
    for k in range(0, len(fences), 2):
        end = fences[k + 1] if k + 1 < len(fences) else len(text)
        out.append((fences[k], end))
    return out


def _line_at(text: str, pos: int) -> tuple[int, int]:
    ls = text.rfind("\n", 0, pos) + 1
    le = text.find("\n", pos)
    return ls, (len(text) if le < 0 else le)


def _continues(text: str, prev: tuple[int, int], cur: tuple[int, int]) -> bool:
    """Whether line ``cur`` continues the hard-wrapped sentence of line ``prev`` (same rule as
    ``sentence_spans``: no marker, starts in lower case, the previous line does not end in punctuation)."""
    body = text[prev[0]:prev[1]].rstrip()
    if not body or _FENCE.match(text, prev[0], prev[1]):
        return False
    mark = _LINE_MARK.match(text, cur[0], cur[1])
    start = mark.end() if mark else cur[0]
    if start >= cur[1] or (start > cur[0] and not text[cur[0]:start].isspace()):
        return False
    return text[start].islower() and body[-1] not in ".!?:;"


def local_spans(text: str, positions) -> list[tuple[int, int]]:
    """Sentence spans of only the paragraphs (a line, or hard-wrapped lines) holding ``positions``, plus the
    next non-blank paragraph after each (so a following sentence is available), in order.  Fenced code is
    skipped.  Same spans as ``sentence_spans`` gives for those paragraphs, at a fraction of the cost on long
    texts where few lines matter.
    """
    code = code_ranges(text)
    n = len(text)
    paras: dict[int, int] = {}

    def in_code(pos: int) -> bool:
        return any(a <= pos < b for a, b in code)

    def para(pos: int) -> tuple[int, int]:
        ls, le = _line_at(text, pos)
        for _ in range(50):  # walk back over wrapped lines
            if ls == 0:
                break
            prev = _line_at(text, ls - 1)
            if not _continues(text, prev, (ls, le)):
                break
            ls = prev[0]
        cur = _line_at(text, pos)
        pe = cur[1]
        for _ in range(50):  # and forward
            if pe >= n:
                break
            nxt = _line_at(text, pe + 1)
            if not _continues(text, (cur[0], pe), nxt):
                break
            cur, pe = nxt, nxt[1]
        return ls, pe

    for pos in positions:
        if code and in_code(pos):
            continue
        ls, pe = para(pos)
        if ls in paras:
            continue
        paras[ls] = pe
        ns = pe + 1
        while ns < n:
            ne = text.find("\n", ns)
            ne = n if ne < 0 else ne
            if text[ns:ne].strip():
                if not (code and in_code(ns)) and not _FENCE.match(text, ns, ne):
                    a, b = para(ns)
                    paras.setdefault(a, b)
                break
            ns = ne + 1
    spans: list[tuple[int, int]] = []
    for ls in sorted(paras):
        pe = paras[ls]
        mark = _LINE_MARK.match(text, ls, pe)
        body = mark.end() if mark else ls
        while pe > body and text[pe - 1].isspace():
            pe -= 1
        if pe > body:
            _split_paragraph(text, body, pe, spans)
    return spans


def span_index_at(spans: list[tuple[int, int]], pos: int) -> int:
    """Index of the span containing offset ``pos`` (binary search), or -1 when ``pos`` is in no span."""
    lo, hi = 0, len(spans) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        s, e = spans[mid]
        if pos < s:
            hi = mid - 1
        elif pos >= e:
            lo = mid + 1
        else:
            return mid
    return -1


def quote(text: str, start: int, end: int, *, focus: int | None = None, limit: int = QUOTE_LIMIT) -> str:
    """A verbatim slice of ``text[start:end]`` of at most ``limit`` characters, ends stripped of whitespace.

    When the span is longer, the window starts at ``start`` unless ``focus`` (offset of the phrase that
    matters) would then sit in the last 100 characters; the window then starts 100 characters before it.
    """
    if end - start > limit:
        if focus is not None and focus > start + limit - 100:
            start = max(start, min(focus - 100, end - limit))
        end = start + limit
    return text[start:end].strip()


def is_list_item(line: str) -> bool:
    """True when ``line`` starts with a markdown bullet or a number/letter list label."""
    return bool(_LIST_ITEM.match(line))
