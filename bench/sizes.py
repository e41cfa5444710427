"""Issues 14 and 23 (part of ``make bench``; also runnable alone): the commands by transcript size, reading every byte.

For each size (``BENCH_SIZES``, in MB, default ``5,60,200,1000``; ``BENCH_SIZES=5,60 make bench`` for a quick run)
a Claude Code session is generated into a temporary directory on /tmp (``fixtures/fixturegen/long_session.py``: a
second task and a decision planted at its middle, a next step in its last message; deleted afterwards) and,
interleaved round after round so that a busy spell of this shared machine weighs on all alike:

* the orjson parse floor: a bare ``python -c`` that orjson-parses every line of the same file;
* the bash+jq hook (``bench/bash_hook.sh``, cap lifted) at 5 and 60 MB;
* ``duck-tape checkpoint`` (the pre-compact hook, payload on stdin, a new store: a first look, under its time budget),
  ``duck-tape extract-raw``, ``duck-tape recover --dry-run`` and ``duck-tape batch`` (rules engine, one job), with
  the default size cap and a bytecode cache of their own.

Each figure: wall seconds (median of the rounds, process start included), MB/s (1 MB = 10^6 bytes) and message
characters per second (the session's prompts, answers and summaries, counted once per size) of wall time, CPU
seconds (user + system, children included), peak RSS (the largest of the rounds, GNU time's ``%M``), the ratio to the
bash hook (how many times faster) and to the orjson floor (how many times slower), and the issues' targets beside it.
``recover`` is also checked for what a full read must keep: the planted task and decision and the next step.

At 60 MB the growing session of issue 23 follows: the file is written to 55 %, 95 % and 100 % of its size with a
checkpoint after each (each in a minute of its own, as compactions are), and the last one is timed against the bash
hook on the whole 60 MB of the same run; its state file must keep the middle's task and the end's next step.

A run longer than ``BENCH_TIMEOUT`` seconds (default 600) is killed and printed as "timed out after N s"; its command
is not run again at that size.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures"))
from fixturegen import long_session  # noqa: E402
from measure import BASH_HOOK_FALLBACK_SECONDS, BIN, DEFAULT_TIMEOUT, RSS_INCLUDES_BENCH, Run, bash_hook, have_jq, \
    run, tool_env  # noqa: E402

DEFAULT_SIZES = (5, 60, 200, 1000)
BASH_SIZES = (5, 60)  # the bash hook runs here only (it takes minutes on the large files)
ROUNDS = {5: 5, 60: 3}  # rounds per size; 1 above
RSS_TARGET_MB = 150.0
RECOVER_200_SECONDS = 60.0
GROWING_SPEEDUP = 5.0  # the last checkpoint of the growing 60 MB session vs the bash hook on 60 MB
TARGET_5MB = {"checkpoint": 1.5, "extract-raw": 3.0}  # times faster than the bash hook (issue 23)
COMMANDS = ("checkpoint", "extract-raw", "recover --dry-run", "batch")
FLOOR_CODE = "import orjson, sys\nfor line in open(sys.argv[1], 'rb'):\n    orjson.loads(line)"
TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "600")) if "BENCH_TIMEOUT" in os.environ else max(DEFAULT_TIMEOUT,
                                                                                                     600.0)


def sizes_from_env() -> list[int]:
    """The sizes to run, in MB, from ``BENCH_SIZES`` (comma-separated integers); the default when unset."""
    raw = os.environ.get("BENCH_SIZES", "").strip()
    if not raw:
        return list(DEFAULT_SIZES)
    try:
        sizes = [int(part) for part in raw.replace(" ", "").split(",") if part]
    except ValueError:
        raise SystemExit(f"bench: BENCH_SIZES={raw!r}: expected comma-separated sizes in MB, e.g. 5,60") from None
    if not sizes or min(sizes) < 1:
        raise SystemExit(f"bench: BENCH_SIZES={raw!r}: sizes must be whole MB >= 1")
    return sizes


class Series:
    """The runs of one command at one size; stops after a timeout."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.runs: list[Run] = []
        self.timed_out: float | None = None
        self.fallback: float | None = None  # a quoted figure (jq missing), not a measurement

    def add(self, result: Run | None, timeout: float) -> None:
        if result is None:
            return
        if result.timed_out:
            self.timed_out = timeout
        else:
            self.runs.append(result)

    @property
    def done(self) -> bool:
        return self.timed_out is not None

    @property
    def wall(self) -> float | None:
        if self.runs:
            return statistics.median(r.wall for r in self.runs)
        return self.fallback

    @property
    def cpu(self) -> float | None:
        return statistics.median(r.cpu for r in self.runs) if self.runs else None

    @property
    def rss(self) -> float | None:
        return max((r.rss_mb for r in self.runs), default=None)


def _check(ok: bool) -> str:
    return "ok" if ok else "MISS"


def hook_payload(transcript: Path, cwd: Path) -> bytes:
    """The Claude Code PreCompact payload for the generated session."""
    return json.dumps({"session_id": long_session.SESSION, "transcript_path": str(transcript), "cwd": str(cwd),
                       "hook_event_name": "PreCompact", "trigger": "auto"}).encode()


def message_chars(path: Path) -> int:
    """Characters of messages in the transcript (prompts, main-thread answers, summaries, sub-agent results): what
    the rules engine's sentence rules read; counted by one read of the file."""
    from pipeline.transcripts.segments import Policy, message_chars as count, stream

    total = [0]
    stream(str(path), lambda seg: total.__setitem__(0, total[0] + count(seg.transcript.events[len(seg.seeds):])),
           max_bytes=1 << 40, policy=Policy(prompts=1 << 30, message_chars=1 << 30, events=50_000), warn=False)
    return total[0]


def keeps_the_plants(text: str) -> list[str]:
    """What of the planted items a state file text lacks (empty: it keeps them all)."""
    truth = long_session.truth()
    missing = []
    workflow = text.split("## Approved Workflow", 1)[-1].split("## Position", 1)[0]
    log = text.split("## Decision Log", 1)[-1].split("## Established Facts", 1)[0]
    position = text.split("## Position", 1)[-1].split("## Decision Log", 1)[0]
    if truth["task"] not in workflow:
        missing.append("the middle task")
    if not any("APPROVED" in line and truth["approved"] in line for line in log.splitlines()):
        missing.append("the middle decision")
    if truth["next_step"] not in position:
        missing.append("the last message's next step")
    return missing


def bench_size(mb: int, tmp: Path, env: dict, timeout: float) -> list[str]:
    """Generate the ``mb`` MB session, measure every command (and at 60 MB the growing session), delete it; the
    printed lines."""
    path = tmp / f"transcript-{mb}mb.jsonl"
    start = time.perf_counter()
    long_session.write(str(path), mb * 1_000_000)
    gen_s = time.perf_counter() - start
    size = path.stat().st_size
    chars = message_chars(path)
    rounds = ROUNDS.get(mb, 1)
    floor, bash = Series("orjson parse floor"), Series("bash+jq hook")
    tools = {name: Series(name) for name in COMMANDS}
    use_bash = mb in BASH_SIZES
    if use_bash and not have_jq():
        bash.fallback = BASH_HOOK_FALLBACK_SECONDS.get(mb * 1_000_000)
    recovered = b""
    try:
        for r in range(rounds):
            if not floor.done:
                floor.add(run([sys.executable, "-c", FLOOR_CODE, str(path)], env, timeout=timeout), timeout)
            if use_bash and have_jq() and not bash.done:
                bash.add(bash_hook(path, tmp / f"bash-{mb}-{r}", timeout=timeout), timeout)
            commands = {
                "checkpoint": ([str(BIN), "checkpoint", "--dir", str(tmp / f"store-{mb}-{r}")],
                               hook_payload(path, tmp)),
                "extract-raw": ([str(BIN), "extract-raw", str(path)], None),
                "recover --dry-run": ([str(BIN), "recover", str(path), "--dir", str(tmp / f"rec-{mb}-{r}"),
                                       "--dry-run"], None),
                "batch": ([str(BIN), "batch", str(path), "--out", str(tmp / f"batch-{mb}-{r}"), "--engine", "rules",
                           "--jobs", "1", "--mask"], None),
            }
            for name, (args, stdin) in commands.items():
                series = tools[name]
                if series.done:
                    continue
                result = run(args, env, stdin=stdin, capture=name in ("checkpoint", "recover --dry-run"),
                             timeout=timeout)
                if not result.timed_out and result.status != 0:
                    raise SystemExit(f"bench: {' '.join(args)} exited with status {result.status}")
                if name == "checkpoint" and not result.timed_out and b"Wrote" not in result.out:
                    raise SystemExit(f"bench: checkpoint of {path} wrote no state file: {result.out.decode()}")
                if name == "recover --dry-run" and not result.timed_out:
                    recovered = result.out
                series.add(result, timeout)
                for folder in (f"store-{mb}-{r}", f"rec-{mb}-{r}", f"batch-{mb}-{r}"):
                    shutil.rmtree(tmp / folder, ignore_errors=True)
        growing = bench_growing(path, tmp, env, timeout, bash) if mb == 60 else []
    finally:
        path.unlink(missing_ok=True)
    lines = [f"  {size / 1e6:,.0f} MB ({size:,} bytes, {chars:,} message characters, generated in {gen_s:.1f} s), "
             f"{'median of ' + str(rounds) if rounds > 1 else 'one run'}:"]
    for series in (floor, bash, *tools.values()):
        if series is bash and not use_bash:
            continue
        lines.append(_row(series, size, chars, mb, floor, bash if use_bash else None))
    if recovered:
        missing = keeps_the_plants(recovered.decode("utf-8", "replace"))
        lines.append(f"    recover keeps the middle's task and decision and the last message's next step: "
                     f"{'yes' if not missing else 'NO, it lacks ' + ', '.join(missing)}"
                     + (f"   [200 MB: <= {RECOVER_200_SECONDS:.0f} s, <= {RSS_TARGET_MB:.0f} MB, all kept "
                        f"{_check(not missing and (tools['recover --dry-run'].wall or 1e9) <= RECOVER_200_SECONDS and (tools['recover --dry-run'].rss or 1e9) <= RSS_TARGET_MB)}]"
                        if mb == 200 else ""))
    return lines + growing


def _row(series: Series, size: int, chars: int, mb: int, floor: Series, bash: Series | None) -> str:
    label = f"    {series.label:<19}"
    if series.timed_out is not None:
        return f"{label} timed out after {series.timed_out:.0f} s   (target: RSS <= {RSS_TARGET_MB:.0f} MB)"
    wall = series.wall
    if wall is None:
        return f"{label} not measured"
    rate = size / 1e6 / wall
    rss, cpu = series.rss, series.cpu
    text = f"{label} {wall:8.2f} s {rate:7.1f} MB/s {chars / wall / 1e3:8.0f} k msg chars/s" + (
        f"  cpu {cpu:7.2f} s  peak {rss:5.0f} MB" if rss is not None else "  (quoted figure: jq is missing, not measured)")
    if series is floor or series is bash:
        return text
    notes = []
    if bash is not None and bash.wall:
        notes.append(f"{bash.wall / wall:5.1f}x faster than bash{'' if bash.runs else ' (quoted)'}")
    if floor.wall:
        notes.append(f"{wall / floor.wall:5.1f}x the floor")
    targets = [f"RSS <= {RSS_TARGET_MB:.0f} MB {_check(rss <= RSS_TARGET_MB)}"]
    name = series.label
    if mb == 5 and name in TARGET_5MB and bash is not None and bash.wall:
        want = TARGET_5MB[name]
        targets.append(f">= {want:.1f}x bash {_check(bash.wall / wall >= want)}")
    if name == "checkpoint" and mb > 5:
        targets.append("a first look: what its time budget leaves is named, the next checkpoint reads it")
    return f"{text}   {', '.join(notes)}   [{'; '.join(targets)}]"


def _next_minute() -> None:
    """Wait for the next minute: one state file per minute, as compactions are minutes apart."""
    now = datetime.now(timezone.utc)
    time.sleep(60.5 - now.second - now.microsecond / 1e6)


def bench_growing(src: Path, tmp: Path, env: dict, timeout: float, bash: Series) -> list[str]:
    """The growing 60 MB session (module docstring); the printed lines."""
    path, store = tmp / "growing.jsonl", tmp / "growing-store"
    data_size = src.stat().st_size
    path.write_bytes(b"")
    done = 0
    walls: list[Run] = []
    with open(src, "rb") as source:
        for fraction in (0.55, 0.95, 1.0):
            end = data_size
            if fraction < 1:
                source.seek(int(data_size * fraction))
                source.readline()
                end = source.tell()
            source.seek(done)
            with open(path, "ab") as out:
                out.write(source.read(end - done))
            done = end
            if walls:
                _next_minute()
            result = run([str(BIN), "checkpoint", "--dir", str(store)], env, stdin=hook_payload(path, tmp),
                         capture=True, timeout=timeout)
            walls.append(result)
    states = sorted(store.glob("*-auto.state.md"))
    missing = keeps_the_plants(states[-1].read_text()) if states else ["a state file"]
    last = walls[-1]
    lines = ["  issue 23, one 60 MB session checkpointed as it grows (55 %, 95 %, 100 %; a new minute each):",
             "    " + ", ".join(f"{f:.0%}: {r.wall:.2f} s, peak {r.rss_mb:.0f} MB" for f, r in zip((0.55, 0.95, 1.0), walls))]
    if bash.wall:
        ratio = bash.wall / last.wall
        lines.append(f"    last checkpoint {last.wall:.2f} s vs the bash hook on the whole 60 MB {bash.wall:.2f} s: "
                     f"{ratio:.1f}x faster   [>= {GROWING_SPEEDUP:.0f}x {_check(ratio >= GROWING_SPEEDUP)}]")
    lines.append(f"    its state file keeps the middle's task, decision and the end's next step: "
                 f"{'yes' if not missing else 'NO, it lacks ' + ', '.join(missing)}   [{_check(not missing)}]")
    shutil.rmtree(store, ignore_errors=True)
    path.unlink(missing_ok=True)
    return lines


def main() -> None:
    """Print the issue-14/23 table for ``BENCH_SIZES``."""
    sizes = sizes_from_env()
    timeout = TIMEOUT
    tmp = Path(tempfile.mkdtemp(prefix="duck-tape-bench-sizes-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        env = tool_env(tmp)
        warm = tmp / "warm.jsonl"
        long_session.write(str(warm), 200_000)
        for args in ([str(BIN), "extract-raw", str(warm)], [str(BIN), "recover", str(warm), "--dir",
                                                            str(tmp / "warm"), "--dry-run"]):
            run(args, env)  # fills the bytecode cache
        run([str(BIN), "checkpoint", "--dir", str(tmp / "warm")], env, stdin=hook_payload(warm, tmp))
        jq = "bench/bash_hook.sh measured in this run" if have_jq() else \
            "jq is MISSING: the bash hook's figures are the quoted ones of issue 6/14, not measured"
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"issues 14 and 23: the commands by transcript size, every byte read (generated Claude Code JSONL with a "
              f"task and a decision planted at its middle, default size cap, bytecode cache, process start included; "
              f"{jq}; timeout {timeout:.0f} s per run; load average {load:.1f})")
        print(f"  targets: peak RSS <= {RSS_TARGET_MB:.0f} MB for every command at every size; 200 MB recover keeps the "
              f"planted task and decision and the next step in <= {RECOVER_200_SECONDS:.0f} s; the growing 60 MB "
              f"session's last checkpoint >= {GROWING_SPEEDUP:.0f}x the bash hook; 5 MB: a cold checkpoint >= "
              f"{TARGET_5MB['checkpoint']}x and extract-raw >= {TARGET_5MB['extract-raw']:.0f}x the bash hook")
        if RSS_INCLUDES_BENCH:
            print("  NOTE: /usr/bin/time (GNU time) is missing: each peak RSS below includes this bench process's own "
                  "peak (os.wait4 from Python; see bench/measure.py)")
        for mb in sizes:
            for line in bench_size(mb, tmp, env, timeout):
                print(line, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
