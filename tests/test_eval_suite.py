"""evals.suite: suites are data, validated with extra="forbid"; the core suite covers the issue's failure modes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from evals.suite import DEFAULT_SECTION, Probe, load_suite
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "evals" / "suites" / "core.yaml"


def test_core_suite_has_at_least_30_cases_over_three_harnesses():
    suite = load_suite(CORE)
    assert suite.name == "core"
    assert len(suite.cases) >= 30
    harnesses = Counter(c.harness for c in suite.cases)
    assert set(harnesses) == {"claude-code", "copilot", "opencode"}
    assert min(harnesses.values()) >= 5
    kinds = {p.kind for c in suite.cases for p in c.probes}
    assert kinds == set(DEFAULT_SECTION) - {"absent_status"}  # every kind but the real suite's absent_status


def test_core_suite_transcripts_exist_or_are_generated():
    suite = load_suite(CORE)
    for case in suite.cases:
        if case.generator:
            assert case.transcript.startswith("fixtures/evals/generated/")
            assert not (ROOT / case.transcript).exists()  # large files are written at run time, never committed
        else:
            path = ROOT / case.transcript
            assert path.is_file(), case.id
            assert path.stat().st_size < 64 * 1024, case.id


def test_core_suite_names_the_issues_failure_modes():
    modes = " ".join(c.failure_mode for c in load_suite(CORE).cases).lower()
    for needle in ("list of text blocks", "compaction summary", "ruled out", "sub-agent", "pending", "torn",
                   "second compaction", "rewound", "secrets", "success:false", "export object", "multi-line",
                   "implicitly", "yes, do that", "use x instead", "8 mb", "trial and error", "constraints",
                   "dead end", "300+ event"):
        assert needle in modes, needle


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "suite.yaml"
    p.write_text(text, encoding="utf-8")
    return p


CASE = """
name: t
cases:
  - id: one
    harness: claude-code
    failure_mode: x
    transcript: fixtures/evals/claude-code/redirect.jsonl
    probes:
      - {id: a, kind: workflow, terms: ["inv report"]%s}
"""


def test_unknown_field_is_refused(tmp_path):
    with pytest.raises(InputError) as err:
        load_suite(_write(tmp_path, CASE % ", sectoin: workflow"))
    assert err.value.exit_code == 2
    assert "sectoin" in str(err.value) and "suite.yaml" in str(err.value)


def test_bad_kind_and_blank_term_are_refused(tmp_path):
    with pytest.raises(InputError, match="kind"):
        load_suite(_write(tmp_path, CASE.replace("kind: workflow", "kind: workflw") % ""))
    with pytest.raises(InputError, match="blank"):
        load_suite(_write(tmp_path, CASE.replace('["inv report"]', '["  "]') % ""))


def test_duplicate_ids_are_refused(tmp_path):
    text = CASE % "" + "      - {id: a, kind: done, terms: [x]}\n"
    with pytest.raises(InputError, match="used twice"):
        load_suite(_write(tmp_path, text))


def test_bad_yaml_names_the_line(tmp_path):
    with pytest.raises(InputError) as err:
        load_suite(_write(tmp_path, "name: t\ncases: [\n  - oops: {\n"))
    assert err.value.line is not None and err.value.exit_code == 2


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read it .*expected a suite YAML"):
        load_suite(tmp_path / "nope.yaml")


def test_probe_section_defaults_by_kind():
    assert Probe(id="x", kind="constraint", terms=["a"]).where == "facts"
    assert Probe(id="x", kind="absent", terms=["a"]).where == "file"
    assert Probe(id="x", kind="absent", terms=["a"], section="approved").where == "approved"
    assert Probe(id="x", kind="keep", terms=["a"]).negative


def test_invalid_suite_message_lists_each_problem_by_field(tmp_path):
    """Was a raw pydantic dump with documentation links; now one '<field path>: <message>' per problem."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - id: a\n    harness: claude-code\n    transcript: x.jsonl\n"
                   "    probes: [{id: p, kind: nope, terms: [a]}]\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_suite(bad)
    text = str(info.value)
    assert text.startswith(f"{bad}: invalid suite (3 problem(s)): name: Field required; cases.0.failure_mode: Field required; ")
    assert "cases.0.probes.0.kind: Input should be 'workflow'" in text and "errors.pydantic.dev" not in text
