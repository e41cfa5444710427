"""``duck-tape init`` sets everything up (issue 15, item 3): harness detection, --yes, --user, restore on by
default where the harness can inject context, the running duck-tape's path when it is not on PATH, the personal
settings file kept out of git, and the --json report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.hooks import detect

CHECKPOINT = 'duck-tape checkpoint --dir "${CLAUDE_PROJECT_DIR:-.}/.duck-tape"'


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty home folder with no harness settings (and none of the harness variables set)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "COPILOT_HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def test_detect_finds_project_and_home_folders_in_registry_order(home, project):
    (project / ".opencode").mkdir()
    (project / ".claude").mkdir()
    (home / ".copilot").mkdir()
    found = detect.detect(project)
    assert [f.harness.name for f in found] == ["claude-code", "copilot", "opencode"]
    assert found[0].evidence == (project / ".claude",)
    assert found[1].evidence == (home / ".copilot",)
    assert detect.detect(project, {"HOME": str(home), "COPILOT_HOME": str(home / "elsewhere")})[1].harness.name == "opencode"


def test_registry_covers_the_five_harnesses_and_user_files(home):
    assert [h.name for h in detect.HARNESSES] == ["claude-code", "copilot", "opencode", "gemini", "codex"]
    assert detect.user_path("claude-code") == home / ".claude" / "settings.json"
    assert detect.user_path("copilot") == home / ".copilot" / "hooks" / "duck-tape.json"
    assert detect.user_path("opencode", {"HOME": str(home), "XDG_CONFIG_HOME": "/x/cfg"}) == Path(
        "/x/cfg/opencode/plugins/duck-tape.js")
    assert detect.user_path("claude-code", {"CLAUDE_CONFIG_DIR": "/c"}) == Path("/c/settings.json")


def test_init_without_harness_installs_for_each_detected_one_with_yes(capsys, home, project):
    (project / ".claude").mkdir()
    (project / ".opencode").mkdir()
    code, out, err = run(capsys, "init", "--root", str(project), "--yes")
    assert code == 0, err
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert settings["hooks"]["PreCompact"][0]["hooks"][0]["command"] == CHECKPOINT
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "compact"  # restore on by default for Claude Code
    assert (project / ".opencode" / "plugins" / "duck-tape.js").is_file()
    assert not (project / ".github").exists()
    assert f"Wrote {project / '.claude' / 'settings.local.json'}" in out
    assert f"# claude-code (in use: {project / '.claude'}): " in out


def test_init_with_nothing_found_is_a_usage_error_naming_what_it_looked_for(capsys, home, project):
    code, out, err = run(capsys, "init", "--root", str(project), "--yes")
    assert code == 2 and out == ""
    assert "no agent harness found in use here" in err and ".github/hooks/" in err and "--harness claude-code" in err


def test_a_detected_harness_without_installer_is_skipped_not_an_error(capsys, home, project, monkeypatch):
    zed = detect.Harness("zed", (".zed",), lambda env: Path(env.get("HOME", "/")) / ".zed", "settings.json")
    monkeypatch.setattr(detect, "HARNESSES", (*detect.HARNESSES, zed))
    monkeypatch.setitem(detect.BY_NAME, "zed", zed)
    (project / ".zed").mkdir()
    (project / ".claude").mkdir()
    code, out, err = run(capsys, "init", "--root", str(project), "--yes", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["skipped"] == [{"harness": "zed", "reason": "this duck-tape has no installer for it yet"}]
    assert [h["harness"] for h in report["harnesses"]] == ["claude-code"]


def test_copilot_gets_no_restore_by_default_and_an_explicit_restore_is_refused(capsys, home, project):
    code, out, err = run(capsys, "init", "--harness", "copilot", "--root", str(project), "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["harnesses"][0]["restore"] is False
    code, _, err = run(capsys, "init", "--harness", "copilot", "--root", str(project), "--yes", "--restore")
    assert code == 2 and "--restore is only for claude-code" in err


def test_user_installs_into_the_user_level_settings(capsys, home, project):
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--user", "--root", str(project), "--yes",
                         "--json")
    assert code == 0, err
    target = home / ".claude" / "settings.json"
    report = json.loads(out)
    prompt = home / ".claude" / "commands" / "duck-tape-resume.md"  # issue 25: the resume prompt, user-level too
    assert report["written"] == [str(target), str(prompt)] and report["harnesses"][0]["scope"] == "user"
    assert report["prompts"] == [{"harness": "claude-code", "paths": [str(prompt)], "run_as": "/duck-tape-resume",
                                  "installed": True}]
    assert json.loads(target.read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"] == CHECKPOINT
    assert not (project / ".claude").exists()


def test_hook_command_is_the_running_duck_tape_when_not_on_path(capsys, home, project, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    program = Path(sys.executable).parent / "duck-tape"
    assert program.is_file(), "the test interpreter's environment has the duck-tape console script"
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--yes", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["warnings"] == [f"duck-tape is not on PATH: the hook calls {program.absolute()}"]
    command = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]["PreCompact"][0][
        "hooks"][0]["command"]
    assert command == f'{program.absolute()} checkpoint --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape"'


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def test_the_personal_settings_file_is_kept_out_of_git_once(capsys, home, project):
    assert _git(project, "init", "-q").returncode == 0
    settings = project / ".claude" / "settings.local.json"
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--yes")
    assert code == 0, err
    exclude = project / ".git" / "info" / "exclude"
    assert "/.claude/settings.local.json" in exclude.read_text()
    assert _git(project, "check-ignore", "-q", str(settings)).returncode == 0
    assert f"Added settings.local.json to {exclude}" in out
    before = exclude.read_text()
    settings.unlink()  # written again: already ignored, so the exclude file is not touched
    assert run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--yes")[0] == 0
    assert exclude.read_text() == before


def test_a_file_git_already_ignores_and_a_shared_file_are_left_alone(capsys, home, project):
    assert _git(project, "init", "-q").returncode == 0
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    exclude = project / ".git" / "info" / "exclude"
    before = exclude.read_text() if exclude.is_file() else None
    assert run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--yes")[0] == 0
    assert run(capsys, "init", "--harness", "claude-code", "--project", "--root", str(project), "--yes")[0] == 0
    assert (exclude.read_text() if exclude.is_file() else None) == before


def test_init_json_shape_for_a_dry_run(capsys, home, project):
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--harness", "copilot", "--root", str(project),
                         "--dry-run", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {"command", "root", "user", "written", "harnesses", "skipped", "prompts", "warnings"}
    assert [(p["harness"], p["installed"]) for p in report["prompts"]] == [("claude-code", False), ("copilot", False)]
    assert report["command"] == "init" and report["written"] == [] and report["user"] is False
    assert [(h["harness"], h["scope"], h["changed"], h["written"]) for h in report["harnesses"]] == [
        ("claude-code", "project-local", True, False), ("copilot", "project", True, False)]
    assert set(report["harnesses"][0]) == {"harness", "path", "scope", "restore", "changed", "written", "backup",
                                           "git_excluded", "evidence"}
    assert not (project / ".claude").exists()


# --- after the merge of i15 with i16/i17: Gemini and Codex in the registry, --nudge, one --user mechanism -------


def test_detection_finds_gemini_and_codex_and_init_sets_them_up(capsys, home, project, monkeypatch):
    monkeypatch.setattr("pipeline.hooks.install_gemini.compress_source", lambda program=None: None)
    (project / ".gemini").mkdir()
    (home / ".codex").mkdir()
    found = detect.detect(project)
    assert [(f.harness.name, f.evidence) for f in found] == [("gemini", (project / ".gemini",)),
                                                              ("codex", (home / ".codex",))]
    code, out, err = run(capsys, "init", "--root", str(project), "--yes", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [(h["harness"], h["scope"], h["restore"], h["written"]) for h in report["harnesses"]] == [
        ("gemini", "project", False, True), ("codex", "project", True, True)]  # this Gemini CLI: no restore hook
    codex = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert codex["SessionStart"][0]["matcher"] == "compact"
    assert "PreCompress" in json.loads((project / ".gemini" / "settings.json").read_text())["hooks"]
    assert any(w.startswith("codex: Codex runs hooks") for w in report["warnings"])  # the installer's own notes


def test_no_restore_leaves_the_codex_session_start_hook_out(capsys, home, project):
    code, out, err = run(capsys, "init", "--harness", "codex", "--root", str(project), "--yes", "--no-restore",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["harnesses"][0]["restore"] is False
    assert set(json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]) == {"PreCompact"}


def test_user_codex_and_gemini_go_to_their_home_variables(capsys, home, project, monkeypatch, tmp_path):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    assert detect.user_path("codex") == tmp_path / "codex-home" / "hooks.json"
    assert detect.user_path("gemini") == tmp_path / "gemini-home" / ".gemini" / "settings.json"
    code, out, err = run(capsys, "init", "--harness", "codex", "--harness", "gemini", "--user", "--root",
                         str(project), "--yes", "--json")
    assert code == 0, err
    skill = home / ".agents" / "skills" / "duck-tape-resume"  # issue 25: Codex reads personal skills there
    assert json.loads(out)["written"] == [str(tmp_path / "codex-home" / "hooks.json"),
                                          str(tmp_path / "gemini-home" / ".gemini" / "settings.json"),
                                          str(skill / "SKILL.md"), str(skill / "agents" / "openai.yaml"),
                                          str(tmp_path / "gemini-home" / ".gemini" / "commands" / "duck-tape" /
                                              "resume.toml")]
    assert list(project.iterdir()) == []


def test_nudge_goes_to_claude_code_and_is_left_out_for_a_detected_harness_that_cannot_take_it(capsys, home, project):
    (project / ".claude").mkdir()
    (project / ".opencode").mkdir()
    code, out, err = run(capsys, "init", "--root", str(project), "--yes", "--nudge", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert "opencode: --nudge left out: it is for claude-code only" in report["warnings"]
    stop = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]["Stop"]
    assert "duck-tape nudge" in stop[0]["hooks"][0]["command"]
    code, _, err = run(capsys, "init", "--harness", "opencode", "--root", str(project), "--yes", "--nudge")
    assert code == 2 and "--nudge is only for claude-code" in err


def test_an_explicit_restore_is_left_out_for_a_detected_copilot(capsys, home, project):
    (project / ".claude").mkdir()
    (home / ".copilot").mkdir()
    code, out, err = run(capsys, "init", "--root", str(project), "--dry-run", "--restore", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [(h["harness"], h["restore"]) for h in report["harnesses"]] == [("claude-code", True), ("copilot", False)]
    assert any(w.startswith("copilot: --restore left out") for w in report["warnings"])


def test_copilot_with_yes_adds_the_resume_line_and_reports_it(capsys, home, project):
    code, out, err = run(capsys, "init", "--harness", "copilot", "--root", str(project), "--yes", "--json")
    assert code == 0, err
    instructions = project / ".github" / "copilot-instructions.md"
    assert json.loads(out)["written"] == [str(project / ".github" / "hooks" / "duck-tape.json"), str(instructions),
                                          str(project / ".github" / "skills" / "duck-tape-resume" / "SKILL.md")]
    assert "duck-tape resume" in instructions.read_text()
