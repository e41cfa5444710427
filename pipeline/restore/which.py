"""Which compaction a restore (or resume) hands over: the session's own (issue 22, item 1).

The harness says which session is starting: Claude Code, Codex and Gemini CLI send ``session_id`` and ``cwd`` on
the ``SessionStart`` hook's stdin (with ``source``: ``compact`` after a compaction), the duck-tape opencode plugin
sends ``sessionID`` and ``cwd``; ``--session ID`` says it by hand.  Then only that session's marker record
(``pipeline.state.session_markers``) is used.  A session with no record (its checkpoint never ran, or the store did
not write the record) gets nothing, never the newest compaction of another session.

Without a session (a person runs ``duck-tape restore`` or ``resume`` in a terminal) the newest compaction of the
store, ``.last-compact``, is used when this store wrote it.

Light module (restore's hook path): standard library and ``pipeline.state`` only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pipeline.state.marker import Marker


@dataclass(slots=True)
class Chosen:
    """The marker to restore from (None: nothing to restore) and ``why`` not, when None (one line), ``notes``:
    lines for stderr about markers left out even when one was chosen."""

    marker: Marker | None
    why: str | None = None
    notes: list[str] = field(default_factory=list)


def choose_marker(directory: str | os.PathLike[str], session_id: str | None) -> Chosen:
    """The marker of the compaction to hand over (module docstring).  Raises ``InputError`` for a corrupt
    ``.last-compact`` when it is the one to read."""
    from pipeline.state.marker import read_marker
    from pipeline.state.session_markers import read_session_marker, read_trusted_last_compact

    store = os.fspath(directory)
    refused = symlinked_store(store)
    if refused:
        return Chosen(None, refused)
    if session_id:
        own = read_session_marker(store, session_id)
        if own.trusted:
            return Chosen(own.marker)
        if own.problem:
            return Chosen(None, f"{own.problem} (session {session_id})")
        why = f"no checkpoint of session {session_id} in {store}"
        try:
            newest = read_marker(store)
        except Exception:  # noqa: BLE001 - it is only named here
            newest = None
        if newest is not None and newest.session_id and newest.session_id != session_id:
            why += f"; the newest one is session {newest.session_id}'s and is not handed to another session"
        elif newest is not None and newest.session_id == session_id:
            why += "; .last-compact names it but has no record of this store (written by an older version?)"
        return Chosen(None, why)
    last = read_trusted_last_compact(store)
    if last.marker is None:
        return Chosen(None, f"no compaction marker in {store}")
    if not last.trusted:
        return Chosen(None, last.problem)
    return Chosen(last.marker)


def symlinked_store(store: str | os.PathLike[str]) -> str | None:
    """Why a store reached through a symlink is not read (it is another folder's store: its records verify there,
    and duck-tape never writes through one either), or None for a real folder."""
    path = os.fspath(store).rstrip(os.sep) or os.sep
    if os.path.islink(path):
        return f"the state store {path} is a symlink (to {os.readlink(path)}); not reading another folder's state"
    return None
