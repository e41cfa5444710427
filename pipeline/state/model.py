"""Agent State model (DESIGN.md "Agent State file (Tier 2)").

The same models are the contract for both engines (rules and llm).  They are stdlib dataclasses, not pydantic
models, so that the rules path — the pre-compact checkpoint hook above all (issue 6: < 0.15 s with process start)
— never imports pydantic (~120 ms here).  The llm engine still gets validated structured output from them:
pydantic validates stdlib dataclasses used as field types of its response models
(``pipeline.stages.llm.schemas``), reading each field's ``metadata["description"]`` into the JSON schema the model
sees, the class docstring as the object's description, and ``__pydantic_config__`` (``extra="forbid"``: an
answer with invented fields fails validation and is re-asked).

Constructing a model checks its ``Literal`` fields (``ValueError`` naming the field and the allowed values);
other field types are not checked at run time: the rules engine builds them from typed code, and anything that
comes from outside (a model's answer, a suite file) is validated by pydantic first.  Copy with an update:
``dataclasses.replace(entry, what=...)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pipeline.state.sections import SECTION_NAMES  # re-exported: defined beside the reader of the format

__all__ = ["SECTION_NAMES", "AgentState", "Decision", "Evidence", "Fact", "Position", "Sections"]

Status = Literal["APPROVED", "REJECTED"]
StateKind = Literal["manual", "auto", "recovered"]
FactKind = Literal["fact", "constraint", "subagent", "root_cause", "quirk"]
Engine = Literal["rules", "llm"]

#: Read by pydantic when it validates these dataclasses (the llm engine's answers): invented fields are errors.
_PYDANTIC_CONFIG = {"extra": "forbid"}


def _field(description: str | None = None, **kwargs: Any) -> Any:
    """A dataclass field whose ``description`` pydantic puts into the JSON schema."""
    return dataclasses.field(metadata={"description": description} if description else {}, **kwargs)


def check_literals(entry: Any, **fields: Any) -> None:
    """Raise ``ValueError`` when a field of ``entry`` is not one of its ``Literal`` type's values.

    ``fields`` maps a field name to its ``Literal`` type, e.g. ``status=Status``.
    """
    for name, kind in fields.items():
        value = getattr(entry, name)
        if value not in get_args(kind):
            allowed = ", ".join(repr(v) for v in get_args(kind))
            raise ValueError(f"{type(entry).__name__}.{name}: {value!r} is not one of {allowed}")


@dataclass(slots=True, kw_only=True)
class Evidence:
    """Where an entry comes from: an event of the transcript and a verbatim quote of its text."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    event_index: int = _field("Index of the transcript event (0-based, Transcript.events) the entry comes from.")
    quote: str = _field("A verbatim substring of that event's text that supports the entry (<= 300 characters).")


@dataclass(slots=True, kw_only=True)
class Decision:
    """One Decision Log entry: ``<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>``."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    timestamp: str = _field("ISO-8601 UTC time of the event the decision was made in, e.g. 2026-09-01T10:00:00Z.")
    status: Status = _field("APPROVED for a chosen option, REJECTED for a ruled-out one or a dead end.")
    what: str = _field("The option decided on or rejected, one line, no ' - ' separator.")
    reasoning: str = _field("Why, one line, in the transcript's words when it gives them.")
    evidence: Evidence | None = _field("Event index and verbatim quote; required for every entry.", default=None)
    origin: str | None = _field(
        "Which rule or engine produced it (e.g. 'explicit', 'implicit', 'user-approval', 'dead-end', 'llm').",
        default=None,
    )

    def __post_init__(self) -> None:
        check_literals(self, status=Status)


@dataclass(slots=True, kw_only=True)
class Fact:
    """One Established Facts entry: something found out, written on one line."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    text: str = _field("The fact, one line, verbatim from the transcript where possible.")
    kind: FactKind = _field(
        "fact | constraint (stated by the user) | subagent (a sub-agent's result) | root_cause | quirk.", default="fact"
    )
    evidence: Evidence | None = _field("Event index and verbatim quote; required for every entry.", default=None)

    def __post_init__(self) -> None:
        check_literals(self, kind=FactKind)


@dataclass(slots=True, kw_only=True)
class Position:
    """Where the work stands: one step in flight, what is done (newest last), what remains (next first)."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    current: str | None = _field("The one step in flight, a single line.", default=None)
    done: list[str] = _field("Accomplished steps, oldest first, newest last (at most 15).", default_factory=list)
    remaining: list[str] = _field("Steps still to do, next first.", default_factory=list)


@dataclass(kw_only=True)
class Sections:
    """The content sections of an Agent State file, shared by the distillate and the state."""

    __pydantic_config__ = _PYDANTIC_CONFIG

    approved_workflow: str | None = _field(
        "What the user asked for and approved, in the user's terms; later redirections on their own lines.",
        default=None,
    )
    position: Position = _field(default_factory=Position)
    decisions: list[Decision] = _field("Decision Log, chronological.", default_factory=list)
    facts: list[Fact] = _field("Established Facts, deduplicated.", default_factory=list)
    rederivation: list[str] = _field(
        "Commands to run and files to read to rebuild what is not written down.", default_factory=list
    )
    suggested_skills: list[str] = _field("Optional; the section is omitted when empty.", default_factory=list)


@dataclass(kw_only=True)
class AgentState(Sections):
    """A whole Agent State file: header fields plus the sections (all keyword-only).

    Header line: ``Session: <stamp>[-auto|-recovered] | Cwd: <abs path> | Repo/Branch: <repo>@<branch>[ | Trigger: <t>]
    [ | Session-Id: <id>]`` then ``Created: <ISO-8601>``.  ``stamp`` is UTC ``YYYY-MM-DD-HHMM``.  ``session_id``: the
    harness's id of the session the state belongs to (issue 14; None: unknown, e.g. a hand-written manual file).
    Raises ``ValueError`` for a ``kind`` other than manual, auto, recovered.
    """

    stamp: str = _field("UTC YYYY-MM-DD-HHMM.")
    kind: StateKind = "recovered"
    cwd: str = "unknown"
    repo: str = "unknown"
    branch: str = "unknown"
    trigger: str | None = None
    created: str = _field("ISO-8601 UTC creation time, e.g. 2026-11-29T20:31:00Z.")
    session_id: str | None = None

    def __post_init__(self) -> None:
        check_literals(self, kind=StateKind)
