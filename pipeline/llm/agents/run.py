"""Run one agent CLI process: stdin in, stdout and stderr out, within a time limit, with the recursion guard set.

The child gets the caller's environment plus ``DUCK_TAPE_NESTED=1`` (``NESTED_ENV``): every duck-tape hook that
the nested run fires (``checkpoint``, ``restore``, ``nudge``, the background refinement) sees it and exits at once,
and a duck-tape inside the nested run never starts another agent CLI (``pipeline.llm.agents.cli``).  ``PWD`` is set
to the working folder too (opencode takes its project root from ``$PWD``).

The child leads its own process group (``start_new_session``): on timeout the whole group gets SIGTERM, then
SIGKILL after ``GRACE`` seconds, so a CLI's own child processes do not outlive it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

NESTED_ENV = "DUCK_TAPE_NESTED"
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
MAX_OUTPUT = 64 * 1024 * 1024  # bytes of stdout kept; a CLI printing more is cut


class CliTimeout(Exception):
    """The process ran past its time limit and was stopped; ``seconds`` is the limit."""

    def __init__(self, seconds: float, stderr: str = "") -> None:
        super().__init__(f"timed out after {seconds:.0f} s")
        self.seconds = seconds
        self.stderr = stderr


@dataclass(frozen=True, slots=True)
class Done:
    """A finished process: ``returncode``, ``stdout``, ``stderr`` (decoded, undecodable bytes replaced) and its
    wall ``seconds``."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


def nested_env(base: dict[str, str] | None = None, *, workdir: Path | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) with ``DUCK_TAPE_NESTED=1`` and, given ``workdir``, ``PWD`` set to it."""
    env = dict(os.environ if base is None else base)
    env[NESTED_ENV] = "1"
    if workdir is not None:
        env["PWD"] = str(workdir)
    return env


def _stop(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def run(argv: list[str], stdin: str, *, cwd: Path, timeout: float, env: dict[str, str]) -> Done:
    """Run ``argv`` (``argv[0]`` a resolved executable) in ``cwd`` with ``stdin`` and ``env``; wait at most
    ``timeout`` seconds.  Raises ``CliTimeout`` after stopping it, ``OSError`` when it cannot start."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=str(cwd), env=env, start_new_session=True)
    try:
        out, err = process.communicate(stdin.encode("utf-8"), timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        _stop(process)
        try:
            _, err = process.communicate(timeout=GRACE)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            err = b""
        raise CliTimeout(timeout, (err or b"").decode("utf-8", "replace")) from None
    except BaseException:
        _stop(process)
        raise
    return Done(process.returncode, out[:MAX_OUTPUT].decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                time.monotonic() - started)
