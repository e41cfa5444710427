"""The state file ``restore`` hands over for a compaction, made fresh when the checkpoint did not write one (issue 14).

``fresh_state(directory, marker)`` returns the path of the state file of the session the marker names
(``pipeline.state.owner``).  When there is none — the pre-compact checkpoint was skipped or failed, or never ran —
it distils the marker's transcript itself with the rules engine (the checkpoint's own ``auto_state_text``), writes
it as ``<stamp>-auto.state.md`` carrying the session id (written after the compaction, so it is that compaction's)
and points the marker's ``latest-state`` at it.  A second restore of the same compaction (Codex may fire
``SessionStart`` several times) finds that file and hands over the same state; two racing restores of the same
minute meet at the same name and the second uses the file the first wrote.  It never falls back to a file of
another session or of an earlier compaction: with no transcript to distil it raises ``NoFreshState``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.state.marker import Marker

DISTIL_MAX_BYTES = 200 * 1024 * 1024
"""Largest transcript the restore distils itself unless ``DUCK_TAPE_MAX_TRANSCRIPT_BYTES`` says otherwise: the
SessionStart hook ``duck-tape init --restore`` installs has a 10 s timeout, and the rules engine reads ~25 MB/s
here; a bigger one is "no fresh state, run ``duck-tape resume``" rather than a killed hook."""

LABEL = "post-compact restore"
NAME_TRIES = 5
"""Minutes tried for a free ``-auto`` name when the compaction's minute is taken by another session's file."""
"""Start of the ``Trigger`` of a state file the restore distilled (``post-compact restore, engine: rules``)."""


class NoFreshState(Exception):
    """The session the marker names has no state file of this compaction and none could be made; the message says
    why, in one line."""


@dataclass(slots=True)
class Fresh:
    """What ``fresh_state`` found: ``path`` of the state file (None when it could not be written: ``text`` holds it
    then), ``text`` (the distilled file, None when an existing file was found), ``notes`` for stderr,
    ``transcript``: the ``Transcript`` it distilled (None when it distilled none), so the restore need not read it
    again."""

    path: Path | None
    text: str | None = None
    distilled: bool = False
    notes: list[str] | None = None
    transcript: object | None = None


def _who(session_id: str | None, marker: Marker) -> str:
    return f"session {session_id} (compaction at {marker.time})" if session_id else f"the compaction at {marker.time}"


def fresh_state(directory: str, marker: Marker, *, now: datetime | None = None, prefix: str = "duck-tape: restore:") -> Fresh:
    """The state file to hand over for ``marker`` (module docstring).  Raises ``NoFreshState`` when the session has
    none and the marker's transcript cannot be distilled; ``OSError`` when the store cannot be listed."""
    from pipeline.state.owner import pick_for_marker

    best, owned = pick_for_marker(directory, marker)
    if best is not None:
        return Fresh(best.info.path)
    left = owned.excluded()
    skipped = f"; not handing over {left}" if left else ""
    who = _who(owned.session_id, marker)
    if not marker.transcript:
        raise NoFreshState(f"no fresh state for {who}: its checkpoint wrote no state file and the marker names no "
                           f"transcript to distil{skipped}")
    from pipeline.errors import InputError, StateFileExists
    from pipeline.hooks.checkpoint import auto_state_text, remember_reading
    from pipeline.state.store import state_filename
    from pipeline.transcripts.safety import HOOK_MAX_BYTES, max_bytes_from_env

    cap = DISTIL_MAX_BYTES
    if os.environ.get("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "").strip():
        try:
            cap = max_bytes_from_env(HOOK_MAX_BYTES)
        except InputError:
            pass
    try:
        size = os.stat(marker.transcript).st_size
    except OSError:
        size = 0  # missing or unreadable: auto_state_text names the problem
    if size > cap:
        raise NoFreshState(f"no fresh state for {who}: its checkpoint wrote no state file and the transcript is "
                           f"{size} bytes, more than the restore distils within the hook's time ({cap}; "
                           f"DUCK_TAPE_MAX_TRANSCRIPT_BYTES={size} raises it); run `duck-tape resume`{skipped}")
    moment = now or datetime.now(timezone.utc)
    read: list = []
    remember: list = []
    try:
        text, stamp, notes, _ = auto_state_text(marker.transcript, now=moment, max_bytes=cap, trigger=None,
                                                session_id=owned.session_id, label=LABEL, keep=read,
                                                store=directory, remember=remember)
    except Exception as exc:  # any failure of the stages: say so, never hand over another file
        raise NoFreshState(f"no fresh state for {who}: its checkpoint wrote no state file and the transcript could "
                           f"not be distilled ({' '.join(str(exc).split())}){skipped}") from None
    notes = [*notes, f"{prefix} no state file of {who}; distilled its transcript {marker.transcript}{skipped}"]
    transcript = read[0] if read else None
    try:
        path = _write_new(directory, marker, text, stamp)
    except StateFileExists:  # the names of the next minutes are taken too: hand over the text itself
        return Fresh(None, text=text, distilled=True, notes=notes, transcript=transcript)
    except _Raced as raced:  # a restore of the same compaction wrote it first
        return Fresh(raced.path, notes=notes, transcript=transcript)
    except (OSError, InputError) as exc:
        target = Path(directory) / state_filename(stamp, "auto")
        if not (isinstance(exc, OSError) and os.path.isfile(target)):
            notes.append(f"{prefix} could not write the distilled state in {directory}: {' '.join(str(exc).split())}")
            return Fresh(None, text=text, distilled=True, notes=notes, transcript=transcript)
        path = target  # written, rotation failed
    remember_reading(directory, remember, notes)
    _point_marker(directory, marker, path, notes, prefix)
    return Fresh(path, text=text, distilled=True, notes=notes, transcript=transcript)


class _Raced(Exception):
    """Another restore of the same compaction wrote the file first; ``path`` is its file."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


def _write_new(directory: str, marker: Marker, text: str, stamp: str, tries: int = NAME_TRIES) -> Path:
    """Write ``text`` as ``<stamp>-auto.state.md``; when that name is taken by a file of another session (two
    sessions checkpointing in the same minute), the next free minute's name, its ``Session:`` label changed to
    match.  Raises ``_Raced`` when the taken name holds this compaction's file already (a racing restore),
    ``StateFileExists`` when ``tries`` names are taken, ``InputError``/``OSError`` as ``write_state``."""
    from pipeline.errors import StateFileExists
    from pipeline.state.owner import pick_for_marker
    from pipeline.state.store import session_label, state_filename, write_state

    moment = datetime.strptime(stamp, "%Y-%m-%d-%H%M").replace(tzinfo=timezone.utc)
    for n in range(tries):
        name = (moment + timedelta(minutes=n)).strftime("%Y-%m-%d-%H%M")
        body = text if n == 0 else text.replace(f"Session: {session_label(stamp, 'auto')} ",
                                                f"Session: {session_label(name, 'auto')} ", 1)
        try:
            return write_state(directory, body, stamp=name, kind="auto")
        except StateFileExists:
            taken = Path(directory) / state_filename(name, "auto")
            again, _ = pick_for_marker(directory, marker)
            if again is not None and again.info.path == taken:
                raise _Raced(taken) from None
    raise StateFileExists("no free auto state file name", path=str(directory))


def _point_marker(directory: str, marker: Marker, path: Path, notes: list[str], prefix: str) -> None:
    """Rewrite the marker with ``latest-state`` naming ``path`` (time, cwd, session and transcript unchanged)."""
    from dataclasses import replace

    from pipeline.state.marker import write_marker

    try:
        write_marker(directory, replace(marker, latest_state=path.name))
    except Exception as exc:  # noqa: BLE001 - the marker is a pointer; the state file is written
        notes.append(f"{prefix} could not update the marker: {' '.join(str(exc).split())}")
