"""Issue 14 bars (part of ``make bench``; also runnable alone): the hook commands by transcript size.

For each size (``BENCH_SIZES``, in MB, default ``5,60,200,1000``; ``BENCH_SIZES=5,60 make bench`` for a quick run)
a Claude Code transcript is generated into a temporary directory on /tmp (``gen.generate``; deleted afterwards)
and, interleaved round after round so that a busy spell of this shared machine weighs on all alike:

* the orjson parse floor: a bare ``python -c`` that orjson-parses every line of the same file;
* the bash+jq hook (``bench/bash_hook.sh``, cap lifted) at 5 and 60 MB;
* ``duck-tape checkpoint`` (the pre-compact hook, payload on stdin), ``duck-tape extract-raw`` and
  ``duck-tape recover --dry-run``, with the default size cap and a bytecode cache of their own.

Each figure: wall seconds (median of the rounds, process start included), MB/s (1 MB = 10^6 bytes) of wall time,
CPU seconds (user + system, children included; the median; less sensitive than wall to the other agents sharing the
two cores, though not immune), peak RSS
(the largest of the rounds, ``os.wait4`` ``ru_maxrss``), the ratio to the bash hook (how many times faster) and to
the orjson floor (how many times slower), and the issue's targets beside it.  A run longer than ``BENCH_TIMEOUT``
seconds (default 300) is killed and printed as "timed out after N s"; its command is not run again at that size.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import generate  # noqa: E402
from measure import BASH_HOOK_FALLBACK_SECONDS, BIN, DEFAULT_TIMEOUT, RSS_INCLUDES_BENCH, Run, bash_hook, have_jq, \
    hook_payload, run, tool_env  # noqa: E402

DEFAULT_SIZES = (5, 60, 200, 1000)
BASH_SIZES = (5, 60)  # the bash hook runs here only (it takes minutes on the large files)
ROUNDS = {5: 5, 60: 3}  # rounds per size; 1 above
RSS_TARGET_MB = 150.0
SPEEDUP_60_TARGET = 5.0  # 60 MB checkpoint vs the bash hook
THROUGHPUT_TARGET = 60.0  # MB/s, "large files": 60 MB and up
#: Issue 13 / 14: the 5 MB case keeps its ratio to the bash hook.  Today's ratios, the reference: measured with this
#: bench on 2026-12-02 (main at f951c40, before the issue 14 engine work; load average 3.5 on the 2 shared cores),
#: times faster than bench/bash_hook.sh in the same run (bash 1.11 s; checkpoint 0.64 s, extract-raw 0.35 s).  A
#: later run passes at >= 90 % of it (the ratio moves by about that much between runs on this machine).
REFERENCE_5MB = {"checkpoint": 1.7, "extract-raw": 3.2}
FLOOR_CODE = "import orjson, sys\nfor line in open(sys.argv[1], 'rb'):\n    orjson.loads(line)"


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
        if self.runs:
            return statistics.median(r.cpu for r in self.runs)
        return None

    @property
    def rss(self) -> float | None:
        return max((r.rss_mb for r in self.runs), default=None)


def _check(ok: bool) -> str:
    return "ok" if ok else "MISS"


def bench_size(mb: int, tmp: Path, env: dict, timeout: float) -> list[str]:
    """Generate the ``mb`` MB transcript, measure every command, delete it; the printed lines."""
    path = tmp / f"transcript-{mb}mb.jsonl"
    start = time.perf_counter()
    generate(str(path), mb * 1_000_000)
    gen_s = time.perf_counter() - start
    size = path.stat().st_size
    rounds = ROUNDS.get(mb, 1)
    floor, bash = Series("orjson parse floor"), Series("bash+jq hook")
    tools = {name: Series(name) for name in ("checkpoint", "extract-raw", "recover --dry-run")}
    use_bash = mb in BASH_SIZES
    if use_bash and not have_jq():
        bash.fallback = BASH_HOOK_FALLBACK_SECONDS.get(mb * 1_000_000)
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
            }
            for name, (args, stdin) in commands.items():
                series = tools[name]
                if series.done:
                    continue
                result = run(args, env, stdin=stdin, capture=name == "checkpoint", timeout=timeout)
                if not result.timed_out and result.status != 0:
                    raise SystemExit(f"bench: {' '.join(args)} exited with status {result.status}")
                if name == "checkpoint" and not result.timed_out and b"Wrote" not in result.out:
                    raise SystemExit(f"bench: checkpoint of {path} wrote no state file: {result.out.decode()}")
                series.add(result, timeout)
                shutil.rmtree(tmp / f"store-{mb}-{r}", ignore_errors=True)
                shutil.rmtree(tmp / f"rec-{mb}-{r}", ignore_errors=True)
    finally:
        path.unlink(missing_ok=True)
    lines = [f"  {size / 1e6:,.0f} MB ({size:,} bytes, generated in {gen_s:.1f} s), "
             f"{'median of ' + str(rounds) if rounds > 1 else 'one run'}:"]
    for series in (floor, bash, *tools.values()):
        if series is bash and not use_bash:
            continue
        lines.append(_row(series, size, mb, floor, bash if use_bash else None))
    return lines


def _row(series: Series, size: int, mb: int, floor: Series, bash: Series | None) -> str:
    label = f"    {series.label:<19}"
    if series.timed_out is not None:
        return f"{label} timed out after {series.timed_out:.0f} s" + (
            "" if series in (floor, bash) else f"   (targets: RSS <= {RSS_TARGET_MB:.0f} MB, >= {THROUGHPUT_TARGET:.0f} MB/s)")
    wall = series.wall
    if wall is None:
        return f"{label} not measured"
    rate = size / 1e6 / wall
    rss = series.rss
    cpu = series.cpu
    text = f"{label} {wall:8.2f} s {rate:7.1f} MB/s" + (f"  cpu {cpu:7.2f} s  peak {rss:5.0f} MB" if rss is not None
                                                        else "  (quoted figure: jq is missing, not measured)")
    if series is floor or series is bash:
        return text
    notes = []
    if bash is not None and bash.wall:
        ratio = bash.wall / wall
        notes.append(f"{ratio:5.1f}x faster than bash{'' if bash.runs else ' (quoted)'}")
    if floor.wall:
        notes.append(f"{wall / floor.wall:5.1f}x the floor")
    targets = [f"RSS <= {RSS_TARGET_MB:.0f} MB {_check(rss <= RSS_TARGET_MB)}"]
    name = series.label
    if name == "checkpoint" and mb == 60 and bash is not None and bash.wall:
        targets.append(f">= {SPEEDUP_60_TARGET:.0f}x bash {_check(bash.wall / wall >= SPEEDUP_60_TARGET)}")
    if name == "checkpoint" and mb >= 60:
        targets.append(f">= {THROUGHPUT_TARGET:.0f} MB/s {_check(rate >= THROUGHPUT_TARGET)}")
    if name == "extract-raw" and mb == 5 and bash is not None and bash.wall:
        targets.append(f">= 5x bash (issue 2) {_check(bash.wall / wall >= 5)}")
    if mb == 5 and name in REFERENCE_5MB and bash is not None and bash.wall:
        ref = REFERENCE_5MB[name]
        ratio = bash.wall / wall
        targets.append(f"vs bash >= reference {ref:.1f}x {_check(ratio >= ref * 0.9)}" if ref else
                       f"vs bash: reference not recorded yet (today {ratio:.1f}x)")
    return f"{text}   {', '.join(notes)}   [{'; '.join(targets)}]"


def main() -> None:
    """Print the issue-14 table for ``BENCH_SIZES``."""
    sizes = sizes_from_env()
    timeout = DEFAULT_TIMEOUT
    tmp = Path(tempfile.mkdtemp(prefix="duck-tape-bench-sizes-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        env = tool_env(tmp)
        warm = tmp / "warm.jsonl"
        generate(str(warm), 200_000)
        for args in ([str(BIN), "extract-raw", str(warm)], [str(BIN), "recover", str(warm), "--dir",
                                                            str(tmp / "warm"), "--dry-run"]):
            run(args, env)  # fills the bytecode cache
        run([str(BIN), "checkpoint", "--dir", str(tmp / "warm")], env, stdin=hook_payload(warm, tmp))
        jq = "bench/bash_hook.sh measured in this run" if have_jq() else \
            "jq is MISSING: the bash hook's figures are the quoted ones of issue 6/14, not measured"
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"issue 14: the hooks by transcript size (generated Claude Code JSONL, default size cap, bytecode cache, "
              f"process start included; {jq}; timeout {timeout:.0f} s per run; load average {load:.1f})")
        print(f"  targets: peak RSS <= {RSS_TARGET_MB:.0f} MB at every size; 60 MB checkpoint >= "
              f"{SPEEDUP_60_TARGET:.0f}x faster than the bash hook; >= {THROUGHPUT_TARGET:.0f} MB/s from 60 MB up; "
              "5 MB keeps its ratio to the bash hook (issue 13; the reference is in bench/sizes.py REFERENCE_5MB)")
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
