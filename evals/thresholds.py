"""Thresholds (``evals/thresholds.toml``): the bar an engine's row must clear (issue 3 "Thresholds").

File shape::

    [engines.rules]
    recall = 0.90              # overall recall of positive probes, at least
    kind_recall = 0.80         # recall of every positive kind, at least
    negative_violations = 0    # absent/keep probes failed, at most
    decision_precision = 1.0   # grounded Decision Log entries / all entries, at least

    [suites.real.rules]        # bars for one suite, by its name, used instead of [engines.*] when only
    recall = 0.45              # that suite is run (``duck-tape eval --suite real``)

Engines without a table (the baseline) are reported, not enforced.  ``make test`` checks the rules engine on
the core suite and on the real-session suite (tests/test_eval_thresholds.py, tests/test_eval_real.py);
``duck-tape eval`` exits 1 when an engine it ran misses its bar.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evals.score import EngineScore

DEFAULT = Path(__file__).resolve().parent / "thresholds.toml"


class Threshold(BaseModel):
    """The bar for one engine (all optional; a missing key is not checked)."""

    model_config = ConfigDict(extra="forbid")

    recall: float | None = Field(default=None, ge=0, le=1)
    kind_recall: float | None = Field(default=None, ge=0, le=1)
    negative_violations: int | None = Field(default=None, ge=0)
    decision_precision: float | None = Field(default=None, ge=0, le=1)
    case_errors: int = Field(default=0, ge=0, description="Cases the engine may fail to read, at most.")


def load(path: str | Path = DEFAULT, suite: str | None = None) -> dict[str, Threshold]:
    """``{engine: Threshold}`` from a thresholds file: the ``[suites.<suite>.*]`` tables when ``suite`` is given
    and the file has them, else ``[engines.*]``.  Raises ``pipeline.errors.InputError`` naming the file."""
    from pydantic import ValidationError

    from pipeline.errors import InputError

    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read thresholds: {exc.strerror or exc}", path=str(p)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"bad TOML: {exc}", path=str(p)) from exc
    tables = raw.get("engines") or {}
    per_suite = raw.get("suites") or {}
    if not isinstance(per_suite, dict):
        raise InputError("invalid thresholds: [suites] must be a table of suite names", path=str(p))
    if suite is not None and suite in per_suite:
        tables = per_suite[suite] or {}
    elif suite is not None and suite.startswith("real"):
        tables = {}  # a set of real sessions with no bars of its own: scored, never held to the core suite's bars
    try:
        return {name: Threshold.model_validate(v) for name, v in tables.items()}
    except ValidationError as exc:
        raise InputError(f"invalid thresholds: {exc}", path=str(p)) from exc


def misses(score: EngineScore, bar: Threshold) -> list[str]:
    """One line per missed threshold of ``score`` (empty when it clears ``bar``)."""
    out: list[str] = []
    recall = score.recall or 0.0
    if bar.recall is not None and recall < bar.recall:
        out.append(f"{score.engine}: overall recall {recall:.3f} < {bar.recall:.2f}")
    if bar.kind_recall is not None:
        for kind, value in score.kind_recall().items():
            if value < bar.kind_recall:
                out.append(f"{score.engine}: {kind} recall {value:.3f} < {bar.kind_recall:.2f}")
    if bar.negative_violations is not None and score.violations > bar.negative_violations:
        out.append(f"{score.engine}: {score.violations} negative-probe violation(s) > {bar.negative_violations}")
    precision = score.decision_precision
    if bar.decision_precision is not None and precision is not None and precision < bar.decision_precision:
        out.append(f"{score.engine}: decision precision {precision:.3f} < {bar.decision_precision:.2f}")
    if len(score.errors) > bar.case_errors:
        for case in score.errors:
            out.append(f"{score.engine}: case {case.case} failed: {case.error}")
    return out
