"""Issue 7 figure (part of ``make bench``; also runnable alone): ``duck-tape restore`` after a compaction.

A workspace with ten state files (auto, recovered and manual copies of the recovered fixture states), the
marker (naming the session of the chosen state, as the hooks write it since issue 14), and a git repository with 60 commits, 20 of them after the chosen state's ``Created`` time, so that the
reconciliation runs ``git log`` for real.  ``duck-tape restore --format claude-code`` (the SessionStart hook
command), wall time with process start, median of 9; target < 0.15 s.  As for the checkpoint (bench/
hooks_batch.py), measured with a bytecode cache (an installed tool) and without one (PYTHONDONTWRITEBYTECODE=1).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent / "duck-tape"
GOLDEN = ROOT / "tests" / "golden" / "recover"
TARGET = 0.15
KINDS = ("auto", "auto", "auto", "auto", "recovered", "auto", "auto", "recovered", "auto", "manual")


def make_workspace(root: Path) -> Path:
    """``root`` as a git repository holding ``.duck-tape`` with ten state files and the marker; returns the store."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Bench",
           "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    for n in range(60):  # the chosen state is created at 2026-03-10T10:00:00Z: the last 20 commits come after it
        when = f"2026-03-09T{8 + n // 4:02d}:{n % 4 * 15:02d}:00Z" if n < 40 else \
            f"2026-03-10T{10 + (n - 40) // 4:02d}:{n % 4 * 15 + 5:02d}:00Z"
        path = root / "src" / f"module_{n % 12}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# revision {n}\n")
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(root), "commit", "-q", "--no-gpg-sign", "-m", f"Change module {n % 12} ({n})"],
                       check=True, env={**env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    from pipeline.state.marker import Marker, write_marker
    from pipeline.state.session_markers import write_session_marker
    from pipeline.state.trust import sign_file

    store = root / ".duck-tape"
    store.mkdir()
    (store / ".gitignore").write_text("*\n")
    sources = sorted(GOLDEN.glob("*.state.md"))
    for n, kind in enumerate(KINDS):
        label = f"2026-03-10-09{n * 5 + 5:02d}" + ("" if kind == "manual" else f"-{kind}")
        text = sources[(n + 1) % len(sources)].read_text(encoding="utf-8")  # the chosen (manual) one: claude-code
        text = re.sub(r"^Session: \S+ \| Cwd: .*? \| ", f"Session: {label} | Cwd: {root} | ", text, count=1, flags=re.M)
        (store / f"{label}.state.md").write_text(text, encoding="utf-8")
        sign_file(store, store / f"{label}.state.md")  # issue 22: written by this store, as a checkpoint's are
    # issue 14: restore hands over only a state of the session the marker names (the chosen file's Session-Id)
    session = re.search(r"\| Session-Id: (\S+)", text)
    if session is None:
        raise SystemExit(f"bench: {sources[(n + 1) % len(sources)]} has no Session-Id in its header")
    marker = Marker("2026-03-10T10:00:05Z", str(root), f"{label}.state.md", None, session.group(1))
    write_marker(store, marker)
    write_session_marker(store, marker)  # issue 22: the session's own record, which its SessionStart reads
    return store


def restore_times(store: Path, env: dict, repeat: int = 9) -> tuple[float, float, int]:
    """Median wall and CPU seconds (user + system, from ``os.wait4``) of ``duck-tape restore --format claude-code``
    run from the workspace with the SessionStart JSON on stdin, as Claude Code runs it, and the bytes it printed
    (checked to be JSON)."""
    from pipeline.state.marker import read_marker

    payload = json.dumps({"session_id": read_marker(store).session_id, "cwd": str(store.parent),
                          "hook_event_name": "SessionStart", "source": "compact"}).encode()
    walls, cpus, size = [], [], 0
    for n in range(repeat + 1):
        out_path = store.parent / ".bench-out"
        with open(out_path, "wb") as sink:
            start = time.perf_counter()
            proc = subprocess.Popen([str(BIN), "restore", "--dir", str(store), "--format", "claude-code"],
                                    stdin=subprocess.PIPE, stdout=sink, stderr=subprocess.DEVNULL, env=env,
                                    cwd=store.parent)
            proc.stdin.write(payload)
            proc.stdin.close()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = status
        out = out_path.read_bytes()
        out_path.unlink()
        if status != 0 or not out:
            raise SystemExit(f"bench: restore failed (status {status}, {len(out)} bytes on stdout)")
        json.loads(out)
        size = len(out)
        if n:
            walls.append(wall)
            cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus), size


def main() -> None:
    if shutil.which("git") is None:
        print("restore: git is not installed; the figure needs a repository to reconcile with (skipped)")
        return
    tmp = Path(tempfile.mkdtemp(prefix="duck-tape-bench-restore-"))
    try:
        store = make_workspace(tmp / "shop")
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        modes = [
            ("bytecode cache (an installed tool)", dict(base, PYTHONPYCACHEPREFIX=str(tmp / "pycache"))),
            ("no bytecode cache (PYTHONDONTWRITEBYTECODE=1)", dict(base, PYTHONDONTWRITEBYTECODE="1")),
        ]
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        states = len(list(store.glob("*.state.md")))
        print(f"restore --format claude-code, {states} state files, git repository with 60 commits (20 since the "
              f"state), process start included, median of 9 (load average {load:.1f}):")
        for label, env in modes:
            wall, cpu, size = restore_times(store, env)
            verdict = "meets" if wall < TARGET else "misses"
            print(f"  {label:<58} wall {wall * 1000:4.0f} ms, cpu {cpu * 1000:4.0f} ms, {size} bytes of hook JSON "
                  f"({verdict} the {TARGET * 1000:.0f} ms target)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
