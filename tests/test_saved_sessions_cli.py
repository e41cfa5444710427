"""Copilot CLI's legacy ``history-session-state`` file and Gemini CLI's ``/chat save`` checkpoint through the
commands: ``extract-raw``, ``recover``, ``batch`` over the harness folders where they live, ``checkpoint
--transcript``."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from pipeline.batch.discover import discover
from pipeline.cli import main
from pipeline.hooks.checkpoint import hook_main
from pipeline.hooks.locate import session_of_path
from pipeline.state.marker import read_marker
from pipeline.state.store import list_states

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "fixtures" / "copilot" / "history-session.json"
UNITS = ROOT / "fixtures" / "gemini" / "checkpoint-units.json"
DOCS = ROOT / "fixtures" / "gemini" / "checkpoint-docs.json"
LOGS = ROOT / "fixtures" / "gemini" / "logs.json"
SID = json.loads(HISTORY.read_text(encoding="utf-8"))["sessionId"]
HISTORY_NAME = f"session_{SID}_1760016000000.json"
PROJECT_HASH = "5b0f" * 16


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _home(tmp_path: Path) -> Path:
    """A home folder laid out as the two CLIs leave it, with the files around the sessions that are not ones."""
    home = tmp_path / "home"
    legacy = home / ".copilot" / "history-session-state"
    legacy.mkdir(parents=True)
    shutil.copy(HISTORY, legacy / HISTORY_NAME)
    (home / ".copilot" / "config.json").write_text('{"banner": "never", "trusted_folders": ["/home/dev"]}')
    project = home / ".gemini" / "tmp" / PROJECT_HASH
    project.mkdir(parents=True)
    shutil.copy(UNITS, project / "checkpoint-units.json")
    shutil.copy(DOCS, project / "checkpoint-docs.json")
    shutil.copy(LOGS, project / "logs.json")  # Gemini's prompt log lives beside the checkpoints
    (home / ".gemini" / "settings.json").write_text('{"general": {"checkpointing": {"enabled": true}}}')
    return home


def test_extract_raw(capsys):
    code, out, _ = run(capsys, "extract-raw", str(HISTORY))
    assert code == 0
    assert "1. 2025-10-09T13:20:30.398Z: csvtool merge drops rows whose quoted fields contain a newline." in out
    failed = out.split("## Failed Tool Results", 1)[1].split("##", 1)[0]
    assert "bash on rm -rf build/: Permission to run this tool was denied" in failed
    assert "bash on git push -u origin fix-quoted-newlines: rejected by the user" in failed
    assert "- Cwd: /home/dev/csv-tools" in out
    code, out, _ = run(capsys, "extract-raw", str(UNITS))
    assert code == 0 and "- Cwd: /home/dev/weather-cli" in out
    assert "replace on /home/dev/weather-cli/cli.py: [Operation Cancelled] Reason: User did not allow tool call" in out
    assert "Thanks for the context" not in out and "This is the Gemini CLI" not in out


def test_recover(capsys, tmp_path):
    code, out, _ = run(capsys, "recover", str(HISTORY), "--dir", str(tmp_path / "s"), "--dry-run")
    assert code == 0
    assert f"| Cwd: /home/dev/csv-tools | Repo/Branch: csv-tools@unknown | Trigger: recover, engine: rules | " \
           f"Session-Id: {SID}" in out
    assert "keep it stdlib only, no pandas" in out
    code, out, _ = run(capsys, "recover", str(DOCS), "--dir", str(tmp_path / "s"), "--yes")
    assert code == 0 and len(list_states(tmp_path / "s")) == 1


def test_batch_finds_them_where_they_live(capsys, tmp_path):
    home = _home(tmp_path)
    found = discover([str(home / ".copilot"), str(home / ".gemini")])
    names = [Path(c.path).name for c in found.sessions]
    assert names == ["config.json", HISTORY_NAME, "settings.json", "checkpoint-docs.json", "checkpoint-units.json",
                     "logs.json"]  # every .json is a candidate; the worker sets the others aside
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "batch", str(home / ".copilot"), str(home / ".gemini"), "--out", str(out_dir),
                         "--jobs", "1")
    assert code == 0, err
    assert out.startswith("3 session(s), 0 from cache: 3 ok;") and "3 other file(s) skipped" in out
    report = json.loads((out_dir / "report.json").read_text())
    rows = {Path(r["path"]).name: r for r in report["sessions"]}
    assert {n: (r["status"], r.get("format")) for n, r in rows.items()} == {
        HISTORY_NAME: ("ok", "copilot-history"), "checkpoint-units.json": ("ok", "gemini-checkpoint"),
        "checkpoint-docs.json": ("ok", "gemini-checkpoint")}
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert skipped["logs.json"].startswith("not a session transcript (a Gemini CLI prompt log")
    assert set(skipped) == {"logs.json", "config.json", "settings.json"}
    states = sorted(p.name for p in out_dir.glob("*.state.md"))  # a checkpoint holds no session id: its file name
    assert [n.rsplit("-", 1)[0] for n in states] == ["c4c0b323-e248-4fe0-af5e", "checkpoint-docs", "checkpoint-units"]
    assert states[0] == f"{SID}.state.md"


def test_checkpoint_transcript_flag(tmp_path):
    home = _home(tmp_path)
    legacy = home / ".copilot" / "history-session-state" / HISTORY_NAME
    for transcript, store, session in ((legacy, tmp_path / "a", SID), (UNITS, tmp_path / "b", None)):
        out, err = io.StringIO(), io.StringIO()
        code = hook_main(str(transcript), str(store), stdin=io.StringIO(""), stdout=out, stderr=err)
        assert code == 0 and err.getvalue() == ""
        marker = read_marker(store)
        assert marker.transcript == str(transcript) and marker.session_id == session
        assert len(list_states(store)) == 1


def test_session_of_a_copilot_history_path():
    assert session_of_path(f"/h/.copilot/history-session-state/{HISTORY_NAME}") == SID
    assert session_of_path("/h/.gemini/tmp/x/checkpoint-units.json") is None
    assert session_of_path("/h/session_not-a-uuid_1760016000000.json") is None
