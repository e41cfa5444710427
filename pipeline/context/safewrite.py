"""Safe CONTEXT.md writes: an exclusive lock around read-plan-write, atomic replace, a backup until it succeeds.

Issue 5 "Safe writes".  The lock is a ``filelock.FileLock`` (an OS lock: released when the process dies, so a
crash never leaves a stale lock) on ``<dir of CONTEXT.md>/.duck-tape/<name>.lock``; the store directory is created
with its ``.gitignore`` (``*``) when missing, so neither the lock nor the backup shows up in ``git status``.

``update`` re-reads the file under the lock and re-plans when it changed since the caller's plan, so two merges
started together both land.  The write keeps the previous text in ``.duck-tape/<name>.bak`` until the new file
is in place (``pipeline.fsutil.atomic_write_text``: temp file, fsync, rename, the old file's permission bits
kept), then removes the backup; a crash mid-write leaves the old file intact (and the backup beside it).

Leftovers (issue 11 part 7): the temp file of CONTEXT.md is made inside ``.duck-tape/`` (git-ignored) when that
folder is on the same file system, so a process killed mid-write leaves nothing in the project root.  The next
write under the lock (``clean_leftovers``) removes temp files of processes no longer running (in ``.duck-tape/``
and, from older versions, beside CONTEXT.md) and a stale backup: under the lock no write is in flight, so a
``.bak`` there is from an interrupted one, and CONTEXT.md itself is whole (the replace is atomic).  ``merge``
names what it removed on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import DuckTapeError, InputError
from pipeline.fsutil import atomic_write_text, existing_mode, remove_stale_temps

LOCK_TIMEOUT_SECONDS = 120.0
STORE = ".duck-tape"


def lock_path(path: Path) -> Path:
    """``<dir>/.duck-tape/<name>.lock``."""
    return path.parent / STORE / f"{path.name}.lock"


def backup_path(path: Path) -> Path:
    """``<dir>/.duck-tape/<name>.bak``: the previous text, present only while a write is in flight (or after a crash)."""
    return path.parent / STORE / f"{path.name}.bak"


def read_context(path: Path) -> str | None:
    """The exact text of ``path`` (line ends kept), or None when it does not exist.

    Raises ``InputError`` (exit 2) for a symlink (an atomic replace would turn it into a file), a directory or
    text that is not UTF-8.
    """
    if path.is_symlink():
        raise InputError("is a symlink; pass the file it points to with --context", path=str(path))
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError("is a directory, not a CONTEXT.md file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte offset {exc.start})", path=str(path)) from None


@contextmanager
def locked(path: Path, *, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (module docstring).  Raises ``InputError`` when the directory of
    ``path`` does not exist, ``DuckTapeError`` (exit 1) after ``timeout`` seconds of waiting."""
    from filelock import FileLock, Timeout

    from pipeline.state.store import ensure_store

    if not path.parent.is_dir():
        raise InputError("its directory does not exist", path=str(path))
    try:
        ensure_store(path.parent / STORE)
    except OSError as exc:
        from pipeline.errors import input_error_from_os

        raise input_error_from_os(exc, str(path.parent / STORE),
                                  action="cannot create the store for the lock and backup of " + str(path)) from None
    lock = FileLock(str(lock_path(path)), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise DuckTapeError(
            f"timed out after {timeout:.0f} s waiting for {lock_path(path)}: another duck-tape write to this file is running",
            path=str(path),
        ) from None
    try:
        yield
    finally:
        lock.release()


def write_with_backup(path: Path, text: str, before: str | None) -> None:
    """Write ``text`` to ``path`` atomically; ``before`` (the current text, None for a new file) is kept in the
    backup file until the replace succeeded.  Raises ``OSError``; the old file is then intact.

    Permissions (``pipeline.fsutil``): the new CONTEXT.md keeps the permission bits of the one it replaces (a
    ``0600`` file stays ``0600``), and the backup gets the same bits, so the previous text is never more
    readable than it was; a new CONTEXT.md gets the umask's default.
    """
    backup = backup_path(path)
    mode = existing_mode(path)
    if before is not None:
        atomic_write_text(backup, before, mode=mode)
    atomic_write_text(path, text, mode=mode, temp_dir=path.parent / STORE)
    if before is not None:
        backup.unlink(missing_ok=True)


def clean_leftovers(path: Path) -> list[str]:
    """Under the lock of ``path`` (the caller holds it): remove what interrupted writes left (module docstring);
    return one line per removed file, for the user.  Never raises ``OSError`` for a file it cannot remove."""
    notes = []
    store = path.parent / STORE
    for tmp in remove_stale_temps(store) + remove_stale_temps(path.parent, name=path.name):
        notes.append(f"removed {tmp}, the temporary file of an interrupted write (its process is gone)")
    backup = backup_path(path)
    if backup.is_file() and not backup.is_symlink():
        try:
            backup.unlink()
        except OSError as exc:
            notes.append(f"{backup}: a backup left by an interrupted write; could not remove it ({exc.strerror})")
        else:
            notes.append(f"removed {backup}, a backup left by an interrupted write ({path} itself is whole)")
    return notes


def tidy(path: Path) -> list[str]:
    """Take the lock of ``path`` and ``clean_leftovers``; return its notes.  Without a store yet (or a store
    that is not a real folder) only the temp files of dead processes beside ``path`` go, and nothing is created."""
    store = path.parent / STORE
    if not store.is_dir() or store.is_symlink():
        return [f"removed {tmp}, the temporary file of an interrupted write (its process is gone)"
                for tmp in remove_stale_temps(path.parent, name=path.name)]
    with locked(path):
        return clean_leftovers(path)


def update(path: Path, before: str | None, after: str, replan: Callable[[str | None], str | None]) -> str | None:
    """Under the lock: write ``after`` when ``path`` still holds ``before``; otherwise write ``replan(current)``
    (its None means nothing to write).  Returns the text written, or None when nothing was written."""
    with locked(path):
        clean_leftovers(path)
        current = read_context(path)
        text = after if current == before else replan(current)
        if text is None or text == current:
            return None
        write_with_backup(path, text, current)
        return text
