"""Batch progress on stderr: a rich progress bar on a terminal, plain lines otherwise (issue 6, item 1).

Both show the same events: ``start(total, cached)`` once, ``done(record)`` per session processed in this
run, ``finish()`` once.  Plain lines (CI logs, pipes) look like::

    batch: 12 transcript(s), 4 from cache, 8 to process with 2 worker(s)
    [1/8] ok       claude-code  5b0e8a52-…  decisions 6, facts 9  0.21 s
    [2/8] failed   -            broken.jsonl  unknown transcript format (expected …)
"""

from __future__ import annotations

import os
import sys
from typing import IO


def label(record: dict) -> str:
    """Short name of a session for progress lines: its session id, else its file name."""
    return record.get("session_id") or os.path.basename(record.get("path") or "?")


def line(record: dict) -> str:
    """The one-line summary of a processed session (status, harness, name, figures or first error)."""
    status = record.get("status", "?")
    head = f"{status:<8} {record.get('harness') or '-':<12} {label(record)}"
    if status == "ok":
        return f"{head}  decisions {record['decisions']}, facts {record['facts']}  {record['seconds']:.2f} s"
    reason = (record.get("errors") or record.get("notes") or [""])[-1]
    return f"{head}  {reason}"


class PlainProgress:
    """Plain progress lines on ``stream``."""

    def __init__(self, stream: IO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = 0
        self.count = 0

    def start(self, total: int, cached: int, jobs: int) -> None:
        self.total = total
        self.stream.write(f"batch: {total + cached} transcript(s), {cached} from cache, {total} to process"
                          f" with {jobs} worker(s)\n")
        self.stream.flush()

    def done(self, record: dict) -> None:
        self.count += 1
        self.stream.write(f"[{self.count}/{self.total}] {line(record)}\n")
        self.stream.flush()

    def finish(self) -> None:
        self.stream.flush()


class RichProgress:
    """A rich progress bar (sessions done / to process, elapsed, the last session) on ``stream``.

    rich is imported by ``start`` and only when there is something to process: a rerun served from the cache
    prints its one start line without it.
    """

    def __init__(self, stream: IO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.console = None
        self.bar = None
        self.task = None
        self.failed = 0

    def start(self, total: int, cached: int, jobs: int) -> None:
        head = f"batch: {total + cached} transcript(s), {cached} from cache, {total} to process with {jobs} worker(s)"
        if total == 0:
            self.stream.write(head + "\n")
            self.stream.flush()
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(file=self.stream)
        self.bar = Progress(TextColumn("batch"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TextColumn("{task.description}"), console=self.console, transient=False)
        self.console.print(head, markup=False, highlight=False)
        self.bar.start()
        self.task = self.bar.add_task("", total=total)

    def done(self, record: dict) -> None:
        if self.bar is None:
            return
        if record.get("status") in ("failed", "refused"):
            self.failed += 1
            self.bar.console.print(line(record), markup=False, highlight=False)
        suffix = f"  {self.failed} failed" if self.failed else ""
        self.bar.update(self.task, advance=1, description=f"{label(record)[:40]}{suffix}")

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def make_progress(stream: IO | None = None) -> PlainProgress | RichProgress:
    """``RichProgress`` when ``stream`` (default stderr) is a terminal, else ``PlainProgress``."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return RichProgress(stream) if tty else PlainProgress(stream)
