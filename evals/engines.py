"""Engine registry: engine name -> a callable that turns a transcript file into a state file.

Every engine returns an ``EngineOutput``: the exact state file text (what a user would read and what probes are
checked against), the ``AgentState`` behind it (its Decision Log evidence gives decision precision) and the
``Transcript`` that evidence refers to.  Adding an engine is one entry in ``REGISTRY``::

    REGISTRY["llm"] = Engine("llm", run=my_run, available=my_check, description="…")

``available()`` returns None when the engine can run, else a one-line reason (``--engine all`` prints it and
goes on; naming the engine explicitly makes it an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from evals.sections import Views
    from pipeline.state.model import AgentState
    from pipeline.transcripts.model import Transcript


@dataclass(slots=True)
class EngineOutput:
    """What one engine made of one transcript."""

    text: str
    state: "AgentState | None"
    transcript: "Transcript | None"
    #: The entries probes are checked against, when the text is not a state file (the ``summary`` engine);
    #: None: ``evals.sections.views(text)``.
    views: "Views | None" = None


EngineRun = Callable[[str, datetime], EngineOutput]


@dataclass(frozen=True, slots=True)
class Engine:
    """A registered engine: ``run(path, now)`` and ``available()`` (None, or why it cannot run)."""

    name: str
    run: EngineRun
    description: str
    available: Callable[[], str | None] = lambda: None


def run_rules(path: str, now: datetime) -> EngineOutput:
    """The project's rules engine, end to end as ``duck-tape recover --mask`` runs it (read segment by segment ->
    distil -> weave -> validate -> fold -> redaction gate with ``<REDACTED>``).  The transcript its evidence indexes
    (decision precision, compression) is read whole: ``recover`` keeps no events."""
    from pipeline.recovery import recover
    from pipeline.transcripts import read_transcript

    result = recover(path, now=now, mask=True, trigger="eval, engine: rules")
    return EngineOutput(result.text, result.state, read_transcript(path, warn=False))


def run_baseline(path: str, now: datetime) -> EngineOutput:
    """Today's keyword-only auto-checkpoint (``evals.baseline``)."""
    from evals.baseline import checkpoint

    return checkpoint(path, now=now)


def run_llm(path: str, now: datetime) -> EngineOutput:
    """The llm engine (issue 4): live against the configured model (``DUCK_TAPE_MODEL``), else replayed from
    ``fixtures/cassettes/evals/`` recorded against a stand-in that answers with the rules engine's findings, which
    checks the pipeline, not a model (``evals.llm_replay``)."""
    from evals.llm_replay import run

    return run(path, now)


def run_summary(path: str, now: datetime) -> EngineOutput:
    """The harness's own compaction summary scored as if it were the state file (``evals.summary``)."""
    from evals.summary import run

    return run(path, now)


def _llm_available() -> str | None:
    from evals.llm_replay import availability
    from pipeline.extras import install_line, missing

    absent = missing()
    if absent:
        return f"its optional packages are not installed ({', '.join(absent)}): {install_line()}"
    return availability()


#: Table row order: the reference first, then the project's engines.
REGISTRY: dict[str, Engine] = {
    "baseline": Engine("baseline", run_baseline, "keyword-only auto-checkpoint (what users have today)"),
    "rules": Engine("rules", run_rules, "deterministic rules engine (pipeline.recovery.recover)"),
    "llm": Engine("llm", run_llm, "litellm + instructor structured output (live with a model, else cassettes)",
                  available=_llm_available),
    "summary": Engine("summary", run_summary, "the harness's own last compaction summary, as if it were the state "
                      "file (empty where the transcript holds none)"),
}


def names() -> list[str]:
    """Registered engine names in table order."""
    return list(REGISTRY)


def _with_model(model: str) -> Engine:
    """The ``llm`` engine live against ``model`` (``eval --model``)."""
    from evals.llm_replay import availability

    def run(path: str, now: datetime) -> EngineOutput:
        from evals.llm_replay import run as run_llm_model

        return run_llm_model(path, now, model)

    return Engine("llm", run, f"the llm engine live with {model}", available=lambda: availability(model))


def select(choice: str, *, model: str | None = None) -> tuple[list[Engine], list[str]]:
    """Engines to run for ``--engine choice`` and the notes for those skipped.

    ``all`` runs every available engine and notes each unavailable one as ``"<name>: <reason>"``; a single name
    runs that engine.  ``model`` (``--model``) makes the ``llm`` engine run live against that model (a litellm
    model string or ``agent:<cli>``).  Raises ``pipeline.errors.InputError`` (exit 2) for an unknown name, an
    engine that cannot run, or a ``model`` with an engine other than llm or all.
    """
    from pipeline.errors import InputError

    registry = dict(REGISTRY)
    if model:
        if choice not in ("llm", "all"):
            raise InputError(f"--model {model} is for the llm engine: pass --engine llm (or all)")
        registry["llm"] = _with_model(model)
    if choice == "all":
        chosen, notes = [], []
        for engine in registry.values():
            why = engine.available()
            if why:
                notes.append(f"{engine.name}: {why}")
            else:
                chosen.append(engine)
        return chosen, notes
    engine = registry.get(choice)
    if engine is None:
        raise InputError(f"unknown engine {choice!r}: choose one of {', '.join([*REGISTRY, 'all'])}")
    why = engine.available()
    if why:
        raise InputError(f"engine {choice!r} cannot run: {why}")
    return [engine], []
