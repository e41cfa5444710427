"""Merge the findings of several chunks, deterministically (issue 4, item 4: dedupe, later supersedes earlier).

Decisions are keyed by ``norm_key(what)``; a later decision with the same key replaces the earlier one, whatever
its status (a reversal: APPROVED then REJECTED keeps REJECTED) and takes its place in time order.  Facts are keyed
by ``norm_key(text)``; the later statement replaces the earlier one.  The result is ordered by cited event index
(stable), which is chronological.

This runs before the optional model merge call (``prompts/merge_findings.j2``), and is what stands when that call
fails or is skipped, so chunked transcripts never lose their findings to a merge problem.
"""

from __future__ import annotations

from pipeline.stages.llm.schemas import ChunkFindings, MergedFindings
from pipeline.stages.rules.text import norm_key
from pipeline.state.model import Decision, Fact


def _order(entry: Decision | Fact, position: int) -> tuple[int, int]:
    index = entry.evidence.event_index if entry.evidence is not None else -1
    return (index, position)


def merge(results: list[ChunkFindings]) -> MergedFindings:
    """The findings of ``results`` (in chunk order) merged; see the module docstring."""
    decisions: dict[str, tuple[int, Decision]] = {}
    facts: dict[str, tuple[int, Fact]] = {}
    position = 0
    for result in results:
        for d in result.decisions:
            position += 1
            k = norm_key(d.what)
            if k:
                decisions.pop(k, None)
                decisions[k] = (position, d)
        for f in result.facts:
            position += 1
            k = norm_key(f.text)
            if k:
                facts.pop(k, None)
                facts[k] = (position, f)
    ordered_d = sorted(decisions.values(), key=lambda pd: _order(pd[1], pd[0]))
    ordered_f = sorted(facts.values(), key=lambda pf: _order(pf[1], pf[0]))
    return MergedFindings(decisions=[d for _, d in ordered_d], facts=[f for _, f in ordered_f])
