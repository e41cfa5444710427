"""Issue 17 figure (part of ``make bench``; also runnable alone): ``duck-tape nudge``, the after-each-turn hook.

A 50 MB Claude Code transcript (``gen.generate``) whose last usage record sits ~100 KB before the end (tool
results follow it), at 76 % of a 200k window.  ``duck-tape nudge --transcript … --dir … --format claude-code``
with the store emptied before each run (so the line fires every time: the slower path), wall time with process
start, median of 9; target well under 0.1 s.  The hook reads the file's tail only, so the size does not matter.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import generate  # noqa: E402

BIN = Path(sys.executable).parent / "duck-tape"
TARGET = 0.1
SIZE = 50 * 1024 * 1024


def _make(path: Path) -> None:
    generate(str(path), SIZE)
    usage = {"type": "assistant", "isSidechain": False, "uuid": "bench-usage", "timestamp": "2026-09-01T12:00:00.000Z",
             "message": {"id": "msg_bench", "role": "assistant", "model": "claude-sonnet-4-5",
                         "content": [{"type": "text", "text": "Wired the limiter into the refund endpoint."}],
                         "usage": {"input_tokens": 1500, "cache_read_input_tokens": 140000,
                                   "cache_creation_input_tokens": 10500, "output_tokens": 400}}}
    body = "\n".join(f"{i:5d}  def handler_{i}(request): return limiter.check(request.customer_id)" for i in range(1400))
    result = {"type": "user", "isSidechain": False, "uuid": "bench-result", "timestamp": "2026-09-01T12:00:05.000Z",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bench",
                                                       "content": body}]}}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(usage) + "\n" + json.dumps(result) + "\n")


def main(repeat: int = 9) -> None:
    with tempfile.TemporaryDirectory(prefix="duck-tape-nudge-bench-") as tmp:
        root = Path(tmp)
        transcript = root / "session.jsonl"
        _make(transcript)
        store = root / ".duck-tape"
        walls = []
        out = b""
        for n in range(repeat + 1):
            shutil.rmtree(store, ignore_errors=True)
            start = time.perf_counter()
            done = subprocess.run([str(BIN), "nudge", "--transcript", str(transcript), "--dir", str(store)],
                                  capture_output=True, check=False)
            wall = time.perf_counter() - start
            out = done.stdout
            if done.returncode != 0 or not out:
                raise SystemExit(f"bench: nudge printed nothing (status {done.returncode})")
            if n:
                walls.append(wall)
        line = json.loads(out)["systemMessage"]
        mb = transcript.stat().st_size / 1e6
        median = statistics.median(walls)
        print(f"nudge (Stop hook) on a {mb:.0f} MB transcript: {median * 1000:.0f} ms median wall, min "
              f"{min(walls) * 1000:.0f} ms, process start included (target < {TARGET * 1000:.0f} ms): {line}")


if __name__ == "__main__":
    main()
