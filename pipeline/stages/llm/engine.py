"""Distil stage, engine **llm**: ``Transcript`` -> model-written sections, each grounded or fallen back
(DESIGN.md "Stages"; issue 4).

Calls, all through ``pipeline.llm.call.Session.ask`` (render -> mask -> cache -> token cap -> model):

1. ``distil_chunk`` once per chunk of the condensed transcript (``condense``) -> decisions and facts with evidence;
2. the chunks' findings merged deterministically (``merge``: dedupe, later supersedes earlier), then, when there
   was more than one chunk, ``merge_findings`` lets the model drop paraphrased duplicates and reversed decisions —
   it may only drop entries: anything whose evidence was not in its input is discarded;
3. every entry screened (``ground.screen``: grounding, source, injection, support), each chunk's answer before
   the merge and the merged result again;
4. ``weave_state`` -> Approved Workflow and Position, given the user's prompts, the findings, the end of the
   transcript and the rules engine's draft.

Per-section fallback: Decision Log and Established Facts fall back to the rules engine when a chunk call fails
(after retries and re-asks) or when none of the model's entries survives screening while the rules engine has
some; Approved Workflow and Position when the weave call fails or returns nothing the rules engine would not
beat.  Re-derivation and Suggested Skills are always the rules engine's.  A failure that aborts the run
(unreachable, still failing after retries, token cap) sends every section not yet produced to the rules engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pipeline.config import Config
from pipeline.llm.call import Session
from pipeline.llm.errors import LLMError
from pipeline.llm.prompts import fence
from pipeline.stages.llm.condense import Line, chunk, condense, text_of
from pipeline.stages.llm.ground import screen
from pipeline.stages.llm.merge import merge
from pipeline.stages.llm.schemas import ChunkFindings, MergedFindings, WovenSections
from pipeline.stages.models import Distillate
from pipeline.stages.rules.text import tokens
from pipeline.state.model import Decision, Fact
from pipeline.transcripts.model import Transcript

LLM_SECTIONS: tuple[str, ...] = ("Approved Workflow", "Position", "Decision Log", "Established Facts")
FINDINGS = ("Decision Log", "Established Facts")
WOVEN = ("Approved Workflow", "Position")
PROMPT_CHARS = 1500  # characters kept of each user prompt in the weave call
WORKFLOW_OVERLAP = 0.5  # share of the workflow's content words that must come from the user's prompts


@dataclass(slots=True)
class Outcome:
    """What the llm engine produced: ``sections`` (section name -> value, only those it owns), ``fallbacks``
    (section name -> reason the rules engine fills it), ``dropped`` (screened-out entries), ``notes`` (stderr
    lines) and ``aborted`` (the error that stopped the run, if any)."""

    sections: dict[str, Any] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aborted: LLMError | None = None


def _chunk_budget(session: Session, transcript: Transcript, config: Config) -> int:
    overhead = session.prompt_tokens("distil_chunk", ChunkFindings, **_chunk_context(transcript, "", 1, 1))
    return max(config.token_budget - overhead - 32, 200)


def _chunk_context(transcript: Transcript, text: str, number: int, total: int) -> dict[str, Any]:
    meta = transcript.meta
    return {
        "chunk": fence(text),
        "number": number,
        "total": total,
        "harness": meta.harness or "unknown",
        "cwd": meta.cwd or "unknown",
        "branch": meta.git_branch or "unknown",
    }


def _findings_text(decisions: list[Decision], facts: list[Fact]) -> str:
    rows = [f"{d.status}: {d.what} - {d.reasoning}" for d in decisions]
    rows += [f"FACT ({f.kind}): {f.text}" for f in facts]
    return "\n".join(rows) or "None"


def _evidence_key(entry: Decision | Fact) -> tuple[int, str] | None:
    if entry.evidence is None:
        return None
    return (entry.evidence.event_index, " ".join(entry.evidence.quote.split()))


def _only_known(merged: MergedFindings, before: MergedFindings) -> MergedFindings:
    """``merged`` without entries whose evidence was not in ``before`` (the merge call may drop, never add)."""
    known_d = {_evidence_key(d) for d in before.decisions}
    known_f = {_evidence_key(f) for f in before.facts}
    return MergedFindings(
        decisions=[d for d in merged.decisions if _evidence_key(d) in known_d],
        facts=[f for f in merged.facts if _evidence_key(f) in known_f],
    )


def _tail(lines: list[Line], budget: int) -> list[Line]:
    out: list[Line] = []
    used = 0
    for line in reversed(lines):
        if used + line.tokens > budget:
            break
        out.append(line)
        used += line.tokens
    return list(reversed(out))


def _prompts(transcript: Transcript, budget: int) -> str:
    """The user's prompts, oldest first, within ``budget`` tokens: the first always, then the latest that fit."""
    from pipeline.llm.budget import count

    rows = []
    for event in transcript.events:
        if event.kind == "user_prompt" and event.text.strip():
            text = event.text.strip()
            text = text if len(text) <= PROMPT_CHARS else text[:PROMPT_CHARS] + "…"
            rows.append(f"[{event.index}] {event.timestamp or ''} user: {text}")
    if not rows:
        return "None"
    kept = [rows[0]]
    used = count(rows[0])
    later: list[str] = []
    for row in reversed(rows[1:]):
        cost = count(row)
        if used + cost > budget:
            break
        later.append(row)
        used += cost
    return "\n".join(kept + list(reversed(later)))


def _draft(rules: Distillate) -> str:
    pos = rules.position
    rows = [f"approved_workflow: {rules.approved_workflow or 'None'}", f"current: {pos.current or 'None'}"]
    rows += [f"done: {item}" for item in pos.done] or ["done: None"]
    rows += [f"remaining: {item}" for item in pos.remaining] or ["remaining: None"]
    return "\n".join(rows)


def _reason(error: LLMError) -> str:
    return error.reason


def _fall_back(outcome: Outcome, sections: tuple[str, ...], reason: str) -> None:
    for section in sections:
        outcome.fallbacks.setdefault(section, reason)


def _findings(transcript: Transcript, session: Session, config: Config, rules: Distillate,
              lines: list[Line], outcome: Outcome) -> None:
    chunks = chunk(lines, _chunk_budget(session, transcript, config))
    results: list[ChunkFindings] = []
    for number, part in enumerate(chunks, 1):
        try:
            results.append(session.ask("distil_chunk", ChunkFindings,
                                       **_chunk_context(transcript, text_of(part), number, len(chunks))))
        except LLMError as error:
            _fall_back(outcome, FINDINGS, _reason(error))
            if error.abort_run:
                outcome.aborted = error
            return
    # screened chunk by chunk before the merge: a planted entry must not supersede a real one of the same subject
    # (the merge keeps the later of two) and then be dropped, taking the real one with it
    screened: list[ChunkFindings] = []
    for result in results:
        decisions, facts, dropped = screen(result.decisions, result.facts, transcript)
        outcome.dropped.extend(dropped)
        screened.append(ChunkFindings.model_construct(decisions=decisions, facts=facts))
    merged = merge(screened)
    if len(chunks) > 1 and (merged.decisions or merged.facts):
        payload = json.dumps(merged.model_dump(mode="json", exclude_none=True), indent=1, ensure_ascii=False)
        context = {"findings": fence(payload, "findings"), "total": len(chunks)}
        if session.prompt_tokens("merge_findings", MergedFindings, **context) <= config.token_budget:
            try:
                merged = _only_known(session.ask("merge_findings", MergedFindings, **context), merged)
            except LLMError as error:
                outcome.notes.append(f"duck-tape: llm: merge call skipped, chunk findings merged by rules: {error.reason}")
                if error.abort_run:
                    outcome.aborted = error
    decisions, facts, dropped = screen(merged.decisions, merged.facts, transcript)
    outcome.dropped.extend(dropped)
    if decisions or not rules.decisions:
        outcome.sections["Decision Log"] = decisions
    else:
        outcome.fallbacks["Decision Log"] = "no model-written decision survived grounding"
    if facts or not rules.facts:
        outcome.sections["Established Facts"] = facts
    else:
        outcome.fallbacks["Established Facts"] = "no model-written fact survived grounding"


def _weave(transcript: Transcript, session: Session, config: Config, rules: Distillate,
           lines: list[Line], outcome: Outcome) -> None:
    decisions = outcome.sections.get("Decision Log", rules.decisions)
    facts = outcome.sections.get("Established Facts", rules.facts)
    budget = config.token_budget
    context = {
        "prompts": fence(_prompts(transcript, budget // 4), "prompts"),
        "findings": fence(_findings_text(decisions, facts), "findings"),
        "draft": fence(_draft(rules), "draft"),
        "tail": fence(""),
    }
    room = budget - session.prompt_tokens("weave_state", WovenSections, **context) - 32
    context["tail"] = fence(text_of(_tail(lines, max(room, 0))))
    try:
        woven = session.ask("weave_state", WovenSections, **context)
    except LLMError as error:
        _fall_back(outcome, WOVEN, _reason(error))
        if error.abort_run:
            outcome.aborted = error
        return
    workflow = (woven.approved_workflow or "").strip()
    said = tokens(" ".join(e.text for e in transcript.events if e.kind == "user_prompt"))
    words = tokens(workflow)
    if workflow and words and len(words & said) / len(words) >= WORKFLOW_OVERLAP:
        outcome.sections["Approved Workflow"] = workflow
    elif workflow or rules.approved_workflow:
        outcome.fallbacks["Approved Workflow"] = "the model's workflow is not in the user's words"
    else:
        outcome.sections["Approved Workflow"] = None
    pos = woven.position
    if (pos.current or "").strip() or pos.done or pos.remaining or not (
        rules.position.current or rules.position.done or rules.position.remaining
    ):
        outcome.sections["Position"] = pos
    else:
        outcome.fallbacks["Position"] = "the model returned an empty position"


def run(transcript: Transcript, session: Session, *, config: Config, rules: Distillate) -> Outcome:
    """Produce the llm-owned sections of ``transcript``; see the module docstring.

    ``rules`` is the rules engine's distillate of the same transcript (the fallback, and the draft the weave call
    corrects).  Never raises ``LLMError``: failures become ``fallbacks`` (and ``aborted``).
    """
    outcome = Outcome()
    lines = condense(transcript, tool_chars=config.tool_output_chars)
    _findings(transcript, session, config, rules, lines, outcome)
    if outcome.aborted is None:
        _weave(transcript, session, config, rules, lines, outcome)
    if outcome.aborted is not None:
        missing = tuple(s for s in LLM_SECTIONS if s not in outcome.sections)
        _fall_back(outcome, missing, _reason(outcome.aborted))
    return outcome
