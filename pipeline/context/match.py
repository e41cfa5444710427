"""How the merge recognises the same thing said twice (DESIGN.md "Merge rules"; issue 26 item 2).

* ``resolves``: a later state's Done item shows a Deferred-Debt item (or an open question) done — the same text
  (case, whitespace and final punctuation aside), the debt's ``#<issue>`` named, the same command in backticks run
  without failing ("Get `make x` succeeding" / "Ran `make x` (succeeded)"), or every word of the item (stemmed;
  at least three) in the Done item, and for CJK text every run of the item's characters in it;
* ``reverses``: a later decision reverses an earlier one — opposite status on the same choice, the choice compared
  without leading choice verbs and articles ("use Redis for locks" = "Redis for locks");
* ``note_key``: the identity of a Notes bullet, so a fact already recorded is not appended again.
"""

from __future__ import annotations

import re

from pipeline.context.keys import STOP_WORDS, slug
from pipeline.context.parse import norm

_BACKTICK = re.compile(r"`([^`]+)`")
_FAILED = re.compile(r"\b(?:fail(?:s|ed|ing)?|error|blocked|not\s+run)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uac00-\ud7af\u3040-\u30ff]{2,}")
_SUFFIX = re.compile(r"(?:ing|ed|es|s|e)$")
_CHOICE_LEAD = re.compile(
    r"^(?:(?:we\s+)?(?:use|using|adopt|adopting|go\s+with|going\s+with|switch\s+to|switching\s+to|keep|keeping|"
    r"stay\s+with|stick\s+with|prefer|choose|pick|usar|utilizar|adotar|adoptar)\s+)",
    re.IGNORECASE,
)
_STATUS = re.compile(r"^(APPROVED|REJECTED)\s*:\s*(?P<what>.*?)(?:\s+-\s+.*)?$", re.S)
MIN_WORDS = 3


def match_key(text: str) -> str:
    """Whitespace-normalized, casefolded, final ``.?!`` off: ``"Push the branch."`` = ``"push the  branch"``."""
    return norm(text).casefold().rstrip(" .?!。？！")


def _stems(text: str) -> set[str]:
    words = [w.casefold() for w in _WORD.findall(text) if not _CJK_RUN.fullmatch(w)]
    return {_SUFFIX.sub("", w) or w for w in words if w.casefold() not in STOP_WORDS and len(w) > 1}


def resolves(what: str, issue: str | None, done: str) -> bool:
    """True when the Done item ``done`` shows the item ``what`` (with debt issue number ``issue``) done (module
    docstring)."""
    if match_key(what) == match_key(done):
        return True
    if issue and re.search(rf"(?<![\w#])#{re.escape(issue)}(?!\w)", done):
        return True
    commands = _BACKTICK.findall(what)
    if commands and commands[0].strip() in (c.strip() for c in _BACKTICK.findall(done)) and not _FAILED.search(
            _BACKTICK.sub("", done)):
        return True
    mine, theirs = _stems(_BACKTICK.sub(" ", what)), _stems(done)
    runs = _CJK_RUN.findall(what)
    if runs and not all(run in done for run in runs):
        return False
    if len(mine) >= MIN_WORDS and mine <= theirs:
        return True
    return bool(runs) and not mine - theirs and sum(len(r) for r in runs) >= 4


def decision_core(text: str) -> tuple[str | None, str]:
    """``(status, choice)`` of a Decisions entry text ``<STATUS>: <what> - <reasoning>``: the choice is the slug of
    *what* without a leading choice verb (use, adopt, switch to, keep …) and articles; status None when the text
    has none."""
    match = _STATUS.match(norm(text))
    if match is None:
        return None, slug(_CHOICE_LEAD.sub("", norm(text)), 8, max_chars=None)
    return match.group(1), slug(_CHOICE_LEAD.sub("", match["what"]), 8, max_chars=None)


def reverses(old: str, new: str) -> bool:
    """True when the Decisions text ``new`` reverses ``old``: both carry a status, the statuses differ and the
    choices are the same (``decision_core``)."""
    old_status, old_core = decision_core(old)
    new_status, new_core = decision_core(new)
    return bool(old_status and new_status and old_status != new_status and old_core == new_core
                and not old_core.startswith("item-"))


def note_key(text: str) -> str:
    """The identity of a Notes line: without its bullet, whitespace-normalized, casefolded, final punctuation off."""
    return match_key(re.sub(r"^\s*[-*+]\s+", "", text))
