"""``duck-tape init --restore`` (issue 7, item 2): the SessionStart hook with the matcher ``compact`` beside the
pre-compact one, merged into existing settings, idempotent, backed up; refused for the other harnesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import InputError
from pipeline.hooks.install import merge_claude, plan_install

CHECKPOINT = 'duck-tape checkpoint --dir "${CLAUDE_PROJECT_DIR:-.}/.duck-tape"'
RESTORE = 'duck-tape restore --dir "${CLAUDE_PROJECT_DIR:-.}/.duck-tape" --format claude-code'
OURS_PRE = {"matcher": "", "hooks": [{"type": "command", "command": CHECKPOINT, "timeout": 30}]}
OURS_START = {"matcher": "compact", "hooks": [{"type": "command", "command": RESTORE, "timeout": 10}]}
EXISTING = {
    "model": "opus",
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "./scripts/banner.sh"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}],
    },
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def settings(tmp_path) -> Path:
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text(json.dumps(EXISTING, indent=2) + "\n")
    return path


def test_restore_adds_session_start_compact_beside_pre_compact_and_keeps_the_rest(capsys, settings):
    original = settings.read_bytes()
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(settings.parent.parent), "--restore",
                       "--write")
    assert code == 0
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert data["hooks"]["PreCompact"] == [OURS_PRE]
    assert data["hooks"]["SessionStart"] == [EXISTING["hooks"]["SessionStart"][0], OURS_START]
    [backup] = [p for p in settings.parent.iterdir() if p.name.endswith(".bak")]
    assert backup.read_bytes() == original
    assert f"+            \"command\": {json.dumps(RESTORE)}," in out  # the diff is shown before writing
    assert out.index("+++") < out.index(f"Wrote {settings}")


def test_restore_is_idempotent_and_adds_to_an_earlier_checkpoint_only_install(capsys, settings):
    root = str(settings.parent.parent)
    assert run(capsys, "init", "--harness", "claude-code", "--root", root, "--no-restore", "--write")[0] == 0
    assert "SessionStart" in json.loads(settings.read_text())["hooks"]  # the user's own, untouched
    assert OURS_START not in json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert run(capsys, "init", "--harness", "claude-code", "--root", root, "--restore", "--write")[0] == 0
    after = settings.read_bytes()
    assert json.loads(after)["hooks"]["SessionStart"][-1] == OURS_START
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", root, "--restore", "--write")
    assert code == 0 and "already installed; nothing to do" in out
    assert settings.read_bytes() == after
    assert len([p for p in settings.parent.iterdir() if p.name.endswith(".bak")]) == 2


def test_an_older_restore_hook_is_updated_in_place_keeping_its_matcher(tmp_path):
    path = tmp_path / "settings.json"
    old = {"hooks": {"PreCompact": [OURS_PRE], "SessionStart": [
        {"matcher": "compact|resume", "hooks": [{"type": "command", "command": "/opt/bin/duck-tape restore"}]}]}}
    data = json.loads(merge_claude(path, json.dumps(old), restore=True))
    assert data["hooks"]["SessionStart"] == [{"matcher": "compact|resume", "hooks": [OURS_START["hooks"][0]]}]
    assert data["hooks"]["PreCompact"] == [OURS_PRE]


def test_dry_run_snippet_is_valid_json_with_both_hooks(capsys, tmp_path):
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path), "--restore")
    assert code == 0 and "Not written (dry run)" in out and not (tmp_path / ".claude").exists()
    snippet = out.split("\n", 1)[1].split("\n--- ", 1)[0]
    assert json.loads(snippet) == {"hooks": {"PreCompact": [OURS_PRE], "SessionStart": [OURS_START]}}


def test_custom_command_reaches_both_hooks(tmp_path):
    plan = plan_install("claude-code", tmp_path, command="/opt/duck tape/bin/duck-tape", restore=True)
    data = json.loads(plan.new_text)
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].startswith("/opt/duck tape/bin/duck-tape restore ")


def test_a_session_start_of_the_wrong_type_is_refused(tmp_path):
    with pytest.raises(InputError, match="expected hooks.'SessionStart' to be a JSON array"):
        merge_claude(tmp_path / "s.json", json.dumps({"hooks": {"SessionStart": {}}}), restore=True)


@pytest.mark.parametrize("harness", ["copilot", "opencode"])
def test_restore_is_refused_for_other_harnesses(capsys, tmp_path, harness):
    code, _, err = run(capsys, "init", "--harness", harness, "--root", str(tmp_path), "--restore", "--write")
    assert code == 2 and "--restore is only for claude-code" in err
    assert list(tmp_path.iterdir()) == []
