"""Which state files belong to the compaction a marker records (issue 14, item 4: state belongs to a session).

The store of a workspace holds the files of many sessions (yesterday's auto checkpoint, a recovered file of another
session); the marker ``.last-compact`` names the session that compacted (``session-id``, else the session id its
transcript path names) and the moment.  ``restore`` and ``resume`` use only a file that

* is that session's (``Session-Id`` header field equal to the marker's), and for an auto checkpoint was written at
  or after the compaction minute (an earlier auto file is an earlier compaction's, the work after it is lost);
  a manual or recovered file of the session counts whenever it was written (it was made for that session);
* or, when either side does not say which session it is (a manual file written by hand, files and markers of
  versions before issue 14), was written at or after the compaction minute.

Every other file is *foreign* (another session's) or *stale* (before this compaction, session unknown) and is never
handed over.  Light module (hook path): standard library and ``pipeline.state``/``pipeline.hooks.locate`` only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pipeline.state.marker import Marker
from pipeline.state.sections import header_session_id
from pipeline.state.store import BestState, StateFileInfo, choose_best, list_states, make_stamp

HEAD_BYTES = 4096
"""Bytes read from the start of a state file to find its header line."""


@dataclass(slots=True)
class Owned:
    """The store sorted out for one marker: ``session_id`` (None: unknown), ``floor`` (the compaction minute as a
    UTC stamp), and the files in ``list_states`` order: ``usable`` ones, ``foreign`` ones (another session's) and
    ``stale`` ones (earlier than the compaction, not labelled for this session)."""

    session_id: str | None
    floor: str
    usable: list[StateFileInfo] = field(default_factory=list)
    foreign: list[StateFileInfo] = field(default_factory=list)
    stale: list[StateFileInfo] = field(default_factory=list)

    def excluded(self) -> str:
        """``"<n> file(s) of other sessions and <m> older one(s)"``-style summary of what was left out ("" if none)."""
        parts = []
        if self.foreign:
            parts.append(f"{len(self.foreign)} file(s) of other sessions")
        if self.stale:
            parts.append(f"{len(self.stale)} file(s) older than the compaction")
        return " and ".join(parts)


def marker_session(marker: Marker) -> str | None:
    """The session a marker names: its ``session-id``, else the id its transcript path names (``<uuid>.jsonl``,
    ``<uuid>/events.jsonl``, ``ses_….json``), else None."""
    if marker.session_id:
        return marker.session_id
    if marker.transcript:
        from pipeline.hooks.locate import session_of_path

        return session_of_path(marker.transcript)
    return None


def file_session(path: Path) -> str | None:
    """The ``Session-Id`` in the header of the state file at ``path``; None when it has none or cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None
    return header_session_id(head.decode("utf-8", "replace"))


def compaction_floor(marker: Marker) -> str:
    """The marker's time as a UTC ``YYYY-MM-DD-HHMM`` stamp (a naive time counts as UTC)."""
    moment = datetime.fromisoformat(marker.time.replace("Z", "+00:00"))
    return make_stamp(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc))


def sort_out(directory: str | os.PathLike[str], marker: Marker) -> Owned:
    """Sort the state files of ``directory`` for ``marker`` (rules: module docstring).  Raises ``OSError`` when the
    store cannot be listed."""
    owned = Owned(marker_session(marker), compaction_floor(marker))
    for info in list_states(directory):
        owner = file_session(info.path)
        if owned.session_id and owner and owner != owned.session_id:
            owned.foreign.append(info)
        elif owned.session_id and owner == owned.session_id and info.kind != "auto":
            owned.usable.append(info)
        elif info.order >= owned.floor:
            owned.usable.append(info)
        else:
            owned.stale.append(info)
    return owned


def pick_for_marker(directory: str | os.PathLike[str], marker: Marker) -> tuple[BestState | None, Owned]:
    """``(choice, owned)``: the state file to use for the compaction ``marker`` records (``store.choose_best`` over
    the usable files: manual > recovered > auto), None when the session has no fresh file, and how the store was
    sorted out.  Raises ``OSError`` when the store cannot be listed."""
    owned = sort_out(directory, marker)
    return choose_best(owned.usable), owned
