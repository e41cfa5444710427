"""Recovery use case: transcript file -> validated, redaction-checked Agent State text.

Orchestrates the stages (read -> ``pipeline.engines.build_state``: distil with the chosen engine -> weave ->
validate) and the redaction gate; the CLI only parses flags, asks for approval and writes through
``pipeline.state.store``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from pipeline.config import Config
from pipeline.redact.gate import MASK, redaction_gate, section_of_line  # noqa: F401  (re-exported: callers import them from here)
from pipeline.state.model import AgentState
from pipeline.transcripts import read_transcript
from pipeline.transcripts.model import Transcript
from pipeline.transcripts.safety import RECOVER_MAX_BYTES

if TYPE_CHECKING:
    from pipeline.engines import EngineRun
    from pipeline.llm.seam import LLM


@dataclass(slots=True)
class Recovery:
    """A recovered state ready to preview and write: ``text`` is the exact file content.  ``transcript``: the
    metadata and read report of the transcript; with the rules engine it holds no events (read segment by segment,
    issue 23), the state's evidence indexes the events as a whole read numbers them."""

    transcript: Transcript
    state: AgentState
    text: str
    dropped: list[str] = field(default_factory=list)
    redaction: list[str] = field(default_factory=list)  # report lines when secrets were masked
    notes: list[str] = field(default_factory=list)  # engine lines for stderr (fallbacks, llm usage summary)
    run: "EngineRun | None" = None  # how the sections were made (engine per section, fallbacks, usage)


def recover(
    path: str,
    *,
    kind: str = "recovered",
    trigger: str | None = None,
    action: str = "recover",
    now: datetime | None = None,
    max_bytes: int = RECOVER_MAX_BYTES,
    mask: bool = False,
    config: Config | None = None,
    llm: "LLM | None" = None,
    session: str | None = None,
    session_id: str | None = None,
) -> Recovery:
    """Recover an Agent State from the transcript at ``path`` with the engine ``config`` chooses.

    ``config`` None means the rules engine without reading the environment (``pipeline.config.load`` resolves
    flags, ``DUCK_TAPE_*`` and the config file; the CLI passes its result).  ``llm`` replaces the model behind
    the seam (tests).  ``trigger`` overrides the header's ``Trigger:``; by default it is computed from ``action``
    and the engine run (``recover, engine: rules`` / ``recover, engine: llm, fallback: rules for …``).

    Raises InputError (exit 2) for unreadable input, ValidationFailed (exit 5) when the state cannot be
    rendered faithfully, RedactionRefused (exit 3) when it holds secrets and ``mask`` is false.  An llm problem
    never raises: the rules engine fills the sections and ``notes`` says so.
    ``now`` (UTC) sets the stamp and ``Created:``; default: the current time.  ``session``: the session of an
    opencode database to recover (``read_transcript``).  ``session_id``: the header's ``Session-Id`` (default:
    the transcript's own; resume passes the session its marker names).
    """
    from pipeline.engines import build_state

    moment = now or datetime.now(timezone.utc)
    if config is None or config.effective_engine() == "rules":
        return _recover_streamed(path, kind=kind, trigger=trigger, action=action, now=moment, max_bytes=max_bytes,
                                 mask=mask, session=session, session_id=session_id)
    transcript = read_transcript(path, max_bytes=max_bytes, session=session)
    built = build_state(transcript, config=config, llm=llm, action=action, kind=kind, now=moment, trigger=trigger,
                        session_id=session_id)
    text, report = redaction_gate(built.text, mask=mask, path=path, source=built.source)
    return Recovery(transcript=transcript, state=built.state, text=text, dropped=built.dropped, redaction=report,
                    notes=list(built.run.notes), run=built.run)


def _recover_streamed(path: str, *, kind: str, trigger: str | None, action: str, now: datetime, max_bytes: int,
                      mask: bool, session: str | None, session_id: str | None) -> Recovery:
    """``recover`` with the rules engine: the whole transcript, segment by segment (``pipeline.segmented``), with a
    progress bar on a terminal.  The ``Recovery.transcript`` holds the metadata and the read's report, no events."""
    from pipeline.engines import EngineRun
    from pipeline.readprogress import reading
    from pipeline.segmented import distil_stream
    from pipeline.stages.distil import RULES_SECTIONS
    from pipeline.stages.models import Distillate

    with reading(path, "reading") as update:
        folded = distil_stream(path, max_bytes=max_bytes, action=action, kind=kind, now=now,
                               trigger=trigger if trigger is not None else f"{action}, engine: rules",
                               session_id=session_id, session=session,
                               progress=lambda f, seg: update(seg.end_offset))
    state, text = folded.finish()
    text, report = redaction_gate(text, mask=mask, path=path, source=folded.source)
    transcript = Transcript(meta=folded.meta, events=[], report=folded.report)
    run = EngineRun(distillate=Distillate(engines={name: "rules" for name in RULES_SECTIONS}))
    return Recovery(transcript=transcript, state=state, text=text, dropped=folded.dropped, redaction=report,
                    notes=[], run=run)
