"""Validate stage: a woven ``AgentState`` -> a state file text that is safe to write (DESIGN.md "Stages").

Checks, in order:
1. grounding — every Decision Log and Established Facts entry has evidence whose quote occurs in the cited
   event's text (whitespace-insensitive); an entry without it is dropped ("no evidence, no entry"), so an
   LLM cannot invent a decision and a prompt injection in the transcript cannot plant one;
2. line shape — each Decision Log line matches ``<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>``;
3. round trip — ``parse(render(state))`` keeps every entry (counts, statuses, which sections are set) and
   rendering it again gives the same bytes.  A failure here is not an entry problem: ``ValidationFailed`` (exit 5) is raised and
   nothing may be written.

Pure: the dropped entries come back as messages; the CLI prints them on stderr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pipeline.errors import ValidationFailed
from pipeline.state.model import AgentState, Decision, Evidence, Fact
from pipeline.state.parse import parse
from pipeline.state.render import render
from pipeline.state.store import is_iso_timestamp
from pipeline.transcripts.model import Transcript

DECISION_LINE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})) "
    r"(?P<status>APPROVED|REJECTED): (?P<what>.+?) - (?P<reasoning>.+)$"
)
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Validated:
    """Result of ``run``: the cleaned state, its rendered text, and one message per dropped entry."""

    state: AgentState
    text: str
    dropped: list[str] = field(default_factory=list)


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def shown(text: str, limit: int = 80) -> str:
    """``text`` for a message on stderr: secrets masked first (``<REDACTED>``), then cut to ``limit`` characters."""
    from pipeline.redact import mask

    return repr(mask(text, placeholder="<REDACTED>", deep=True)[0][:limit])


def grounding_problem(evidence: Evidence | None, transcript: Transcript) -> str | None:
    """Why ``evidence`` does not ground an entry in ``transcript``, or None when it does."""
    if evidence is None:
        return "no evidence"
    if not 0 <= evidence.event_index < len(transcript.events):
        return f"evidence cites event {evidence.event_index}, which does not exist"
    quote = _squash(evidence.quote)
    if not quote:
        return "empty evidence quote"
    event = transcript.events[evidence.event_index]
    if quote not in _squash(event.text):
        return f"quote not found in event {evidence.event_index}"
    return None


def _check_decision(decision: Decision, transcript: Transcript) -> str | None:
    problem = grounding_problem(decision.evidence, transcript)
    if problem:
        return problem
    from pipeline.state.render import decision_line

    if not DECISION_LINE.match(decision_line(decision)):
        return "line does not match '<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>'"
    return None


def _shape(state: AgentState) -> tuple:
    """What a faithful round trip must keep: entry counts, statuses and which sections are set."""
    pos = state.position
    return (
        bool((state.approved_workflow or "").strip()),
        bool((pos.current or "").strip()),
        len(pos.done),
        len(pos.remaining),
        [d.status for d in state.decisions],
        len(state.facts),
        len(state.rederivation),
        len(state.suggested_skills),
    )


def _drop_blank(state: AgentState) -> AgentState:
    """Remove list items that are blank after whitespace collapsing (render would drop them silently)."""
    pos = state.position
    keep = lambda items: [i for i in items if _squash(i)]  # noqa: E731
    return replace(
        state,
        position=replace(pos, done=keep(pos.done), remaining=keep(pos.remaining)),
        rederivation=keep(state.rederivation),
        suggested_skills=keep(state.suggested_skills),
    )


def run(state: AgentState, transcript: Transcript) -> Validated:
    """Validate ``state`` against ``transcript``; return the cleaned state, its text and drop messages.

    Raises ValidationFailed (exit 5) when the rendered file does not parse back to the same state.
    """
    dropped: list[str] = []
    decisions: list[Decision] = []
    for decision in state.decisions:
        if not is_iso_timestamp(decision.timestamp):
            # issue 22 item 5: a time that names no real moment (the read stage drops those from events and counts
            # them; an engine may still make one) dates the entry at the write time, never costs the state file
            decision = replace(decision, timestamp=state.created)
        problem = _check_decision(decision, transcript)
        if problem:
            dropped.append(f"dropped Decision Log entry {decision.status}: {shown(decision.what)}: {problem}")
        else:
            decisions.append(decision)
    facts: list[Fact] = []
    for fact in state.facts:
        problem = "empty fact" if not _squash(fact.text) else grounding_problem(fact.evidence, transcript)
        if problem:
            dropped.append(f"dropped Established Facts entry {shown(fact.text)}: {problem}")
        else:
            facts.append(fact)
    clean, text = rendered(replace(state, decisions=decisions, facts=facts))
    return Validated(state=clean, text=text, dropped=dropped)


def rendered(state: AgentState) -> tuple[AgentState, str]:
    """``state`` without blank list items, and its exact file text, after the round-trip checks of ``run`` (step 3):
    for a state whose entries were grounded already (a fold of validated states, ``pipeline.state.fold``).

    Raises ValidationFailed (exit 5) when the rendered file does not parse back to the same state.
    """
    clean = _drop_blank(state)
    text = render(clean)
    try:
        reparsed = parse(text, path="<rendered state>")
    except Exception as exc:  # any parse failure of our own output is a validation failure
        raise ValidationFailed(f"rendered state file does not parse back: {exc}") from exc
    if render(reparsed) != text:
        raise ValidationFailed("rendered state file is not stable under parse -> render")
    if _shape(reparsed) != _shape(clean):
        raise ValidationFailed("rendered state file parses back with entries lost or changed")
    return clean, text
