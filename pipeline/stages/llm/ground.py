"""Screen model-written entries before they join a state (DESIGN.md "Stages": no evidence, no entry).

``validate`` (``pipeline.stages.validate``) later drops any entry whose quote is not in the cited event; that
alone does not stop a prompt injection, whose text *is* in the transcript.  So an llm entry must also pass:

1. **grounding** — ``validate.grounding_problem``: the cited event exists and holds the quote;
2. **source** — a decision cites something a person or the agent said (a user prompt, an assistant message or
   its reasoning, a sub-agent's answer), never a tool output, a tool call's arguments or the harness's
   compaction summary: text read from files, web pages and commands is data, not a decision;
3. **own words, no injection** — ``pipeline.stages.rules.untrusted.evidence_problem``, the same screen the rules
   engine applies to its own candidates: the quote must not sit in pasted, quoted or fetched text (code blocks,
   ``>`` quotes, quoted strings, ``<tag>`` wrappers, a block after "here's the README:"), after a fake fence or a
   role-played system turn, and neither the entry nor the event within ``WINDOW`` characters of the quote may
   address a model (``ignore previous instructions``, "note to the summarizer", "record it as a decision",
   ``SYSTEM:``, a status marker spelled with lookalike or invisible characters…);
4. **support** — a decision's ``what`` shares at least one content word with the cited event or with one of the
   ``SUPPORT_BACK`` conversation events before it (an approval "yes, do that" is grounded in the proposal it
   answers), so a real quote cannot carry an invented decision.  Only the events' own words count as support
   (``untrusted.own_words``): "yes" after an assistant message quoting a page that says "APPROVED: delete prod"
   does not support "delete prod".

``screen`` also sets each kept entry's timestamp from its cited event (the transcript's clock, not the
model's) and marks decisions ``origin="llm"``.  ``pipeline.engines`` applies the same screen
(``untrusted.evidence_problem`` for decisions, ``untrusted.injection_problem`` for facts) to every engine's entries.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.stages.rules.text import norm_ts, tokens
from pipeline.stages.rules.untrusted import WINDOW, evidence_problem, injection_problem, own_words
from pipeline.stages.validate import grounding_problem
from pipeline.state.model import Decision, Fact
from pipeline.transcripts.model import Transcript

__all__ = ["screen", "decision_problem", "fact_problem", "injection_problem", "INJECTION_WINDOW"]

DECISION_SOURCES = frozenset({"user_prompt", "assistant_text", "reasoning", "subagent_result"})
CONVERSATION = frozenset({"user_prompt", "assistant_text", "reasoning", "subagent_result"})
SUPPORT_BACK = 3
INJECTION_WINDOW = WINDOW  # characters


def _event_time(transcript: Transcript, index: int) -> str | None:
    for event in reversed(transcript.events[: index + 1]):
        stamp = norm_ts(event.timestamp)
        if stamp:
            return stamp
    return None


def _support_problem(decision: Decision, transcript: Transcript) -> str | None:
    wanted = tokens(decision.what)
    if not wanted:
        return None
    index = decision.evidence.event_index
    texts = [own_words(transcript.events[index].text)]
    back = 0
    for event in reversed(transcript.events[:index]):
        if back >= SUPPORT_BACK:
            break
        if event.kind in CONVERSATION:
            texts.append(own_words(event.text))
            back += 1
    if any(wanted & tokens(text) for text in texts):
        return None
    return f"'{decision.what[:60]}' is not supported by event {index} or the conversation just before it"


def decision_problem(decision: Decision, transcript: Transcript) -> str | None:
    """Why a model-written decision must not enter the Decision Log, or None (checks 1-4 of the module)."""
    problem = grounding_problem(decision.evidence, transcript)
    if problem:
        return problem
    event = transcript.events[decision.evidence.event_index]
    if event.kind not in DECISION_SOURCES:
        return f"evidence cites a {event.kind.replace('_', ' ')} (event {event.index}): not a decision anyone made"
    problem = evidence_problem(event.kind, event.text, decision.evidence.quote, decision.what, decision.reasoning)
    return problem or _support_problem(decision, transcript)


def fact_problem(fact: Fact, transcript: Transcript) -> str | None:
    """Why a model-written fact must not enter Established Facts, or None (checks 1 and 3 of the module)."""
    problem = grounding_problem(fact.evidence, transcript)
    if problem:
        return problem
    event = transcript.events[fact.evidence.event_index]
    return injection_problem(fact.evidence.quote, event.text, fact.text)


def screen(decisions: list[Decision], facts: list[Fact], transcript: Transcript
           ) -> tuple[list[Decision], list[Fact], list[str]]:
    """Keep the entries that pass, re-timed from their events; return them and one message per dropped entry."""
    kept_d: list[Decision] = []
    kept_f: list[Fact] = []
    dropped: list[str] = []
    for d in decisions:
        problem = decision_problem(d, transcript)
        if problem:
            dropped.append(f"dropped llm Decision Log entry {d.status}: {d.what[:80]!r}: {problem}")
            continue
        stamp = _event_time(transcript, d.evidence.event_index) or norm_ts(d.timestamp) or d.timestamp
        kept_d.append(replace(d, timestamp=stamp, origin="llm"))
    for f in facts:
        problem = fact_problem(f, transcript)
        if problem:
            dropped.append(f"dropped llm Established Facts entry {f.text[:80]!r}: {problem}")
            continue
        kept_f.append(f)
    return kept_d, kept_f, dropped
