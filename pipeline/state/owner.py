"""Which state files belong to the compaction a marker records (issue 14, item 4; issue 22, item 1).

The store of a workspace holds the files of many sessions (yesterday's auto checkpoint, a recovered file of another
session); the marker names the session that compacted (``session-id``, else the session id its transcript path
names) and the moment.  ``restore`` and ``resume`` use only a file that

* this store wrote (``pipeline.state.trust``: a keyed record beside it) — a file planted by hand, copied from
  another store or reached through a symlinked store is *untrusted*;
* says it belongs to this workspace: its ``Cwd`` is the store's project folder, the current folder or the folder
  the harness names (``cwd`` of its payload), or a folder inside one of them; or its session has a sealed marker
  record in this store naming one of those as the folder its hooks ran in — else it is *elsewhere*;
* is that session's (``Session-Id`` header field equal to the marker's), and for an auto checkpoint was written at
  or after the compaction minute (an earlier auto file is an earlier compaction's, the work after it is lost);
  a manual or recovered file of the session counts whenever it was written (it was made for that session);
* or, when either side does not say which session it is (a file of a session that had no id, markers of versions
  before issue 14), was written at or after the compaction minute.

Every other file is *foreign* (another session's) or *stale* (before this compaction, session unknown) and is never
handed over.  ``Owned.named`` names the untrusted and elsewhere files (for stderr).  Light module (hook path):
standard library and ``pipeline.state``/``pipeline.hooks.locate`` only.
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


NAMED = 5
"""Untrusted or elsewhere files named one by one on stderr; more are counted."""


@dataclass(slots=True)
class Owned:
    """The store sorted out for one marker: ``session_id`` (None: unknown), ``floor`` (the compaction minute as a
    UTC stamp), and the files in ``list_states`` order: ``usable`` ones, ``foreign`` ones (another session's),
    ``stale`` ones (earlier than the compaction, not labelled for this session), ``untrusted`` ones (not written by
    this store) and ``elsewhere`` ones (their ``Cwd`` is not this workspace)."""

    session_id: str | None
    floor: str
    usable: list[StateFileInfo] = field(default_factory=list)
    foreign: list[StateFileInfo] = field(default_factory=list)
    stale: list[StateFileInfo] = field(default_factory=list)
    untrusted: list[StateFileInfo] = field(default_factory=list)
    elsewhere: list[StateFileInfo] = field(default_factory=list)

    def excluded(self) -> str:
        """``"<n> file(s) of other sessions and <m> older one(s)"``-style summary of what was left out ("" if none)."""
        parts = []
        if self.foreign:
            parts.append(f"{len(self.foreign)} file(s) of other sessions")
        if self.stale:
            parts.append(f"{len(self.stale)} file(s) older than the compaction")
        if self.untrusted:
            parts.append(f"{len(self.untrusted)} file(s) not written by this store")
        if self.elsewhere:
            parts.append(f"{len(self.elsewhere)} file(s) of another folder")
        return " and ".join(parts)

    def named(self) -> str | None:
        """One line naming the untrusted and elsewhere files (planted, copied, another project's), None when there
        are none: these are never handed over, and a person should know they are there."""
        return name_skipped(self.untrusted, self.elsewhere)


def name_skipped(untrusted: list[StateFileInfo], elsewhere: list[StateFileInfo]) -> str | None:
    """``"ignored <n> state file(s) not written by this store: a, b; <m> of another folder: c"``, or None."""
    parts = []
    for files, what in ((untrusted, "not written by this store (planted, copied or hand-written)"),
                        (elsewhere, "whose Cwd is another folder")):
        if files:
            shown = ", ".join(f.path.name for f in files[:NAMED])
            more = f" and {len(files) - NAMED} more" if len(files) > NAMED else ""
            parts.append(f"{len(files)} state file(s) {what}: {shown}{more}")
    return ("ignored " + "; ".join(parts)) if parts else None


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


def workspace_roots(directory: str | os.PathLike[str], cwd: str | None = None) -> list[str]:
    """The folders a state file of this store may name as its ``Cwd``: the store's parent (not resolved: a store
    symlinked from another project is this folder's), the current folder, and ``cwd`` (the harness's, from its
    payload) when absolute."""
    roots = [os.path.dirname(os.path.abspath(os.fspath(directory))), os.getcwd()]
    if cwd and os.path.isabs(cwd):
        roots.append(os.path.normpath(cwd))
    return list(dict.fromkeys(roots))


def in_workspace(file_cwd: str | None, roots: list[str]) -> bool:
    """True when ``file_cwd`` is one of ``roots`` or a folder inside one (compared as written and resolved)."""
    if not file_cwd or not os.path.isabs(file_cwd):
        return False
    forms = {os.path.normpath(file_cwd), os.path.realpath(file_cwd)}
    for root in roots:
        for base in {os.path.normpath(root), os.path.realpath(root)}:
            prefix = base.rstrip(os.sep) + os.sep
            if any(f == base or f.startswith(prefix) for f in forms):
                return True
    return False


@dataclass(slots=True)
class Checked:
    """A state file as the trust checks see it: ``info``, its ``session_id`` and ``cwd`` (header; None when
    absent), whether this store wrote it (``owned``) and whether its Cwd is this workspace (``here``)."""

    info: StateFileInfo
    session_id: str | None
    cwd: str | None
    owned: bool
    here: bool


def check_files(directory: str | os.PathLike[str], *, cwd: str | None = None) -> list[Checked]:
    """Every state file of ``directory`` (``list_states`` order) with its header fields and trust checks.  Raises
    ``OSError`` when the store cannot be listed."""
    from pipeline.state.sections import header_fields
    from pipeline.state.trust import MAX_STATE_BYTES, owned

    roots = workspace_roots(directory, cwd)
    recorded: dict[str, bool] = {}
    out = []
    for info in list_states(directory):
        try:
            with open(info.path, "rb") as handle:
                data = handle.read(MAX_STATE_BYTES + 1)
        except OSError:
            data = b""
        session_id, file_cwd = header_fields(data[:HEAD_BYTES].decode("utf-8", "replace"))
        mine = bool(data) and owned(directory, info.path, data)
        here = in_workspace(file_cwd, roots) or (mine and _session_ran_here(directory, session_id, roots, recorded))
        out.append(Checked(info, session_id, file_cwd, mine, here))
    return out


def _session_ran_here(directory: str | os.PathLike[str], session_id: str | None, roots: list[str],
                      seen: dict[str, bool]) -> bool:
    """True when this store holds a sealed marker record of ``session_id`` (``pipeline.state.session_markers``)
    whose ``cwd`` — the folder the harness ran its hook in — is one of ``roots``: a session checkpointed here is this
    workspace's even when its transcript names another folder (a session started in a folder it later left).  A
    copied store's records do not verify; a symlinked store's name the other folder."""
    if not session_id:
        return False
    if session_id not in seen:
        from pipeline.state.session_markers import read_session_marker

        record = read_session_marker(directory, session_id)
        seen[session_id] = bool(record.trusted and record.marker is not None
                                and in_workspace(record.marker.cwd, roots))
    return seen[session_id]


def trusted_states(directory: str | os.PathLike[str], *, cwd: str | None = None
                   ) -> tuple[list[Checked], list[StateFileInfo], list[StateFileInfo]]:
    """``(usable, untrusted, elsewhere)``: the files of ``directory`` this store wrote for this workspace (with their
    header fields), and the state files it did not write, or wrote for another folder."""
    usable, untrusted, elsewhere = [], [], []
    for checked in check_files(directory, cwd=cwd):
        if not checked.owned:
            untrusted.append(checked.info)
        elif not checked.here:
            elsewhere.append(checked.info)
        else:
            usable.append(checked)
    return usable, untrusted, elsewhere


def compaction_floor(marker: Marker) -> str:
    """The marker's time as a UTC ``YYYY-MM-DD-HHMM`` stamp (a naive time counts as UTC)."""
    moment = datetime.fromisoformat(marker.time.replace("Z", "+00:00"))
    return make_stamp(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc))


def sort_out(directory: str | os.PathLike[str], marker: Marker, *, cwd: str | None = None) -> Owned:
    """Sort the state files of ``directory`` for ``marker`` (rules: module docstring); ``cwd``: the harness's working
    folder (its payload's), a workspace root besides the store's parent and the current folder.  Raises ``OSError``
    when the store cannot be listed."""
    owned = Owned(marker_session(marker), compaction_floor(marker))
    usable, owned.untrusted, owned.elsewhere = trusted_states(directory, cwd=cwd)
    for checked in usable:
        info, owner = checked.info, checked.session_id
        if owned.session_id and owner and owner != owned.session_id:
            owned.foreign.append(info)
        elif owned.session_id and owner == owned.session_id and info.kind != "auto":
            owned.usable.append(info)
        elif info.order >= owned.floor:
            owned.usable.append(info)
        else:
            owned.stale.append(info)
    return owned


def pick_for_marker(directory: str | os.PathLike[str], marker: Marker, *, cwd: str | None = None
                    ) -> tuple[BestState | None, Owned]:
    """``(choice, owned)``: the state file to use for the compaction ``marker`` records (``store.choose_best`` over
    the usable files: manual > recovered > auto), None when the session has no fresh file, and how the store was
    sorted out.  ``cwd`` as ``sort_out``.  Raises ``OSError`` when the store cannot be listed."""
    owned = sort_out(directory, marker, cwd=cwd)
    return choose_best(owned.usable), owned


SUBAGENT_MARK = ".agent-"
"""How the checkpoint labels the state of a sub-agent (``<session>.agent-<id>``): never a session's own state."""


def pick_for_merge(directory: str | os.PathLike[str], session: str | None = None) -> tuple[BestState | None, Owned]:
    """The state file ``merge`` takes when none is named (issue 22, item 1): among the files this store wrote for
    this workspace, never a sub-agent's (``SUBAGENT_MARK``), the best one (manual > recovered > auto) of ``session``;
    with no ``session``, of the one session the store holds.  ``(None, owned)`` when there is none.  Raises
    ``InputError`` (exit 2) when the store holds the files of several sessions and none was named, listing them
    newest first with their newest file, so the user can name one.  ``owned`` holds the files left out."""
    from pipeline.errors import InputError

    usable, untrusted, elsewhere = trusted_states(directory)
    owned = Owned(session, "", untrusted=untrusted, elsewhere=elsewhere)
    mine = []
    for checked in usable:
        if checked.session_id and SUBAGENT_MARK in checked.session_id:
            owned.foreign.append(checked.info)
        elif session and checked.session_id != session:
            owned.foreign.append(checked.info)
        else:
            mine.append(checked)
    if not session:
        newest: dict[str | None, StateFileInfo] = {}
        for checked in mine:
            newest[checked.session_id] = checked.info  # list_states order: the last one is the newest
        if len(newest) > 1:
            ranked = sorted(newest.items(), key=lambda item: (item[1].order, item[1].path.name), reverse=True)
            shown = "; ".join(f"{sid or 'no session id'} (newest: {info.path.name})" for sid, info in ranked[:6])
            raise InputError(f"{directory} holds the state files of {len(newest)} sessions: {shown}; name one with "
                             "--session ID, or pass STATE_FILE")
    owned.usable = [c.info for c in mine]
    return choose_best(owned.usable), owned
