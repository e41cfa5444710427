"""`make bench`: speed and memory figures on generated inputs (not a test; prints figures, ratios and targets).

In one run, each part also runnable alone:

* ``bench/sizes.py`` (issues 14 and 23): checkpoint, extract-raw, recover and batch at 5 MB, 60 MB, 200 MB and 1 GB
  generated Claude Code sessions (a task and a decision planted at the middle), every byte read: wall time, MB/s,
  message characters/s, peak RSS, the ratio to the bash+jq hook (``bench/bash_hook.sh``, measured in the same run at
  5 and 60 MB) and to the orjson parse floor; whether recover keeps the planted middle; at 60 MB a session
  checkpointed as it grows (55 %, 95 %, 100 %).  ``BENCH_SIZES=5,60 make bench`` for a quick run; ``BENCH_TIMEOUT``
  (seconds, default 600) bounds each run.
* ``bench/hooks_batch.py`` (issues 6 and 11): checkpoint on 5 MB against its 0.15 s budget and the bash hook; the
  other 5 MB shapes (<= 3x the ordinary one); the batch over 1,000 transcripts and its cached rerun.
* ``bench/restore_bench.py`` (issue 7): restore after a compaction (< 0.15 s).
* ``bench/nudge_bench.py`` (issue 17): the after-each-turn nudge on 50 MB (< 0.1 s).
* ``bench/opencode_db_bench.py`` (issue 22): batch over an opencode.db of 1,000 / 2,000 / 5,000 sessions (linear),
  and peak memory of a recover whose transcript holds one 300 MB line.

Not run here: ``bench/install_size.py`` (issue 24), the installed size of the default install and the ``[llm]``
extra, which installs from the package index.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    # Every child measures this tree's pipeline, also when the venv's editable install points at another tree.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    __import__("sizes").main()  # issues 14 and 23
    __import__("hooks_batch").main()  # issues 6 and 11: the pre-compact checkpoint, other shapes, the batch
    __import__("restore_bench").main()  # issue 7: duck-tape restore, the post-compaction hook (< 0.15 s)
    __import__("nudge_bench").main()  # issue 17: duck-tape nudge, the after-each-turn hook (< 0.1 s on 50 MB)
    __import__("opencode_db_bench").main()  # issue 22: batch over many opencode sessions; one very long line


if __name__ == "__main__":
    main()
