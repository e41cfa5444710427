"""A harness's compaction summary: is there one, its units, and whether it carries an entry.

Where each harness keeps its summary (the readers turn each into a ``compaction`` event; FORMATS.md):

* Claude Code: the ``isCompactSummary`` user line after a ``compact_boundary`` (empty when the file ends first);
* Codex: ``compacted.payload.message``; a writer that keeps only ``replacement_history`` keeps no summary text
  (the reader writes ``compacted (no summary text; N history items kept)``);
* Copilot CLI: ``session.compaction_complete.data.summaryContent``; the legacy ``session.truncation`` drops
  messages and keeps no summary (the reader writes ``truncation: N messages removed …``);
* opencode: the assistant message with ``summary: true`` / agent ``compaction``;
* Gemini CLI: the ``<state_snapshot>`` of a chat compression;
* a generic ``{role, content}`` JSONL has no compaction records at all.

Units: each non-empty line of the summary is one unit (a bullet, a numbered point, a prose paragraph), read
together with the heading it sits under (the nearest earlier line that is a markdown heading, a ``N. Title:``
line or a line ending in ``:``).  ``carries`` applies the eval probes' matching rule (``evals.score.occurs``:
case-insensitive, whitespace-normalised substring, never inside a longer word) to one unit at a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Harness -> where its transcript keeps the compaction summary (for the reports).
WHERE: dict[str, str] = {
    "claude-code": "the isCompactSummary line after each compaction",
    "codex": "the compacted record's message",
    "copilot": "session.compaction_complete's summaryContent",
    "opencode": "the summary assistant message",
    "gemini": "the <state_snapshot> of a chat compression",
}

#: Reader texts that stand for a compaction without a summary (``pipeline.transcripts.codex`` / ``.copilot``).
_NO_SUMMARY = (
    (re.compile(r"^compacted \(no summary text; (\d+) history items kept\)$"),
     "Codex kept no summary text for this compaction ({0} history items kept)"),
    (re.compile(r"^truncation: (\S+) messages removed"),
     "Copilot CLI truncated the history ({0} messages removed) and keeps no summary"),
)

_HEADING = re.compile(r"^(?:#{1,6}\s+.+|\d+\.\s+[^.]{1,80}:\s*|\*\*[^*]{1,80}\*\*:?\s*|[^\s].{0,80}:\s*)$")
_WS = re.compile(r"\s+")
#: Words that mark a unit (or its heading) as ruling something out.
_REJECTION = re.compile(
    r"\b(?:reject\w*|declin\w*|abandon\w*|ruled? out|rules? out|instead of|rather than|not (?:to )?(?:use|go with|"
    r"adopt)|(?:did|does|do|would|will)(?: not|n'?t) (?:work|help|fit|scale)|won'?t work|dead[- ]ends?|"
    r"dropp?(?:ed|ing)?\b|discard\w*|revert\w*|rolled back|roll back|avoid\w*|decided against|chose not|"
    r"no longer|too (?:complex|slow|fragile|risky|heavy|expensive)|overly|over-?engineered|failed|fails|failing|"
    r"broken|replac\w*|switched (?:away )?from|moved away from|not (?:viable|an option|needed|worth)|"
    r"don'?t|do not|never|skip(?:ped)?|gave up|unsuitable|wrong approach)\b",
    re.IGNORECASE,
)


def missing_reason(text: str, harness: str) -> str | None:
    """Why the compaction event with ``text`` holds no summary to compare with, or None when it holds one."""
    body = text.strip()
    if not body:
        return "the transcript ends before the harness wrote its summary" if harness == "claude-code" else \
            "the compaction record holds no summary text"
    for pattern, message in _NO_SUMMARY:
        m = pattern.match(body)
        if m:
            return message.format(m.group(1))
    return None


def norm(text: str) -> str:
    """Lower case, every whitespace run one space, ends stripped."""
    return _WS.sub(" ", text).strip().lower()


def occurs(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text``: normalised substring that does not start or end inside a word (the
    rule of ``evals.score.occurs``, so ``6380`` does not match ``63800``)."""
    t, s = norm(term), norm(text)
    if not t:
        return False
    start = s.find(t)
    while start >= 0:
        end = start + len(t)
        if (start == 0 or not (t[0].isalnum() and s[start - 1].isalnum())) and \
                (end == len(s) or not (t[-1].isalnum() and s[end].isalnum())):
            return True
        start = s.find(t, start + 1)
    return False


@dataclass(frozen=True, slots=True)
class Unit:
    """One line of a summary (``text``) and the heading it sits under (``heading``, "" at the top)."""

    text: str
    heading: str = ""

    @property
    def rejects(self) -> bool:
        """Whether the unit or its heading uses a rejection word (``_REJECTION``)."""
        return bool(_REJECTION.search(self.text) or _REJECTION.search(self.heading))


def units(text: str) -> list[Unit]:
    """The summary ``text`` cut into ``Unit`` values (module docstring); ``[]`` for blank text."""
    out: list[Unit] = []
    heading = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        body = line.lstrip("-*• ").strip()
        if _HEADING.match(line) and len(line) <= 90:
            heading = body
        if body:
            out.append(Unit(body, heading if heading != body else ""))
    return out


def carrier(terms: list[str], status: str | None, summary: list[Unit]) -> Unit | None:
    """The first unit of ``summary`` that holds every term of ``terms`` (and, for ``status`` REJECTED, a
    rejection word in the unit or its heading); None when no unit does or ``terms`` is empty."""
    if not terms:
        return None
    for unit in summary:
        if all(occurs(t, unit.text) for t in terms) and (status != "REJECTED" or unit.rejects):
            return unit
    return None
