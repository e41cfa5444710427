"""Run an installed hook command the way a harness does: ``sh -c <command>`` from the project folder, the
harness's payload on stdin and its environment, with ``duck-tape`` on PATH as a small shim for this checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shim(folder: Path) -> Path:
    """A ``duck-tape`` executable in ``folder`` that runs this checkout's CLI; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "duck-tape"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m pipeline "$@"\n')
    exe.chmod(0o755)
    return folder


def run_hook(command: str, payload: dict, *, cwd: Path, env: dict[str, str], bin_dir: Path,
             timeout: float = 60) -> subprocess.CompletedProcess:
    """``sh -c command`` in ``cwd`` with ``payload`` as JSON on stdin, ``env`` added to a clean environment
    (HOME and PATH only, ``bin_dir`` first on PATH)."""
    base = {"HOME": env.get("HOME", str(cwd)), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          cwd=cwd, env={**base, **env}, timeout=timeout)
