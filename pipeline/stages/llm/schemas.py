"""Response models of the llm engine's calls, built from the Agent State models (issue 4, item 3).

The entries are the very ``Decision``, ``Fact`` and ``Position`` the rules engine produces
(``pipeline.state.model``); their field descriptions are the schema the model sees.  ``extra="forbid"``
everywhere, so an answer with invented fields fails validation and is re-asked.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pipeline.state.model import Decision, Fact, Position


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkFindings(_Answer):
    """What one chunk of the transcript establishes: decisions made in it and facts found out in it.

    Every entry cites the transcript line it comes from (``evidence.event_index`` = the number in brackets) and
    copies a verbatim quote (at most 300 characters) from that line's text.  An entry without such evidence is
    discarded.
    """

    decisions: list[Decision] = Field(
        default_factory=list,
        description="Decisions made in this chunk: options chosen (APPROVED) and ruled out or abandoned (REJECTED), "
        "including approvals and rejections by the user and dead ends, in chronological order.",
    )
    facts: list[Fact] = Field(
        default_factory=list,
        description="Facts established in this chunk that a later agent needs: constraints the user stated, root "
        "causes, environment quirks, sub-agent findings.  One line each.",
    )


class MergedFindings(_Answer):
    """The findings of all chunks merged: duplicates removed, and where a later entry reverses or refines an earlier
    one, only the later one kept.  Entries keep their evidence unchanged."""

    decisions: list[Decision] = Field(default_factory=list, description="The Decision Log, chronological.")
    facts: list[Fact] = Field(default_factory=list, description="Established Facts, deduplicated.")


class WovenSections(_Answer):
    """The sections that need the whole session: what the user asked for and approved, and where the work stands."""

    approved_workflow: str | None = Field(
        default=None,
        description="What the user asked for and approved, in the user's own words (quote their prompt); later "
        "redirections by the user on their own lines.  None when the transcript has no user request.",
    )
    position: Position = Field(default_factory=Position, description="Where the work stood when the transcript ends.")
