"""Input safety checks before reading a transcript (DESIGN.md "Transcript formats": input safety).

Refuse symlinks, enforce an optional trusted root (``DUCK_TAPE_TRUSTED_ROOT``) and a size cap
(``DUCK_TAPE_MAX_TRANSCRIPT_BYTES`` or ``--max-bytes``; default 1 GiB everywhere, issue 14).

The cap exists for people who want one, not to skip real sessions: a session that reaches compaction is
typically 8-46 MB and can be 100 MB or more, so a default that skips it would leave the restore nothing fresh.
"""

from __future__ import annotations

import os
from errno import EBADF, ELOOP, ENOENT, ENOTDIR
from stat import S_ISLNK, S_ISREG

from pipeline.errors import InputError
from pipeline.transcripts.source import NOT_REGULAR

DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
"""1 GiB: the default cap of every path (issue 14: the sessions that compact are the big ones)."""
HOOK_MAX_BYTES = DEFAULT_MAX_BYTES  # hook paths: checkpoint, extract-raw, restore
RECOVER_MAX_BYTES = DEFAULT_MAX_BYTES  # explicit recovery, resume, batch


def max_bytes_from_env(default: int) -> int:
    """``DUCK_TAPE_MAX_TRANSCRIPT_BYTES`` as an int (bytes), else ``default``.

    Raises InputError when the variable is set but not a positive integer.
    """
    raw = os.environ.get("DUCK_TAPE_MAX_TRANSCRIPT_BYTES")
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"DUCK_TAPE_MAX_TRANSCRIPT_BYTES must be a positive integer (bytes), got {raw!r}") from None
    if value <= 0:
        raise InputError(f"DUCK_TAPE_MAX_TRANSCRIPT_BYTES must be a positive integer (bytes), got {raw!r}")
    return value


def over_cap_message(size: int, max_bytes: int) -> str:
    """The reason printed when the cap applies: both sizes, and what to set to read the file."""
    return (f"transcript is {size} bytes, over the cap of {max_bytes} bytes (raise it with --max-bytes {size} "
            f"or DUCK_TAPE_MAX_TRANSCRIPT_BYTES={size}; unset, the cap is {DEFAULT_MAX_BYTES} bytes)")


#: lstat errors that mean "not there", as pathlib treats them
_MISSING_ERRNOS = (ENOENT, ENOTDIR, EBADF, ELOOP)


def _normal(path: str | os.PathLike) -> str:
    """``path`` spelled the way ``pathlib`` spells it: no ``.`` parts, repeated or trailing slashes.

    ``..`` parts are kept (resolving them without the file system would be wrong under symlinks).
    """
    text = os.fspath(path)
    lead = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    return lead + "/".join(part for part in text.split("/") if part and part != ".") or "."


def _absolute(normal: str) -> str:
    """``normal`` (see ``_normal``) made absolute against the working directory, without resolving anything."""
    if normal.startswith("/"):
        return normal
    cwd = os.getcwd()
    if normal == ".":
        return cwd
    return cwd + normal if cwd.endswith("/") else f"{cwd}/{normal}"


def check_transcript_path(path: str | os.PathLike, *, max_bytes: int, trusted_root: str | None = None) -> str:
    """Return the resolved (absolute, symlink-free) path of a transcript that is safe to read (see
    ``checked_transcript``, which also returns the size it saw)."""
    return checked_transcript(path, max_bytes=max_bytes, trusted_root=trusted_root)[0]


def checked_transcript(path: str | os.PathLike, *, max_bytes: int,
                       trusted_root: str | None = None) -> tuple[str, int]:
    """Return ``(resolved path, size in bytes)`` of a transcript that is safe to read: the resolved (absolute, symlink-free) path of a transcript that is safe to read.

    Raises InputError (exit 2) naming the file when it does not exist, is a symlink (or lies under one
    inside the trusted root), is not a regular file, lies outside ``trusted_root`` (default: env
    ``DUCK_TAPE_TRUSTED_ROOT``, unset = no restriction), or is larger than ``max_bytes`` bytes.  An
    ``lstat`` error other than "no such file" (e.g. permission denied) is raised as the ``OSError``.
    The size is what the readers read at most (``source.open_transcript``): a file that grows while it is read
    cannot pass the cap.  Plain ``os.path`` on purpose: importing pathlib costs ~4 ms of the hook path's start.
    """
    p = _normal(path)
    try:
        st = os.lstat(p)
    except ValueError:  # an embedded NUL: no such file
        st = None
    except OSError as exc:
        if exc.errno not in _MISSING_ERRNOS:
            raise
        st = None
    if st is not None and S_ISLNK(st.st_mode):
        raise InputError("refusing to read a symlink; pass the real file", path=p)
    if st is None:
        raise InputError("no such file", path=p)
    if not S_ISREG(st.st_mode):
        raise InputError(NOT_REGULAR, path=p)
    resolved = os.path.realpath(p)
    root = trusted_root if trusted_root is not None else os.environ.get("DUCK_TAPE_TRUSTED_ROOT") or None
    if root:
        root_resolved = os.path.realpath(_normal(root))
        if resolved != root_resolved and not resolved.startswith(root_resolved.rstrip("/") + "/"):
            raise InputError(f"outside the trusted root {root_resolved} (DUCK_TAPE_TRUSTED_ROOT)", path=p)
        if resolved != os.path.normpath(_absolute(p)):  # '..' is lexical; only a symlink differs
            raise InputError("path goes through a symlink; refusing", path=p)
    size = st.st_size
    if size > max_bytes:
        raise InputError(over_cap_message(size, max_bytes), path=p)
    return resolved, size

