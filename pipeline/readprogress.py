"""A progress bar on stderr while a long transcript is read (issue 23: recover, verify, extract-raw; batch shows its
sessions with ``pipeline.batch.progress``).

``reading(path, label)`` is a context manager giving a callback ``update(bytes_read)``.  The bar (rich: bytes read
of the file's size, speed, time left) is shown only when stderr is a terminal and the file holds at least
``MIN_BYTES`` bytes: a short read finishes before a bar would help, and off a terminal (a hook, a pipe, CI) nothing
is printed.  rich is imported only then.  The bar is removed when the read ends (``transient``).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from collections.abc import Callable, Iterator

MIN_BYTES = 20_000_000


def _tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def reading(path: str, label: str, *, force: bool = False) -> Iterator[Callable[[int | None], None]]:
    """A callback ``update(bytes_read)`` (None: the position is not known, only that the read goes on) that moves a
    bar for reading ``path`` (module rules; ``force``: show it whatever the size and stream, for tests)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    if not force and (size < MIN_BYTES or not _tty()):
        yield lambda _done: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                               TransferSpeedColumn)

    bar = Progress(TextColumn(label), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                   console=Console(file=sys.stderr, force_terminal=True if force else None), transient=True)
    task = bar.add_task(label, total=size or None)

    def update(done: int | None) -> None:
        if done is None:
            bar.advance(task, 0)
        else:
            bar.update(task, completed=min(done, size) if size else done)

    with bar:
        yield update
