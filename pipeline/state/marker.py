"""The compaction marker ``.duck-tape/.last-compact`` (DESIGN.md "Agent State file (Tier 2)", "Resume" steps 1-3).

One line::

    <ISO-8601> | cwd: <path> | session-id: <id> | latest-state: <file> | transcript: <path>

``session-id`` (issue 14) names the harness session that compacted, so that restore and resume use only that
session's state files.  It sits after ``cwd`` on purpose: a reader that predates it reads it as the end of the
cwd value and still gets ``latest-state`` and ``transcript`` right.  Every part after the time is optional (the hooks omit latest-state when the store is empty and transcript
when they have none), but the parts that are present come in this order.  Values are taken verbatim, so paths
may contain spaces, ``|`` and even `` | `` (leading and trailing spaces are kept too).  The line is split only
at the four labels `` | cwd: ``, `` | session-id: ``, `` | latest-state: `` and `` | transcript: ``; therefore no value may contain
one of these labels or a line break: ``format_marker`` checks that its line reads back to the same values and
raises ``ValueError`` otherwise.  An empty value is the same as an absent one.

Light module (hook path): standard library plus ``pipeline.store``/``fsutil``/``errors`` only.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError
from pipeline.fsutil import atomic_write_text
from pipeline.state.store import ensure_store, is_iso_timestamp

MARKER_NAME = ".last-compact"
MAX_MARKER_BYTES = 64 * 1024
"""A marker is one short line; a bigger file is refused rather than read."""

_LABELS = (" | cwd: ", " | session-id: ", " | latest-state: ", " | transcript: ")
_MARKER_RE = re.compile(
    r"(?P<time>[^ ]+)"
    r"(?: \| cwd: (?P<cwd>.*?))?"
    r"(?: \| session-id: (?P<session_id>.*?))?"
    r"(?: \| latest-state: (?P<latest_state>.*?))?"
    r"(?: \| transcript: (?P<transcript>.*))?",
    re.DOTALL,
)
_EXPECTED = "expected '<ISO-8601> | cwd: <path> | session-id: <id> | latest-state: <file> | transcript: <path>'"


@dataclass(frozen=True, slots=True)
class Marker:
    """The fields of a ``.last-compact`` line: ISO-8601 compaction time, then optional cwd, state file name,
    transcript path and the id of the session that compacted (written after cwd, see the module docstring)."""

    time: str
    cwd: str | None = None
    latest_state: str | None = None
    transcript: str | None = None
    session_id: str | None = None


def format_marker(m: Marker) -> str:
    """The marker line for ``m``, ending with ``"\\n"``.

    Raises ``ValueError`` when ``time`` is not ISO-8601, a value contains a line break, or the line would not parse
    back to the same values (a value containing a label such as `` | transcript: ``).
    """
    if not is_iso_timestamp(m.time):
        raise ValueError(f"marker time {m.time!r} is not ISO-8601 (e.g. 2026-11-29T20:31:00Z)")
    values = (m.cwd, m.session_id, m.latest_state, m.transcript)
    for value in values:
        if value and ("\n" in value or "\r" in value):
            raise ValueError(f"marker value {value!r} contains a line break")
    line = m.time + "".join(f"{label}{value}" for label, value in zip(_LABELS, values) if value)
    expected = Marker(m.time, m.cwd or None, m.latest_state or None, m.transcript or None, m.session_id or None)
    if parse_marker(line) != expected:
        raise ValueError(f"marker values would not read back unchanged (a value contains a marker label): {line!r}")
    return line + "\n"


def parse_marker(text: str, path: str | None = None) -> Marker:
    """Parse the content of a marker file (one line; CRLF and a missing final newline are fine).

    Raises ``InputError`` (exit 2) naming ``path`` and line 1 when the text is not one line of the marker shape or
    its time is not ISO-8601.
    """
    line = text.removeprefix("\ufeff").rstrip("\r\n")
    if "\n" in line or "\r" in line:
        raise InputError(f"{_EXPECTED} on a single line, found several lines", path=path, line=1)
    match = _MARKER_RE.fullmatch(line)
    if match is None or not is_iso_timestamp(match["time"]):
        raise InputError(f"{_EXPECTED} (ISO-8601 time first)", path=path, line=1)
    return Marker(
        time=match["time"],
        cwd=match["cwd"] or None,
        latest_state=match["latest_state"] or None,
        transcript=match["transcript"] or None,
        session_id=match["session_id"] or None,
    )


def marker_path(dir: str | os.PathLike[str]) -> Path:
    """``<dir>/.last-compact`` where ``dir`` is the store directory (``.duck-tape``)."""
    return Path(dir) / MARKER_NAME


def read_marker(dir: str | os.PathLike[str]) -> Marker | None:
    """Read and parse ``<dir>/.last-compact``; None when there is no marker (DESIGN.md "Resume" step 1).

    Raises ``InputError`` when the marker is not a regular file, is over ``MAX_MARKER_BYTES``, is not UTF-8 or
    does not parse.
    """
    path = marker_path(dir)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        raise InputError("the marker is a directory, expected a one-line file", path=str(path))
    if not stat.S_ISREG(mode):
        raise InputError("the marker is not a regular file (a FIFO or device?), expected a one-line file", path=str(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MARKER_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError("the marker is a directory, expected a one-line file", path=str(path)) from None
    if len(data) > MAX_MARKER_BYTES:
        raise InputError(f"marker is over {MAX_MARKER_BYTES} bytes, expected one line", path=str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"marker is not UTF-8 (byte {exc.start})", path=str(path)) from None
    return parse_marker(text, path=str(path))


def write_marker(dir: str | os.PathLike[str], m: Marker) -> Path:
    """Write ``format_marker(m)`` to ``<dir>/.last-compact`` atomically (replacing an old marker); return the path.

    Calls ``ensure_store(dir)`` first so the marker's paths stay out of git.  Raises ``ValueError`` as
    ``format_marker``, ``OSError`` on I/O failure.
    """
    line = format_marker(m)
    root = ensure_store(dir)
    path = root / MARKER_NAME
    atomic_write_text(path, line)
    return path
