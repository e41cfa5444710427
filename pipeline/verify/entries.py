"""The entries a compaction could keep or lose, taken from what the rules engine extracts.

Kinds (``KINDS``, in report order):

* ``approved`` / ``rejected`` — Decision Log entries by status (terms from the *what*, the option itself);
* ``fact`` — Established Facts of kind fact, root_cause, quirk, subagent; ``constraint`` — the user's constraints;
* ``remaining`` — Position.Remaining items (forward-looking: always the list as it stood at the compaction);
* ``task`` — the user's tasks of the Approved Workflow (``rules.workflow.tasks``: the first real prompt and
  every later prompt that starts new work), each with its prompt event.

Entries whose evidence is itself a compaction summary are left out: the summary trivially "keeps" them.
Pure; never raises for odd input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.state.model import AgentState
from pipeline.transcripts.model import Transcript
from pipeline.verify.terms import distinctive

KINDS: tuple[str, ...] = ("approved", "rejected", "fact", "constraint", "remaining", "task")
QUOTE_CHARS = 240


@dataclass(slots=True)
class Entry:
    """One extracted entry.

    ``kind``: one of ``KINDS``; ``text``: the entry as the state file words it (a decision as
    ``STATUS: what - reasoning``); ``terms``: its distinctive terms (``terms.distinctive``); ``status``:
    APPROVED | REJECTED for decisions, else None; ``event``: index of the transcript event it comes from (None
    for Remaining); ``quote``: the evidence quote (the prompt's words for a task, the item for Remaining);
    ``line``: 1-based line of that event's record in the transcript file (0 unknown).
    """

    kind: str
    text: str
    terms: list[str]
    status: str | None = None
    event: int | None = None
    quote: str = ""
    line: int = 0
    timestamp: str | None = None
    extra: dict = field(default_factory=dict)


def _clip(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= QUOTE_CHARS else one[: QUOTE_CHARS - 1] + "…"


def _located(transcript: Transcript, index: int | None) -> tuple[int, str | None, str | None]:
    if index is None or not 0 <= index < len(transcript.events):
        return 0, None, None
    ev = transcript.events[index]
    return ev.line, ev.timestamp, ev.kind


def from_state(state: AgentState, transcript: Transcript) -> list[Entry]:
    """The decision, fact, constraint and Remaining entries of ``state`` (its evidence indexes ``transcript``)."""
    out: list[Entry] = []
    for d in state.decisions:
        index = d.evidence.event_index if d.evidence else None
        line, ts, kind = _located(transcript, index)
        if kind == "compaction":
            continue
        text = f"{d.status}: {d.what}" + (f" - {d.reasoning}" if d.reasoning else "")
        terms = distinctive(d.what) or distinctive(text)
        out.append(Entry("approved" if d.status == "APPROVED" else "rejected", text, terms, d.status, index,
                         _clip(d.evidence.quote if d.evidence else d.what), line, ts or d.timestamp))
    for f in state.facts:
        index = f.evidence.event_index if f.evidence else None
        line, ts, kind = _located(transcript, index)
        if kind == "compaction":
            continue
        out.append(Entry("constraint" if f.kind == "constraint" else "fact", f.text, distinctive(f.text), None,
                         index, _clip(f.evidence.quote if f.evidence else f.text), line, ts))
    for item in state.position.remaining:
        if item.lower().startswith("from the compaction summary"):
            continue
        out.append(Entry("remaining", item, distinctive(item), quote=_clip(item)))
    return out


def tasks(transcript: Transcript) -> list[Entry]:
    """The user's tasks the rules engine finds in ``transcript`` (``rules.workflow.tasks``), oldest first."""
    from pipeline.stages.rules import workflow
    from pipeline.stages.rules.scan import scan

    s = scan(transcript)
    out = []
    for i in workflow.tasks(s):
        words = workflow.prompt_task_text(s, i)
        ev = transcript.events[i]
        out.append(Entry("task", " ".join(words.split()), distinctive(words), event=i, quote=_clip(words),
                         line=ev.line, timestamp=ev.timestamp))
    return out
