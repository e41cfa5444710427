"""``duck-tape init`` checks its ``--command`` and ``--root`` (new-user trial): a command the shell cannot split is a
usage error, an existing program path with spaces is quoted for each harness the way that harness runs it, the
PATH note looks at the program itself, and a misspelt ``--root`` is refused instead of created."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import InputError
from pipeline.hooks.install import HookCommand, command_notes, parse_hook_command, plan_install

HARNESSES = ["claude-code", "copilot", "opencode"]
TARGETS = {"claude-code": ".claude", "copilot": ".github", "opencode": ".opencode"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def program(tmp_path) -> Path:
    """An executable stand-in for duck-tape in a folder with a space; it prints its arguments, one per line."""
    folder = tmp_path / "my tools"
    folder.mkdir()
    path = folder / "duck-tape"
    path.write_text('#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def installed(project: Path, harness: str) -> str:
    """The hook line (claude-code, copilot's bash) or the plugin's DUCK_TAPE array (opencode) as written."""
    if harness == "claude-code":
        data = json.loads((project / ".claude" / "settings.local.json").read_text())
        return data["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    if harness == "copilot":
        return json.loads((project / ".github" / "hooks" / "duck-tape.json").read_text())["hooks"]["preCompact"][0]
    text = (project / ".opencode" / "plugins" / "duck-tape.js").read_text()
    [line] = [line for line in text.splitlines() if line.startswith("const DUCK_TAPE = ")]
    return json.loads(line.removeprefix("const DUCK_TAPE = "))


# 1. a --command the shell cannot split


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("value", ["'unterminated", 'duck-tape "--flag', "duck-tape\\"])
def test_a_command_the_shell_cannot_split_is_a_usage_error(capsys, project, harness, value):
    code, out, err = run(capsys, "init", "--harness", harness, "--root", str(project), "--command", value, "--write")
    assert code == 2
    assert f"--command {value!r}: the shell cannot split it into words" in err and "balanced quotes" in err
    assert out == "" and list(project.iterdir()) == []


@pytest.mark.parametrize("value, expected", [
    ("", "--command is empty"), ("   ", "--command is empty"),
    ("duck-tape\nrm -rf x", "expected one line of shell words"),
    ("duck-tape #note", "an unquoted # starts a shell comment"),
    ("'/opt/x' #", "an unquoted # starts a shell comment"),
])
def test_empty_multi_line_or_commented_commands_are_usage_errors(capsys, project, value, expected):
    code, _, err = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--command", value)
    assert code == 2 and expected in err


@pytest.mark.parametrize("value, argv", [("/opt/a#b/duck-tape", ("/opt/a#b/duck-tape",)),
                                         ("duck-tape '#x'", ("duck-tape", "#x")),
                                         ('"/opt/my tools/duck-tape" -q', ("/opt/my tools/duck-tape", "-q"))])
def test_a_hash_inside_a_word_or_quotes_is_not_a_comment(value, argv):
    hook = HookCommand.from_words(value)
    assert hook.argv == argv and hook.shell == value
    # sh agrees: the words it sees are the ones the plugin and PowerShell line get
    proc = subprocess.run(["sh", "-c", f"printf '%s\\n' {value}"], capture_output=True, text=True, check=True)
    assert tuple(proc.stdout.splitlines()) == argv


# 2. a program path with spaces


def test_claude_code_hook_runs_an_existing_program_whose_path_has_spaces(capsys, project, program):
    code, _, err = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--command", str(program),
                       "--write")
    assert code == 0 and "note:" not in err
    line = installed(project, "claude-code")
    assert line == f"'{program}' checkpoint --dir \"${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape\""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    proc = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ["arg:checkpoint", "arg:--dir", f"arg:{project}/.duck-tape"]


def test_copilot_hook_quotes_the_program_for_bash_and_for_powershell(capsys, project, program):
    code, _, err = run(capsys, "init", "--harness", "copilot", "--root", str(project), "--command", str(program),
                       "--write")
    assert code == 0 and "note:" not in err
    entry = installed(project, "copilot")
    assert entry["bash"] == f"'{program}' checkpoint"
    assert entry["powershell"] == f"& '{program}' checkpoint"  # a quoted program needs the call operator
    proc = subprocess.run(["bash", "-c", entry["bash"]], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == ["arg:checkpoint"]


def test_opencode_plugin_gets_the_whole_path_as_one_word(capsys, project, program):
    code, _, err = run(capsys, "init", "--harness", "opencode", "--root", str(project), "--command", str(program),
                       "--write")
    assert code == 0 and "note:" not in err
    assert installed(project, "opencode") == [str(program)]


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_quoted_form_gives_the_same_hook_and_no_false_note(capsys, project, program, harness):
    code, _, err = run(capsys, "init", "--harness", harness, "--root", str(project), "--command", f"'{program}'",
                       "--write")
    assert code == 0 and "note:" not in err
    expected = {"claude-code": f"'{program}' checkpoint --dir \"${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape\"",
                "copilot": {"type": "command", "bash": f"'{program}' checkpoint",
                            "powershell": f"& '{program}' checkpoint", "cwd": ".", "timeoutSec": 30},
                "opencode": [str(program)]}
    assert installed(project, harness) == expected[harness]


@pytest.mark.parametrize("harness", ["claude-code", "copilot"])
def test_a_quoted_program_path_is_recognised_as_installed(capsys, project, program, harness):
    assert run(capsys, "init", "--harness", harness, "--root", str(project), "--command", str(program), "--write")[0] == 0
    code, out, _ = run(capsys, "init", "--harness", harness, "--root", str(project), "--command", str(program), "--write")
    assert code == 0 and "already installed; nothing to do" in out


def test_a_missing_path_with_spaces_is_split_and_the_note_names_the_first_word(capsys, project, tmp_path):
    value = f"{tmp_path}/no such/duck-tape"
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--command", value)
    assert code == 0 and "Not written (dry run)" in out
    assert f"note: '{tmp_path}/no' does not exist; --command is split into shell words" in err
    assert f"""--command "'{value}'\"""" in err  # how to quote it


# the PATH note looks at the program


def test_note_for_a_bare_name_uses_the_path(monkeypatch, project, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dt-here").write_text("#!/bin/sh\n")
    (bin_dir / "dt-here").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert command_notes(parse_hook_command("dt-here --verbose", project), project, "copilot") == []
    [note] = command_notes(parse_hook_command("dt-missing --verbose", project), project, "copilot")
    assert note.startswith("'dt-missing' is not on PATH here")


def test_note_for_a_relative_path_looks_in_the_project_folder(project):
    tool = project / "bin" / "duck-tape"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    assert command_notes(parse_hook_command("bin/duck-tape", project), project, "claude-code") == [
        f"'bin/duck-tape' is not executable (from --root {project}, where the hook runs); the hook cannot run it"]
    tool.chmod(0o755)
    assert command_notes(parse_hook_command("./bin/duck-tape", project), project, "claude-code") == []
    assert command_notes(parse_hook_command("./bin/other", project), project, "claude-code") == [
        f"'./bin/other' does not exist (from --root {project}, where the hook runs)"]


def test_home_and_variables_are_expanded_for_the_note_but_left_to_the_shell(monkeypatch, tmp_path, project, program):
    monkeypatch.setenv("HOME", str(tmp_path))
    value = "~/'my tools'/duck-tape"
    hook = parse_hook_command(value, project)
    assert hook.shell == value and hook.argv == ("~/my tools/duck-tape",)
    assert command_notes(hook, project, "claude-code") == []
    proc = subprocess.run(["sh", "-c", f"{hook.shell} x"], env={**os.environ, "HOME": str(tmp_path)},
                          capture_output=True, text=True, check=True)
    assert proc.stdout == "arg:x\n"
    # opencode has no shell to expand ~: say so
    [note] = command_notes(hook, project, "opencode")
    assert "without a shell" in note and "'~/my tools/duck-tape' will not be expanded" in note


def test_a_whole_value_is_quoted_only_when_it_literally_names_a_file(monkeypatch, tmp_path, program):
    monkeypatch.setenv("HOME", str(tmp_path))
    hook = parse_hook_command("$HOME/my tools/duck-tape")  # quoting would stop the expansion: split it instead
    assert hook.shell == "$HOME/my tools/duck-tape" and hook.argv == ("$HOME/my", "tools/duck-tape")


# PowerShell quoting


@pytest.mark.parametrize("value, line", [
    ("duck-tape", "duck-tape"),
    ("/opt/bin/duck-tape --verbose", "/opt/bin/duck-tape --verbose"),
    ("$HOME/bin/duck-tape", "$HOME/bin/duck-tape"),  # no quoting used: the line as it was before
    ("\"/opt/it's here/duck-tape\" -q", "& '/opt/it''s here/duck-tape' -q"),
    ("duck-tape 'a b'", "duck-tape 'a b'"),
    ("'C:\\Tools\\duck-tape.exe'", "C:\\Tools\\duck-tape.exe"),
])
def test_powershell_line(value, line):
    assert HookCommand.from_words(value).powershell == line


# 3. --root must exist


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("write", [True, False])
def test_a_missing_root_is_a_usage_error_and_is_not_created(capsys, tmp_path, harness, write):
    root = tmp_path / "projcet"  # misspelt
    code, out, err = run(capsys, "init", "--harness", harness, "--root", str(root), *(["--write"] if write else []))
    assert code == 2 and f"--root {root}: no such directory" in err
    assert out == "" and not root.exists()


def test_plan_install_refuses_a_missing_root(tmp_path):
    with pytest.raises(InputError, match="no such directory"):
        plan_install("copilot", tmp_path / "missing")


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_existing_root_is_installed_into(capsys, project, harness):
    code, out, _ = run(capsys, "init", "--harness", harness, "--root", str(project), "--write")
    assert code == 0 and "Wrote " in out and (project / TARGETS[harness]).is_dir()
