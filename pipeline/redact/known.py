"""Values known to be secret, masked at every occurrence (issue 11, part 2: "a value found once is masked only
there").

A rule finds a secret where its shape is: ``password: X``, ``aws_secret_access_key = Y``, ``mysql -pZ``.  The same
value elsewhere — a prose sentence ("log in with X"), the line after its key id, a rewritten Decision Log line
(``password - X``) — has no shape left.  ``secret_values`` collects the values of a scan's findings;
``known_candidates`` finds every occurrence of them in a text, as raw candidates for ``pipeline.redact.scan``.

Not collected (issue 22 item 3: mask the assignment, not the word everywhere): values shorter than ``MIN_KNOWN``
characters, values without a letter (``3306:3306``, a date: a kept number — a port, a ticket id — must never be masked
because it happened to be flagged once), ordinary words and names (letters only, one case or capitalised, shorter
than ``MIN_WORD_KNOWN``: ``POSTGRES_PASSWORD=postgres`` masks that value, and ``docker compose up -d postgres`` stays
readable), placeholders.  A private key block is
collected as its base64 lines of 24+ characters (a line of it quoted elsewhere is the key too).  An occurrence
glued to a longer word (``X`` inside ``Xy``) is not one.
"""

from __future__ import annotations

from pipeline.redact.lazy import lazy_pattern
from pipeline.redact.values import is_placeholder

MIN_KNOWN = 6
MIN_WORD_KNOWN = 12
"""A value of letters alone (``postgres``, ``admin``, ``Dragon``) is masked everywhere only from this length on: shorter,
it is a service, a default or a word of the text as often as a secret."""
PRIORITY = 150  # after the rules that found the value (its type wins there), before PII (200)
_B64_RUN = lazy_pattern(r"[A-Za-z0-9+/=]{24,}")


def secret_values(text: str, findings: list) -> dict[str, str]:
    """``{value: type}`` of ``findings`` (``pipeline.redact.Finding``s of a scan of ``text``), see the docstring."""
    out: dict[str, str] = {}
    for f in findings:
        value = text[f.start : f.end]
        if f.type == "private-key":
            for run in _B64_RUN().findall(value.replace("\\n", "\n").replace("\\r", "\n")):
                out.setdefault(run, f.type)
            continue
        value = value.strip()
        if len(value) < MIN_KNOWN or is_placeholder(value) or not any(c.isalpha() for c in value) or _word(value):
            continue
        out.setdefault(value, f.type)
    return out


def _word(value: str) -> bool:
    """An ordinary word or name: letters (and ``-``/``_``/``.`` between them) in one case or capitalised, shorter
    than ``MIN_WORD_KNOWN``."""
    letters = value.replace("-", "").replace("_", "").replace(".", "")
    if not letters.isalpha() or len(value) >= MIN_WORD_KNOWN:
        return False
    return letters.islower() or letters.isupper() or (letters[0].isupper() and letters[1:].islower())


def known_candidates(text: str, values: dict[str, str]) -> list[tuple[int, int, int, str]]:
    """``(start, end, PRIORITY, type)`` for every occurrence in ``text`` of a value of ``values``."""
    out = []
    size = len(text)
    for value, kind in values.items():
        at = text.find(value)
        if at < 0:
            continue
        first, last = value[0].isalnum(), value[-1].isalnum()
        n = len(value)
        while at >= 0:
            end = at + n
            if not (first and at > 0 and text[at - 1].isalnum()) and not (last and end < size and text[end].isalnum()):
                out.append((at, end, PRIORITY, kind))
            at = text.find(value, at + 1)
    return out
