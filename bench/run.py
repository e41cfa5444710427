"""`make bench`: speed and memory figures on generated inputs (not a test; prints figures and ratios).

Targets (issue 2): extract-raw on a 5 MB Claude Code transcript >= 5x faster than the bash+jq extractor
(about 0.4 s on these machines), and peak memory < 100 MB on a 60 MB transcript.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import generate  # noqa: E402

BIN = Path(sys.executable).parent / "duck-tape"
BASH_JQ_SECONDS = 0.4  # the bash+jq extractor on a 5 MB transcript, measured on these machines (issue 2)


def run_once(args: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"bench: {' '.join(args)} exited with status {status}")
    return wall, usage.ru_maxrss / 1024.0


def timed(args: list[str], env: dict, repeat: int = 7) -> tuple[float, float, float]:
    """Median and min wall seconds and max peak RSS (MB) of ``repeat`` runs."""
    walls, peaks = zip(*(run_once(args, env) for _ in range(repeat)))
    return statistics.median(walls), min(walls), max(peaks)


def main() -> None:
    env = dict(os.environ, DUCK_TAPE_MAX_TRANSCRIPT_BYTES=str(512 * 1024 * 1024))
    with tempfile.TemporaryDirectory() as tmp:
        five = Path(tmp, "five.jsonl")
        sixty = Path(tmp, "sixty.jsonl")
        generate(str(five), 5_000_000)
        generate(str(sixty), 60_000_000)
        print(f"inputs: {five.stat().st_size / 1e6:.1f} MB and {sixty.stat().st_size / 1e6:.1f} MB Claude Code JSONL (generated)")
        floor, floor_min, _ = timed([sys.executable, "-c", "import orjson"], env)
        wall, fastest, peak = timed([str(BIN), "extract-raw", str(five)], env)
        print(f"extract-raw 5 MB:  {wall * 1000:6.0f} ms wall (median of 7, min {fastest * 1000:.0f} ms, process start "
              f"included), peak {peak:.0f} MB")
        print(f"  vs bash+jq extractor ~{BASH_JQ_SECONDS * 1000:.0f} ms: {BASH_JQ_SECONDS / wall:.1f}x faster (target >= 5x)")
        print(f"  of which Python start + import orjson: {floor * 1000:.0f} ms (min {floor_min * 1000:.0f} ms)")
        wall, _, peak = timed([str(BIN), "extract-raw", str(sixty)], env, repeat=3)
        print(f"extract-raw 60 MB: {wall * 1000:6.0f} ms wall, peak {peak:.0f} MB (target < 100 MB)")
        out = Path(tmp, "store")
        wall, _, peak = timed([str(BIN), "recover", str(five), "--dir", str(out), "--dry-run"], env, repeat=5)
        print(f"recover --dry-run 5 MB:  {wall * 1000:6.0f} ms wall, peak {peak:.0f} MB")
        wall, _, peak = timed([str(BIN), "recover", str(sixty), "--dir", str(out), "--dry-run"], env, repeat=3)
        print(f"recover --dry-run 60 MB: {wall * 1000:6.0f} ms wall, peak {peak:.0f} MB (target < 100 MB)")
    from hooks_batch import main as hooks_batch_main  # issue 6: the pre-compact checkpoint and the batch

    hooks_batch_main()
    __import__("restore_bench").main()  # issue 7: duck-tape restore, the post-compaction hook (< 0.15 s)
    __import__("nudge_bench").main()  # issue 17: duck-tape nudge, the after-each-turn hook (< 0.1 s on 50 MB)


if __name__ == "__main__":
    main()
