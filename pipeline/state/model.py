"""Agent State model (DESIGN.md "Agent State file (Tier 2)").

The same models are the contract for both engines (rules and llm): the llm engine asks the model for them
through structured output, so field descriptions are part of the schema the model sees.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.state.sections import SECTION_NAMES  # re-exported: defined beside the reader of the format

Status = Literal["APPROVED", "REJECTED"]
StateKind = Literal["manual", "auto", "recovered"]
FactKind = Literal["fact", "constraint", "subagent", "root_cause", "quirk"]
Engine = Literal["rules", "llm"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Model):
    """Where an entry comes from: an event of the transcript and a verbatim quote of its text."""

    event_index: int = Field(description="Index of the transcript event (0-based, Transcript.events) the entry comes from.")
    quote: str = Field(description="A verbatim substring of that event's text that supports the entry (<= 300 characters).")


class Decision(_Model):
    """One Decision Log entry: ``<ISO-8601> APPROVED|REJECTED: <what> - <reasoning>``."""

    timestamp: str = Field(description="ISO-8601 UTC time of the event the decision was made in, e.g. 2026-09-01T10:00:00Z.")
    status: Status = Field(description="APPROVED for a chosen option, REJECTED for a ruled-out one or a dead end.")
    what: str = Field(description="The option decided on or rejected, one line, no ' - ' separator.")
    reasoning: str = Field(description="Why, one line, in the transcript's words when it gives them.")
    evidence: Evidence | None = Field(default=None, description="Event index and verbatim quote; required for every entry.")
    origin: str | None = Field(
        default=None,
        description="Which rule or engine produced it (e.g. 'explicit', 'implicit', 'user-approval', 'dead-end', 'llm').",
    )


class Fact(_Model):
    """One Established Facts entry: something found out, written on one line."""

    text: str = Field(description="The fact, one line, verbatim from the transcript where possible.")
    kind: FactKind = Field(default="fact", description="fact | constraint (stated by the user) | subagent (a sub-agent's result) | root_cause | quirk.")
    evidence: Evidence | None = Field(default=None, description="Event index and verbatim quote; required for every entry.")


class Position(_Model):
    """Where the work stands: one step in flight, what is done (newest last), what remains (next first)."""

    current: str | None = Field(default=None, description="The one step in flight, a single line.")
    done: list[str] = Field(default_factory=list, description="Accomplished steps, oldest first, newest last (at most 15).")
    remaining: list[str] = Field(default_factory=list, description="Steps still to do, next first.")


class Sections(_Model):
    """The content sections of an Agent State file, shared by the distillate and the state."""

    approved_workflow: str | None = Field(default=None, description="What the user asked for and approved, in the user's terms; later redirections on their own lines.")
    position: Position = Field(default_factory=Position)
    decisions: list[Decision] = Field(default_factory=list, description="Decision Log, chronological.")
    facts: list[Fact] = Field(default_factory=list, description="Established Facts, deduplicated.")
    rederivation: list[str] = Field(default_factory=list, description="Commands to run and files to read to rebuild what is not written down.")
    suggested_skills: list[str] = Field(default_factory=list, description="Optional; the section is omitted when empty.")


class AgentState(Sections):
    """A whole Agent State file: header fields plus the sections.

    Header line: ``Session: <stamp>[-auto|-recovered] | Cwd: <abs path> | Repo/Branch: <repo>@<branch>[ | Trigger: <t>]``
    then ``Created: <ISO-8601>``.  ``stamp`` is UTC ``YYYY-MM-DD-HHMM``.
    """

    stamp: str = Field(description="UTC YYYY-MM-DD-HHMM.")
    kind: StateKind = "recovered"
    cwd: str = "unknown"
    repo: str = "unknown"
    branch: str = "unknown"
    trigger: str | None = None
    created: str = Field(description="ISO-8601 UTC creation time, e.g. 2026-11-29T20:31:00Z.")
