"""One exception hierarchy, mapped to the exit codes of DESIGN.md "Exit codes".

0 done, 1 unexpected error, 2 bad usage or input, 3 refused by redaction, 4 approval declined,
5 validation failed and no fallback possible; and 6 for a batch in which some sessions failed (issue 6).  Messages name the file (and line) and say how to fix it.
"""

from __future__ import annotations


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
