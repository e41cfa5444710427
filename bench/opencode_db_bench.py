"""Issue 22 item 6 figures: ``batch`` over an ``opencode.db`` of many sessions, and peak memory on one very long line.

* ``batch DB --out DIR`` on generated databases of 1,000, 2,000 and 5,000 sessions (opencode's own tables and
  indexes, two messages and a tool part per session): wall seconds and seconds per 1,000 sessions, which stay about
  the same when the run is linear in its sessions (the probe measured 9.8 s / 32 s / ~220 s before: quadratic).
  ``BENCH_OPENCODE_SESSIONS=1000,5000`` sets the sizes.
* ``recover`` on a Claude Code transcript with one 300 MB line (a tool result nobody would read): peak RSS, which
  the line cap (``transcripts.records.LINE_CAP``, 16 MiB) keeps far below the line's size (the probe: 0.94 GB).

Not a test: prints figures.  Run alone with ``.venv/bin/python bench/opencode_db_bench.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
T0 = 1780304400000
SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL, seq integer NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
"""
"""opencode's tables (``packages/opencode/src/session/session.sql.ts``: 1.2's message and part, the newer
session_message) and its indexes on the session id; ``tests/test_read_opencode_db.py`` builds its database with it."""

def make_db(path: Path, sessions: int) -> None:
    """An opencode 1.2 database of ``sessions`` small sessions (a prompt, a tool call, an answer each)."""
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.execute("INSERT INTO project VALUES ('prj_1', '/home/dev/weather')")
    for n in range(sessions):
        sid, t = f"ses_{n:06d}benchBENCHbench", T0 + n * 60_000
        con.execute("INSERT INTO session VALUES (?, 'prj_1', NULL, ?, '/home/dev/weather', ?, '1.2.5', ?, ?)",
                    (sid, f"task-{n}", f"task {n}", t, t + 30_000))
        user = {"role": "user", "time": {"created": t}}
        answer = {"role": "assistant", "time": {"created": t + 5000}, "modelID": "claude-sonnet-4-5",
                  "providerID": "anthropic", "path": {"cwd": "/home/dev/weather", "root": "/home/dev/weather"}}
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (f"msg_{n}a", sid, t, t, json.dumps(user)))
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (f"msg_{n}b", sid, t + 5000, t + 5000,
                                                                  json.dumps(answer)))
        parts = [(f"prt_{n}a", f"msg_{n}a", {"type": "text", "text": f"add a --units flag to forecast {n}; "
                                                                     "never touch the HTTP client"}),
                 (f"prt_{n}b", f"msg_{n}b", {"type": "tool", "tool": "bash", "callID": f"c{n}", "state": {
                     "status": "completed", "input": {"command": "pytest -q"}, "output": "3 passed",
                     "time": {"start": t + 6000, "end": t + 9000}}}),
                 (f"prt_{n}c", f"msg_{n}b", {"type": "text", "text": f"Added --units {n}; metric is the default."})]
        for pid, mid, data in parts:
            con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, t, t, json.dumps(data)))
    con.commit()
    con.close()


def bench_batch(tmp: Path, sizes: list[int]) -> None:
    print("batch over an opencode.db (rules engine, --jobs 2), wall seconds:")
    for count in sizes:
        db = tmp / f"opencode-{count}.db"
        make_db(db, count)
        out = tmp / f"out-{count}"
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pipeline", "batch", str(db), "--out", str(out), "--jobs", "2",
                               "--engine", "rules", "--mask"], capture_output=True, text=True, cwd=tmp)
        wall = time.perf_counter() - start
        state = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"
        print(f"  {count:>5} sessions: {wall:7.1f} s  ({wall / count * 1000:5.1f} s per 1,000 sessions)  {state}")


def bench_long_line(tmp: Path, size: int = 300_000_000) -> None:
    path = tmp / "long-line.jsonl"
    sid = "cccccccc-1111-2222-3333-444444444444"
    with open(path, "w", encoding="utf-8") as out:
        base = {"sessionId": sid, "cwd": "/home/dev/x", "uuid": "u1"}
        out.write(json.dumps({**base, "type": "user", "timestamp": "2026-06-01T09:00:00Z",
                              "message": {"role": "user", "content": "Add a CSV export."}}) + "\n")
        out.write(json.dumps({**base, "type": "user", "timestamp": "2026-06-01T09:00:05Z", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A" * size}]}}) + "\n")
        out.write(json.dumps({**base, "type": "assistant", "timestamp": "2026-06-01T09:00:09Z", "message": {
            "id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Next: the --output flag."}]}}) + "\n")
    env = dict(os.environ)  # every line is read (issue 23): the window this used to turn off is gone
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "pipeline", "recover", str(path),
                           "--dry-run", "--dir", str(tmp / "s")], capture_output=True, text=True, cwd=tmp, env=env)
    wall = time.perf_counter() - start
    peak = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"
    print(f"recover, one {size / 1e6:.0f} MB line: {wall:.1f} s, peak RSS "
          f"{int(peak) / 1024:.0f} MB (exit {proc.returncode})" if peak.isdigit() else f"recover: {proc.stderr[-300:]}")
    path.unlink()


def main() -> None:
    sizes = [int(s) for s in os.environ.get("BENCH_OPENCODE_SESSIONS", "1000,2000,5000").split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="duck-tape-bench-") as folder:
        tmp = Path(folder)
        bench_batch(tmp, sizes)
        bench_long_line(tmp)


if __name__ == "__main__":
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    main()
