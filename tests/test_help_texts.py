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
