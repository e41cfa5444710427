"""The ``llm`` row of ``duck-tape eval``: replayed from ``fixtures/cassettes/evals/`` when no model is configured
(``evals.llm_replay``), and no cassette anywhere holds a secret or a credential."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from evals import engines, llm_replay
from pipeline.cli import main
from pipeline.redact import scan
from pipeline.state.parse import parse

ROOT = Path(__file__).resolve().parent.parent
QUIRK = ROOT / "fixtures" / "evals" / "claude-code" / "env-quirk.jsonl"
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
SUITE = """
name: small
cases:
  - id: quirk
    harness: claude-code
    failure_mode: an environment quirk found by trial and error
    transcript: fixtures/evals/claude-code/env-quirk.jsonl
    probes:
      - {id: quirk, kind: fact, terms: ["NODE_OPTIONS=--experimental-vm-modules"]}
"""


@pytest.fixture
def no_model(monkeypatch):
    for name in list(os.environ):
        if name.startswith("DUCK_TAPE_"):
            monkeypatch.delenv(name)


def test_llm_engine_replays_cassettes_without_a_model(no_model):
    assert engines.REGISTRY["llm"].available() is None
    out = engines.REGISTRY["llm"].run(str(QUIRK), NOW)
    state = parse(out.text)
    assert state.trigger == "eval, engine: llm"
    assert any("NODE_OPTIONS=--experimental-vm-modules" in f.text for f in state.facts)
    assert out.transcript is not None and out.state is not None
    from pipeline.stages.validate import grounding_problem

    assert out.state.decisions  # replayed from the stand-in, each one grounded in the transcript
    assert all(grounding_problem(d.evidence, out.transcript) is None for d in out.state.decisions)
    assert {d.origin for d in out.state.decisions} == {"llm"}


def test_a_transcript_without_cassette_is_an_error_for_that_case(no_model, tmp_path):
    changed = tmp_path / "env-quirk.jsonl"
    shutil.copyfile(QUIRK, changed)
    with changed.open("a", encoding="utf-8") as f:
        f.write("\n")
    assert not llm_replay.cassette_for(changed).exists()
    with pytest.raises(RuntimeError, match="no cassette .*record_eval_cassettes.py"):
        llm_replay.run(str(changed), NOW)


def test_an_out_of_date_cassette_is_an_error(no_model, tmp_path, monkeypatch):
    cassette = llm_replay.cassette_for(QUIRK)
    text = cassette.read_text(encoding="utf-8")
    first = text.index("- request:")
    second = text.index("- request:", first + 1)
    shortened = tmp_path / cassette.name
    shortened.write_text(text[:second], encoding="utf-8")  # only the first interaction left
    monkeypatch.setattr(llm_replay, "CASSETTE_DIR", tmp_path)
    with pytest.raises(RuntimeError, match="out of date"):
        llm_replay.run(str(QUIRK), NOW)


def test_eval_all_shows_the_llm_row(no_model, tmp_path, capsys):
    suite = tmp_path / "small.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    main(["eval", "--suite", str(suite), "--engine", "all"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    # issue 17: the harness's own summary is a row too (this case has no compaction: an empty file)
    assert [row.split("|")[1].strip() for row in rows[1:]] == ["baseline", "rules", "llm", "summary"]
    assert rows[3].startswith("| llm | 1.00 (1/1) |")


def test_every_eval_case_has_a_cassette():
    from evals.runner import transcript_path
    from evals.suite import load_suite

    missing = []
    for suite in sorted((ROOT / "evals" / "suites").glob("*.yaml")):
        for case in load_suite(str(suite)).cases:
            if case.generator:
                continue  # written at run time; its cassette is checked by the eval run itself
            if not llm_replay.cassette_for(transcript_path(case, ROOT)).is_file():
                missing.append(case.id)
    assert missing == [], "record with: .venv/bin/python tests/record_eval_cassettes.py"


def test_no_cassette_holds_a_secret_or_a_credential():
    files = sorted((ROOT / "fixtures" / "cassettes").rglob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert scan(text, deep=True) == [], path.name
        lowered = text.lower()
        assert "authorization" not in lowered and "bearer " not in lowered and "sk-local-no-key" not in lowered
