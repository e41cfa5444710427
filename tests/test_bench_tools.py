"""The bench's own tools (issue 14): the repeating generator and the bash+jq hook re-creation it is timed against."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from gen import REP, generate  # noqa: E402
from measure import run  # noqa: E402
from sizes import sizes_from_env  # noqa: E402


def test_repeated_chunks_get_fresh_ids_dates_and_text(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = generate(str(path), 1_000_000, chunk_bytes=100_000)
    size = path.stat().st_size
    assert 1_000_000 <= size < 1_000_000 + 20_000
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert len(records) == lines + 1  # the permission-mode line comes first
    uuids = [r["uuid"] for r in records if "uuid" in r]
    assert len(uuids) == len(set(uuids))
    calls = {c["id"] for r in records if r.get("type") == "assistant"
             for c in r["message"]["content"] if c["type"] == "tool_use"}
    results = [c["tool_use_id"] for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], list)
               for c in r["message"]["content"]]
    assert results and set(results) <= calls  # every result names a call of its own copy
    prompts = [r["message"]["content"] for r in records if r.get("type") == "user"
               and isinstance(r["message"]["content"], str)]
    assert prompts[0].endswith("(pass 000000)") and prompts[-1].endswith("(pass 000009)")  # 10 copies
    assert records[1]["timestamp"].startswith("2026-09-01T") and records[-1]["timestamp"].startswith("2026-09-10T")
    assert REP.encode() not in path.read_bytes()


def test_small_files_are_drawn_as_before(tmp_path):
    path = tmp_path / "t.jsonl"
    assert generate(str(path), 50_000) == sum(1 for _ in path.open("rb")) - 1
    assert b"(pass " not in path.read_bytes() and b'"toolu_00000002"' in path.read_bytes()


def test_bench_sizes_parse(monkeypatch):
    monkeypatch.delenv("BENCH_SIZES", raising=False)
    assert sizes_from_env() == [5, 60, 200, 1000]
    monkeypatch.setenv("BENCH_SIZES", "5, 60")
    assert sizes_from_env() == [5, 60]
    monkeypatch.setenv("BENCH_SIZES", "5,big")
    with pytest.raises(SystemExit, match="comma-separated sizes in MB"):
        sizes_from_env()


def test_a_run_past_its_timeout_is_killed_and_flagged():
    result = run(["sleep", "30"], {"PATH": "/usr/bin:/bin"}, timeout=0.5)
    assert result.timed_out and result.wall < 5


needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="bench/bash_hook.sh needs jq")


def _hook(transcript: Path, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    payload = json.dumps({"session_id": "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f", "transcript_path": str(transcript),
                          "cwd": str(cwd), "hook_event_name": "PreCompact", "trigger": "auto"})
    return subprocess.run(["bash", str(ROOT / "bench" / "bash_hook.sh")], input=payload, capture_output=True,
                          text=True, env=env, timeout=60)


@needs_jq
def test_bash_hook_writes_the_old_sections_and_the_marker(tmp_path):
    transcript = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    proc = _hook(transcript, tmp_path)
    assert proc.returncode == 0, proc.stderr
    store = tmp_path / ".duck-tape"
    (state,) = store.glob("*-auto.state.md")
    text = state.read_text()
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## User Prompts (chronological)", "## Tool Calls (chronological)",
                        "## Assistant Messages (last 10, chronological)",
                        "## Potential Decisions (all matching, chronological, deduped)", "## Failed Tool Results",
                        "## Session Metadata"]
    assert "2. 2026-03-10T09:20:35.781Z: no, don't use a fixed window, use the token bucket." in text
    assert "3. 2026-03-10T09:14:52.240Z: Read on /home/dev/shop/src/shop/api/checkout.py" in text
    assert "We're going with a token bucket in Redis because it survives restarts" in text
    assert ": Bash on redis-cli ping: Exit code 1 Could not connect to Redis at 127.0.0.1:6379" in text
    assert "- Branch: feature/rate-limit" in text and (store / ".gitignore").read_text() == "*\n"
    marker = (store / ".last-compact").read_text()
    assert f"| latest-state: {state.name} | transcript: {transcript}" in marker


@needs_jq
def test_bash_hook_keeps_its_5_mib_cap_unless_lifted(tmp_path):
    transcript = tmp_path / "big.jsonl"
    generate(str(transcript), 6 * 1024 * 1024)
    proc = _hook(transcript, tmp_path / "capped")
    assert proc.returncode == 0 and "over the 5242880 byte cap; marker only" in proc.stderr
    assert not list((tmp_path / "capped" / ".duck-tape").glob("*.state.md"))
    assert (tmp_path / "capped" / ".duck-tape" / ".last-compact").exists()
    proc = _hook(transcript, tmp_path / "lifted", dict(os.environ, BASH_HOOK_MAX_BYTES="10000000"))
    assert proc.returncode == 0 and proc.stdout.startswith("Wrote ")
    assert list((tmp_path / "lifted" / ".duck-tape").glob("*-auto.state.md"))
