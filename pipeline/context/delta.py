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
    """A Deferred-Debt entry ``- TODO(<type>[,#<issue>]): <date> <what>`` (only ever appended)."""

    type: str = Field(description="Debt type, e.g. perf, test, security, todo.")
    issue: str | None = Field(default=None, description="Issue number without '#', when known.")
    date: str = Field(description="YYYY-MM-DD the debt was recorded.")
    what: str
    redacted: int = 0


class DeltaNote(_Model):
    """A Notes block ``### <stamp>`` followed by ``lines`` verbatim."""

    stamp: str = Field(description="UTC 'YYYY-MM-DD HH:MM'.")
    lines: list[str]
    redacted: int = 0


class ContextDelta(_Model):
    """Everything one source adds to CONTEXT.md, plus what it resolves.

    ``session``/``origin``/``stamp`` describe a merged state file (session label, ``<repo>@<branch>``, UTC
    ``YYYY-MM-DD HH:MM`` of its ``Created:``); when ``session`` is set and the merge changes something because of
    this source, a Notes block records it.  ``done`` holds the state's Position.Done items: an Open-Question or a
    Deferred-Debt entry they match is resolved.
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
    done: list[str] = Field(default_factory=list)
