"""Run every case of the suites with every engine asked for, and score the results (issue 3 "Scoring").

Per case and engine: the engine's state file text is cut into views (``sections``) and every probe checked
(``score``); decision precision counts Decision Log entries whose evidence quote is found in the cited event
(``pipeline.stages.validate.grounding_problem``); sizes are the file's UTF-8 bytes and tokens (``pipeline.tokens``,
offline; estimated as bytes ÷ 4 where the llm extra's tokenizer is not installed); the transcript's tokens are those of its events' text (what the agent's context held, without the
JSON envelope); wall time is the engine call alone.  All engines get the same fixed creation time, so outputs
are reproducible.  An engine that raises on a case scores that case as an empty file, with the error kept.
"""

from __future__ import annotations

import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from evals import generated
from evals.engines import Engine, EngineOutput
from evals.score import CaseScore, EngineScore, check
from evals.sections import views
from evals.suite import Case, Suite

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def transcript_path(case: Case, scratch: Path) -> str:
    """The file to read for ``case``: written into ``scratch`` by its generator, else under the repository."""
    if case.generator:
        return str(generated.write(case.generator, scratch / case.id / Path(case.transcript).name))
    from pipeline.resources import data_root

    return str(data_root() / case.transcript)


def _grounded(out: EngineOutput) -> tuple[int, int]:
    from pipeline.stages.validate import grounding_problem

    if out.state is None or out.transcript is None:
        return 0, 0
    decisions = out.state.decisions
    return len(decisions), sum(grounding_problem(d.evidence, out.transcript) is None for d in decisions)


def _transcript_tokens(out: EngineOutput | None, path: str) -> int:
    from pipeline.tokens import count_or_estimate as count_tokens  # estimates without the llm extra

    transcript = out.transcript if out is not None else None
    if transcript is None:
        from pipeline.errors import DuckTapeError
        from pipeline.transcripts import read_transcript

        try:
            transcript = read_transcript(path, warn=False)
        except DuckTapeError:  # every engine failed on it too; the case already carries the error
            return 0
    return count_tokens("\n".join(ev.text for ev in transcript.events))


def score_case(case: Case, engine: Engine, path: str) -> tuple[CaseScore, EngineOutput | None]:
    """Run ``engine`` on ``path`` and check every probe of ``case``."""
    from pipeline.tokens import count_or_estimate as count_tokens  # estimates without the llm extra

    start = time.perf_counter()
    try:
        out = engine.run(path, NOW)
        error = None
    except Exception as exc:  # an engine failing on one case is a result, not a crash of the run
        out, error = None, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    text = out.text if out is not None else ""
    v = out.views if out is not None and out.views is not None else views(text)
    results = [check(case.id, probe, v) for probe in case.probes]
    decisions, grounded = _grounded(out) if out is not None else (0, 0)
    return CaseScore(
        case=case.id, engine=engine.name, results=results, decisions=decisions, grounded=grounded,
        state_bytes=len(text.encode("utf-8")), state_tokens=count_tokens(text), seconds=seconds, error=error,
    ), out


def run(suites: list[Suite], engines: list[Engine]) -> list[EngineScore]:
    """Score every case of ``suites`` with each of ``engines``; one ``EngineScore`` per engine, in order."""
    scores = {e.name: EngineScore(e.name) for e in engines}
    with tempfile.TemporaryDirectory(prefix="duck-tape-eval-") as scratch:
        for suite in suites:
            for case in suite.cases:
                path = transcript_path(case, Path(scratch))
                outputs: list[tuple[CaseScore, EngineOutput | None]] = [score_case(case, e, path) for e in engines]
                tokens = _transcript_tokens(next((o for _, o in outputs if o is not None), None), path)
                for case_score, _ in outputs:
                    case_score.transcript_tokens = tokens
                    case_score.harness = case.harness
                    scores[case_score.engine].cases.append(case_score)
    return list(scores.values())
