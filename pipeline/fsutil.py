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

Temporary files are named ``.<target name>.<pid>.<8 hex>.tmp``.  ``atomic_write_text(..., temp_dir=D)`` puts it in
``D`` instead (CONTEXT.md's go into ``.duck-tape/``, whose ``.gitignore`` holds ``*``, so one left by a killed
process never shows in ``git status``) when ``D`` is on the target's file system, so the rename stays atomic;
otherwise, or when the rename says ``EXDEV`` (a bind mount), beside the target as before.  A process killed
mid-write (SIGKILL, power loss) cannot remove its temp file: ``remove_stale_temps`` removes those of processes
that are no longer running.

Errors: an ``OSError`` raised while writing names the target (``filename``), never the temp file, and keeps its
errno and class (``PermissionError``, ``FileExistsError``...): a full disk (``ENOSPC`` from ``write``/``fsync``)
says which file could not be written.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from contextlib import contextmanager
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


_TEMP_RE = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[0-9a-f]{8}\.tmp")
"""A temporary file name of ``_open_temp`` (use ``fullmatch``)."""


def _pid_alive(pid: int) -> bool:
    """True unless process ``pid`` surely no longer exists (``os.kill(pid, 0)`` says "no such process").  This
    process counts as alive; on Windows (where signal 0 is not a probe) every process does."""
    if pid == os.getpid() or os.name == "nt":
        return True
    if pid <= 0:
        return False  # never a writer's pid (and kill(0, ...) would probe our own process group)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def remove_stale_temps(directory: str | os.PathLike[str], *, name: str | None = None) -> list[Path]:
    """Remove the temporary files (``.<name>.<pid>.<hex>.tmp``) in ``directory`` left by processes that are no
    longer running (killed mid-write); with ``name``, only those of a target called ``name``.  Returns the
    removed paths.  Never raises ``OSError``: a folder that cannot be read or a file that cannot be removed is
    skipped (this is housekeeping, the caller's write goes on).

    A pid reused by a live process keeps its file until that process ends; a folder shared by several machines
    (NFS) should not rely on this (a writer on another machine looks dead here).
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_RE.fullmatch(entry.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or _pid_alive(int(match["pid"])):
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def named_os_error(exc: OSError, target: str | os.PathLike[str]) -> OSError:
    """``exc`` naming ``target`` (same errno, same ``OSError`` subclass); ``exc`` itself when it has no errno or
    already names ``target``."""
    if exc.errno is None or exc.filename == os.fspath(target):
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), os.fspath(target))


def _same_device(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


def _open_temp(target: Path, mode: int | None = None, temp_dir: Path | None = None) -> tuple[int, Path]:
    """Create a new, empty temporary file beside ``target`` (or in ``temp_dir``); return its descriptor and path.

    The name is ``.<target name>.<pid>.<random hex>.tmp``.  ``O_EXCL`` guarantees the file is ours.  With
    ``mode`` (permission bits) the file is created with ``mode`` minus the umask, then set to ``mode`` exactly;
    where the file system cannot set it (``fchmod`` fails) the stricter, umask-reduced mode stays.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TEMP_ATTEMPTS):
        # os.urandom rather than secrets.token_hex: importing secrets costs ~5 ms on the checkpoint hook path
        tmp = (temp_dir or target.parent) / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
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


def _write_temp(target: Path, text: str, encoding: str, mode: int | None = None,
                temp_dir: Path | None = None) -> Path:
    """Write ``text`` into a fresh fsynced temporary file beside ``target`` or in ``temp_dir`` (permission bits
    ``mode``, default the umask's); return its path."""
    fd, tmp = _open_temp(target, mode, temp_dir)
    try:
        _write_fd(fd, text, encoding)
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:  # gone already, or cannot be removed (read-only now): the original error matters more
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
    path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", mode: int | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Write ``text`` to ``path`` atomically, replacing an existing file.

    Temp file in the same directory (or in ``temp_dir`` when that is on the same file system, module
    docstring), fsync, ``os.replace``.  The directory must exist.  ``mode``: permission bits of the result;
    default: those of the regular file being replaced (``existing_mode``), else the umask's default for a new
    file.  Raises ``OSError`` naming ``path`` (e.g. ``FileNotFoundError`` for a missing directory,
    ``PermissionError``, ``ENOSPC``) or ``UnicodeEncodeError``; in every failure case the old file, if any, is
    left intact and no temporary file remains.
    """
    target = Path(path)
    with _naming(target):
        bits = existing_mode(target) if mode is None else mode
        where = Path(temp_dir) if temp_dir is not None and _same_device(Path(temp_dir), target.parent) else None
        _replace_with_temp(target, text, encoding, bits, where)
    _fsync_dir(target.parent)


@contextmanager
def _naming(target: Path):
    """Re-raise an ``OSError`` of the block as ``named_os_error`` names it for ``target`` (the path the user gave,
    not a temp file), unchanged when it names nothing better."""
    try:
        yield
    except OSError as exc:
        named = named_os_error(exc, target)
        if named is exc:
            raise
        raise named from exc


def _replace_with_temp(target: Path, text: str, encoding: str, mode: int | None, temp_dir: Path | None) -> None:
    """Write the temp file (in ``temp_dir`` or beside ``target``) and rename it over ``target``; a rename that
    cannot cross from ``temp_dir`` (``EXDEV``) is redone from beside the target."""
    tmp = _write_temp(target, text, encoding, mode, temp_dir)
    try:
        os.replace(tmp, target)
    except OSError as exc:
        _remove_quietly(tmp)
        if temp_dir is None or exc.errno != errno.EXDEV:
            raise
        _replace_with_temp(target, text, encoding, mode, None)
        return
    except BaseException:
        _remove_quietly(tmp)
        raise
    if temp_dir is not None:
        _fsync_dir(temp_dir)


def atomic_create_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Create ``path`` with ``text`` atomically; raise ``FileExistsError`` if it already exists.

    The complete temp file is hard-linked to the target name (``os.link`` fails when the name exists, so two
    writers racing for the same name cannot both win and neither can clobber the other), then the temp name is
    removed.  On file systems without hard links (``os.link`` raises another ``OSError``) the target is
    created with ``O_EXCL`` and written in place: still race-free about existence, but a crash mid-write can
    leave a partial file there (it is removed on an ordinary failure).
    """
    target = Path(path)
    with _naming(target):
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
