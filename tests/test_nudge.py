"""``duck-tape nudge`` (issue 17 §4): the after-each-turn context line, once per threshold per session."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import entry
from pipeline.hooks import nudge
from pipeline.hooks.install import plan_install
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SESSION = "2f6c1e0a-5b7d-4c3e-9a21-7d4e8b0c6f13"


def _assistant(n: int, *, fresh: int, read: int, created: int, model: str = "claude-sonnet-4-5-20250929",
               sidechain: bool = False) -> dict:
    return {"parentUuid": f"u{n - 1}", "isSidechain": sidechain, "type": "assistant", "uuid": f"u{n}",
            "sessionId": SESSION, "timestamp": f"2026-09-01T10:{n:02d}:00.000Z",
            "message": {"id": f"msg_{n:04d}", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": "Updated src/shop/limits.py."}],
                        "usage": {"input_tokens": fresh, "cache_read_input_tokens": read,
                                  "cache_creation_input_tokens": created, "output_tokens": 312}}}


def _user(n: int, text: str = "keep going with the refund endpoint") -> dict:
    return {"parentUuid": f"u{n - 1}", "isSidechain": False, "type": "user", "uuid": f"u{n}", "sessionId": SESSION,
            "timestamp": f"2026-09-01T10:{n:02d}:30.000Z", "message": {"role": "user", "content": text}}


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _append(path: Path, *records: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)


def test_each_threshold_fires_once(tmp_path):
    store = tmp_path / ".duck-tape"
    t = _write(tmp_path / f"{SESSION}.jsonl", [_user(1), _assistant(2, fresh=2_000, read=120_000, created=20_000)])
    assert nudge.nudge(str(t), SESSION, str(store), env={}) is None  # 142k of 200k: 71 %
    _append(t, _user(3), _assistant(4, fresh=1_500, read=140_000, created=10_500))  # 152k: 76 %
    assert nudge.nudge(str(t), SESSION, str(store), env={}) == (
        "Context 76 % (152k/200k): a good moment to checkpoint, before compaction does it under pressure.")
    assert nudge.nudge(str(t), SESSION, str(store), env={}) is None  # 75 % fired already
    _append(t, _user(5), _assistant(6, fresh=900, read=170_000, created=7_100))  # 178k: 89 %
    assert nudge.nudge(str(t), SESSION, str(store), env={}) == (
        "Context 89 % (178k/200k): checkpoint now, before compaction does it under pressure.")
    assert nudge.nudge(str(t), SESSION, str(store), env={}) is None
    assert json.loads((store / ".nudge.json").read_text())["sessions"] == {SESSION: [75, 88]}
    # another session in the same store starts over
    assert nudge.nudge(str(t), "other-session", str(store), env={}).startswith("Context 89 % ")


def test_first_seen_above_88_gets_only_the_88_line(tmp_path):
    t = _write(tmp_path / "s.jsonl", [_assistant(1, fresh=1_000, read=180_000, created=0)])
    assert nudge.nudge(str(t), "s", str(tmp_path), env={}).startswith("Context 90 % (181k/200k): checkpoint now")
    _append(t, _assistant(2, fresh=1_000, read=150_000, created=0))  # after a drop, 75 % does not fire later
    assert nudge.nudge(str(t), "s", str(tmp_path), env={}) is None


def test_an_unknown_model_says_assumed(tmp_path):
    t = _write(tmp_path / "s.jsonl", [_assistant(1, fresh=160_000, read=0, created=0, model="mystery-model")])
    assert nudge.nudge(str(t), "s", str(tmp_path), env={}) == (
        "Context 80 % (160k/200k, assumed 200k): a good moment to checkpoint, before compaction does it under "
        "pressure.")


@pytest.mark.parametrize("model, tokens, env, expected", [
    ("claude-sonnet-4-5-20250929", 150_000, {}, (200_000, False)),
    ("claude-sonnet-4-5-20250929[1m]", 150_000, {}, (1_000_000, False)),
    ("claude-opus-4-1", 250_000, {}, (1_000_000, True)),  # more than 200k: only the 1M variant holds it
    (None, 10_000, {}, (200_000, True)),
    ("claude-sonnet-4-5", 10_000, {"DUCK_TAPE_CONTEXT_LIMIT": "1m"}, (1_000_000, False)),
    ("claude-sonnet-4-5", 10_000, {"DUCK_TAPE_CONTEXT_LIMIT": "120000"}, (120_000, False)),
    ("claude-sonnet-4-5", 10_000, {"DUCK_TAPE_CONTEXT_LIMIT": "lots"}, (200_000, False)),
])
def test_window(model, tokens, env, expected):
    assert nudge.window(model, tokens, env) == expected


def test_no_usage_record_is_silent(tmp_path):
    t = _write(tmp_path / "s.jsonl", [_user(1), _user(2, "what next?")])
    assert nudge.nudge(str(t), "s", str(tmp_path / "store"), env={}) is None
    assert not (tmp_path / "store").exists()
    assert nudge.nudge(str(tmp_path / "missing.jsonl"), "s", str(tmp_path), env={}) is None


def test_sidechain_and_synthetic_usage_are_not_the_context(tmp_path):
    t = _write(tmp_path / "s.jsonl", [
        _assistant(1, fresh=1_000, read=20_000, created=0),
        _assistant(2, fresh=190_000, read=0, created=0, sidechain=True),
        _assistant(3, fresh=190_000, read=0, created=0, model="<synthetic>"),
    ])
    assert nudge.last_usage(str(t)) == (21_000, "claude-sonnet-4-5-20250929")


def test_the_tail_grows_until_a_usage_record_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(nudge, "TAIL_BYTES", 4096)
    t = _write(tmp_path / "s.jsonl", [_assistant(1, fresh=2_000, read=150_000, created=0)]
               + [_user(2, "x" * 500) for _ in range(100)])  # ~60 KB after the usage record
    assert nudge.last_usage(str(t)) == (152_000, "claude-sonnet-4-5-20250929")
    monkeypatch.setattr(nudge, "MAX_TAIL_BYTES", 16_384)  # a cap below the distance: not found, never the whole file
    assert nudge.last_usage(str(t)) is None


def test_hook_prints_a_system_message_for_the_user(tmp_path, capsys):
    t = _write(tmp_path / f"{SESSION}.jsonl", [_assistant(1, fresh=1_000, read=152_000, created=0)])
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(t), "cwd": str(tmp_path),
                          "hook_event_name": "Stop", "stop_hook_active": False})
    assert nudge.hook_main(None, None, stdin=io.StringIO(payload)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"systemMessage": "Context 76 % (153k/200k): a good moment to checkpoint, before compaction does "
                                    "it under pressure.", "suppressOutput": True}
    assert (tmp_path / ".duck-tape" / ".nudge.json").is_file()  # the payload's cwd holds the store
    assert nudge.hook_main(None, None, stdin=io.StringIO("not json")) == 0
    assert nudge.hook_main(None, None, stdin=io.StringIO("")) == 0
    assert capsys.readouterr().out == ""


def test_fast_lane_runs_without_click_or_pydantic(tmp_path):
    t = _write(tmp_path / "s.jsonl", [_assistant(1, fresh=1_000, read=170_000, created=0)])
    code = ("import sys; from pipeline.entry import main; rc = main(['nudge', '--transcript', sys.argv[1], '--dir', "
            "sys.argv[2], '--format', 'plain']); "
            "print(rc, [m for m in ('click', 'pydantic', 'litellm') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code, str(t), str(tmp_path / "store")], capture_output=True,
                          text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == [
        "Context 85 % (171k/200k): a good moment to checkpoint, before compaction does it under pressure.", "0 []"]
    assert entry._fast_nudge(["--bogus"]) is None  # click handles (and rejects) other shapes
    assert entry._fast_nudge(["--format", "xml"]) is None


def test_init_nudge_adds_a_stop_hook(tmp_path):
    plan = plan_install("claude-code", tmp_path, command="duck-tape", nudge=True)
    stop = json.loads(plan.new_text)["hooks"]["Stop"]
    assert stop == [{"hooks": [{"type": "command", "timeout": 5,
                                "command": 'duck-tape nudge --dir "${CLAUDE_PROJECT_DIR:-.}/.duck-tape"'}]}]
    path = plan.path
    path.parent.mkdir(parents=True)
    path.write_text(plan.new_text, encoding="utf-8")
    assert not plan_install("claude-code", tmp_path, command="duck-tape", nudge=True).changed  # idempotent
    with pytest.raises(InputError, match="--nudge is only for claude-code"):
        plan_install("copilot", tmp_path, command="duck-tape", nudge=True)
