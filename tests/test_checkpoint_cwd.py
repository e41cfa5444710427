"""A transcript that names no working folder (Gemini CLI session files) takes the hook payload's ``cwd`` for
the header (trial input: a Gemini checkpoint wrote ``Cwd: unknown`` although the payload said where)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _checkpoint(tmp_path: Path, rows: list[dict], cwd: str) -> str:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    payload = {"session_id": "g1", "transcript_path": str(path), "cwd": cwd, "hook_event_name": "PreCompact",
               "trigger": "auto"}
    subprocess.run([sys.executable, "-m", "pipeline", "checkpoint", "--dir", str(tmp_path / "st")], cwd=tmp_path,
                   input=json.dumps(payload), text=True, capture_output=True, check=True,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]})
    return next((tmp_path / "st").glob("*-auto.state.md")).read_text()


def _rows(cwd: str | None) -> list[dict]:
    extra = {"cwd": cwd} if cwd else {}
    return [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "g1", "timestamp": "2026-09-01T10:00:00.000Z",
         "message": {"role": "user", "content": "Fix the login bug in auth.py"}, **extra},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "g1",
         "timestamp": "2026-09-01T10:00:05.000Z", **extra,
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Looking at auth.py."}]}},
    ]


def test_the_payload_cwd_fills_a_transcript_that_names_none(tmp_path):
    assert "| Cwd: /home/dev/app |" in _checkpoint(tmp_path, _rows(None), "/home/dev/app")


def test_the_transcript_own_cwd_wins(tmp_path):
    assert "| Cwd: /srv/shop |" in _checkpoint(tmp_path, _rows("/srv/shop"), "/home/dev/app")


def test_a_relative_payload_cwd_is_not_taken(tmp_path):
    assert "| Cwd: unknown |" in _checkpoint(tmp_path, _rows(None), "relative/dir")
