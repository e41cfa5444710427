"""Eval suites as data (STYLE.md habit 11): ``evals/suites/*.yaml`` validated by pydantic with ``extra="forbid"``.

A suite lists cases; a case names a transcript under ``fixtures/`` (or a generator that writes it at run time,
for files too large to commit) and its probes.  A probe is a fact planted once in the transcript: an id, a kind,
the section where it must appear and the terms that must all occur there (case-insensitive,
whitespace-normalized, at word boundaries).

Kinds and the section each is checked in by default (``Probe.section`` overrides it):

====================  =============  ==============================================================
kind                  section        passes when
====================  =============  ==============================================================
workflow              workflow       the Approved Workflow holds every term
current               current        the Position's Current line holds every term
done / remaining      done/remaining one item holds every term
approved / rejected   approved /     a Decision Log entry of that status holds every term, and no later
                      rejected       entry of the other status names the probe's ``subject`` (the final
                                     state wins)
fact, constraint,     facts          one Established Facts line holds every term
subagent
rederivation          rederivation   one Re-derivation item holds every term
absent (negative)     file           it FAILS (a violation) when the section holds every term: a secret,
                                     compaction-summary text posing as the workflow, a reversed decision
                                     still standing as approved
keep (negative)       file           it FAILS (a violation) unless the section holds every term: port
                                     numbers, sizes, ticket ids, SHAs redaction must leave alone
====================  =============  ==============================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Kind = Literal[
    "workflow", "current", "done", "remaining", "approved", "rejected", "fact", "constraint", "subagent",
    "rederivation", "absent", "absent_status", "keep",
]
Section = Literal[
    "workflow", "current", "done", "remaining", "decisions", "approved", "rejected", "facts", "rederivation", "file",
]
Harness = Literal["claude-code", "copilot", "opencode", "codex", "gemini", "generic"]

POSITIVE_KINDS: tuple[str, ...] = (
    "workflow", "current", "done", "remaining", "approved", "rejected", "fact", "constraint", "subagent", "rederivation",
)
NEGATIVE_KINDS: tuple[str, ...] = ("absent", "absent_status", "keep")
DEFAULT_SECTION: dict[str, str] = {
    "workflow": "workflow", "current": "current", "done": "done", "remaining": "remaining", "approved": "approved",
    "rejected": "rejected", "fact": "facts", "constraint": "facts", "subagent": "facts",
    "rederivation": "rederivation", "absent": "file", "absent_status": "decisions", "keep": "file",
}
#: The state file heading (or Position label) behind each section name, for reports.
SECTION_TITLES: dict[str, str] = {
    "workflow": "Approved Workflow", "current": "Position / Current", "done": "Position / Done",
    "remaining": "Position / Remaining", "decisions": "Decision Log", "approved": "Decision Log (APPROVED)",
    "rejected": "Decision Log (REJECTED)", "facts": "Established Facts", "rederivation": "Re-derivation",
    "file": "whole file",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Probe(_Model):
    """One probe fact: where it must (or, for ``absent``, must not) appear in the recovered state file."""

    id: str = Field(min_length=1, description="Unique within the case, e.g. 'rejects-fixed-window'.")
    kind: Kind
    terms: list[str] = Field(min_length=1, description="All must occur in one entry of the section (case-insensitive).")
    section: Section | None = Field(default=None, description="Where to look; default by kind (module table).")
    subject: str | None = Field(
        default=None,
        description="approved/rejected/absent-in-approved: the term that names the option, used to see whether a later "
        "entry of the other status reversed it; default: the first term.",
    )
    max_entries: int | None = Field(
        default=None, ge=1, description="At most this many entries may hold every term (e.g. 1: a decision counted once)."
    )
    note: str | None = Field(default=None, description="Why the probe is there (shown in failure reports).")
    sections: list[Section] | None = Field(
        default=None, min_length=1,
        description="Check any of these sections (an entry of one of them must hold every term); overrides section.",
    )
    status: Literal["APPROVED", "REJECTED"] | None = Field(
        default=None,
        description="Decision Log entries count only with this status (an APPROVED entry marked '(later rejected)' "
        "counts as REJECTED); entries of the other sections listed count as they are. Without it the approved / "
        "rejected views apply 'the final state wins'.",
    )
    unless: list[str] = Field(
        default_factory=list, description="absent_status: an entry that holds one of these words is no violation.",
    )
    any_term: bool = Field(
        default=False, description="absent: violated when ANY term occurs in an entry (default: all terms in one).",
    )
    matching: Literal["word", "substring"] = Field(
        default="word",
        description="'word': a term may not start or end inside a word; 'substring': plain substring (the real-session "
        "corpus rule).",
    )

    @model_validator(mode="after")
    def _terms_not_blank(self) -> "Probe":
        if any(not " ".join(t.split()) for t in self.terms):
            raise ValueError(f"probe {self.id!r}: a term is blank")
        return self

    @property
    def where(self) -> str:
        """The section checked (the first of ``sections`` when several): ``section`` or the kind's default."""
        if self.sections:
            return self.sections[0]
        return self.section or DEFAULT_SECTION[self.kind]

    @property
    def wheres(self) -> list[str]:
        """Every section checked: ``sections``, else ``[where]``."""
        return list(self.sections) if self.sections else [self.where]

    @property
    def negative(self) -> bool:
        return self.kind in NEGATIVE_KINDS


class Case(_Model):
    """One transcript and its probes, built around one way recovery fails today."""

    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$")
    harness: Harness
    failure_mode: str = Field(min_length=1, description="The way recovery fails today that this case is built around.")
    transcript: str = Field(description="Path relative to the repository root (fixtures/...).")
    generator: str | None = Field(
        default=None,
        description="Name of the function of fixtures/evals/generate.py that writes the transcript at run time "
        "(for files too large to commit); the path then names the file it writes, under a temporary folder.",
    )
    probes: list[Probe] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_probe_ids(self) -> "Case":
        seen: set[str] = set()
        for p in self.probes:
            if p.id in seen:
                raise ValueError(f"case {self.id!r}: probe id {p.id!r} is used twice")
            seen.add(p.id)
        return self


class Suite(_Model):
    """A named list of cases (``evals/suites/<name>.yaml``)."""

    name: str = Field(min_length=1)
    description: str = ""
    version: int = Field(default=1, ge=1, description="Bump when probes or scoring rules of the suite change.")
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_case_ids(self) -> "Suite":
        seen: set[str] = set()
        for c in self.cases:
            if c.id in seen:
                raise ValueError(f"suite {self.name!r}: case id {c.id!r} is used twice")
            seen.add(c.id)
        return self


MAX_SUITE_BYTES = 16 * 1024 * 1024
"""A suite or probe file is a few KB; anything bigger than this is not one (and is not read whole)."""

SUITE_SHAPE = "a suite YAML (a mapping with name, version and cases) or a corpus probes .json"


def read_text(path: Path, expected: str) -> str:
    """The UTF-8 text of the suite file ``path``.  Raises ``pipeline.errors.InputError`` (exit 2) naming the file and
    ``expected`` (what it should have been) for a missing or unreadable file, a binary or non-UTF-8 file, or one
    over ``MAX_SUITE_BYTES`` (issue 24, item 4: a binary file crashed ``eval`` with UnicodeDecodeError)."""
    from pipeline.errors import InputError

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SUITE_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc}); expected {expected}", path=str(path)) from exc
    if len(data) > MAX_SUITE_BYTES:
        raise InputError(f"over {MAX_SUITE_BYTES // (1024 * 1024)} MiB, so not {expected}", path=str(path))
    if b"\0" in data:
        raise InputError(f"a binary file, not {expected}", path=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start}), so not {expected}", path=str(path)) from exc


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file.

    Raises ``pipeline.errors.InputError`` (exit 2) naming the file for a missing, binary or non-UTF-8 file, bad
    YAML, YAML that is not a mapping, or a suite that does not validate (the pydantic message names the field).
    """
    import yaml
    from pydantic import ValidationError

    from pipeline.errors import InputError

    p = Path(path)
    try:
        raw = yaml.safe_load(read_text(p, SUITE_SHAPE))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"bad YAML: {getattr(exc, 'problem', exc)}; expected {SUITE_SHAPE}", path=str(p),
                         line=(mark.line + 1) if mark else None) from exc
    if not isinstance(raw, dict):
        found = "empty" if raw is None else f"a YAML {type(raw).__name__}"
        raise InputError(f"{found}, not {SUITE_SHAPE}", path=str(p))
    try:
        return Suite.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
        )
        raise InputError(f"invalid suite ({exc.error_count()} problem(s)): {problems}", path=str(p)) from exc
