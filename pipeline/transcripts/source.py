"""Opening a transcript for reading: regular files only, at most the size seen at the start, BOM skipped
(DESIGN.md "Transcript formats": input safety; issue 11, parts 4 and 5).

Every reader and the format detection open transcripts through ``open_transcript``:

* **never a non-regular file**: ``open()`` on a FIFO blocks until a writer appears (forever, in a batch over a
  folder holding one).  The file is opened with ``O_NONBLOCK`` (a FIFO open then returns at once) and
  ``fstat``-ed; anything but a regular file is refused with ``NotRegularFile`` (an ``InputError``, exit 2)
  before a byte is read.  ``O_NOFOLLOW`` refuses a symlink put in place after ``check_transcript_path``.
* **bounded**: the handle ends at ``limit`` bytes (the size ``check_transcript_path`` saw and held against the
  cap) or at the size ``fstat`` reports at open, whichever is smaller.  A transcript that grows while it is
  read (the harness keeps appending) is read as it was when the read started, so the size cap holds.
* **BOM**: a leading UTF-8 byte order mark is not part of the JSON; the handle starts after it (its offsets,
  ``seek`` and ``tell`` count from there).  Line numbers are unchanged.
"""

from __future__ import annotations

import io
import os
from stat import S_ISREG

from pipeline.errors import InputError

BOM = b"\xef\xbb\xbf"

#: Read buffer in bytes (see ``records.READ_BUFFER``).
READ_BUFFER = 64 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | getattr(os, "O_BINARY", 0)


class NotRegularFile(InputError):
    """The path names a FIFO, a device, a socket or a folder: not a transcript (exit 2)."""


NOT_REGULAR = "not a regular file (a FIFO, device or folder; expected a transcript .jsonl/.json)"


class _Window(io.RawIOBase):
    """Raw reader over bytes ``[start, end)`` of an open file descriptor; offsets count from ``start``."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        super().__init__()
        self._file = io.FileIO(fd, "rb", closefd=True)
        self._start = start
        self._end = end
        self._pos = self._file.seek(start)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._end - self._pos)
        if n <= 0:
            return 0
        got = self._file.readinto(memoryview(buffer)[:n]) or 0
        self._pos += got
        return got

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            pos = self._start + offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._end + offset
        else:
            raise ValueError(f"invalid whence {whence!r}")
        self._pos = self._file.seek(max(pos, self._start))
        return self._pos - self._start

    def tell(self) -> int:
        return self._pos - self._start

    @property
    def size(self) -> int:
        """Bytes readable through this window (the file's size at open, at most ``limit``, after a BOM)."""
        return self._end - self._start

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


def open_transcript(path: str, limit: int | None = None, *, buffer_size: int = READ_BUFFER,
                    follow: bool = False, skip_bom: bool = True) -> io.BufferedReader:
    """Open ``path`` for a bounded binary read (module docstring); use it as a context manager.

    ``limit``: read at most this many bytes of the file (None: the size at open).  ``follow``: open a symlink's
    target (default: refuse it with ``ELOOP``).  ``skip_bom``: start after a leading BOM (False: every byte, for
    a digest of the file).  Raises ``NotRegularFile`` for anything but a regular file,
    ``OSError`` when the file cannot be opened.
    """
    fd = os.open(path, _FLAGS & ~_NOFOLLOW if follow else _FLAGS)
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode):
            raise NotRegularFile(NOT_REGULAR, path=str(path))
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        end = st.st_size if limit is None else min(st.st_size, limit)
        start = len(BOM) if skip_bom and end >= len(BOM) and os.read(fd, len(BOM)) == BOM else 0
        raw = _Window(fd, start, end)
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(raw, buffer_size=buffer_size)
