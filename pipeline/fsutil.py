"""Atomic file writes shared by the whole project (DESIGN.md "Agent State file": "Writes are atomic (temp file + rename)").

Both helpers write the whole text to a temporary file in the target's directory (so the final rename never
crosses a file system), flush and ``fsync`` it, then move it into place.  A reader therefore sees either the
old file or the complete new one, never a half-written file.  On any failure the temporary file is removed
and the exception propagates unchanged.

Permissions: a new file gets the mode a fresh ``open(path, "w")`` would give it (``0o666`` minus the process
umask).  ``atomic_write_text`` over an existing regular file keeps that file's permission bits (``0o777``), so a
``0600`` CONTEXT.md stays ``0600``; the temporary file is created with those bits minus the umask (never wider
than the old file) and then set to them exactly.  Owner and group are not kept (that needs privileges), nor
are setuid/setgid/sticky bits.  Text is written with ``newline=""``, so ``"\\n"`` stays ``"\\n"`` on every
platform.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_TEMP_ATTEMPTS = 16
_NEW_FILE_MODE = 0o666  # minus the umask, as open(path, "w")


def existing_mode(path: str | os.PathLike[str]) -> int | None:
    """Permission bits (``0o777`` part of the mode) of the regular file at ``path``; None when nothing is there
    or it is not a regular file (a symlink is replaced, not followed, by the atomic write).

    Raises ``OSError`` other than "no such file" (e.g. ``PermissionError`` on the directory).
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return stat.S_IMODE(st.st_mode) & 0o777 if stat.S_ISREG(st.st_mode) else None


def _open_temp(target: Path, mode: int | None = None) -> tuple[int, Path]:
    """Create a new, empty temporary file beside ``target``; return its descriptor and path.

    The name is ``.<target name>.<pid>.<random hex>.tmp``.  ``O_EXCL`` guarantees the file is ours.  With
    ``mode`` (permission bits) the file is created with ``mode`` minus the umask, then set to ``mode`` exactly;
    where the file system cannot set it (``fchmod`` fails) the stricter, umask-reduced mode stays.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TEMP_ATTEMPTS):
        # os.urandom rather than secrets.token_hex: importing secrets costs ~5 ms on the checkpoint hook path
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, flags, _NEW_FILE_MODE if mode is None else mode)
        except FileExistsError:
            continue
        if mode is not None:
            try:
                os.fchmod(fd, mode)
            except OSError:
                pass
        return fd, tmp
    raise FileExistsError(f"{target}: could not create a unique temporary file beside it")


def _write_fd(fd: int, text: str, encoding: str) -> None:
    """Write ``text`` to ``fd``, flush and fsync it, and close it (also on failure)."""
    with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _write_temp(target: Path, text: str, encoding: str, mode: int | None = None) -> Path:
    """Write ``text`` into a fresh fsynced temporary file beside ``target`` (permission bits ``mode``, default
    the umask's); return its path."""
    fd, tmp = _open_temp(target, mode)
    try:
        _write_fd(fd, text, encoding)
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_dir(directory: Path) -> None:
    """Best-effort fsync of a directory so the rename itself is durable (not possible on every OS)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(
    path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", mode: int | None = None
) -> None:
    """Write ``text`` to ``path`` atomically, replacing an existing file.

    Temp file in the same directory, fsync, ``os.replace``.  The directory must exist.  ``mode``: permission
    bits of the result; default: those of the regular file being replaced (``existing_mode``), else the
    umask's default for a new file (module docstring).  Raises ``OSError`` (e.g. ``FileNotFoundError`` for a
    missing directory, ``PermissionError``) or ``UnicodeEncodeError``; in every failure case the old file, if
    any, is left intact and no temporary file remains.
    """
    target = Path(path)
    tmp = _write_temp(target, text, encoding, existing_mode(target) if mode is None else mode)
    try:
        os.replace(tmp, target)
    except BaseException:
        _remove_quietly(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_create_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Create ``path`` with ``text`` atomically; raise ``FileExistsError`` if it already exists.

    The complete temp file is hard-linked to the target name (``os.link`` fails when the name exists, so two
    writers racing for the same name cannot both win and neither can clobber the other), then the temp name is
    removed.  On file systems without hard links (``os.link`` raises another ``OSError``) the target is
    created with ``O_EXCL`` and written in place: still race-free about existence, but a crash mid-write can
    leave a partial file there (it is removed on an ordinary failure).
    """
    target = Path(path)
    tmp = _write_temp(target, text, encoding)
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError:
        _create_exclusive(target, text, encoding)
    finally:
        _remove_quietly(tmp)
    _fsync_dir(target.parent)


def _create_exclusive(target: Path, text: str, encoding: str) -> None:
    """Fallback of ``atomic_create_text``: ``O_EXCL`` create and write in place; remove the file on failure."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o666)
    try:
        _write_fd(fd, text, encoding)
    except BaseException:
        _remove_quietly(target)
        raise
