"""Record the answers the fake agent CLIs replay (``fixtures/agent_cli/recordings/<suite>.json``).

    .venv/bin/python tests/record_agent_cli.py [SUITE.yaml ...]   (default: every evals/suites/*.yaml)

For each case transcript the llm engine runs with a recording model behind the seam that answers every call as
the cassettes' stand-in does (``record_eval_cassettes.answer_for``: the **rules engine's** findings, masked) and
keeps each answer under the key of its prompt (``fake_agent.key``: the SHA-256 of the prompt's fenced data
blocks).  ``tests/fake_agent.py`` answers from that file, so ``duck-tape eval --engine llm --model agent:<cli>``
runs end to end against any of the five fake CLIs: the request, the CLI's output format, the parsing, the
grounding and the per-section fallback, with a stand-in that knows what the rules engine knows.  It says nothing
about a real model.  Not a test (no ``test_`` prefix).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_agent import key  # noqa: E402
from record_eval_cassettes import answer_for  # noqa: E402

RECORDINGS = ROOT / "fixtures" / "agent_cli" / "recordings"


class Recorder:
    """A model behind the seam (``pipeline.llm.seam.LLM``) answering from the rules distillate ``rules`` and
    keeping every answer in ``answers`` under ``key(user message)``."""

    def __init__(self, rules, answers: dict) -> None:
        from pipeline.llm.usage import Usage

        self.name = "agent:record"
        self.params: dict = {}
        self.usage = Usage()
        self.rules = rules
        self.answers = answers

    def complete(self, messages, response_model, *, stage=""):
        user = messages[-1]["content"]
        value = answer_for(response_model.__name__, user, self.rules)
        self.answers[key(user)] = value
        self.usage.add(sent=1, received=1, stage=stage)
        return response_model.model_validate(value)


def record(suite_path: str) -> Path:
    """Record every case of the suite at ``suite_path``; return the recording written."""
    from evals.runner import NOW, transcript_path
    from evals.suite import load_suite
    from pipeline.config import Config
    from pipeline.recovery import recover
    from pipeline.stages import distil
    from pipeline.transcripts import read_transcript

    suite = load_suite(suite_path)
    answers: dict = {}
    config = Config(engine="llm", model="agent:claude-code", cache=False)
    with tempfile.TemporaryDirectory(prefix="duck-tape-record-") as scratch:
        for case in suite.cases:
            path = transcript_path(case, Path(scratch))
            rules = distil.run(read_transcript(path, warn=False))
            recorder = Recorder(rules, answers)
            result = recover(path, now=NOW, mask=True, config=config, llm=recorder, action="eval")
            print(f"{case.id}: {recorder.usage.requests} answer(s); {result.state.trigger}")
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    target = RECORDINGS / f"{Path(suite_path).stem}.json"
    target.write_text(json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {target} ({len(answers)} answers)")
    return target


def main(argv: list[str]) -> None:
    for suite in argv or sorted(str(p) for p in (ROOT / "evals" / "suites").glob("*.yaml")):
        record(suite)


if __name__ == "__main__":
    main(sys.argv[1:])
