"""Typed inputs/outputs between stages (DESIGN.md "Stages"); stdlib dataclasses, like ``pipeline.state.model``."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.state.model import Engine, Sections


@dataclass(kw_only=True)
class Distillate(Sections):
    """Output of ``distil``: the sections' content with evidence, before weaving into a state file.

    ``engines`` maps a section name (``SECTION_NAMES``) to the engine that produced it, so the state header's
    ``Trigger:`` can say which sections fell back to the rules engine.  ``screened``: the rules engine's decision
    candidates dropped as not the speaker's own words, as ``(status, what, why)`` (``rules.untrusted``), for the
    dropped-entry report.  ``branch``: the git branch the session's own tool output shows (``rules.session``),
    for the header when the transcript's metadata names none.
    """

    engines: dict[str, Engine] = field(default_factory=dict)
    screened: list[tuple[str, str, str]] = field(default_factory=list)
    branch: str | None = None
