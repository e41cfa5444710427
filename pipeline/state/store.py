"""The ``.duck-tape`` store: state file names, listing, writing, rotation and picking the file to resume from.

Rules from DESIGN.md "Agent State file (Tier 2)" (names, ``.gitignore``, no silent overwrite, rotation, atomic
writes) and "Resume" step 4 (which file to resume from).  ``dir`` arguments are the store directory itself
(normally ``<project>/.duck-tape``), which holds the state files directly.

This module is on the hook path (pre-compact checkpoint, resume): it imports only the standard library and
``pipeline.fsutil``/``pipeline.errors``, never pydantic.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pipeline.errors import InputError, StateFileExists
from pipeline.fsutil import atomic_create_text

KINDS: tuple[str, ...] = ("manual", "auto", "recovered")
"""State file kinds, as in ``pipeline.state.model.StateKind``."""

STAMP_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{4}"
"""UTC ``YYYY-MM-DD-HHMM`` (digits only; stamps sort chronologically as plain strings)."""

SESSION_RE = re.compile(rf"(?P<stamp>{STAMP_PATTERN})(?:-(?P<kind>auto|recovered))?")
"""The session label of a state file: ``<stamp>``, ``<stamp>-auto`` or ``<stamp>-recovered`` (use ``fullmatch``)."""

STATE_RE = re.compile(rf"(?P<stamp>{STAMP_PATTERN})(?:-(?P<kind>auto|recovered))?\.state\.md")
"""A state file name (use ``fullmatch``); ``kind`` group is None for a manual file."""

ISO_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
"""ISO-8601 extended format as written in these files: a date, optionally ``T`` + time + ``Z`` or an offset."""

GITIGNORE_TEXT = "*\n"
KEEP_DEFAULT = 10
_EVICTION_RANK = {"auto": 0, "recovered": 1, "manual": 2}


def is_iso_timestamp(value: str) -> bool:
    """True when ``value`` matches ``ISO_RE`` exactly and is a real date/time (month 1-12, hour 0-23...)."""
    if not ISO_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def make_stamp(dt: datetime) -> str:
    """UTC ``YYYY-MM-DD-HHMM`` for an aware datetime (converted to UTC).  Raises ``ValueError`` for a naive one."""
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("make_stamp needs a timezone-aware datetime (e.g. datetime.now(timezone.utc))")
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d-%H%M")


def session_label(stamp: str, kind: str) -> str:
    """``<stamp>`` (manual), ``<stamp>-auto`` or ``<stamp>-recovered``: the ``Session:`` value and the file stem.

    Raises ``ValueError`` for a stamp that is not ``YYYY-MM-DD-HHMM`` or an unknown kind.
    """
    if not re.fullmatch(STAMP_PATTERN, stamp):
        raise ValueError(f"bad state stamp {stamp!r}: expected UTC YYYY-MM-DD-HHMM")
    if kind not in KINDS:
        raise ValueError(f"bad state kind {kind!r}: expected one of {', '.join(KINDS)}")
    return stamp if kind == "manual" else f"{stamp}-{kind}"


def split_session_label(label: str) -> tuple[str, str] | None:
    """Inverse of ``session_label``: ``(stamp, kind)``, or None when ``label`` is not a session label."""
    match = SESSION_RE.fullmatch(label)
    if match is None:
        return None
    return match["stamp"], match["kind"] or "manual"


def state_filename(stamp: str, kind: str) -> str:
    """``<stamp>.state.md``, ``<stamp>-auto.state.md`` or ``<stamp>-recovered.state.md``.  ``ValueError`` as ``session_label``."""
    return f"{session_label(stamp, kind)}.state.md"


@dataclass(frozen=True, slots=True)
class StateFileInfo:
    """A state file found in the store: its path, UTC stamp (``YYYY-MM-DD-HHMM``) and kind (manual/auto/recovered)."""

    path: Path
    stamp: str
    kind: str


def list_states(dir: str | os.PathLike[str]) -> list[StateFileInfo]:
    """The regular files of ``dir`` named like state files, sorted by (stamp, file name).

    Files whose names do not match ``STATE_RE`` (``notes.state.md``, temp files, the marker) are ignored, as are
    directories.  A missing ``dir`` gives ``[]``.  Within one stamp the name order is auto, recovered, manual.
    """
    root = Path(dir)
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        match = STATE_RE.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        found.append(StateFileInfo(root / entry.name, match["stamp"], match["kind"] or "manual"))
    found.sort(key=lambda info: (info.stamp, info.path.name))
    return found


def ensure_store(dir: str | os.PathLike[str]) -> Path:
    """Create the store directory (with parents) and its ``.gitignore`` holding ``*`` if missing; return the dir.

    An existing ``.gitignore`` is left as it is (DESIGN.md: "created if missing").  Raises ``OSError``.
    """
    root = Path(dir)
    root.mkdir(parents=True, exist_ok=True)
    gitignore = root / ".gitignore"
    if not os.path.lexists(gitignore):
        try:
            atomic_create_text(gitignore, GITIGNORE_TEXT)
        except FileExistsError:
            pass  # another process created it meanwhile
    return root


def write_state(
    dir: str | os.PathLike[str], text: str, *, stamp: str, kind: str, keep: int = KEEP_DEFAULT
) -> Path:
    """Write a new state file ``<dir>/<state_filename(stamp, kind)>`` atomically, then rotate; return its path.

    Never overwrites: raises ``InputError`` (exit 2) when the name exists, also when another process creates it
    at the same moment, and when ``dir`` cannot be created as a directory (a file in the way, no permission).
    Calls ``ensure_store`` first and ``rotate(dir, keep=keep, protect=<new file>)`` after.
    Raises ``ValueError`` for a bad stamp or kind, ``OSError`` for other I/O failures.
    """
    try:
        root = ensure_store(dir)
    except (FileExistsError, NotADirectoryError, FileNotFoundError, PermissionError) as exc:
        raise InputError(
            f"cannot use it as the state store ({exc.strerror or type(exc).__name__}); expected a writable directory",
            path=str(dir),
        ) from None
    path = root / state_filename(stamp, kind)
    try:
        atomic_create_text(path, text)
    except FileExistsError:
        raise StateFileExists(
            "state file already exists; not overwriting it (remove or rename it, or run again in a later minute)",
            path=str(path),
        ) from None
    rotate(root, keep=keep, protect=path)
    return path


def rotate(dir: str | os.PathLike[str], *, keep: int = KEEP_DEFAULT, protect: Path | None = None) -> list[Path]:
    """Delete state files until at most ``keep`` remain; return the removed paths in eviction order.

    Eviction order (DESIGN.md "Rotation"): every auto file oldest first, then recovered oldest first, then
    manual oldest first ("oldest" = smallest stamp, compared as strings).  ``protect`` (the file just written)
    is never removed but still counts toward ``keep``.  Only names matching ``STATE_RE`` count or are removed.
    A file that vanished meanwhile (another process rotated) is skipped and not reported.
    Raises ``ValueError`` for a negative ``keep``, ``OSError`` when a file cannot be removed.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    states = list_states(dir)
    excess = len(states) - keep
    if excess <= 0:
        return []
    protected = os.path.abspath(protect) if protect is not None else None
    candidates = [s for s in states if os.path.abspath(s.path) != protected]
    candidates.sort(key=lambda s: (_EVICTION_RANK[s.kind], s.stamp))
    removed = []
    for info in candidates[:excess]:
        try:
            info.path.unlink()
        except FileNotFoundError:
            continue
        removed.append(info.path)
    return removed


@dataclass(frozen=True, slots=True)
class BestState:
    """What ``pick_best`` found.

    ``info`` is the chosen file.  ``use_as_is`` True: resume from it (DESIGN.md "Resume" step 4, skip to 6).
    False: it is only the newest auto checkpoint, and a recovery from the marker's transcript is needed
    (step 5); ``info`` is then what to fall back to when the marker has no transcript.  ``reason`` is one
    line for the user.
    """

    info: StateFileInfo
    use_as_is: bool
    reason: str


def pick_best(dir: str | os.PathLike[str]) -> BestState | None:
    """Pick the state file to resume from (DESIGN.md "Resume" step 4: manual > recovered > auto).

    A manual or recovered file is *fresh* when no auto file is newer: its stamp is >= the newest auto stamp,
    or there is no auto file.  Equal stamps count as fresh (same minute: the manual save and the pre-compact
    auto checkpoint capture the same work, and the manual one is higher fidelity).

    ============================================  ===================================  ==========
    files in the store                            ``info``                             use_as_is
    ============================================  ===================================  ==========
    none                                          (returns None: recover)              --
    only auto files                               newest auto                          False
    a fresh manual                                newest fresh manual                  True
    fresh manual and fresh recovered              newest fresh manual (precedence)     True
    no fresh manual, a fresh recovered            newest fresh recovered               True
    manual/recovered all older than newest auto   newest auto                          False
    manual with the same stamp as newest auto     that manual                          True
    ============================================  ===================================  ==========

    Stale manual/recovered files are never chosen: the work after them is only in the transcript (and in the
    low-fidelity auto file), which is why recovery is needed.  Raises ``OSError`` when ``dir`` is unreadable.
    """
    states = list_states(dir)
    if not states:
        return None
    autos = [s for s in states if s.kind == "auto"]
    newest_auto = autos[-1] if autos else None
    floor = newest_auto.stamp if newest_auto else ""
    for kind in ("manual", "recovered"):
        fresh = [s for s in states if s.kind == kind and s.stamp >= floor]
        if fresh:
            against = f"the newest auto ({newest_auto.path.name})" if newest_auto else "any auto checkpoint"
            return BestState(fresh[-1], True, f"{kind} state file not older than {against}")
    assert newest_auto is not None  # states is non-empty and holds no fresh manual/recovered file
    if len(autos) == len(states):
        reason = "only auto checkpoints: recover from the transcript"
    else:
        reason = "every manual/recovered state file is older than the newest auto checkpoint: recover from the transcript"
    return BestState(newest_auto, False, reason)
