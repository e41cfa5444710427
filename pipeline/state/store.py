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
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.errors import InputError, StateFileExists, input_error_from_os
from pipeline.fsutil import atomic_create_text, remove_stale_temps
from pipeline.isotime import ISO_RE, is_iso_timestamp  # noqa: F401 - re-exported: the store's readers use them

KINDS: tuple[str, ...] = ("manual", "auto", "recovered")
"""State file kinds, as in ``pipeline.state.model.StateKind``."""

STAMP_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{4}"
"""UTC ``YYYY-MM-DD-HHMM`` (digits only; stamps sort chronologically as plain strings)."""

SESSION_RE = re.compile(rf"(?P<stamp>{STAMP_PATTERN})(?:-(?P<kind>auto|recovered))?")
"""The session label of a state file: ``<stamp>``, ``<stamp>-auto`` or ``<stamp>-recovered`` (use ``fullmatch``)."""

STATE_RE = re.compile(rf"(?P<stamp>{STAMP_PATTERN})(?:-(?P<kind>auto|recovered))?(?:-(?P<tag>[0-9a-f]{{6}}))?"
                      r"\.state\.md")
"""A state file name (use ``fullmatch``); ``kind`` group is None for a manual file.  ``tag``: the short
disambiguator a file gets when another session's file holds its plain name already (``pipeline.state.naming``:
two sessions writing in the same minute); its header's ``Session:`` label stays ``<stamp>[-kind]``."""


GITIGNORE_TEXT = "*\n"
KEEP_DEFAULT = 10
FUTURE_TOLERANCE = timedelta(minutes=5)
OLDEST = "0000-00-00-0000"
"""The rank of a file whose stamp and modification time are both in the future (sorts before every stamp)."""
"""A stamp later than now + this is clock skew: the file ranks by its modification time instead (``list_states``)."""
_EVICTION_RANK = {"auto": 0, "recovered": 1, "manual": 2}


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
    """A state file found in the store: its path, UTC stamp (``YYYY-MM-DD-HHMM``) and kind (manual/auto/recovered).

    ``rank`` is the stamp it is ordered by (newest, oldest): its own ``stamp``, except for a file stamped in the
    future (clock skew, ``list_states``).  Empty means "use ``stamp``".
    """

    path: Path
    stamp: str
    kind: str
    rank: str = ""

    @property
    def order(self) -> str:
        """The stamp this file is ranked by (``rank``, else ``stamp``)."""
        return self.rank or self.stamp


def _skew_rank(entry: os.DirEntry, limit: str) -> str:
    """The rank of a state file whose stamp is later than ``limit`` (now + ``FUTURE_TOLERANCE``): its modification
    time as a stamp when that is not in the future too, else ``OLDEST`` (neither its name nor its time can be
    trusted, so it never outranks a file written with a sane clock)."""
    try:
        mtime = entry.stat(follow_symlinks=False).st_mtime
        moment = make_stamp(datetime.fromtimestamp(mtime, timezone.utc))
    except (OSError, ValueError, OverflowError):
        return OLDEST
    return moment if moment <= limit else OLDEST


def list_states(dir: str | os.PathLike[str], *, now: datetime | None = None) -> list[StateFileInfo]:
    """The regular files of ``dir`` named like state files, sorted by (rank, file name).

    Files whose names do not match ``STATE_RE`` (``notes.state.md``, temp files, the marker) are ignored, as are
    directories.  A missing ``dir`` gives ``[]``.  Within one stamp the name order is auto, recovered, manual.

    Clock skew: a stamp later than ``now`` (default: the current UTC time) + ``FUTURE_TOLERANCE`` would rank
    newest until the clock catches up (chosen by resume/restore over every later file, never rotated out).  Such
    a file ranks by its modification time instead, or as the oldest when that is in the future too
    (``StateFileInfo.rank``); its ``stamp`` and name are kept as they are.
    """
    root = Path(dir)
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return []
    limit = make_stamp((now or datetime.now(timezone.utc)) + FUTURE_TOLERANCE)
    found = []
    for entry in entries:
        match = STATE_RE.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        stamp = match["stamp"]
        rank = _skew_rank(entry, limit) if stamp > limit else ""
        found.append(StateFileInfo(root / entry.name, stamp, match["kind"] or "manual", rank))
    found.sort(key=lambda info: (info.order, info.path.name))
    return found


def _refuse_symlink(root: Path) -> None:
    """Raise ``InputError`` when the store directory ``root`` itself is a symlink: writes would land wherever it
    points (outside the project), as a transcript symlink is refused for reads."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise InputError(
            f"the state store is a symlink (to {os.readlink(root)}); refusing to write through it: "
            "replace it with a real folder or pass the target with --dir",
            path=str(root),
        )


def ensure_store(dir: str | os.PathLike[str]) -> Path:
    """Create the store directory (with parents) and its ``.gitignore`` holding ``*`` if missing; return the dir.

    An existing ``.gitignore`` is left as it is (DESIGN.md: "created if missing").  Raises ``InputError`` when
    the store is a symlink (never written through), ``OSError`` otherwise.
    """
    root = Path(dir)
    _refuse_symlink(root)
    root.mkdir(parents=True, exist_ok=True)
    gitignore = root / ".gitignore"
    if not os.path.lexists(gitignore):
        try:
            atomic_create_text(gitignore, GITIGNORE_TEXT)
        except FileExistsError:
            pass  # another process created it meanwhile
    return root


def write_state(
    dir: str | os.PathLike[str], text: str, *, stamp: str, kind: str, keep: int = KEEP_DEFAULT,
    name: str | None = None,
) -> Path:
    """Write a new state file ``<dir>/<state_filename(stamp, kind)>`` atomically, then rotate; return its path.

    ``name``: another file name for it (``pipeline.state.naming``: the disambiguated name of a same-minute write).
    The store records that it wrote the file (``pipeline.state.trust.sign_file``).

    Never overwrites: raises ``InputError`` (exit 2) when the name exists, also when another process creates it
    at the same moment, when ``dir`` is a symlink or cannot be created as a directory (a file in the way, no
    permission, a name too long), and when the file cannot be written (a read-only or full disk...), naming the
    path.  Calls ``ensure_store`` first and ``rotate(dir, keep=keep, protect=<new file>)`` after; temp files left
    in the store by killed writers (``fsutil.remove_stale_temps``) are removed on the way.
    Raises ``ValueError`` for a bad stamp or kind, ``OSError`` when rotation cannot remove a file.
    """
    try:
        root = ensure_store(dir)
    except OSError as exc:
        raise InputError(
            f"cannot use it as the state store ({exc.strerror or type(exc).__name__}); expected a writable directory",
            path=str(dir),
        ) from None
    path = root / (name or state_filename(stamp, kind))
    try:
        atomic_create_text(path, text)
    except FileExistsError:
        raise StateFileExists(
            "state file already exists; not overwriting it (remove or rename it, or run again in a later minute)",
            path=str(path),
        ) from None
    except OSError as exc:
        raise input_error_from_os(exc, str(path), action="cannot write the state file") from None
    from pipeline.state.trust import sign_file

    sign_file(root, path)  # issue 22: restore and resume use only the files this store wrote
    remove_stale_temps(root)
    rotate(root, keep=keep, protect=path)
    return path


def rotate(dir: str | os.PathLike[str], *, keep: int = KEEP_DEFAULT, protect: Path | None = None) -> list[Path]:
    """Delete state files until at most ``keep`` remain; return the removed paths in eviction order.

    Eviction order (DESIGN.md "Rotation"): every auto file oldest first, then recovered oldest first, then
    manual oldest first ("oldest" = smallest stamp, compared as strings; a stamp in the future ranks as
    ``list_states`` says).  ``protect`` (the file just written) is never removed but still counts toward ``keep``.
    When ``protect`` is an auto file, only auto files are evicted: an automatic checkpoint never removes a
    manual or recovered file to make room for itself, so a store full of those holds one auto file over
    ``keep`` (the newest) until a manual or recovered write rotates it.  Only names matching ``STATE_RE`` count
    or are removed.  A file that vanished meanwhile (another process rotated) is skipped and not reported.
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
    written = STATE_RE.fullmatch(protect.name) if protect is not None else None
    if written is not None and written["kind"] == "auto":
        candidates = [s for s in candidates if s.kind == "auto"]
    candidates.sort(key=lambda s: (_EVICTION_RANK[s.kind], s.order, s.path.name))
    removed = []
    for info in candidates[:excess]:
        try:
            info.path.unlink()
        except FileNotFoundError:
            continue
        removed.append(info.path)
    if removed:
        from pipeline.state.trust import prune_records

        prune_records(dir, {s.path.name for s in states} - {p.name for p in removed})
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
    low-fidelity auto file), which is why recovery is needed.  Stamps are compared as ``list_states`` ranks them
    (a stamp in the future by clock skew counts as its modification time).  Raises ``OSError`` when ``dir`` is
    unreadable.
    """
    return choose_best(list_states(dir))


def choose_best(states: list[StateFileInfo]) -> BestState | None:
    """``pick_best`` over ``states`` (sorted as ``list_states`` sorts them): the same table, on a chosen subset of the
    store (``pipeline.state.owner``: the files of the session a marker names)."""
    if not states:
        return None
    autos = [s for s in states if s.kind == "auto"]
    newest_auto = autos[-1] if autos else None
    floor = newest_auto.order if newest_auto else ""
    for kind in ("manual", "recovered"):
        fresh = [s for s in states if s.kind == kind and s.order >= floor]
        if fresh:
            against = f"the newest auto ({newest_auto.path.name})" if newest_auto else "any auto checkpoint"
            return BestState(fresh[-1], True, f"{kind} state file not older than {against}")
    assert newest_auto is not None  # states is non-empty and holds no fresh manual/recovered file
    if len(autos) == len(states):
        reason = "only auto checkpoints: recover from the transcript"
    else:
        reason = "every manual/recovered state file is older than the newest auto checkpoint: recover from the transcript"
    return BestState(newest_auto, False, reason)
