"""Choose the engine and turn a ``Transcript`` into a validated ``AgentState`` (DESIGN.md "Stages"; issue 4).

Every command that recovers a state goes through ``build_state`` (``pipeline.recovery.recover`` does):

* engine ``rules`` — the deterministic rules engine (``pipeline.stages.distil``); no model, no network, and
  litellm is never imported;
* engine ``llm`` — the llm engine (``pipeline.stages.llm.engine``) for Approved Workflow, Position, Decision
  Log and Established Facts, each section falling back to the rules engine on its own; Re-derivation is always
  the rules engine's.  The model is a litellm model or an agent CLI (``agent:claude-code``…), whichever
  ``pipeline.llm.seam.model_for`` makes of the model string.  No model configured, litellm missing, or the provider unreachable: the rules engine for
  everything, with one line on stderr, never a crash;
* engine ``auto`` — ``llm`` when a model is configured, else ``rules`` (silently: that is the default setup).

Whatever the engine, decisions whose evidence is not the speaker's own words (pasted, quoted or fetched text, or
text that addresses a model: ``pipeline.stages.rules.untrusted.evidence_problem``) and facts whose evidence sits
in text that instructs a model (``untrusted.injection_problem``) are dropped before weaving, and the state then goes through
``weave`` and ``validate`` (grounding: no evidence, no entry).  The state header's ``Trigger:`` names the engine
and the sections that fell back: ``recover, engine: llm, fallback: rules for Established Facts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from pipeline.stages import distil as rules_distil
from pipeline.stages import validate, weave
from pipeline.stages.validate import shown
from pipeline.stages.models import Distillate
from pipeline.state.model import SECTION_NAMES, AgentState
from pipeline.transcripts.model import Transcript

if TYPE_CHECKING:  # the rules path (config None, the checkpoint hook) needs neither: tomllib costs ~4 ms
    from pipeline.config import Config
    from pipeline.llm.seam import LLM
    from pipeline.llm.usage import Usage
    from pipeline.redact.source import SourceMask

#: Sections the llm engine can own, in state file order (``SECTION_NAMES``).
LLM_SECTIONS: tuple[str, ...] = ("Approved Workflow", "Position", "Decision Log", "Established Facts")
_FIELDS = {
    "Approved Workflow": "approved_workflow",
    "Position": "position",
    "Decision Log": "decisions",
    "Established Facts": "facts",
}


@dataclass(slots=True)
class EngineRun:
    """How a distillate was made.

    ``distillate``: the sections, with ``engines`` (section -> rules | llm).  ``requested``: rules | llm | auto.
    ``fallbacks``: section -> why the rules engine filled it although the llm engine was used.  ``notes``: lines
    for stderr (one per fallback reason, the usage summary).  ``dropped``: entries removed before weaving.
    ``usage``: the llm run's counters (None for the rules engine).  ``model``, ``prompts``: the model and the
    8-hex summary of the prompts' tagged hashes, when the llm engine ran.
    """

    distillate: Distillate
    requested: str = "rules"
    fallbacks: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    usage: "Usage | None" = None
    model: str | None = None
    prompts: str | None = None

    @property
    def engine(self) -> str:
        """``llm`` when at least one section came from the llm engine, else ``rules``."""
        return "llm" if any(self.distillate.engines.get(s) == "llm" for s in LLM_SECTIONS) else "rules"

    def trigger(self, action: str) -> str:
        """The header's ``Trigger:`` value: ``<action>, engine: <engine>[, fallback: rules for <sections>]``."""
        if self.engine == "rules":
            return f"{action}, engine: rules"
        fell = [s for s in SECTION_NAMES if s in self.fallbacks]
        return f"{action}, engine: llm" + (f", fallback: rules for {', '.join(fell)}" if fell else "")


@dataclass(slots=True)
class BuiltState:
    """A validated state: ``state``, its exact ``text``, the ``dropped`` entry messages, and the ``run``.

    ``source``: what masking the transcript found before any engine saw it (``pipeline.redact.source``); the
    redaction gate (``pipeline.recovery.redaction_gate``) reports its placeholders and masks its values.
    ``masked``: the masked transcript the stages read (evidence indexes its events)."""

    state: AgentState
    text: str
    dropped: list[str]
    run: EngineRun
    source: "SourceMask | None" = None
    masked: Transcript | None = None


def _screen_injections(distillate: Distillate, transcript: Transcript) -> tuple[Distillate, list[str]]:
    """Drop entries of any engine whose evidence is injected text (``pipeline.stages.rules.untrusted``)."""
    from pipeline.stages.rules.untrusted import evidence_problem, injection_problem

    def problem(entry, *fields_: str, decision: bool = False) -> str | None:
        ev = entry.evidence
        if ev is None or not 0 <= ev.event_index < len(transcript.events):
            return None  # validate reports missing evidence
        event = transcript.events[ev.event_index]
        if decision:
            return evidence_problem(event.kind, event.text, ev.quote, *fields_)
        return injection_problem(ev.quote, event.text, *fields_)

    dropped: list[str] = []
    decisions = []
    for d in distillate.decisions:
        why = problem(d, d.what, d.reasoning, decision=True)
        if why:
            dropped.append(f"dropped Decision Log entry {d.status}: {shown(d.what)}: {why}")
        else:
            decisions.append(d)
    facts = []
    for f in distillate.facts:
        why = problem(f, f.text)
        if why:
            dropped.append(f"dropped Established Facts entry {shown(f.text)}: {why}")
        else:
            facts.append(f)
    if not dropped:
        return distillate, []
    return replace(distillate, decisions=decisions, facts=facts), dropped


def _fallback_notes(fallbacks: dict[str, str]) -> list[str]:
    by_reason: dict[str, list[str]] = {}
    for section in SECTION_NAMES:
        if section in fallbacks:
            by_reason.setdefault(fallbacks[section], []).append(section)
    return [f"duck-tape: llm: fallback: rules for {', '.join(s)}: {reason}" for reason, s in by_reason.items()]


def _open_cache(config: Config, notes: list[str]):
    """The response cache: diskcache's when installed, else the SQLite one (``pipeline.llm.sqlcache``)."""
    if not config.cache:
        return None
    import importlib.util

    if importlib.util.find_spec("diskcache") is not None:
        from pipeline.llm.cache import ResponseCache as Cache
    else:  # an install without the litellm extra: the agent CLIs still cache their answers
        from pipeline.llm.sqlcache import SqliteCache as Cache
    path = config.cache_path()
    try:
        return Cache(path, size_mb=config.cache_size_mb)
    except Exception as exc:  # an unusable cache folder must not stop the run
        notes.append(f"duck-tape: llm: cache disabled ({path}: {exc})")
        return None


def _run_llm(transcript: Transcript, config: Config, rules: Distillate, llm: "LLM | None", run: EngineRun) -> None:
    from pipeline.llm.call import Session
    from pipeline.llm.errors import LLMUnavailable
    from pipeline.stages.llm import engine as llm_engine

    if llm is None:
        from pipeline.llm.seam import model_for

        try:
            llm = model_for(config)
        except ValueError as exc:  # an agent: model naming no known CLI
            run.notes.append(f"duck-tape: llm: {exc}; using the rules engine")
            return
    run.model = llm.name
    run.usage = llm.usage
    cache = _open_cache(config, run.notes)
    session = Session(llm, cache, max_tokens=config.max_tokens, max_output_tokens=config.max_output_tokens)
    from pipeline.resources import PackagingError

    try:
        outcome = llm_engine.run(transcript, session, config=config, rules=rules)
    except PackagingError:  # a broken installation is not an llm problem: never hidden behind the rules engine
        raise
    except Exception as exc:  # never a crash: the rules engine has every section already
        run.notes.append(f"duck-tape: llm: engine failed ({type(exc).__name__}: {exc}); using the rules engine")
        return
    finally:
        if cache is not None:
            cache.close()
    run.prompts = session.prompts_hash()
    run.dropped.extend(outcome.dropped)
    if isinstance(outcome.aborted, LLMUnavailable) and not outcome.sections:
        run.notes.append(f"duck-tape: llm: {outcome.aborted.reason}; using the rules engine")
        return
    apply_outcome(run, rules, outcome)
    usage = llm.usage
    if usage.requests or usage.cached or usage.failed:
        run.notes.append(usage.summary(llm.name, run.prompts))


def apply_outcome(run: EngineRun, rules: Distillate, outcome) -> None:
    """Put the sections of ``outcome`` (``pipeline.stages.llm.engine.Outcome``: the llm engine's, or an answer
    the agent handed over, ``Supplied``) over the rules distillate ``rules``: each section it has is the llm's,
    each it lacks stays the rules engine's, and ``outcome.fallbacks`` say why (the header's ``fallback: rules
    for …``)."""
    run.fallbacks = dict(outcome.fallbacks)
    engines = dict(rules.engines)
    update = {}
    for section, value in outcome.sections.items():
        update[_FIELDS[section]] = value
        engines[section] = "llm"
    run.distillate = replace(rules, **update, engines=engines)
    run.notes.extend(outcome.notes)
    run.notes.extend(_fallback_notes(run.fallbacks))


def _is_agent(model: str | None) -> bool:
    """True for an agent CLI model string (``agent:…``): the default install runs it (``pipeline.llm.agents``)."""
    from pipeline.llm.agents import is_agent

    return is_agent(model)


#: An answer the model handed over itself (the agent over MCP, ``pipeline.serve.agent_state``): called with the
#: masked transcript and the rules distillate, it returns the screened ``Outcome``.
Supplied = Callable[[Transcript, Distillate], Any]


def distil(transcript: Transcript, config: Config | None = None, *, llm: "LLM | None" = None,
           supplied: "Supplied | None" = None) -> EngineRun:
    """Distil ``transcript`` with the engine ``config`` chooses (None: the rules engine, reading no environment).

    ``llm`` replaces the model behind the seam (a ``FakeLLM`` in tests); by default ``pipeline.llm.seam.model_for``
    makes one for ``config.model``.  ``supplied``: the sections come from an answer already given (no call is
    made, ``config`` is not read).  Never raises for an llm problem (see the module docstring), except
    ``MissingExtra`` (exit 2) when the llm engine would run with a litellm model and its optional packages are not
    installed (``pipeline.extras``); an agent CLI (``agent:…``) needs none of them.
    """
    if config is not None and config.effective_engine() == "llm" and (llm is not None or config.model) \
            and supplied is None and not _is_agent(config.model if llm is None else llm.name):
        from pipeline.extras import require_llm

        require_llm(f"--engine llm (model {config.model})" if config.model else "the llm engine")
    rules = rules_distil.run(transcript)
    if supplied is not None:
        run = EngineRun(distillate=rules, requested="llm")
        outcome = supplied(transcript, rules)
        run.dropped.extend(outcome.dropped)
        apply_outcome(run, rules, outcome)
        return run
    if config is None:
        return EngineRun(distillate=rules)
    run = EngineRun(distillate=rules, requested=config.engine)
    if config.effective_engine() == "llm":
        if llm is None and not config.model:
            run.notes.append("duck-tape: llm: no model configured: set DUCK_TAPE_MODEL or pass --model; "
                             "using the rules engine")
        else:
            _run_llm(transcript, config, rules, llm, run)
    return run


def build_state(
    transcript: Transcript,
    *,
    config: Config | None = None,
    llm: "LLM | None" = None,
    action: str = "recover",
    kind: str = "recovered",
    now: datetime,
    trigger: str | None = None,
    session_id: str | None = None,
    known: dict[str, str] | None = None,
    seen: set | None = None,
    supplied: "Supplied | None" = None,
) -> BuiltState:
    """``Transcript`` -> validated ``AgentState`` with the chosen engine: distil, screen, weave, validate.

    ``trigger`` overrides the computed ``Trigger:`` (``EngineRun.trigger(action)``); ``session_id`` the header's
    ``Session-Id`` (default: the transcript's own, ``meta.session_id``); ``supplied``: sections from an answer
    already given (``distil``).  ``known``, ``seen``: what masking earlier segments of the same transcript found and
    scanned (``pipeline.redact.source.mask_texts``).  Raises ValidationFailed (exit 5) when the state cannot be
    rendered faithfully (``pipeline.stages.validate``).
    """
    from pipeline.redact.source import mask_transcript

    # issue 11: the source is masked first, rendered after; every engine, the screening and validate see the
    # masked text.  Every event is read (issue 23); ``pipeline.segmented`` splits a long session into segments.
    transcript, source = mask_transcript(transcript, known=known, seen=seen)
    run = distil(transcript, config, llm=llm, supplied=supplied)
    rules_screened = []
    if run.distillate.engines.get("Decision Log") == "rules":
        rules_screened = [f"dropped Decision Log entry {status}: {shown(what)}: {why}"
                          for status, what, why in run.distillate.screened]
    screened, dropped = _screen_injections(run.distillate, transcript)
    run.distillate = screened
    state = weave.run(screened, transcript.meta, kind=kind, now=now,
                      trigger=trigger if trigger is not None else run.trigger(action), session_id=session_id)
    checked = validate.run(state, transcript)
    return BuiltState(state=checked.state, text=checked.text,
                      dropped=[*run.dropped, *rules_screened, *dropped, *checked.dropped],
                      run=run, source=source, masked=transcript)

