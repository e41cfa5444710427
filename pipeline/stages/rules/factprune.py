"""Pruning rules for Established Facts: what the Decision Log already says, and several facts about one finding
(DESIGN.md "Agent State file": each section says a thing once — a decision is logged in the Decision Log, a
fact in Established Facts, "one fact per line").

Two rules, both pure functions over text and offsets:

* **Restated decision** (``restates_decisions``): a user sentence whose span overlaps the evidence quote of
  a decision the user made (origins ``USER_ORIGINS``, cited event = the same user prompt) is not repeated as
  a constraint when it only picks or rules out that decision's option.  It is kept when it states a standing
  rule beyond the decision: a generalising word (never, always, must, only, at most, at least, every time,
  under no circumstances, not allowed, forbidden, no more than, "we don't…"), a class rather than one option
  (any, anything, new, extra, additional), or a directive clause whose object the decisions do not name
  ("don't touch the payments module" when the decision is "edit .../gateway.py").  The sentence is split into
  clauses at ``, ; :`` and " - "; an interjection clause ("no", "ok", "looks good") or a reason clause
  ("that's a separate ticket", "it belongs to…", "because …") says nothing to keep; a directive clause is
  covered when its content words, directive verbs aside ("don't", "use", "add", "leave", "switch to"…), are
  all among the content words of the decisions' ``what``.
* **Same finding** (``same_finding`` / ``better``): two facts are about the same finding when they share a
  *distinctive* token (a number of 2+ digits, a path, a file name, a dotted/snake_case/kebab-case/CamelCase
  identifier, a letters-and-digits id such as a commit hash, a code span), the smaller set of distinctive
  tokens is inside the larger, the shared ones are specific (two or more, or one 3+ digit number, path, file
  name, dotted/snake_case identifier or letters-and-digits id; a bare CamelCase word may be a product name),
  and the facts share a content word outside the shared tokens (a path's own words do not count, so two
  findings about one file stay apart).  Of two such facts the more informative is kept: the one that states
  the resolution ("found it", "root cause", "turns out", "X, not Y", "listens on 6380"), then the one with
  more distinctive tokens, then more content words, then the later one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.text import tokens
from pipeline.state.model import Decision

#: decision origins that come from a user's own words (``pipeline.stages.rules.decisions`` module docstring)
USER_ORIGINS = frozenset({"user-rejection", "user-approval", "user", "explicit"})

_GENERAL = lazy_re(
    r"\b(?:never|always|must|mustn't|only|at\s+most|at\s+least|no\s+more\s+than|under\s+no\s+circumstances|"
    r"not\s+allowed|forbidden|every\s+time|whenever|from\s+now\s+on|anywhere|anymore|"
    r"we\s+(?:don't|do\s+not|never)|any|anything|new|extra|additional)\b",
    re.I,
)
_CLAUSE_SPLIT = lazy_re(r"[,;:]\s+|\s+[-–—]\s+")
_INTERJECTION = lazy_re(
    r"^(?:no(?:pe)?|nah|yes|yeah|yep|ok(?:ay)?|sure|fine|good|great|perfect|right|hmm|well|actually|"
    r"looks\s+good|sounds\s+good|lgtm|thanks?(?:\s+you)?|please)[.!]*$",
    re.I,
)
_REASON = lazy_re(
    r"^(?:that'?s|thats|that|it'?s|its|it|this|they|those|because|since|as\s+(?:it|that|this|we)|which|so\s+that|"
    r"otherwise|owned\s+by)\b",
    re.I,
)
#: words that only carry the directive, not its object ("don't use X", "leave X as is", "switch to X")
_DIRECTIVE = frozenset(
    """don t do not please just use go going pick choose chose prefer switch stick leave keep change chang drop
    add edit touch remove install
    try instead rather let s stay make sure want need as is isn won wouldn shouldn i d we re ll""".split()
)
_BACKTICK = lazy_re(r"`([^`\n]+)`")
_IDENT = lazy_re(
    r"(?<![\w./-])(?:[A-Za-z0-9_.~-]*[/\\][\w./\\-]+|\.[A-Za-z][\w-]*(?:\.[\w-]+)*|[A-Za-z_][\w-]*\.[A-Za-z][\w.]*|[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+|"
    r"[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{5,})(?![\w])"
)
_PLAIN_CODE = lazy_re(r"[\w.-]+")
_NUMBER = lazy_re(r"(?<![\w.])\d[\d,.]*\d(?![\w])|(?<![\w.])\d{2,}")
_NAMES_ONE = lazy_re(r"[./\\_]|\d")
_FILE_LINE = lazy_re(r"(\.[A-Za-z]\w{0,4}):\d+(?:[-–]\d+)?")  # "cache.py:9-11" -> "cache.py"
_ALNUM = lazy_re(r"[a-z0-9]", re.I)
_RESOLVED = lazy_re(
    r"\b(?:found\s+it|found\s+that|turns?\s+out|turned\s+out|root\s+cause|the\s+fix\s+(?:is|was)|fixed\s+by|"
    r"(?:runs|listens|lives|is\s+running|is\s+listening)\s+on\s+(?:port\s+)?`?\d+)\b|"
    r"`?[\w.:/-]*\d[\w.:/-]*`?,?\s+not\s+`?[\w.:/-]*\d",
    re.I,
)


def _span_of(text: str, quote: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` at which ``quote`` occurs in ``text``."""
    out: list[tuple[int, int]] = []
    if not quote:
        return out
    at = text.find(quote)
    while at >= 0:
        out.append((at, at + len(quote)))
        at = text.find(quote, at + 1)
    return out


def _clause_covered(clause: str, covered: frozenset[str]) -> bool:
    words = tokens(clause) - _DIRECTIVE
    return not words or words <= covered


def restates_decisions(sentence: str, start: int, end: int, event_text: str, decisions: Sequence[Decision]) -> bool:
    """Whether the user sentence ``event_text[start:end]`` (cleaned text ``sentence``) only restates decisions.

    ``decisions`` are the ``Decision`` entries whose evidence cites this same event and whose origin is in
    ``USER_ORIGINS`` (the caller filters).  True when the sentence's span overlaps one of their evidence
    quotes (character offsets in ``event_text``) and it states no standing rule beyond them (module rule).
    """
    inside = [
        d for d in decisions
        if d.evidence is not None and any(a < end and start < b for a, b in _span_of(event_text, d.evidence.quote))
    ]
    if not inside or _GENERAL.search(sentence):
        return False
    covered = frozenset().union(*(tokens(d.what) for d in inside))
    for clause in _CLAUSE_SPLIT.split(sentence.strip().rstrip(".!")):
        clause = clause.strip()
        if not clause or _INTERJECTION.match(clause) or _REASON.match(clause):
            continue
        if not _clause_covered(clause, covered):
            return False
    return True


@lru_cache(maxsize=4096)
def distinctive(text: str) -> frozenset[str]:
    """Distinctive tokens of ``text``, lower case: numbers of 2+ digits, paths and file names (a file's line
    suffix ``:9-11`` dropped), dotted/snake/kebab/CamelCase identifiers and dotfiles, the identifiers inside code
    spans and a one-word code span itself."""
    out: set[str] = set()
    text = _FILE_LINE.sub(r"\1", text)
    for m in _BACKTICK.finditer(text):
        out.update(w.lower() for w in _IDENT.findall(m.group(1)) if _ALNUM.search(w))
        code = m.group(1).strip()
        if 2 < len(code) <= 40 and _PLAIN_CODE.fullmatch(code) and _ALNUM.search(code):
            out.add(code.lower())  # a name the writer marked as code (`reqwest`, `scolor`)
    for m in _IDENT.finditer(text):
        word = m.group(0).rstrip(".,;:)(").lower()
        if len(word) > 2 and _ALNUM.search(word) and not word.startswith(("e.g", "i.e")) and not _plain_word(
                m.group(0).rstrip(".,;:)(")):
            out.add(word)
    for m in _NUMBER.finditer(text):
        out.add(m.group(0).replace(",", ""))
    return frozenset(out)


#: hyphenated words of ordinary English prose: no names of anything
_COMMON_COMPOUNDS = frozenset(
    """follow-up follow-ups pre-existing built-in real-time top-level high-level low-level end-to-end up-to-date
    read-only long-running non-blocking side-by-side one-time open-source third-party well-known so-called e-mail
    re-run set-up sign-in log-in opt-in check-in step-by-step in-place in-memory on-demand out-of-the-box
    client-side server-side full-stack back-end front-end user-facing hard-coded hardcoded re-enable re-enabled
    non-trivial self-contained cross-platform multi-line single-line""".split()
)


def _plain_word(word: str) -> bool:
    """Whether an identifier-shaped token is ordinary prose: a common hyphenated word, or two words joined by a
    slash ("and/or", "update/reinstall") that name no path (no dot, no leading or second slash)."""
    if word.lower() in _COMMON_COMPOUNDS:
        return True
    if "/" in word and word.count("/") == 1 and "." not in word and not word.startswith(("/", "~")):
        head, _, tail = word.partition("/")
        return head.isalpha() and tail.isalpha() and head.islower() and tail.islower()  # INCR/EXPIRE names commands
    return False


def _specific(shared: frozenset[str]) -> bool:
    """Two shared tokens, or one that names one thing: a 3+ digit number, a path, file name, dotted or
    snake_case identifier, or a letters-and-digits id (a bare CamelCase or kebab-case word may be a product
    name that many facts mention)."""
    if len(shared) >= 2:
        return True
    return any(len(w) >= 3 if w.replace(".", "").isdigit() else bool(_NAMES_ONE.search(w)) for w in shared)


def same_finding(a: str, b: str) -> bool:
    """Whether facts ``a`` and ``b`` are about the same finding (module rule "Same finding")."""
    da, db = distinctive(a), distinctive(b)
    if not da or not db:
        return False
    shared = da & db
    if not shared or not (da <= db or db <= da) or not _specific(shared):
        return False
    return bool(tokens(_without(a, shared)) & tokens(_without(b, shared)))


def _without(text: str, words: frozenset[str]) -> str:
    """``text`` with every occurrence of ``words`` (case-insensitive) blanked out."""
    pattern = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.sub(pattern, " ", _FILE_LINE.sub(r"\1", text), flags=re.I)


def resolves(text: str) -> bool:
    """Whether a fact states the resolution of a finding ("found it", "root cause", "turns out", "X, not Y")."""
    return bool(_RESOLVED.search(text))


def better(a: str, b: str) -> bool:
    """Whether fact ``a`` is more informative than fact ``b`` (``a`` is the later one; ties go to it)."""
    ka = (bool(_RESOLVED.search(a)), len(distinctive(a)), len(tokens(a)))
    kb = (bool(_RESOLVED.search(b)), len(distinctive(b)), len(tokens(b)))
    return ka >= kb
