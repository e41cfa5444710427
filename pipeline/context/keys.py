"""Deterministic entry keys for CONTEXT.md (issue 5, "Translate": the same decision merged twice lands on the same key).

* A text written ``term: definition`` keeps its term as the key (``Redis port: 6380 in the dev container`` ->
  ``Redis port``), unless the "term" is a generic label (``Note:``, ``Root cause:``, ``Key finding:``…).
* Otherwise the key is a slug of the first ``SLUG_WORDS`` significant words: lowercase, articles and other
  function words dropped, apostrophes dropped, ``_`` turned into ``-``, a path counted as its file name stem
  (``src/shop/cache.py:9`` -> ``cache``), at most ``SLUG_CHARS`` characters
  (``a token bucket in Redis`` -> ``token-bucket-redis``).  Negations (no, not, never, don't) are kept: they
  carry the meaning.  A text with no word at all gets ``item-<8 hex of its SHA-256>``.
* ``assign_keys`` gives distinct texts of one source distinct keys: texts whose slugs collide get longer slugs
  (two more words at a time), then ``-2``, ``-3``… in order.  Equal texts (whitespace-normalized) share a key.
"""

from __future__ import annotations

import hashlib
import re

from pipeline.context.parse import norm

SLUG_WORDS = 4
SLUG_CHARS = 48

STOP_WORDS = frozenset(
    "a an the to of in on at for by with and or but is are was were be been being it its this that these those "
    "we i you our my your me us please can could would should will shall let lets so as from into then just also "
    "actually there theres here do does did has have had which".split()
    # the same function words in Portuguese and Spanish ("no" stays: it is a negation in English)
    + "o os um uma el la los las un una y e é es em en na do da dos das del de que por para com con se".split()
)

GENERIC_LABELS = frozenset(
    "note notes nb fyi fact facts finding findings found cause important update result results summary "
    "conclusion warning caveat gotcha quirk tip answer reason fix todo context observation learned lesson ps "
    "edit constraint rule decision status".split()
    + ["key finding", "found it", "root cause", "heads up", "lesson learned", "side note"]
)

_PATHLIKE = re.compile(r"[\w.@+~-]*(?:/[\w.@+-]+){2,}/?(?::[0-9][0-9-]*)?|[\w.@+~-]*/[\w@+-]+\.\w+(?::[0-9][0-9-]*)?")
"""A path: two or more ``/``, or one and a file extension (``MULTI/EXEC`` and ``feature/rate-limit`` are words)."""
_TOKEN = re.compile(r"[^\W_]+(?:[-_'’][^\W_]+)*")
_TERM = re.compile(r"(?P<term>[^:\n]{1,40}?):[ \t]+(?P<definition>\S.*)")
_LETTER = re.compile(r"[^\W\d_]")
_TERM_FORBIDDEN = re.compile(r"[.,;!?()\[\]{}\"<>=/\\|]")


def slug(text: str, words: int = SLUG_WORDS, *, max_chars: int | None = SLUG_CHARS) -> str:
    """The slug of ``text`` from its first ``words`` significant words (module docstring)."""
    text = _PATHLIKE.sub(lambda m: _stem(m.group(0)), text)
    tokens = [t.replace("'", "").replace("’", "").replace("_", "-") for t in _TOKEN.findall(text.casefold())]
    significant = [t for t in tokens if t not in STOP_WORDS]
    picked: list[str] = []
    for token in significant[:words]:
        if picked and max_chars is not None and len("-".join([*picked, token])) > max_chars:
            break
        picked.append(token if max_chars is None else token[:max_chars])
    if not picked:
        return "item-" + hashlib.sha256(norm(text).encode("utf-8")).hexdigest()[:8]
    return "-".join(picked)


def _stem(path: str) -> str:
    """The file name of ``path`` without extension and line reference: ``src/shop/cache.py:9-11`` -> ``cache``."""
    name = [part for part in path.split(":")[0].split("/") if part]
    return name[-1].split(".")[0] if name else ""


def split_term(text: str) -> tuple[str | None, str]:
    """``(term, definition)`` for a ``term: definition`` text; ``(None, rest)`` otherwise.

    The term is at most 4 words and 40 characters with a letter and without sentence punctuation (so a date or a
    time is no term), and not a generic label; a generic
    label (``Root cause: X``) gives ``(None, "X")`` so the slug is taken from what follows the label.
    """
    match = _TERM.fullmatch(text.strip())
    if match is None:
        return None, text
    term = match["term"].strip()
    bare = term.strip("*_` ").casefold()
    if bare in GENERIC_LABELS:
        return None, match["definition"]
    if len(term.split()) > 4 or _TERM_FORBIDDEN.search(term) or not _LETTER.search(term):
        return None, text
    return term, match["definition"]


def assign_keys(sources: list[str]) -> list[str]:
    """One key per source text, distinct for distinct texts (module docstring); same order as ``sources``."""
    distinct = list(dict.fromkeys(norm(s) for s in sources))
    width = dict.fromkeys(distinct, SLUG_WORDS)
    keys = {s: slug(s) for s in distinct}
    while True:
        groups: dict[str, list[str]] = {}
        for s in distinct:
            groups.setdefault(keys[s], []).append(s)
        clashing = [group for group in groups.values() if len(group) > 1]
        if not clashing:
            break
        grew = False
        for group in clashing:
            for s in group:
                longer = slug(s, width[s] + 2, max_chars=None)
                width[s] += 2
                if longer != keys[s]:
                    keys[s], grew = longer, True
        if not grew:
            for group in clashing:
                for n, s in enumerate(group[1:], 2):
                    keys[s] = f"{keys[s]}-{n}"
            break
    return [keys[norm(s)] for s in sources]
