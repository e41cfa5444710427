"""Console-script entry point (``duck-tape``): a fast lane for the hook commands, click for the rest.

Agent harnesses call ``extract-raw`` on every compaction, so its start-up time is part of the user's wait
(issue 2 budget: 5x faster than the bash+jq extractor, ~80 ms with process start).  Importing click
costs ~18 ms here, so the plain shapes of the hook commands (``extract-raw PATH [--max-bytes N]``)
are recognised without it and run the same function the click command runs.  Anything else (``--help``,
a typo, an extra flag) goes to the click CLI in ``pipeline.cli``, which owns parsing, help and errors.
"""

from __future__ import annotations

import sys


def _fast_extract_raw(args: list[str]) -> int | None:
    """Run ``extract-raw PATH [--max-bytes N | --max-bytes=N]``; None when ``args`` has another shape."""
    path: str | None = None
    max_bytes: int | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--max-bytes"):
            value = arg.partition("=")[2] if "=" in arg else (rest.pop(0) if rest else "")
            if not value.isdigit() or int(value) < 1:
                return None
            max_bytes = int(value)
        elif arg.startswith("-") or path is not None:
            return None
        else:
            path = arg
    if path is None:
        return None
    from pipeline.stages.extract import extract_raw_text

    sys.stdout.write(extract_raw_text(path, max_bytes=max_bytes))
    sys.stdout.flush()
    return 0


FAST = {"extract-raw": _fast_extract_raw}


def main(argv: list[str] | None = None) -> int:
    """Run ``duck-tape`` with ``argv`` (default ``sys.argv[1:]``); return the exit code (DESIGN.md)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in FAST:
        code = FAST[args[0]](args[1:])
        if code is not None:
            return code
    from pipeline.cli import main as click_main

    return click_main(args)
