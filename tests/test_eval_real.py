"""The real-session suite (issue 12): ``../shared/corpus/probes.json`` read as a suite with the corpus's exact
scoring rule, and the ratchet ``make test`` holds the rules engine to (``[suites.real.rules]`` of
``evals/thresholds.toml``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import corpus, engines, runner, thresholds
from evals.score import check
from evals.sections import views
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent

STATE = """# Agent State

Session: s | Cwd: /x | Repo/Branch: r@main | Trigger: t
Created: 2026-01-01T12:00:00Z

## Approved Workflow
Port the exporter to async.

## Position
- **Current:** wiring the exporter
- **Done:**
  - wrote exporter_async.py
- **Remaining:**
  - run the migration dry-run

## Decision Log
2026-01-01T10:00:00Z APPROVED: use httpx for the client - async native
2026-01-01T10:05:00Z APPROVED: single commit for the refactor - recommended, awaiting the user
2026-01-01T10:06:00Z APPROVED: keep aiohttp - faster (later rejected)

## Established Facts
pytest-asyncio needs asyncio_mode = auto in pyproject.toml

## Re-derivation
- Run: pytest -q
"""


def _write(tmp_path: Path, probes: dict) -> Path:
    path = tmp_path / "probes.json"
    path.write_text(json.dumps(probes), encoding="utf-8")
    return path


def _one(tmp_path: Path, probe: dict):
    suite = corpus.load(_write(tmp_path, {"claude-code-x.jsonl": [probe]}))
    [case] = suite.cases
    return check(case.id, case.probes[0], views(STATE))


def test_corpus_file_becomes_a_suite_with_cases_named_after_transcripts(tmp_path):
    path = _write(tmp_path, {
        "claude-code-2.1.89-main/87cd.jsonl": [{"id": "a", "kind": "workflow", "sections": ["Approved Workflow"],
                                                 "all": ["async"], "note": "n"}],
        "copilot-cli-legacy.jsonl": [{"id": "b", "kind": "keep", "sections": ["*"], "all": ["6380"]}],
    })
    suite = corpus.load(path)
    assert suite.name == f"real:{tmp_path.name}"  # named by its folder: no bars of the named sets apply to it
    assert corpus.load(path, "real").name == "real"
    assert [(c.id, c.harness) for c in suite.cases] == [("87cd", "claude-code"), ("copilot-cli-legacy", "copilot")]
    assert suite.cases[0].transcript == str(tmp_path.resolve() / "claude-code-2.1.89-main" / "87cd.jsonl")
    assert suite.cases[0].probes[0].matching == "substring"


def test_substring_matching_and_any_of_several_sections(tmp_path):
    # the corpus rule is a plain substring: "export" matches inside "exporter"
    assert _one(tmp_path, {"id": "p", "kind": "workflow", "sections": ["Approved Workflow"], "all": ["export"]}).passed
    # any listed section: the fact is in Established Facts, not in Remaining
    r = _one(tmp_path, {"id": "p", "kind": "fact", "sections": ["Position.Remaining", "Established Facts"],
                        "all": ["asyncio_mode", "auto"]})
    assert r.passed
    # all terms must be in ONE entry: "httpx" is a decision, "pytest" a fact
    r = _one(tmp_path, {"id": "p", "kind": "fact", "sections": ["Established Facts", "Decision Log"],
                        "all": ["httpx", "pytest-asyncio"]})
    assert not r.passed and r.reason == "no entry holds every term"


def test_status_needs_a_decision_of_that_status_and_later_rejected_counts_as_rejected(tmp_path):
    approved = {"id": "p", "kind": "approved", "sections": ["Decision Log"], "status": "APPROVED"}
    assert _one(tmp_path, {**approved, "all": ["httpx"]}).passed
    assert not _one(tmp_path, {**approved, "all": ["aiohttp"]}).passed
    rejected = {"id": "p", "kind": "rejected", "sections": ["Decision Log"], "status": "REJECTED"}
    assert _one(tmp_path, {**rejected, "all": ["aiohttp"]}).passed
    assert not _one(tmp_path, {**rejected, "all": ["httpx"]}).passed


def test_none_fails_when_any_term_occurs(tmp_path):
    none = {"id": "p", "kind": "absent", "sections": ["Approved Workflow", "Established Facts"]}
    r = _one(tmp_path, {**none, "none": ["$ARGUMENTS", "asyncio_mode"]})
    assert not r.passed and r.violation and r.checked == ["pytest-asyncio needs asyncio_mode = auto in pyproject.toml"]
    assert _one(tmp_path, {**none, "none": ["$ARGUMENTS", "You MUST"]}).passed


def test_absent_status_looks_at_the_what_and_honours_unless(tmp_path):
    probe = {"id": "p", "kind": "absent_status", "sections": ["Decision Log"], "status": "APPROVED"}
    assert not _one(tmp_path, {**probe, "term": "httpx"}).passed
    # "single" is APPROVED but its line says it awaits the user: no violation
    assert _one(tmp_path, {**probe, "term": "single", "unless": ["await", "pending"]}).passed
    assert not _one(tmp_path, {**probe, "term": "single", "unless": ["pending"]}).passed
    # the term only in the reasoning part (after " - ") is no violation
    assert _one(tmp_path, {**probe, "term": "native"}).passed


def test_keep_is_all_over_the_whole_file(tmp_path):
    keep = {"id": "p", "kind": "keep", "sections": ["*"]}
    assert _one(tmp_path, {**keep, "all": ["exporter_async.py", "dry-run"]}).passed
    r = _one(tmp_path, {**keep, "all": ["10.10.0.14"]})
    assert not r.passed and r.violation


@pytest.mark.parametrize("content, message", [
    ("{", "bad JSON"),
    ("[]", "a JSON list: expected a corpus probes file"),
    ('{"a.jsonl": [{"id": "p", "kind": "fact", "sections": ["Nowhere"], "all": ["x"]}]}', "unknown section 'Nowhere'"),
    ('{"a.jsonl": [{"id": "p", "kind": "fact", "sections": ["*"]}]}', "expected 'all' or 'none'"),
    ('{"a.jsonl": [{"id": "p", "kind": "facts", "sections": ["*"], "all": ["x"]}]}', "kind"),
])
def test_bad_probe_files_are_refused_naming_the_file(tmp_path, content, message):
    path = tmp_path / "probes.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        corpus.load(path)
    assert str(path) in str(err.value)


def test_missing_corpus_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.setenv("DUCK_TAPE_CORPUS", str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="DUCK_TAPE_CORPUS"):
        corpus.load()


def test_real_suite_bars_are_read_per_suite(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("[engines.rules]\nrecall = 0.9\n[suites.real.rules]\nrecall = 0.3\ncase_errors = 1\n",
                    encoding="utf-8")
    assert thresholds.load(path)["rules"].recall == 0.9
    assert thresholds.load(path, suite="real")["rules"].recall == 0.3
    assert thresholds.load(path, suite="core")["rules"].recall == 0.9


@pytest.mark.corpus
def test_rules_engine_meets_the_real_suite_ratchet():
    """The honest number: blind-annotated probes on real public sessions.  The bar is a ratchet (raised to what
    the engine reaches; lowering it needs a reason in the commit)."""
    suite = corpus.load()
    assert len(suite.cases) == 11 and sum(len(c.probes) for c in suite.cases) == 96
    [score] = runner.run([suite], [engines.REGISTRY["rules"]])
    bar = thresholds.load(suite="real")["rules"]
    failing = [f"{r.case}/{r.probe.id}" for r in score.results if not r.passed]
    assert thresholds.misses(score, bar) == [], failing
    # no state file grows past 12 KB on any corpus transcript (issue 21 "Bars"; the sections' budgets grow with the
    # session, issue 12 held them to 8 KB)
    assert max(c.state_bytes for c in score.cases) <= 12 * 1024, {c.case: c.state_bytes for c in score.cases}


def test_eval_report_is_masked(tmp_path, capsys):
    """A failing probe's terms and checked entries may hold a planted secret: the printed report is masked."""
    from pipeline.cli import main

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    transcript = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: t\nversion: 1\ncases:\n  - id: c\n    harness: claude-code\n    failure_mode: x\n"
        f"    transcript: {transcript}\n    probes:\n      - {{id: p, kind: fact, terms: ['{secret}']}}\n",
        encoding="utf-8",
    )
    report = tmp_path / "r.md"
    main(["eval", "--suite", str(suite), "--engine", "baseline", "--report", str(report)])
    out = capsys.readouterr().out
    assert secret not in out and secret not in report.read_text(encoding="utf-8")
    assert "<REDACTED>" in out


CORPUS2 = ROOT.parent / "shared" / "corpus2" / "probes.json"


@pytest.mark.skipif(not CORPUS2.is_file(), reason="the second development set (shared/corpus2) is not beside this checkout")
def test_rules_engine_meets_the_second_real_suite_ratchet():
    """The second development set (issue 21 §5): 18 more real sessions, probes written blind; a ratchet of its own
    (``[suites.real2.rules]``), and no state file over 12 KB."""
    suite = corpus.load(corpus.alias_path("real2"), "real2")
    assert suite.name == "real2" and len(suite.cases) == 18
    [score] = runner.run([suite], [engines.REGISTRY["rules"]])
    bar = thresholds.load(suite="real2")["rules"]
    failing = [f"{r.case}/{r.probe.id}" for r in score.results if not r.passed]
    assert bar.recall >= 0.71 and thresholds.misses(score, bar) == [], failing
    assert max(c.state_bytes for c in score.cases) <= 12 * 1024, {c.case: c.state_bytes for c in score.cases}


def test_a_real_suite_without_bars_of_its_own_is_not_held_to_the_core_bars(tmp_path):
    (tmp_path / "t.toml").write_text("[engines.rules]\nrecall = 0.9\n[suites.real.rules]\nrecall = 0.8\n")
    assert thresholds.load(tmp_path / "t.toml", suite="real:corpus3") == {}
    assert thresholds.load(tmp_path / "t.toml", suite="real")["rules"].recall == 0.8
    assert thresholds.load(tmp_path / "t.toml", suite="core")["rules"].recall == 0.9
