"""``ContextDelta``: what one source (a state file, a migrated block list) contributes to CONTEXT.md.

The typed output of ``translate`` and input of the merge (DESIGN.md "Stages": AgentState --translate--> ContextDelta
--merge rules--> CONTEXT.md + changelog).  Texts are single lines, already reduced to decision level.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

KeyedSection = Literal["Goals", "Decisions", "Conventions", "Glossary"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DeltaEntry(_Model):
    """A keyed entry ``- **<key>**: <text>`` for Goals, Decisions, Conventions or Glossary."""

    section: KeyedSection
    key: str = Field(description="Entry name; identity is the whitespace-normalized, casefolded key.")
    text: str = Field(description="One line: the decision, definition or text (Decisions keep the status, e.g. 'APPROVED: ...').")
    date: str | None = Field(default=None, description="YYYY-MM-DD for Decisions (written as '(date: ...)'); None elsewhere.")
    subsection: str | None = Field(default=None, description="'###' subsection to file a new key under; None: above the first one.")
    redacted: int = Field(default=0, description="How many secrets were masked with <REDACTED> in text.")


class DeltaQuestion(_Model):
    """An Open-Questions entry ``- <text> (date: YYYY-MM-DD)``."""

    text: str
    date: str = Field(description="YYYY-MM-DD the question was raised.")
    redacted: int = 0


class DeltaDebt(_Model):
    """A Deferred-Debt entry ``- TODO(<type>[,#<issue>]): <date> <what> [status: open]`` (only ever appended)."""

    type: str = Field(description="Debt type, e.g. perf, test, security, docs, fix, todo.")
    issue: str | None = Field(default=None, description="Issue number without '#', when known.")
    date: str = Field(description="YYYY-MM-DD the debt was recorded.")
    what: str
    status: str | None = Field(default="open", description="Status marker written with the entry: 'open', or None "
                               "for none (a migrated TODO line that had none).")
    redacted: int = 0


class DeltaFact(_Model):
    """A durable fact for the merge's Notes block (one bullet ``- <text>``): it will still hold next session."""

    text: str
    redacted: int = 0


class DeltaSkip(_Model):
    """An item of the state file the translation left out, and why (the merge preview's ``Skipped:`` line)."""

    source: str = Field(description="The state file section it comes from, e.g. 'Decision Log'.")
    text: str
    reason: str = Field(description="Why it is not in CONTEXT.md, e.g. 'procedural approval'.")


class DeltaNote(_Model):
    """A Notes block ``### <stamp>`` followed by ``lines`` verbatim."""

    stamp: str = Field(description="UTC 'YYYY-MM-DD HH:MM'.")
    lines: list[str]
    redacted: int = 0


class ContextDelta(_Model):
    """Everything one source adds to CONTEXT.md, plus what it resolves.

    ``session``/``origin``/``stamp`` describe a merged state file (session label, ``<repo>@<branch>``, UTC
    ``YYYY-MM-DD HH:MM`` of its ``Created:``); when ``session`` is set and the merge changes something because of
    this source, a Notes block records it, with one bullet per durable fact in ``facts`` that no Notes block holds
    yet.  ``done`` holds the state's Position.Done items: an Open-Question or a Deferred-Debt entry they match is
    resolved.  ``skipped``: what the translation left out, for the preview (never written).
    """

    session: str | None = None
    file: str | None = Field(default=None, description="The merged state file's name for the Notes block when it "
                             "is not '<session>.state.md' (batch names its files '<session id>.state.md').")
    origin: str | None = None
    repo: str | None = None
    stamp: str | None = None
    entries: list[DeltaEntry] = Field(default_factory=list)
    questions: list[DeltaQuestion] = Field(default_factory=list)
    debts: list[DeltaDebt] = Field(default_factory=list)
    notes: list[DeltaNote] = Field(default_factory=list)
    facts: list[DeltaFact] = Field(default_factory=list)
    done: list[str] = Field(default_factory=list)
    skipped: list[DeltaSkip] = Field(default_factory=list)
