"""Typed inputs/outputs between stages (DESIGN.md "Stages")."""

from __future__ import annotations

from pydantic import Field

from pipeline.state.model import Engine, Sections


class Distillate(Sections):
    """Output of ``distil``: the sections' content with evidence, before weaving into a state file.

    ``engines`` maps a section name (``SECTION_NAMES``) to the engine that produced it, so the state header's
    ``Trigger:`` can say which sections fell back to the rules engine.
    """

    engines: dict[str, Engine] = Field(default_factory=dict)
