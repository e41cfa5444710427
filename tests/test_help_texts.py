"""Help texts describe behaviour in their own words (issue 15, item 7): no reference to files a user of the
installed package does not have; shell completion (click's) works for the console script."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from pipeline.cli import cli, main

UNSHIPPED = re.compile(r"DESIGN\.md|FORMATS\.md|STYLE\.md|STACK\.md|AGENTS\.md|agent skill|\bissue \d+\b|tests/")


@pytest.mark.parametrize("command", ["", *sorted(cli.commands)])
def test_help_names_no_file_users_do_not_have(capsys, command):
    assert main([*filter(None, [command]), "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: duck-tape")
    assert not UNSHIPPED.findall(out), UNSHIPPED.findall(out)


def test_bash_completion_lists_commands():
    env = {**os.environ, "_DUCK_TAPE_COMPLETE": "bash_complete", "COMP_WORDS": "duck-tape sta", "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-c", "import sys; from pipeline.entry import main; sys.exit(main())"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert "status" in done.stdout.split(",") or "plain,status" in done.stdout, done.stdout + done.stderr


def test_size_caps_in_help_match_the_default(capsys):
    """Issue 24, item 7: `verify --help` said 256 MiB while every command reads 1 GiB by default."""
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES

    assert RECOVER_MAX_BYTES == 1024 ** 3
    for command in ("verify", "recover", "resume", "checkpoint", "extract-raw", "batch"):
        assert main([command, "--help"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "256 MiB" not in out, command


def test_checkpoint_help_lists_every_payload_it_reads(capsys):
    """Issue 24, item 7: the Codex and Gemini payloads were accepted but not listed."""
    assert main(["checkpoint", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for harness in ("Claude Code", "Copilot CLI", "Codex CLI", "Gemini CLI", "opencode"):
        assert harness in out, harness


def test_no_merge_leftovers_are_committed():
    """Issue 24, item 7: docs/reference.md.orig (a merge tool's backup) was committed."""
    done = subprocess.run(["git", "ls-files"], cwd=os.path.dirname(os.path.dirname(__file__)), capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    left = [name for name in done.stdout.splitlines() if name.endswith((".orig", ".rej", ".bak"))]
    assert left == []
