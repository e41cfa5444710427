"""Issue 14 item 1: no default cap skips a real session; a cap still applies when set and says what to set."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from pipeline.hooks.checkpoint import hook_main
from pipeline.state.marker import read_marker
from pipeline.state.store import list_states
from pipeline.transcripts.safety import DEFAULT_MAX_BYTES, HOOK_MAX_BYTES, RECOVER_MAX_BYTES

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from gen import generate  # noqa: E402  (bench/gen.py: the seeded generator the benchmarks use)


def _hook(payload: dict, store: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = hook_main(None, str(store), stdin=io.StringIO(json.dumps(payload)), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_default_cap_is_one_gib_on_every_path():
    assert HOOK_MAX_BYTES == RECOVER_MAX_BYTES == DEFAULT_MAX_BYTES == 1024 ** 3


@pytest.fixture(scope="module")
def big_transcript(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f.jsonl"
    generate(str(path), 20 * 1024 * 1024)
    return path


def test_checkpoint_of_a_20_mb_transcript_with_no_variable_set_writes_a_state_file(big_transcript, tmp_path, monkeypatch):
    monkeypatch.delenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", raising=False)
    assert big_transcript.stat().st_size > 20 * 1024 * 1024
    store = tmp_path / ".duck-tape"
    code, out, err = _hook({"session_id": "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f", "transcript_path": str(big_transcript),
                            "hook_event_name": "PreCompact", "trigger": "auto"}, store)
    states = list_states(store)
    assert code == 0 and [s.kind for s in states] == ["auto"], err
    assert out.startswith(f"Wrote {states[0].path}")
    text = states[0].path.read_text()
    assert "Trigger: pre-compact auto, engine: rules" in text and "token bucket in Redis" in text
    assert read_marker(store).latest_state == states[0].path.name


def test_a_cap_set_by_the_user_still_applies_and_says_what_to_set(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    generate(str(path), 50_000)
    size = path.stat().st_size
    monkeypatch.setenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "10000")
    code, _, err = _hook({"transcript_path": str(path)}, tmp_path / "store")
    assert code == 0 and list_states(tmp_path / "store") == []
    assert f"over the cap of 10000 bytes (raise it with --max-bytes {size} or DUCK_TAPE_MAX_TRANSCRIPT_BYTES={size}" in err
