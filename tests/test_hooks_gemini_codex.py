"""``init --harness gemini|codex`` and the installed hooks run exactly as Gemini CLI and Codex CLI run them
(issue 16): the command from the written settings file, through ``sh -c`` from the project folder, the harness's
payload on stdin and the variables it sets; Gemini's stdout must be one JSON object and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hook_runner import ROOT, run_hook, shim

from pipeline.cli import cli
from pipeline.hooks.install import apply_plan, plan_install
from pipeline.hooks.install_gemini import compress_source
from pipeline.hooks.payload import parse_payload
from pipeline.state.marker import read_marker
from pipeline.state.store import list_states

GEMINI_SESSION = ROOT / "fixtures" / "gemini" / "session.jsonl"
GEMINI_SID = "7e8e808f-8693-4747-bacc-e29443e14c38"
CODEX_SID = "019e2a4b-7c1d-7e30-9a55-3b8f2d6c1e07"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "weather-cli"
    project.mkdir()
    return project


def _commands(settings: Path, event: str) -> list[str]:
    data = json.loads(settings.read_text())
    return [h["command"] for group in data["hooks"][event] for h in group["hooks"]]


# --- Gemini CLI ---------------------------------------------------------------------------------------------


def _gemini_env(project: Path, home: Path) -> dict[str, str]:
    """What gemini-cli's hookRunner sets for a hook (GEMINI_PROJECT_DIR, GEMINI_CWD, CLAUDE_PROJECT_DIR = cwd)."""
    return {"HOME": str(home), "GEMINI_PROJECT_DIR": str(project), "GEMINI_CWD": str(project),
            "GEMINI_SESSION_ID": GEMINI_SID, "CLAUDE_PROJECT_DIR": str(project)}


def _gemini_payload(project: Path, transcript: str, event: str = "PreCompress", **extra) -> dict:
    return {"session_id": GEMINI_SID, "transcript_path": transcript, "cwd": str(project), "hook_event_name": event,
            "timestamp": "2026-05-12T09:14:03.120Z", **extra}


def test_gemini_init_writes_pre_compress_and_keeps_other_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    project = _project(tmp_path)
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "GitHub", "hooks": {"BeforeTool": [
        {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}))
    result = CliRunner().invoke(cli, ["init", "--harness", "gemini", "--root", str(project), "--write"])
    assert result.exit_code == 0, result.output
    data = json.loads(settings.read_text())
    assert data["theme"] == "GitHub"
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./lint.sh"
    assert data["hooks"]["PreCompress"] == [{"matcher": "*", "hooks": [{
        "type": "command", "name": "duck-tape checkpoint",
        "command": 'duck-tape checkpoint --dir "${GEMINI_PROJECT_DIR:-.}/.duck-tape"', "timeout": 30000}]}]
    assert "SessionStart" not in data["hooks"]
    assert "not after a compression, so no restore hook is installed" in result.stderr
    again = CliRunner().invoke(cli, ["init", "--harness", "gemini", "--root", str(project), "--write"])
    assert "already installed" in again.output


def test_gemini_user_install_and_disabled_hooks_are_named(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({"hooksConfig": {"enabled": False}}))
    project = _project(tmp_path)
    plan = plan_install("gemini", project, user=True)
    assert plan.path == home / ".gemini" / "settings.json"
    assert any("hooksConfig.enabled: false" in n for n in plan.notes)
    assert json.loads(plan.new_text)["hooksConfig"] == {"enabled": False}  # never switched on behind the user's back


def test_gemini_pre_compress_hook_writes_the_state_and_prints_only_json(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    project = _project(tmp_path)
    apply_plan(plan_install("gemini", project))
    [command] = _commands(project / ".gemini" / "settings.json", "PreCompress")
    chats = home / ".gemini" / "tmp" / "weather-cli" / "chats"
    chats.mkdir(parents=True)
    transcript = chats / f"session-2026-05-12T08-30-{GEMINI_SID[:8]}.jsonl"
    shutil.copy(GEMINI_SESSION, transcript)
    env = {**_gemini_env(project, home), "GEMINI_CLI_HOME": str(home)}
    bin_dir = shim(tmp_path / "bin")
    proc = run_hook(command, _gemini_payload(project, str(transcript), trigger="auto"), cwd=project, env=env,
                    bin_dir=bin_dir)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)  # the whole stdout is one JSON object
    assert proc.stdout.count("\n") == 1 and set(out) == {"systemMessage"}
    assert out["systemMessage"].startswith("duck-tape: wrote ") and ".last-compact" in out["systemMessage"]
    store = project / ".duck-tape"
    [state] = [s for s in list_states(store) if s.kind == "auto"]
    assert "pre-compact auto" in state.path.read_text()
    assert read_marker(store).transcript == str(transcript)
    # an empty transcript_path (the session is not recorded yet): found by id under GEMINI_CLI_HOME
    (store / ".last-compact").unlink()
    proc = run_hook(command, _gemini_payload(project, "", trigger="manual"), cwd=project, env=env, bin_dir=bin_dir)
    assert json.loads(proc.stdout)["systemMessage"].startswith("duck-tape: wrote ")
    assert "found the session's transcript by id" in proc.stderr
    assert read_marker(store).transcript == str(transcript)


def test_gemini_hook_that_cannot_write_a_state_still_prints_json(tmp_path):
    project = _project(tmp_path)
    apply_plan(plan_install("gemini", project))
    [command] = _commands(project / ".gemini" / "settings.json", "PreCompress")
    proc = run_hook(command, _gemini_payload(project, str(tmp_path / "gone.jsonl"), trigger="auto"), cwd=project,
                    env=_gemini_env(project, tmp_path), bin_dir=shim(tmp_path / "bin"))
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"systemMessage": "duck-tape: wrote "
                                       f"{project}/.duck-tape/.last-compact (marker only)"}
    assert "no such transcript" in proc.stderr


def _fake_gemini(tmp_path: Path, sources: list[str]) -> Path:
    """A Gemini CLI npm install whose compiled core declares ``sources`` as SessionStartSource members."""
    pkg = tmp_path / "lib" / "node_modules" / "@google" / "gemini-cli"
    (pkg / "dist").mkdir(parents=True)
    (pkg / "dist" / "index.js").write_text("#!/usr/bin/env node\n")
    (pkg / "dist" / "index.js").chmod(0o755)
    types = pkg / "node_modules" / "@google" / "gemini-cli-core" / "dist" / "src" / "hooks" / "types.js"
    types.parent.mkdir(parents=True)
    types.write_text("export var SessionStartSource;\n(function (SessionStartSource) {\n" + "".join(
        f'    SessionStartSource["{s.title()}"] = "{s}";\n' for s in sources) + "})(SessionStartSource || (SessionStartSource = {}));\n")
    (tmp_path / "bin").mkdir(exist_ok=True)
    link = tmp_path / "bin" / "gemini"
    link.symlink_to(pkg / "dist" / "index.js")
    return link


def test_compress_source_is_read_from_the_installed_gemini(tmp_path):
    assert compress_source(str(_fake_gemini(tmp_path / "a", ["startup", "resume", "clear"]))) is None
    assert compress_source(str(_fake_gemini(tmp_path / "b", ["startup", "resume", "clear", "compress"]))) == "compress"
    assert compress_source(str(tmp_path / "no-such-gemini")) is None


def test_gemini_restore_hook_installed_when_gemini_sends_a_compress_source(tmp_path, monkeypatch):
    gemini = _fake_gemini(tmp_path, ["startup", "resume", "clear", "compress"])
    monkeypatch.setenv("PATH", f"{gemini.parent}:/usr/bin:/bin")
    project = _project(tmp_path)
    apply_plan(plan_install("gemini", project))
    data = json.loads((project / ".gemini" / "settings.json").read_text())
    [group] = data["hooks"]["SessionStart"]
    assert group["matcher"] == "compress"
    [restore] = [h["command"] for h in group["hooks"]]
    bin_dir = shim(tmp_path / "shim")
    env = _gemini_env(project, tmp_path)
    # nothing saved yet: still one JSON object on stdout
    proc = run_hook(restore, _gemini_payload(project, "", "SessionStart", source="compress"), cwd=project, env=env,
                    bin_dir=bin_dir)
    assert proc.returncode == 0 and proc.stdout == "{}\n"
    [checkpoint] = _commands(project / ".gemini" / "settings.json", "PreCompress")
    run_hook(checkpoint, _gemini_payload(project, str(GEMINI_SESSION), trigger="auto"), cwd=project, env=env,
             bin_dir=bin_dir)
    proc = run_hook(restore, _gemini_payload(project, "", "SessionStart", source="compress"), cwd=project, env=env,
                    bin_dir=bin_dir)
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("# duck-tape: session state restored")
    assert "--units" in out["hookSpecificOutput"]["additionalContext"]


def test_gemini_payload_is_told_apart_from_copilot():
    got = parse_payload(json.dumps(_gemini_payload(Path("/p"), "/h/.gemini/tmp/p/chats/s.jsonl", trigger="auto")))
    assert (got.harness, got.session_id, got.trigger) == ("gemini", GEMINI_SID, "auto")
    got = parse_payload(json.dumps({"hook_event_name": "PreCompact", "session_id": "c2", "timestamp": "2026-01-01T10:00:00Z",
                                    "cwd": "/r", "transcript_path": "/tmp/t.jsonl", "trigger": "auto"}))
    assert got.harness == "copilot"


# --- Codex CLI ----------------------------------------------------------------------------------------------


def _rollout_lines(project: Path) -> list[dict]:
    """A Codex 0.13x rollout: session_meta, turn_context, a user message, commentary, an exec call, final answer."""
    ts = "2026-05-20T10:00:{:02d}.000Z"
    return [
        {"timestamp": ts.format(0), "type": "session_meta", "payload": {
            "id": CODEX_SID, "timestamp": ts.format(0), "cwd": str(project), "originator": "codex_cli_rs",
            "cli_version": "0.131.0", "source": "cli", "git": {"branch": "main"}}},
        {"timestamp": ts.format(1), "type": "turn_context", "payload": {"cwd": str(project), "model": "gpt-5.5"}},
        {"timestamp": ts.format(2), "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}},
        {"timestamp": ts.format(2), "type": "event_msg", "payload": {
            "type": "user_message", "message": "add a --units flag (metric|imperial) to the forecast command in cli.py; "
                                               "do not touch the HTTP client"}},
        {"timestamp": ts.format(3), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "commentary",
            "content": [{"type": "output_text", "text": "I'll read cli.py first."}]}},
        {"timestamp": ts.format(4), "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_1",
            "arguments": json.dumps({"cmd": "sed -n 1,80p cli.py"})}},
        {"timestamp": ts.format(5), "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1", "output": "import click\n\n@click.command()\ndef forecast(): ..."}},
        {"timestamp": ts.format(6), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "phase": "final_answer",
            "content": [{"type": "output_text", "text": "Added --units to forecast in cli.py; metric stays the default."}]}},
        {"timestamp": ts.format(7), "type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t1"}},
    ]


def _codex_home(tmp_path: Path, project: Path) -> tuple[Path, Path]:
    home = tmp_path / "codex-home"
    day = home / "sessions" / "2026" / "05" / "20"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-05-20T12-00-00-{CODEX_SID}.jsonl"
    rollout.write_text("".join(json.dumps(line) + "\n" for line in _rollout_lines(project)))
    return home, rollout


def test_codex_init_writes_both_hooks_and_says_they_must_be_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    project = _project(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--harness", "codex", "--root", str(project), "--write"])
    assert result.exit_code == 0, result.output
    hooks = project / ".codex" / "hooks.json"
    assert _commands(hooks, "PreCompact") == ["duck-tape checkpoint"]
    data = json.loads(hooks.read_text())
    assert data["hooks"]["SessionStart"][0]["matcher"] == "compact"
    assert _commands(hooks, "SessionStart") == ["duck-tape restore --format codex"]
    assert "review and trust them: open /hooks" in result.stderr


def test_codex_user_install_goes_to_codex_home_and_names_a_disabled_feature(tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "gpt-5.5"\n\n[features]\nhooks = false\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    plan = plan_install("codex", _project(tmp_path), user=True)
    assert plan.path == home / "hooks.json"
    assert any("turns hooks off" in n for n in plan.notes)


def test_codex_hooks_run_as_codex_runs_them(tmp_path):
    project = _project(tmp_path)
    home, rollout = _codex_home(tmp_path, project)
    apply_plan(plan_install("codex", project))
    hooks = project / ".codex" / "hooks.json"
    [checkpoint] = _commands(hooks, "PreCompact")
    [restore] = _commands(hooks, "SessionStart")
    bin_dir = shim(tmp_path / "bin")
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(home)}
    pre = {"session_id": CODEX_SID, "turn_id": "019e2a4b-90aa-7c11-8d02-5e6f7a8b9c0d", "transcript_path": None,
           "cwd": str(project), "hook_event_name": "PreCompact", "model": "gpt-5.5", "trigger": "auto"}
    proc = run_hook(checkpoint, pre, cwd=project, env=env, bin_dir=bin_dir)
    assert proc.returncode == 0, proc.stderr
    assert f"found the session's transcript by id: {rollout}" in proc.stderr
    store = project / ".duck-tape"
    [state] = [s for s in list_states(store) if s.kind == "auto"]
    assert "--units" in state.path.read_text()
    assert read_marker(store).transcript == str(rollout)
    start = {"session_id": CODEX_SID, "transcript_path": str(rollout), "cwd": str(project),
             "hook_event_name": "SessionStart", "model": "gpt-5.5", "permission_mode": "default", "source": "compact"}
    proc = run_hook(restore, start, cwd=project, env=env, bin_dir=bin_dir)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "--units" in out["hookSpecificOutput"]["additionalContext"]


def test_codex_rollout_found_by_id_and_payload_harness(tmp_path, monkeypatch):
    from pipeline.hooks.locate import find_transcript

    project = _project(tmp_path)
    home, rollout = _codex_home(tmp_path, project)
    monkeypatch.setenv("CODEX_HOME", str(home))
    got = parse_payload(json.dumps({"session_id": CODEX_SID, "turn_id": "t", "transcript_path": None, "cwd": "/p",
                                    "hook_event_name": "PreCompact", "model": "gpt-5.5", "trigger": "manual"}))
    assert (got.harness, got.transcript_path, got.trigger) == ("codex", None, "manual")
    assert find_transcript(CODEX_SID, harness="codex") == rollout
    assert find_transcript("../../etc", harness="codex") is None


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty home folder, none of the harness folder variables set (``--user`` writes there, never the real one)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "COPILOT_HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.mark.parametrize(("harness", "user_file"), [
    ("claude-code", ".claude/settings.json"), ("copilot", ".copilot/hooks/duck-tape.json"),
    ("opencode", ".config/opencode/plugins/duck-tape.js"), ("gemini", ".gemini/settings.json"),
    ("codex", ".codex/hooks.json")])
def test_user_flag_writes_the_one_user_level_file_of_every_harness(capsys, tmp_path, home, harness, user_file):
    from pipeline.cli import main
    from pipeline.hooks import detect
    from pipeline.hooks.install import target_path

    project = _project(tmp_path)
    assert target_path(harness, project, user=True) == detect.user_path(harness) == home / user_file
    assert main(["init", "--harness", harness, "--root", str(project), "--user", "--yes"]) == 0, capsys.readouterr().err
    assert (home / user_file).is_file()
    assert list(project.iterdir()) == []


# --- Copilot CLI --------------------------------------------------------------------------------------------


def test_copilot_init_says_nothing_is_restored_and_adds_the_resume_line_with_yes(tmp_path):
    (tmp_path / ".github").mkdir()
    instructions = tmp_path / ".github" / "copilot-instructions.md"
    instructions.write_text("# Project rules\n\nUse pytest.\n")
    result = CliRunner().invoke(cli, ["init", "--harness", "copilot", "--root", str(tmp_path), "--write", "--yes"])
    assert result.exit_code == 0, result.output
    assert "sessionStart output is ignored" in result.stderr
    assert instructions.read_text() == ("# Project rules\n\nUse pytest.\n\n- After your context was compacted (or when "
                                        "resuming work), run `duck-tape resume` and continue from the state it prints.\n")
    (tmp_path / ".github" / "hooks" / "duck-tape.json").unlink()
    again = CliRunner().invoke(cli, ["init", "--harness", "copilot", "--root", str(tmp_path), "--write", "--yes"])
    assert "already tells the agent" in again.output and instructions.read_text().count("duck-tape resume") == 1


def test_copilot_resume_line_needs_approval(tmp_path, monkeypatch):
    result = CliRunner().invoke(cli, ["init", "--harness", "copilot", "--root", str(tmp_path)])  # no terminal
    assert result.exit_code == 0 and "Not added" in result.output and "Not written" in result.output
    assert list(tmp_path.iterdir()) == []

    class Terminal:
        def isatty(self) -> bool:
            return True

    answers = iter(["yes", "no", "no", "no"])  # the hook yes; the instructions line, the resume prompt, refining no
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    from pipeline.cli import main

    assert main(["init", "--harness", "copilot", "--root", str(tmp_path)]) == 0
    assert (tmp_path / ".github" / "hooks" / "duck-tape.json").is_file()
    assert not (tmp_path / ".github" / "copilot-instructions.md").exists()
    assert not (tmp_path / ".github" / "skills").exists()


def test_copilot_user_install_offers_the_line_in_the_personal_instructions(tmp_path, home):
    from pipeline.cli import main

    project = _project(tmp_path)
    assert main(["init", "--harness", "copilot", "--root", str(project), "--user", "--yes"]) == 0
    assert "duck-tape resume" in (home / ".copilot" / "copilot-instructions.md").read_text()
    assert not (project / ".github").exists()


# --- Claude Code plugin -------------------------------------------------------------------------------------


def test_claude_plugin_manifest_marketplace_and_command():
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert plugin["name"] == "duck-tape" and [p["name"] for p in market["plugins"]] == ["duck-tape"]
    assert market["plugins"][0]["source"] == "./"
    command = (ROOT / "commands" / "resume.md").read_text()
    assert command.startswith("---\ndescription: ") and "${CLAUDE_PLUGIN_ROOT}/hooks/duck-tape.sh" in command


def test_claude_plugin_hooks_run_as_claude_code_runs_them(tmp_path):
    hooks = ROOT / "hooks" / "hooks.json"
    data = json.loads(hooks.read_text())
    [pre] = _commands(hooks, "PreCompact")
    [start] = _commands(hooks, "SessionStart")
    assert data["hooks"]["SessionStart"][0]["matcher"] == "compact"
    project = _project(tmp_path)
    transcript = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    env = {"HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(ROOT), "CLAUDE_PROJECT_DIR": str(project)}
    bin_dir = shim(tmp_path / "bin")
    sub = project / "src"
    sub.mkdir()
    proc = run_hook(pre, {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(sub),
                          "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
                    cwd=sub, env=env, bin_dir=bin_dir)
    assert proc.returncode == 0, proc.stderr
    assert [s.kind for s in list_states(project / ".duck-tape")] == ["auto"]  # pinned to the project root
    proc = run_hook(start, {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
                            "hook_event_name": "SessionStart", "source": "compact"}, cwd=project, env=env,
                    bin_dir=bin_dir)
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["additionalContext"].startswith("# duck-tape: session state restored")


def test_claude_plugin_launcher_without_duck_tape_never_fails(tmp_path):
    import subprocess

    proc = subprocess.run([str(ROOT / "hooks" / "duck-tape.sh"), "checkpoint"], capture_output=True, text=True,
                          env={"PATH": "/nonexistent", "HOME": str(tmp_path)}, timeout=30)
    assert proc.returncode == 0 and "not installed" in proc.stderr and proc.stdout == ""
    # issue 24, item 2: it named `pip install duck-tape-pipeline`, a package no index serves; now this repository
    proc = subprocess.run([str(ROOT / "hooks" / "duck-tape.sh"), "checkpoint"], capture_output=True, text=True,
                          env={"PATH": "/nonexistent", "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(ROOT)}, timeout=30)
    assert proc.returncode == 0 and f"run  pipx install '{ROOT}'" in proc.stderr and "duck-tape-pipeline" not in proc.stderr


def test_the_plugin_command_is_the_resume_prompt_init_installs():
    """Issue 25: one prompt text, shipped as /duck-tape:resume and installed by init for every harness."""
    from pipeline.hooks.install_prompt import prompt_text

    command = (ROOT / "commands" / "resume.md").read_text()
    assert prompt_text() in command and "`raw_material`" in command and "`save_state`" in command
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["mcpServers"]["duck-tape"] == {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/duck-tape.sh", "args": ["mcp"]}
