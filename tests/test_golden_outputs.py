"""Golden files for every markdown output on our own fixtures: extract-raw and recover (rules engine).

The recovered state is produced with a fixed ``now`` (2026-03-10T10:00Z) so the files are stable.
Rewrite after a deliberate change: ``UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden_outputs.py``.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import ROOT, check_golden

from pipeline.recovery import recover
from pipeline.stages import extract
from pipeline.state.parse import parse
from pipeline.transcripts import read_transcript

NOW = datetime(2026, 3, 10, 10, 0, tzinfo=timezone.utc)
FIXTURES = {
    "claude-code": "fixtures/claude-code/checkout-rate-limit.jsonl",
    "copilot-events": "fixtures/copilot/events.jsonl",
    "copilot-legacy": "fixtures/copilot/legacy-session.jsonl",
    "opencode-export": "fixtures/opencode/export.json",
    "opencode-messages": "fixtures/opencode/messages.json",
}


@pytest.fixture(autouse=True)
def _run_from_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the outputs are relative to the repository root


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_extract_raw_golden(name):
    raw = extract.run(read_transcript(FIXTURES[name]))
    check_golden(f"extract-raw/{name}.md", extract.render(raw))


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_recover_golden(name):
    result = recover(FIXTURES[name], now=NOW, mask=True)
    parse(result.text)  # a valid state file
    check_golden(f"recover/{name}.state.md", result.text)


def test_json_array_dump_recovers_the_same_state_as_jsonl():
    jsonl = recover("fixtures/claude-code/checkout-rate-limit.jsonl", now=NOW, mask=True).text
    array = recover("fixtures/claude-code/checkout-rate-limit.json", now=NOW, mask=True).text
    assert array.replace("checkout-rate-limit.json\n", "checkout-rate-limit.jsonl\n") == jsonl
