"""Child-process measurement shared by the bench scripts: wall time, peak RSS, a timeout, and the bash+jq hook.

``run`` starts one command, feeds it ``stdin`` (or nothing), and reports its wall seconds (process start included),
its CPU seconds and its peak resident set size in MB: ``ru_maxrss`` of ``wait4`` (Linux reports the largest of the
child and the descendants it waited for, so a bash script's jq processes count).  A run that outlives ``timeout``
seconds is killed and reported as timed out.

Why GNU time: on Linux a child's ``ru_maxrss`` starts at the high-water RSS of the process that spawned it (exec
records the replaced memory map's peak; Python's subprocess spawns with vfork, so that is the bench process's own,
which holds generated chunks).  So the wait4 is done by ``/usr/bin/time -f %M`` (a ~1 MB process that forks the
command and reports its child's ``wait4`` figures); without it, ``os.wait4`` here, and every figure then includes the
bench process's own peak (``RSS_INCLUDES_BENCH`` is True and the callers say so).

``bash_hook`` runs ``bench/bash_hook.sh`` (the bash+jq re-creation of the pre-compact hook duck-tape replaced) on a
transcript with the hook's 5 MiB cap lifted; when ``jq`` is not installed it returns None and the callers print
the old hard-coded figures as such (``BASH_HOOK_FALLBACK_SECONDS``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent / "duck-tape"
BASH_HOOK = HERE / "bash_hook.sh"
#: The bash+jq hook as measured by an earlier session (issue 6 and issue 14 text); used only when jq is missing.
BASH_HOOK_FALLBACK_SECONDS = {5_000_000: 0.33, 60_000_000: 6.5}
SESSION = "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f"  # the session id bench/gen.py writes
DEFAULT_TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "300"))
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
RSS_INCLUDES_BENCH = GNU_TIME is None


@dataclass(slots=True)
class Run:
    """One child process: ``wall`` and ``cpu`` in seconds, ``rss_mb`` peak RSS in MB (MiB of ``ru_maxrss``),
    ``status`` as from ``os.wait4``, ``out`` its stdout when captured, ``timed_out`` when it was killed."""

    wall: float
    cpu: float
    rss_mb: float
    status: int
    out: bytes = b""
    timed_out: bool = False


def run(args: list[str], env: dict, *, stdin: bytes | None = None, capture: bool = False,
        timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None) -> Run:
    """Run ``args`` once (see the module docstring); never raises for a failing or slow child."""
    report = None
    if GNU_TIME:
        fd, report = tempfile.mkstemp(prefix="bench-time-", suffix=".txt")
        os.close(fd)
        args = [GNU_TIME, "-f", "%M %U %S", "-o", report, *args]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=cwd, start_new_session=True)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        try:
            os.killpg(proc.pid, 9)  # its own session: bash's jq children go too
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    out = b""
    try:
        if stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        if capture:
            out = proc.stdout.read()
            proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = status  # already reaped: keep Popen from waiting again
    rss, cpu = usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime
    if report is not None:
        try:
            lines = Path(report).read_text().split("\n")
            figures = [line.split() for line in lines if line.strip() and line.split()[0].isdigit()]
            if figures and len(figures[-1]) == 3:
                kb, user, system = figures[-1]
                rss, cpu = int(kb) / 1024.0, float(user) + float(system)
        finally:
            os.unlink(report)
    return Run(wall, cpu, rss, status, out, killed.is_set())


def hook_payload(transcript: Path, cwd: Path) -> bytes:
    """A Claude Code PreCompact hook payload (session_id, transcript_path, cwd, hook_event_name, trigger)."""
    return json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(cwd),
                       "hook_event_name": "PreCompact", "trigger": "auto"}).encode()


def have_jq() -> bool:
    """True when ``jq`` is on PATH (the bash hook needs it)."""
    return shutil.which("jq") is not None


def bash_hook(transcript: Path, workdir: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Run | None:
    """One run of ``bench/bash_hook.sh`` on ``transcript``, its store in a fresh ``workdir`` (created); the 5 MiB
    cap lifted with ``BASH_HOOK_MAX_BYTES``.  None when jq is missing.  Raises SystemExit when the script exits
    non-zero or writes no state file (the comparison would be meaningless)."""
    if not have_jq():
        return None
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, BASH_HOOK_MAX_BYTES=str(1 << 40))
    result = run(["bash", str(BASH_HOOK)], env, stdin=hook_payload(transcript, workdir), capture=True,
                 timeout=timeout)
    if not result.timed_out and (result.status != 0 or b"Wrote" not in result.out):
        raise SystemExit(f"bench: bench/bash_hook.sh failed on {transcript} (status {result.status}): "
                         f"{result.out.decode(errors='replace')}")
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def tool_env(tmp: Path) -> dict:
    """The environment duck-tape runs in for the bench: a bytecode cache of its own (what an installed tool has),
    no size cap set (the default applies), and this tree's ``pipeline`` first on the path (a worktree measures its
    own code, not the editable install's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "DUCK_TAPE_MAX_TRANSCRIPT_BYTES")}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))  # this tree's pipeline
    return env
