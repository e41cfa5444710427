"""The state file ``restore`` hands over for a compaction, made fresh when the checkpoint did not write one (issue 14).

``fresh_state(directory, marker)`` returns the path of the state file of the session the marker names
(``pipeline.state.owner``).  When there is none — the pre-compact checkpoint was skipped or failed, or never ran —
it distils the session's transcript itself with the rules engine (the checkpoint's own ``auto_state_text``): the one
the harness names in its ``SessionStart`` payload, else the marker's.  It writes it as ``<stamp>-auto.state.md``
(``pipeline.state.naming``: a tagged name when another session's file holds that minute) carrying the session id
(written after the compaction, so it is that compaction's) and points the session's marker's ``latest-state`` at it.
A second restore of the same compaction (Codex may fire ``SessionStart`` several times) finds that file and hands
over the same state.  It never falls back to a file of another session, of an earlier compaction, of another folder
or not written by this store: with no transcript to distil it raises ``NoFreshState``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from pipeline.state.marker import Marker

DISTIL_MAX_BYTES = 200 * 1024 * 1024
"""Largest transcript the restore distils itself unless ``DUCK_TAPE_MAX_TRANSCRIPT_BYTES`` says otherwise: the
SessionStart hook ``duck-tape init --restore`` installs has a 10 s timeout, and the rules engine reads ~25 MB/s
here; a bigger one is "no fresh state, run ``duck-tape resume``" rather than a killed hook."""

LABEL = "post-compact restore"
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


def fresh_state(directory: str, marker: Marker, *, now: datetime | None = None, prefix: str = "duck-tape: restore:",
                cwd: str | None = None, transcript: str | None = None) -> Fresh:
    """The state file to hand over for ``marker`` (module docstring).  ``cwd``: the harness's working folder (its
    SessionStart payload's; ``pipeline.state.owner`` accepts files of it); ``transcript``: the session's transcript
    as the harness names it (its payload's), distilled in preference to the marker's.  The notes name the state
    files never handed over because this store did not write them or they are another folder's.  Raises
    ``NoFreshState`` when the session has none and no transcript can be distilled; ``OSError`` when the store cannot
    be listed."""
    from pipeline.state.owner import pick_for_marker

    best, owned = pick_for_marker(directory, marker, cwd=cwd)
    named = owned.named()
    warned = [f"{prefix} {named}"] if named else []
    if best is not None:
        return Fresh(best.info.path, notes=warned or None)
    left = owned.excluded()
    skipped = (f"; not handing over {left}" if left else "") + (f"; {named}" if named else "")
    who = _who(owned.session_id, marker)
    source = _transcript_to_distil(marker, owned.session_id, transcript)
    if not source:
        why = ("the marker's transcript path holds a masked secret and the harness named none"
               if marker.transcript and MASKED in marker.transcript else "the marker names no transcript to distil")
        raise NoFreshState(f"no fresh state for {who}: its checkpoint wrote no state file and {why}{skipped}")
    from pipeline.errors import InputError, StateFileExists
    from pipeline.hooks.checkpoint import auto_state_text, remember_reading
    from pipeline.transcripts.safety import HOOK_MAX_BYTES, max_bytes_from_env

    cap = DISTIL_MAX_BYTES
    if os.environ.get("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "").strip():
        try:
            cap = max_bytes_from_env(HOOK_MAX_BYTES)
        except InputError:
            pass
    try:
        size = os.stat(source).st_size
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
        text, stamp, notes, _ = auto_state_text(source, now=moment, max_bytes=cap, trigger=None,
                                                session_id=owned.session_id, label=LABEL, keep=read,
                                                store=directory, remember=remember)
    except Exception as exc:  # any failure of the stages: say so, never hand over another file
        raise NoFreshState(f"no fresh state for {who}: its checkpoint wrote no state file and the transcript could "
                           f"not be distilled ({' '.join(str(exc).split())}){skipped}") from None
    notes = [*notes, f"{prefix} no state file of {who}; distilled its transcript {source}{skipped}"]
    transcript = read[0] if read else None
    from pipeline.state.naming import write_session_state

    try:
        # issue 23 item 5: another session's file of the minute keeps its name, this one gets a tagged one; a racing
        # restore of the same compaction wrote this session's own file: replaced by the same state
        path, _ = write_session_state(directory, text, stamp=stamp, kind="auto", session_id=owned.session_id)
    except StateFileExists:  # every name tried is taken: hand over the text itself
        return Fresh(None, text=text, distilled=True, notes=notes, transcript=transcript)
    except (OSError, InputError) as exc:
        notes.append(f"{prefix} could not write the distilled state in {directory}: {' '.join(str(exc).split())}")
        return Fresh(None, text=text, distilled=True, notes=notes, transcript=transcript)
    remember_reading(directory, remember, notes)
    _point_marker(directory, marker, path, notes, prefix)
    return Fresh(path, text=text, distilled=True, notes=notes, transcript=transcript)


MASKED = "<REDACTED>"


def _transcript_to_distil(marker: Marker, session_id: str | None, given: str | None) -> str | None:
    """The transcript a restore distils for ``marker``: the one the harness names (``given``, its payload's: the
    session's own), else the marker's, else — when the marker's path was masked (a token in a folder name, issue 22
    item 6) — the session's transcript found by its id in the harness's folders.  None when there is none."""
    if given and os.path.isfile(given):
        return given
    if marker.transcript and MASKED not in marker.transcript:
        return marker.transcript
    if marker.transcript and session_id:
        from pipeline.hooks.locate import find_transcript

        try:
            found = find_transcript(session_id, cwd=marker.cwd)
        except Exception:  # noqa: BLE001 - a lookup: nothing found is the answer
            found = None
        return str(found) if found is not None else None
    return None


def _point_marker(directory: str, marker: Marker, path: Path, notes: list[str], prefix: str) -> None:
    """Rewrite the session's marker record with ``latest-state`` naming ``path`` (time, cwd, session and transcript
    unchanged), and ``.last-compact`` too when it records this same compaction (it is the newest overall: another
    session's later compaction there is left alone)."""
    from pipeline.state.marker import read_marker, write_marker
    from pipeline.state.session_markers import write_session_marker

    pointed = replace(marker, latest_state=path.name)
    try:
        write_session_marker(directory, pointed)
        newest = read_marker(directory)
        if newest is not None and newest.session_id == marker.session_id and newest.time == marker.time:
            write_marker(directory, replace(newest, latest_state=path.name))
    except Exception as exc:  # noqa: BLE001 - the marker is a pointer; the state file is written
        notes.append(f"{prefix} could not update the marker: {' '.join(str(exc).split())}")
