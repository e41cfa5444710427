"""``duck-tape status`` (issue 15, item 4): healthy and broken set-ups, text and --json."""

from __future__ import annotations

import io
import json
import shutil
import socket
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.hooks.checkpoint import hook_main

#: The reachability check connects to 127.0.0.1 (a closed port, or a listening socket of the test).
pytestmark = pytest.mark.block_network(allowed_hosts=["127.0.0.1"])
ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPT = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project folder as the working folder, an empty home, no duck-tape variables."""
    home = tmp_path / "home"
    home.mkdir()
    folder = tmp_path / "proj"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "COPILOT_HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_CLI_HOME",
                 "DUCK_TAPE_CONFIG", "DUCK_TAPE_MODEL", "DUCK_TAPE_ENGINE", "DUCK_TAPE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(folder)
    return folder


def status(capsys, *args: str) -> tuple[int, dict]:
    code = main(["status", "--json", *args])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def install(capsys, project: Path) -> None:
    assert main(["init", "--harness", "claude-code", "--root", str(project), "--yes"]) == 0
    capsys.readouterr()


def checkpoint(project: Path, transcript: Path | str) -> None:
    payload = json.dumps({"session_id": "s-1", "transcript_path": str(transcript), "hook_event_name": "PreCompact"})
    hook_main(None, str(project / ".duck-tape"), stdin=io.StringIO(payload), stdout=io.StringIO(), stderr=io.StringIO())


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_healthy_setup(capsys, project):
    install(capsys, project)
    transcript = project / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    checkpoint(project, transcript)
    code, report = status(capsys)
    assert code == 0 and report["healthy"] is True and report["problems"] == []
    [hook] = report["hooks"]
    assert hook["harness"] == "claude-code" and hook["scope"] == "project" and hook["checkpoint"] and hook["restore"]
    assert hook["path"] == str(project / ".claude" / "settings.local.json") and hook["program_found"]
    assert report["marker"]["transcript"] == str(transcript) and report["marker"]["transcript_exists"]
    assert report["last_checkpoint"]["wrote_state"] is True and report["last_checkpoint"]["source"] == "record"
    [state] = report["states"]
    assert state["kind"] == "auto" and state["path"] == report["last_checkpoint"]["state"]
    assert report["engine"]["effective"] == "rules" and report["engine"]["reachable"] is None
    assert report["config"]["engine"] == {"value": "auto", "source": f"file: {ROOT / 'config' / 'default.toml'} [llm].engine"}
    assert set(report) >= {"marker", "states", "context", "engine", "config", "warnings"}


def test_hook_missing_is_a_problem(capsys, project):
    code, report = status(capsys)
    assert code == 1 and report["healthy"] is False
    assert report["problems"] == ["no duck-tape checkpoint hook is installed for this project or user: run duck-tape init"]
    assert report["hooks"] == [] and report["marker"] is None


def test_marker_only_checkpoint_is_a_problem_with_its_reason(capsys, project):
    install(capsys, project)
    checkpoint(project, project / "gone.jsonl")
    code, report = status(capsys)
    assert code == 1
    last = report["last_checkpoint"]
    assert last["wrote_state"] is False and last["state"] is None
    assert last["reason"] == f"no such transcript {project / 'gone.jsonl'} and none found for session s-1"
    assert report["problems"] == [f"the last checkpoint ({last['time']}) wrote only the marker: {last['reason']}"]


def test_marker_only_inferred_from_the_marker_alone(capsys, project):
    install(capsys, project)
    store = project / ".duck-tape"
    store.mkdir()
    (store / ".last-compact").write_text("2026-03-01T10:00:00Z | cwd: /x\n")
    code, report = status(capsys)
    assert code == 1
    assert report["last_checkpoint"] == {"time": "2026-03-01T10:00:00Z", "wrote_state": False, "state": None,
                                         "reason": "no transcript was recorded: the hook got no usable transcript path",
                                         "notes": [], "source": "marker"}


def test_unreachable_model_is_a_problem(capsys, project, monkeypatch):
    install(capsys, project)
    shutil.copy(TRANSCRIPT, project / "t.jsonl")
    checkpoint(project, project / "t.jsonl")
    port = closed_port()
    monkeypatch.setenv("DUCK_TAPE_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("DUCK_TAPE_API_BASE", f"http://127.0.0.1:{port}/v1")
    code, report = status(capsys)
    assert code == 1
    engine = report["engine"]
    assert engine["effective"] == "llm" and engine["reachable"] is False and engine["called"] is False
    assert f"cannot connect to 127.0.0.1:{port}" in engine["detail"]
    assert report["problems"] == [f"the configured model is not reachable: {engine['detail']}"]
    assert report["config"]["model"] == {"value": "openai/gpt-4o-mini", "source": "env: DUCK_TAPE_MODEL"}


def test_reachable_local_server_and_missing_api_key(capsys, project, monkeypatch):
    install(capsys, project)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        monkeypatch.setenv("DUCK_TAPE_MODEL", "openai/local")
        monkeypatch.setenv("DUCK_TAPE_API_BASE", f"http://127.0.0.1:{port}/v1")
        _, report = status(capsys)
    assert report["engine"]["reachable"] is True
    monkeypatch.delenv("DUCK_TAPE_API_BASE")
    monkeypatch.setenv("DUCK_TAPE_MODEL", "anthropic/claude-sonnet-4-5")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _, report = status(capsys)
    assert report["engine"]["reachable"] is False and report["engine"]["detail"] == (
        "ANTHROPIC_API_KEY is not set (the API key of anthropic)")


def test_context_md_health(capsys, project):
    install(capsys, project)
    (project / "CONTEXT.md").write_text("# Project\n\n## Decisions\n\n## Decisions\n")
    _, report = status(capsys)
    assert report["context"]["exists"] and "duplicate section '## Decisions'" in report["context"]["error"]
    assert any(p.startswith("CONTEXT.md cannot be merged into:") for p in report["problems"])


def test_a_hook_whose_program_is_gone_is_a_problem(capsys, project):
    assert main(["init", "--harness", "copilot", "--root", str(project), "--yes",
                 "--command", "/opt/nowhere/duck-tape"]) == 0
    capsys.readouterr()
    code, report = status(capsys)
    assert code == 1
    assert report["hooks"][0]["program"] == "/opt/nowhere/duck-tape" and not report["hooks"][0]["program_found"]
    assert f"{project / '.github' / 'hooks' / 'duck-tape.json'}: the hook runs '/opt/nowhere/duck-tape', which is " \
           "not found here" in report["problems"]


def test_text_output_lists_problems_and_exits_1(capsys, project):
    code = main(["status"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "Hooks:\n  none installed" in out and "Problems:\n  - no duck-tape checkpoint hook" in out
    # each file is named once (issue 24, item 6: 17 lines repeated the full path of default.toml)
    assert "engine = 'auto'  <- file [1] [llm].engine\n" in out
    assert out.count(str(ROOT / "config" / "default.toml")) == 1 and f"  [1] {ROOT / 'config' / 'default.toml'}\n" in out
    assert "1 problem(s) found" in err


def test_gemini_and_codex_hooks_are_listed_with_their_program_not_the_hook_name(capsys, project, monkeypatch):
    monkeypatch.setattr("pipeline.hooks.install_gemini.compress_source", lambda program=None: None)
    program = project / "bin" / "duck-tape"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert main(["init", "--harness", "gemini", "--harness", "codex", "--root", str(project), "--yes",
                 "--command", str(program)]) == 0
    capsys.readouterr()
    _, report = status(capsys)
    assert [(h["harness"], h["scope"], h["checkpoint"], h["restore"], h["program"], h["program_found"])
            for h in report["hooks"]] == [("gemini", "project", True, False, str(program), True),
                                          ("codex", "project", True, True, str(program), True)]


def test_marker_session_state_age_and_the_same_write(capsys, project, monkeypatch):
    """Issue 24, item 6: --json said marker.session null though the marker names one, and a state file's age came
    from the minute in its name ("48 s ago" beside a compaction "10 s ago" for the same write)."""
    from datetime import datetime, timezone

    from pipeline.status import gather

    install(capsys, project)
    transcript = project / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    checkpoint(project, transcript)
    _, report = status(capsys)
    assert report["marker"]["session"] == "s-1"
    marker_time = datetime.fromisoformat(report["marker"]["time"].replace("Z", "+00:00"))
    later = marker_time.replace(second=59) if marker_time.second < 50 else marker_time
    later = later.astimezone(timezone.utc)
    again = gather(project, project / ".duck-tape", project / "CONTEXT.md", now=later)
    [state] = again["states"]
    assert abs(state["age_seconds"] - again["marker"]["age_seconds"]) <= 1


def test_a_missing_root_is_a_path_error(capsys, project):
    """Issue 24, item 6: `status --root /nonexistent` said "no hook installed"."""
    code = main(["status", "--root", str(project / "nowhere")])
    out, err = capsys.readouterr()
    assert code == 2 and "no duck-tape checkpoint hook" not in out
    assert f"Directory '{project / 'nowhere'}' does not exist" in err


def test_hooks_both_per_project_and_per_user_are_flagged(capsys, project):
    install(capsys, project)
    assert main(["init", "--harness", "claude-code", "--user", "--yes"]) == 0
    capsys.readouterr()
    code, report = status(capsys)
    user = Path.home() / ".claude" / "settings.json"
    assert [h["scope"] for h in report["hooks"]] == ["project", "user"]
    assert (f"claude-code: duck-tape hooks are installed in 2 places (project {project / '.claude' / 'settings.local.json'}"
            f", user {user}): each compaction runs every copy; keep one") in report["warnings"]
