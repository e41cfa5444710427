"""Propose, weigh, pick (STYLE.md habit 12; issue 21 §3): one ranking for every Established Facts candidate.

Each proposer (``facts``, ``struggle``, ``reports``, ``trials``, ``shellenv``, ``scope``…) reads the session's
structure and proposes ``Candidate`` lines with a *prior*: how much its shape alone says the line matters (the
user's own rule, a root cause found after failures, a changed retry that worked, a caveat in the agent's report).
``weigh`` adds features that carry across sessions, whatever the wording or language:

* **distinctive tokens** (paths, file names, identifiers, error names, numbers: ``factprune.distinctive``) — a
  line that names things can be acted on; a line with none is generic and loses a point (not a rule the user
  stated: "never push to main" stands in plain words);
* **error names** (``ENOTFOUND``, ``PermissionError``, ``HTTP 422``…) — the trap the next agent will hit again;
* **recurrence** — the same line was stated again later (``restated``), or another candidate from another event
  shares a distinctive token: the finding came up twice;
* **recency** — later in the session counts a little more (the state the next agent resumes; a restated line
  counts from its latest statement);
* **length** — a line over ``LONG`` characters reads badly in a handoff.

``pick`` then fills a byte budget that grows with the session (``budget``: a 3 MB session deserves more than a
40 KB one, and the whole state file stays under 12 KB), best first, never taking a candidate under ``FLOOR``
(a short session gets fewer lines, not noise), and returns the picked ones with the user's constraints first and
the rest in transcript order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.factprune import distinctive

FLOOR = 1.0  # candidates scoring under this are never picked
LONG = 220  # characters
MIN_BUDGET = 3_000  # bytes of Established Facts for the smallest session
MAX_BUDGET = 5_200  # bytes for the largest (the state file stays under 12 KB)
BUDGET_STEP = 500  # bytes added each time the session's message text doubles past ``BUDGET_BASE``
BUDGET_BASE = 20_000  # characters of message text

_ERROR_NAME = lazy_re(
    r"\b(?:[A-Z][a-z]+)+(?:Error|Exception)\b|\bE[A-Z]{3,}\b|\b(?:HTTP\s*)?[45]\d\d\b(?=\s|$|[:,)])|\berrno\b"
)


@dataclass(slots=True)
class Candidate:
    """One proposed Established Facts line.

    ``kind`` is the ``Fact.kind`` it is written as (constraint, subagent, root_cause, quirk, fact); ``text`` the line
    shown; ``ev`` the event its evidence quotes and ``start``/``end`` the span of that event's text the quote is
    taken from; ``source`` names the proposer (for the report of what was picked and why); ``prior`` the
    proposer's weight; ``score`` is set by ``weigh``.
    """

    kind: str
    text: str
    ev: int
    start: int
    end: int
    source: str
    prior: float
    score: float = 0.0
    marks: frozenset[str] = field(default_factory=frozenset)  # distinctive tokens, set by ``weigh``
    restated: int = 0  # the latest later event that stated the same thing again (0: none)


def budget(message_chars: int) -> int:
    """Bytes of Established Facts for a session with ``message_chars`` characters of messages (prompts,
    answers, sub-agent results, summaries): ``MIN_BUDGET`` up to ``BUDGET_BASE`` characters, then
    ``BUDGET_STEP`` more each time it doubles, at most ``MAX_BUDGET``."""
    if message_chars <= BUDGET_BASE:
        return MIN_BUDGET
    return min(MAX_BUDGET, int(MIN_BUDGET + BUDGET_STEP * math.log2(message_chars / BUDGET_BASE)))


def weigh(cands: list[Candidate], n_events: int) -> None:
    """Set each candidate's ``score``: its prior plus the features of the module docstring."""
    seen_in: dict[str, set[int]] = {}
    for c in cands:
        c.marks = distinctive(c.text)
        for m in c.marks:
            seen_in.setdefault(m, set()).add(c.ev)
    span = max(1, n_events - 1)
    for c in cands:
        d = len(c.marks)
        score = c.prior + (0.4 * min(d, 4) if d else (0.0 if c.kind == "constraint" else -1.0))
        if _ERROR_NAME.search(c.text):
            score += 0.3
        if c.restated or any(len(seen_in[m]) > 1 for m in c.marks):
            score += 0.3
        score += 0.5 * max(c.ev, c.restated) / span
        if len(c.text) > LONG:
            score -= 0.3
        c.score = score


def pick(cands: list[Candidate], limit: int) -> list[Candidate]:
    """The best candidates (score at least ``FLOOR``) whose lines fit ``limit`` bytes together, constraints first
    and then in transcript order.  A line that does not fit is skipped and smaller ones are still tried."""
    used = 0
    chosen: list[Candidate] = []
    for c in sorted(cands, key=lambda c: (-c.score, c.ev, c.start)):
        if c.score < FLOOR:
            break
        size = len(c.text.encode()) + 1
        if used + size > limit:
            continue
        used += size
        chosen.append(c)
    chosen.sort(key=lambda c: (c.kind != "constraint", c.ev, c.start))
    return chosen
