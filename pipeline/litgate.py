"""Required literals of a regular expression, and an alternation that only runs the branches a text can match.

Python's ``re`` tries every branch of an alternation at every position of the text: a screen of 45 phrasings
(``untrusted.ADDRESS``) costs about 1 µs per character, 5 s of a 5 MB transcript of user prose.  Most branches
hold a literal that every match must contain (``\\bin\\s+(?:your|the\\s+final)\\s+summary\\b`` cannot match a text
without ``summary``), and a substring test costs nanoseconds.  So:

* ``required_literals(source, flags)`` reads the pattern with the standard library's own parser and returns, for
  each top-level branch, a set of case-folded literals at least one of which occurs in any text the branch matches
  (or None for a branch that has no such literal);
* ``gated_re(source, flags)`` compiles each top-level branch on its own and, for a given text, searches only the
  branches whose literals occur in it.  The match it returns is the one ``re.compile(source, flags).search``
  returns — the leftmost, and among branches matching at that position the first — so callers see no difference
  but the time (``tests/test_litgate.py`` checks both the literals and the equivalence).

The literal test folds case the way ``re.IGNORECASE`` compares characters: ASCII text by ``str.lower``, other text
by ``str.casefold`` after mapping U+0130 (İ) and U+0131 (dotless ı), which ``re`` matches to ``i``, to ``i``.
"""

from __future__ import annotations

import re

from pipeline import recache
from re import _parser
from re import _constants as C  # the parser's opcodes (standard library, Python >= 3.11)

_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT))

_WORD = re.compile(r"\w+")
#: characters re.IGNORECASE matches to a letter their full case folding does not contain: İ and dotless ı to i
_SIMPLE = {0x130: "i", 0x131: "i"}
def _planner_version() -> str:
    """A checksum of this module's source: a plan kept by ``pipeline.recache`` is only reused by the litgate.py
    that made it (a fixed rule takes effect at once, whatever the table holds)."""
    import zlib

    try:
        with open(__file__, "rb") as fh:
            return f"{zlib.crc32(fh.read()):08x}"
    except OSError:
        return "?"


_PLANNER = _planner_version()
_CACHE_MAX = 512  # texts whose fold and words are kept (a sentence is cut out anew by each section that reads it)
_folds: dict[str, tuple[str, frozenset[str] | None]] = {}


def _folded(text: str) -> tuple[str, frozenset[str] | None]:
    """``(fold(text), its words)``: the words (``\\w+`` runs) only when ``text`` is ASCII, else None (then
    whole-word literals are tested as substrings: case folding outside ASCII may change where words end)."""
    got = _folds.get(text)
    if got is None:
        if len(_folds) >= _CACHE_MAX:
            _folds.clear()
        if text.isascii():
            low = text.lower()
            got = (low, frozenset(_WORD.findall(low)))
        else:
            got = (text.translate(_SIMPLE).casefold(), None)
        _folds[text] = got
    return got


def fold(text: str) -> str:
    """``text`` case-folded for the literal test (see the module rules)."""
    return _folded(text)[0]


def _fold_literal(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_SIMPLE).casefold()


#: a required literal: its case-folded text and whether every match holds it as a whole word (``\\b`` or a
#: non-word character on both sides), which the gate then tests against the text's words instead of its characters
Lit = tuple[str, bool]

_BOUNDARY_AT = {C.AT_BOUNDARY, C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_BEGINNING_LINE, C.AT_END,
                C.AT_END_STRING, C.AT_END_LINE}
_NONWORD_CATEGORIES = {C.CATEGORY_SPACE, C.CATEGORY_NOT_WORD, C.CATEGORY_LINEBREAK}


def _score(req: frozenset[Lit]) -> tuple[int, int]:
    """Higher is more selective: the shortest literal's length (a whole word counts as 3 more), then fewer."""
    return (min(len(t) + (3 if w else 0) for t, w in req), -len(req))


def _is_word_text(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c == "_" for c in text)


def _separates(op, av) -> bool:
    """Whether the item at ``(op, av)`` guarantees a non-word character (or the text's edge) next to it."""
    if op is C.AT:
        return av in _BOUNDARY_AT
    if op is C.LITERAL:
        return not _is_word_text(chr(av))
    if op is C.IN:
        return bool(av) and all(
            (o is C.LITERAL and not _is_word_text(chr(v))) or (o is C.CATEGORY and v in _NONWORD_CATEGORIES)
            for o, v in av
        )
    if op in _REPEATS:
        lo, _hi, body = av
        return lo >= 1 and len(body) == 1 and _separates(*body[0])
    return False


def _seq(items, left: bool = False, right: bool = False) -> list[frozenset[Lit]]:
    """Every required set found in a sequence of parsed items (each literal run, each group's own sets, each
    branch's union): a text the sequence matches holds one literal of each set.  ``left``/``right``: whether a
    non-word character (or an edge) is certain just outside the sequence."""
    items = list(items)
    out: list[frozenset[Lit]] = []
    run: list[str] = []
    run_start = 0

    def bounded_before(k: int) -> bool:
        return left if k == 0 else _separates(*items[k - 1])

    def bounded_after(k: int) -> bool:
        return right if k == len(items) - 1 else _separates(*items[k + 1])

    def flush(end: int) -> None:
        if run:
            text = "".join(run)
            word = _is_word_text(text) and bounded_before(run_start) and bounded_after(end)
            out.append(frozenset({(_fold_literal(text), word)}))
            run.clear()

    for k, (op, av) in enumerate(items):
        if op is C.LITERAL:
            if not run:
                run_start = k
            run.append(chr(av))
            continue
        flush(k - 1)
        out.extend(_item(op, av, bounded_before(k), bounded_after(k)))
    flush(len(items) - 1)
    return [req for req in out if req and all(t for t, _ in req)]


def _best(reqs: list[frozenset[Lit]]) -> frozenset[Lit] | None:
    return max(reqs, key=_score) if reqs else None


def _item(op, av, left: bool, right: bool) -> list[frozenset[Lit]]:
    if op is C.SUBPATTERN:
        return _seq(av[-1], left, right)
    if op is C.BRANCH:
        union: set[Lit] = set()
        for alt in av[1]:
            req = _best(_seq(alt, left, right))
            if not req:
                return []
            union |= req
        return [frozenset(union)]
    if op in _REPEATS:
        lo, hi, body = av
        if lo < 1:
            return []
        return _seq(body, left, right) if hi == 1 else _seq(body)
    if op is C.ASSERT:  # a positive lookaround: its text is in the string too
        return _seq(av[1])
    if op is C.IN:  # a small class of plain characters, each one a literal
        chars = [chr(v) for o, v in av if o is C.LITERAL]
        if chars and len(chars) == len(av) and len(chars) <= 4:
            return [frozenset((_fold_literal(c), False) for c in chars)]
    return []


def split_branches(source: str, flags: int = 0) -> list[str] | None:
    """The top-level branches of ``source`` as source texts, or None when the pattern is not a plain alternation
    of them (global inline flags, a single branch).  An enclosing ``(?:…)`` is looked through, and so is a
    branch that is itself one such group (``(?:a|b)|c`` gives ``a``, ``b``, ``c``: the same ordered choice)."""
    verbose = bool(flags & re.VERBOSE)
    body = source.lstrip() if verbose else source  # outside VERBOSE a space is a literal: never strip it
    if body.startswith("(?") and not body.startswith("(?:"):
        return None  # global inline flags or a named group at the top: keep the pattern whole
    if body.startswith("(?:"):
        end = next((i for i, d in _structure(body, verbose) if d == 0), -1)
        if end > 0 and (end == len(body) - 1 or (verbose and body[end + 1:].isspace())):
            body = body[3:end]
    parts: list[str] = []
    start = 0
    for i, depth in _structure(body, verbose):
        if depth == 0 and body[i] == "|":
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    if len(parts) < 2:
        return None
    flat: list[str] = []
    for part in parts:
        flat.extend(split_branches(part, flags) or [part])
    return flat


def _class_end(s: str, i: int) -> int:
    """Index just past the character class opening at ``s[i] == '['``."""
    j = i + 1
    if j < len(s) and s[j] == "^":
        j += 1
    if j < len(s) and s[j] == "]":
        j += 1
    while j < len(s) and s[j] != "]":
        j += 2 if s[j] == "\\" else 1
    return j + 1


def _structure(s: str, verbose: bool):
    """``(index, depth)`` of each ``(``, ``)`` and ``|`` of pattern source ``s`` outside escapes, character classes
    and (``verbose``) comments; depth counts the groups open after a ``(`` and before a ``)`` or ``|``."""
    depth, i, n = 0, 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(s, i)
            continue
        if verbose and c == "#":
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "(":
            depth += 1
            yield i, depth
        elif c == ")":
            depth -= 1
            yield i, depth
        elif c == "|":
            yield i, depth
        i += 1


def required_literals(source: str, flags: int = 0) -> list[list[frozenset[str]]]:
    """For each top-level branch of ``source`` (the whole pattern when it has one branch), the sets of case-folded
    literals it requires, most selective first: every text the branch matches holds one literal of each set
    (an empty list: no literal is required).

    Raises ``re.error`` when ``source`` is not a valid pattern."""
    branches = split_branches(source, flags) or [source]
    return [sorted(_seq(_parser.parse(b, flags)), key=_score, reverse=True) for b in branches]


GATE_SETS = 2  # required sets tested per branch: more rarely rejects more, and every literal costs a test


def _gate_sets(reqs: list[frozenset[Lit]]) -> list[frozenset[Lit]]:
    """The sets a branch's gate tests: the most selective one, and the next ones while they stay selective (no
    literal shorter than 3 characters but whole words)."""
    ordered = sorted(reqs, key=_score, reverse=True)
    return ordered[:1] + [r for r in ordered[1:GATE_SETS] if _score(r)[0] >= 3]


def plan(source: str, flags: int = 0) -> tuple:
    """What a ``GatedAlternation`` of ``source`` tests, as plain data: ``(branches, gate, nonempty, word literals,
    substring literals, all literals)``; ``branches`` lists ``(branch source, its gate)`` when the top-level
    branches hold no group (then they are searched apart), else is empty; a gate is a tuple of literal sets."""
    words: set[str] = set()
    subs: set[str] = set()

    def gate(reqs: list[frozenset[Lit]]) -> tuple[frozenset[str], ...]:
        for req in reqs:
            for lit, word in req:
                (words if word else subs).add(lit)
        return tuple(frozenset(t for t, _ in req) for req in reqs)

    parts = split_branches(source, flags)
    try:  # a branch may not stand alone (a backreference to another branch's group): keep the pattern whole
        trees = [_parser.parse(part, flags) for part in parts] if parts else []
    except re.error:
        trees = []
    branches: list[tuple[str, tuple[frozenset[str], ...]]] = []
    if trees and all(tree.state.groups == 1 for tree in trees):  # no group in any branch: search them apart
        reqs = [_seq(tree) for tree in trees]
        branches = [(part, gate(_gate_sets(req))) for part, req in zip(parts, reqs)]
        bests = [_best(req) for req in reqs]
        whole = gate([frozenset().union(*bests)]) if all(bests) else ()
        nonempty = all(tree.getwidth()[0] > 0 for tree in trees)
    else:
        whole = gate(_gate_sets(_seq(_parser.parse(source, flags))))
        nonempty = False
    return (tuple(branches), whole, nonempty, frozenset(words - subs), tuple(sorted(subs, key=len, reverse=True)),
            tuple(sorted(words | subs, key=len, reverse=True)))


class GatedAlternation:
    """A drop-in ``re.Pattern`` (``search``, ``match``, ``fullmatch``, ``finditer``, ``findall``, ``sub``, ``subn``,
    ``split``; ``pattern``, ``flags``) that first tests the literals the pattern requires (see the module rules):
    a text without them gets "no match" at the cost of a few substring tests.

    ``search``/``match``/``fullmatch`` of a pattern whose top-level branches hold no groups run only the branches
    whose literals occur; the other methods, and patterns with groups, run the whole pattern once the text holds
    the literals every match needs.  Results are those of ``re.compile(source, flags)``.  Raises ``re.error`` on
    first use when the source is not a valid pattern."""

    __slots__ = ("pattern", "flags", "_compiled", "_branches", "_gate", "_word_lits", "_sub_lits", "_all_lits",
                 "_nonempty", "_ready")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None
        self._branches: list[list] = []  # [parsed branch or its compiled pattern, gate, source]
        self._gate: tuple[frozenset[str], ...] = ()
        self._ready = False

    @property
    def compiled(self) -> re.Pattern[str]:
        """The whole pattern, compiled (on first use)."""
        if self._compiled is None:
            self._compiled = recache.compile(self.pattern, self.flags)
        return self._compiled

    def _prepare(self) -> None:
        """The branches' gates, the whole pattern's gate, whether a branch can match empty (``plan``, kept between
        runs by ``pipeline.recache``).  A branch is compiled the first time a text passes its gate (``_branch``)."""
        key = ("litgate", _PLANNER, self.pattern, int(self.flags))
        got = recache.memo(key, lambda: plan(self.pattern, self.flags))
        if not (isinstance(got, tuple) and len(got) == 6):  # a damaged table: plan afresh
            got = recache.replace(key, plan(self.pattern, self.flags))
        branches, self._gate, self._nonempty, self._word_lits, self._sub_lits, self._all_lits = got
        self._branches = [[None, gate, part] for part, gate in branches]
        self._ready = True

    def _branch(self, k: int) -> re.Pattern[str]:
        entry = self._branches[k]
        pat = entry[0]
        if pat is None:
            pat = entry[0] = recache.compile(entry[2], self.flags)
        return pat

    def warm(self) -> None:
        """Compile the whole pattern and every branch now (``python -m pipeline.recache`` fills its table)."""
        if not self._ready:
            self._prepare()
        self.compiled
        for k in range(len(self._branches)):
            self._branch(k)

    def _present(self, text: str) -> set[str]:
        """The literals of this pattern's gates that occur in ``text``."""
        folded, words = _folded(text)
        if words is None:
            return {lit for lit in self._all_lits if lit in folded}
        present = {lit for lit in self._sub_lits if lit in folded}
        present.update(words & self._word_lits)
        return present

    def _passes(self, text: str, endpos: int | None = None) -> set[str] | None:
        """The literals of this pattern's gates present in ``text`` (up to ``endpos``: re sees the text end there,
        for ``\\b`` and ``$``) when it holds those every match of the whole pattern needs, else None."""
        if not self._ready:
            self._prepare()
        if endpos is not None and endpos < len(text):
            text = text[:max(endpos, 0)]
        present = self._present(text)
        return present if all(not present.isdisjoint(req) for req in self._gate) else None

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        """As ``re.Pattern.search``: the leftmost match, and among branches matching there the first."""
        present = self._passes(text, endpos)
        if present is None:
            return None
        end = len(text) if endpos is None else endpos
        if not self._branches:
            return self.compiled.search(text, pos, end)
        best: re.Match[str] | None = None
        for k, (_pat, gate, _src) in enumerate(self._branches):
            for req in gate:
                if present.isdisjoint(req):
                    break
            else:
                m = self._branch(k).search(text, pos, end)
                if m is not None and (best is None or m.start() < best.start()):
                    best = m
                    if m.start() == pos:
                        break
        return best

    def _anchored(self, how: str, text: str, pos: int, endpos: int | None) -> re.Match[str] | None:
        present = self._passes(text, endpos)
        if present is None:
            return None
        end = len(text) if endpos is None else endpos
        if not self._branches:
            return getattr(self.compiled, how)(text, pos, end)
        for k, (_pat, gate, _src) in enumerate(self._branches):
            if all(not present.isdisjoint(req) for req in gate):
                m = getattr(self._branch(k), how)(text, pos, end)
                if m is not None:
                    return m
        return None

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        """As ``re.Pattern.match``: the first branch that matches at ``pos``."""
        return self._anchored("match", text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        """As ``re.Pattern.fullmatch``."""
        return self._anchored("fullmatch", text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None):
        """As ``re.Pattern.finditer``: successive leftmost matches, each search starting where the last match ended.
        With branches that never match the empty string, only the branches whose literals occur are searched,
        each again only once its last match lies behind."""
        present = self._passes(text, endpos)
        if present is None:
            return iter(())
        end = len(text) if endpos is None else endpos
        if not self._branches or not self._nonempty:
            return self.compiled.finditer(text, pos, end)
        return self._iterate(text, pos, end, present)

    def _iterate(self, text: str, pos: int, end: int, present: set[str]):
        live = [self._branch(k) for k, (_pat, gate, _src) in enumerate(self._branches)
                if all(not present.isdisjoint(req) for req in gate)]
        ahead: list[re.Match[str] | None] = [None] * len(live)  # each branch's leftmost match at or after pos
        done = [False] * len(live)
        while pos <= end:
            best: re.Match[str] | None = None
            for k, pat in enumerate(live):
                if done[k]:
                    continue
                m = ahead[k]
                if m is None or m.start() < pos:
                    m = ahead[k] = pat.search(text, pos, end)
                    if m is None:
                        done[k] = True
                        continue
                if best is None or m.start() < best.start():
                    best = m
            if best is None:
                return
            yield best
            pos = best.end()

    def findall(self, text: str, pos: int = 0, endpos: int | None = None) -> list:
        """As ``re.Pattern.findall`` (the pattern's groups decide its items, as there)."""
        if self._passes(text, endpos) is None:
            return []
        if self._branches and self._nonempty:
            return [m.group(0) for m in self.finditer(text, pos, endpos)]
        return self.compiled.findall(text, pos, len(text) if endpos is None else endpos)

    def sub(self, repl, text: str, count: int = 0) -> str:
        """As ``re.Pattern.sub``."""
        return self.compiled.sub(repl, text, count) if self._passes(text) is not None else text

    def subn(self, repl, text: str, count: int = 0) -> tuple[str, int]:
        """As ``re.Pattern.subn``."""
        return self.compiled.subn(repl, text, count) if self._passes(text) is not None else (text, 0)

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        """As ``re.Pattern.split``."""
        return self.compiled.split(text, maxsplit) if self._passes(text) is not None else [text]

    def __repr__(self) -> str:  # noqa: D105
        return f"gated_re({self.pattern!r}, {self.flags!r})"


def gated_re(source: str, flags: int = 0) -> GatedAlternation:
    """``re.compile(source, flags)``, compiled on first use like ``pipeline.lazyre.lazy_re``, that skips a text (or
    the branches of the pattern) lacking the literals a match needs (see ``GatedAlternation``)."""
    return GatedAlternation(source, flags)
