"""Shared by the batch tests: the fixture archive (``fixtures/archive``, see its README), its session ids, and small
helpers.  ``archive`` is a pytest fixture: import it into a test module to use it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.cli import main

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "fixtures" / "archive"
A = "53353b45-ab35-4b2f-9b14-a09175b8dd79"  # Claude Code, with a linked sub-agent file
B = "b7a79a26-41d3-4b65-889f-fe8d3d2873ae"  # Claude Code, also present as a duplicate copy
C = "9789d0e6-955a-4c09-a65d-5d09b6184de8"  # Copilot CLI
D = "ses_d0728e6d05ccFcREVkTShczEFb"  # opencode, holds a planted secret


def copy_archive(target: Path) -> Path:
    """A copy of the fixture archive at ``target`` (without its build script and README); returns ``target``."""
    shutil.copytree(ARCHIVE, target, ignore=shutil.ignore_patterns("build.py", "README.md", "__pycache__"))
    return target


@pytest.fixture
def archive(tmp_path) -> Path:
    return copy_archive(tmp_path / "archive")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``duck-tape ARGV`` in-process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def by_session(rows: list[dict]) -> dict:
    """Report rows by session id (by file name for a row without one)."""
    return {r.get("session_id") or Path(r["path"]).name: r for r in rows}
