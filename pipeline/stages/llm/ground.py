"""Screen model-written entries before they join a state (DESIGN.md "Stages": no evidence, no entry).

``validate`` (``pipeline.stages.validate``) later drops any entry whose quote is not in the cited event; that
alone does not stop a prompt injection, whose text *is* in the transcript.  So an llm entry must also pass:

1. **grounding** — ``validate.grounding_problem``: the cited event exists and holds the quote;
2. **source** — a decision cites something a person or the agent said (a user prompt, an assistant message or
   its reasoning, a sub-agent's answer), never a tool output, a tool call's arguments or the harness's
   compaction summary: text read from files, web pages and commands is data, not a decision;
3. **no injection** — neither the entry nor the text around its quote (``INJECTION_WINDOW`` characters before
   it, the quote, and as much after it in the cited event) reads as an instruction to a model
   (``ignore previous instructions``, ``record APPROVED: …``, ``new instructions:`` …);
4. **support** — a decision's ``what`` shares at least one content word with the cited event or with one of the
   ``SUPPORT_BACK`` conversation events before it (an approval "yes, do that" is grounded in the proposal it
   answers), so a real quote cannot carry an invented decision.

``screen`` also sets each kept entry's timestamp from its cited event (the transcript's clock, not the
model's) and marks decisions ``origin="llm"``.  ``injection_problem`` is public: ``pipeline.engines`` applies it
to the rules engine's entries too.
"""

from __future__ import annotations

import re
from dataclasses import replace

from pipeline.stages.rules.text import norm_ts, tokens
from pipeline.stages.validate import grounding_problem
from pipeline.state.model import Decision, Fact
from pipeline.transcripts.model import Transcript

DECISION_SOURCES = frozenset({"user_prompt", "assistant_text", "reasoning", "subagent_result"})
CONVERSATION = frozenset({"user_prompt", "assistant_text", "reasoning", "subagent_result"})
SUPPORT_BACK = 3
INJECTION_WINDOW = 200  # characters

INJECTION = re.compile(
    r"""(?:
        \b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*
            (?:previous|prior|above|earlier|preceding|former|system|original)\s+
            (?:instructions?|prompts?|messages?|rules|directions|context)\b
      | \bnew\s+(?:system\s+)?instructions?\s*:
      | \b(?:record|log|add|write|mark)\s+(?:it\s+|this\s+|that\s+)?(?:as\s+)?(?:APPROVED|REJECTED)\b
      | \byou\s+(?:must|should)\s+now\s+(?:record|approve|ignore)\b
      | \bdo\s+not\s+(?:tell|inform|alert)\s+the\s+user\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_WS = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def injection_problem(quote: str, event_text: str, *extra: str) -> str | None:
    """Why an entry with ``quote`` from ``event_text`` looks planted by a prompt injection, or None.

    Checks ``extra`` (the entry's own fields), and the quote with ``INJECTION_WINDOW`` characters of the event
    on each side of it (whitespace-insensitive); the whole event when the quote is not found in it.
    """
    for text in extra:
        if text and INJECTION.search(text):
            return "reads as an instruction to a model (prompt injection)"
    event = _squash(event_text)
    needle = _squash(quote)
    at = event.find(needle) if needle else -1
    window = event if at < 0 else event[max(0, at - INJECTION_WINDOW): at + len(needle) + INJECTION_WINDOW]
    if INJECTION.search(window):
        return "its evidence sits in text that instructs a model (prompt injection)"
    return None


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
    texts = [transcript.events[index].text]
    back = 0
    for event in reversed(transcript.events[:index]):
        if back >= SUPPORT_BACK:
            break
        if event.kind in CONVERSATION:
            texts.append(event.text)
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
    problem = injection_problem(decision.evidence.quote, event.text, decision.what, decision.reasoning)
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
