"""The bar ``make test`` holds the rules engine to: the core suite against ``evals/thresholds.toml`` (issue 3
"Thresholds"), plus the thresholds file itself and the eval fixtures being what their generator writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from evals import engines, runner, thresholds
from evals.score import CaseScore, EngineScore
from evals.suite import load_suite
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def core_rules() -> EngineScore:
    suite = load_suite(ROOT / "evals" / "suites" / "core.yaml")
    [score] = runner.run([suite], [engines.REGISTRY["rules"]])
    return score


def test_rules_engine_meets_the_core_thresholds(core_rules):
    bar = thresholds.load()["rules"]
    assert (bar.recall, bar.kind_recall, bar.negative_violations, bar.decision_precision) == (0.90, 0.80, 0, 1.0)
    failing = [f"{r.case}/{r.probe.id}" for r in core_rules.results if not r.passed]
    assert thresholds.misses(core_rules, bar) == [], failing
    assert len(core_rules.cases) >= 30 and not core_rules.errors


def test_misses_name_each_missed_bar():
    bar = thresholds.Threshold(recall=0.9, kind_recall=0.8, negative_violations=0, decision_precision=1.0)
    from evals.score import ProbeResult
    from evals.suite import Probe

    def res(kind, passed):
        return ProbeResult("c", Probe(id=f"{kind}-{passed}", kind=kind, terms=["x"]), passed, [])

    s = EngineScore("rules", [CaseScore("c", "rules", [res("fact", True), res("done", False), res("absent", False)],
                                        decisions=2, grounded=1)])
    assert thresholds.misses(s, bar) == [
        "rules: overall recall 0.500 < 0.90",
        "rules: done recall 0.000 < 0.80",
        "rules: 1 negative-probe violation(s) > 0",
        "rules: decision precision 0.500 < 1.00",
    ]


def test_thresholds_file_is_validated(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("[engines.rules]\nrecal = 0.9\n", encoding="utf-8")
    with pytest.raises(InputError, match="recal"):
        thresholds.load(bad)
    bad.write_text("[engines.rules\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad TOML"):
        thresholds.load(bad)


def test_committed_eval_fixtures_are_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("eval_fixture_gen", ROOT / "fixtures" / "evals" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for rel, fn in module.COMMITTED.items():
        assert (ROOT / "fixtures" / "evals" / rel).read_text(encoding="utf-8") == fn(), rel
    assert set(module.GENERATED) == {"huge_line", "long_session"}


def test_generated_transcripts_have_the_planted_shape(tmp_path):
    from evals import generated
    from pipeline.transcripts import read_transcript

    huge = generated.write("huge_line", tmp_path / "huge.jsonl")
    longest = max(len(line) for line in huge.read_bytes().splitlines())
    assert 8_000_000 <= longest < 9_500_000  # one ~8 MB line
    long = read_transcript(str(generated.write("long_session", tmp_path / "long.jsonl")))
    assert len(long.events) >= 300
    python39 = next(ev.index for ev in long.events if "Python 3.9" in ev.text and ev.kind == "assistant_text")
    assert python39 < 0.05 * len(long.events)  # the decisive fact sits in the first 5 %
