"""One exception hierarchy, mapped to the exit codes of DESIGN.md "Exit codes".

0 done, 1 unexpected error, 2 bad usage or input, 3 refused by redaction, 4 approval declined,
5 validation failed and no fallback possible; and 6 for a batch in which some sessions failed (issue 6).  Messages name the file (and line) and say how to fix it.
"""

from __future__ import annotations

import errno as _errno


class DuckTapeError(Exception):
    """Base class; ``exit_code`` is what the CLI exits with (DESIGN.md "Exit codes")."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"{where}{message}")


class InputError(DuckTapeError):
    """Bad usage or unreadable input (exit 2): missing file, symlink, over the size cap, unknown format."""

    exit_code = 2


class StateFileExists(InputError):
    """A state file of the same name (same minute and kind) is already there; it is never overwritten (exit 2)."""


class RedactionRefused(DuckTapeError):
    """A write would contain a potential secret and ``--mask`` was not given (exit 3).

    ``report`` holds the lines of the redaction report (DESIGN.md "Redaction").
    """

    exit_code = 3

    def __init__(self, message: str, report: list[str], *, path: str | None = None) -> None:
        self.report = report
        super().__init__(message, path=path)


class ApprovalDeclined(DuckTapeError):
    """The user did not approve a previewed write (exit 4)."""

    exit_code = 4


class ValidationFailed(DuckTapeError):
    """The state file failed validation and no fallback was possible (exit 5)."""

    exit_code = 5


class BatchPartialFailure(DuckTapeError):
    """Some sessions of a batch failed (exit 6, issue 6); the others were written and the report lists all."""

    exit_code = 6


class BatchInterrupted(DuckTapeError):
    """The batch was interrupted (Ctrl-C); the finished sessions are written and cached (exit 1, like any
    interrupted duck-tape command)."""

    exit_code = 1


#: ``OSError`` errnos that say a path given by the user (or derived from one) is bad input or an unusable
#: destination: exit 2 with the path named, never exit 1 "unexpected error" (issue 11, part 6).
PATH_ERRNOS: frozenset[int] = frozenset(
    getattr(_errno, name)
    for name in (
        "ENOENT", "ENOTDIR", "EISDIR", "ENAMETOOLONG", "ELOOP", "EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT",
        "EIO", "EFBIG", "ENXIO", "ENODEV", "ETXTBSY", "EEXIST", "EMLINK", "EBUSY", "ENOTEMPTY", "EXDEV",
        "ESPIPE", "EINVAL", "ESTALE",
    )
    if hasattr(_errno, name)
)

_HINTS = {
    "ENOSPC": "the disk is full; free some space or choose another destination",
    "EDQUOT": "the disk quota is exhausted; free some space or choose another destination",
    "EROFS": "the file system is read-only; choose a writable destination",
    "EACCES": "permission denied; check the permissions of the file and of its folders",
    "EPERM": "operation not permitted; check the permissions of the file and of its folders",
    "ENAMETOOLONG": "the path (or one of its names) is too long",
    "ENOTDIR": "a part of the path is a file, not a folder (a trailing slash after a file name?)",
    "EISDIR": "it is a folder, expected a file",
    "EIO": "input/output error: the device cannot be read or written (a failing disk, or a special file)",
}


def is_path_error(exc: BaseException) -> bool:
    """True for an ``OSError`` about a file or folder (``PATH_ERRNOS``): bad input or an unusable destination."""
    return isinstance(exc, OSError) and exc.errno in PATH_ERRNOS


def path_error_message(exc: OSError, path: str | None = None) -> str:
    """``<path>: <strerror> [<ERRNO>]: <hint>`` for ``exc``, naming ``path`` (default: the path the exception
    carries, both of them for a rename); one line."""
    name = _errno.errorcode.get(exc.errno or 0, "")
    where = path or exc.filename
    if where is not None and exc.filename2 is not None and path is None:
        where = f"{exc.filename} -> {exc.filename2}"
    reason = exc.strerror or type(exc).__name__
    hint = _HINTS.get(name)
    text = f"{reason} [{name}]" if name else reason
    if hint and hint.lower() != reason.lower():
        text = f"{text}: {hint}"
    return f"{where}: {text}" if where is not None else f"{text} (no path given by the system)"


def input_error_from_os(exc: OSError, path: str | None = None, *, action: str | None = None) -> InputError:
    """An ``InputError`` (exit 2) naming ``path`` (default: the exception's) for an ``OSError`` of a file or
    folder; ``action`` (``"cannot write the state file"``) goes before the reason."""
    message = path_error_message(exc, path)
    where = path or (str(exc.filename) if exc.filename is not None else None)
    if where is not None and message.startswith(f"{where}: "):
        message = message[len(where) + 2:]
    if action:
        message = f"{action}: {message}"
    return InputError(message, path=where)
