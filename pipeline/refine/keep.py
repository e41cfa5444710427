"""Writing a model-made state for a session that already has one: keep what it carried, find a free name.

A model-made state (the background refinement, ``pipeline.refine.job``; the agent's own over MCP,
``pipeline.serve.agent_state``) is distilled from the session's transcript alone.  The session's checkpoint file
may hold more: the REJECTED decisions and facts it carried forward from earlier sessions (``pipeline.state.carry``:
`` (carried from session <id>)``), which that transcript no longer shows.  Since ``restore`` and ``resume`` prefer the
newer recovered file, it must not lose them:

* ``keep_carried`` inherits the carried entries of the session's newest file at or before the new state's stamp
  (they keep their marks: the session they first came from), and its version (``, v<N>`` in ``Trigger``);
* ``write_free`` writes ``<stamp>-<kind>.state.md`` and, when that name is taken (the same minute), the next free
  minute's name with the ``Session:`` label changed to match: never over an existing file.

Standard library and ``pipeline.state`` only.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.state.model import AgentState

NAME_TRIES = 5


def _session_file(directory: str | os.PathLike[str], state: AgentState):
    """The ``StateSections`` of the newest readable file of ``state``'s session stamped at or before it."""
    from pipeline.errors import InputError
    from pipeline.state.owner import file_session
    from pipeline.state.sections import read_sections
    from pipeline.state.store import list_states

    if not state.session_id:
        return None
    try:
        states = list_states(directory)
    except OSError:
        return None
    for info in reversed(states):
        if info.order > state.stamp or file_session(info.path) != state.session_id:
            continue
        try:
            return read_sections(info.path.read_text(encoding="utf-8", errors="replace"), path=str(info.path))
        except (OSError, InputError):
            continue
    return None


def keep_carried(state: AgentState, directory: str | os.PathLike[str]) -> tuple[AgentState, list[str]]:
    """``(state with the carried entries of its session's file, notes)``; ``state`` itself when there is nothing
    to keep (module docstring)."""
    from pipeline.state.carry import _MARKED, _VERSION, inherit, version_of, with_version

    previous = _session_file(directory, state)
    if previous is None:
        return state, []
    carried = replace(previous, decisions=[d for d in previous.decisions if _MARKED.search(d.reasoning or "")],
                      facts=[f for f in previous.facts if _MARKED.search(f)])
    new, decisions, facts = inherit(state, carried, state.session_id or "")
    if previous.trigger and _VERSION.search(previous.trigger):  # the same version: it is the same checkpoint's state
        new = replace(new, trigger=with_version(new.trigger, version_of(previous.trigger)))
    notes = []
    if decisions or facts:
        notes.append(f"kept {len(decisions)} rejected decision(s) and {len(facts)} fact(s) the session's "
                     f"{previous.kind} file carried from earlier sessions")
    return new, notes


def write_free(directory: str | os.PathLike[str], text: str, *, stamp: str, kind: str) -> Path:
    """Write ``text`` as ``<stamp>-<kind>.state.md`` or, when taken, the next free minute's name (at most
    ``NAME_TRIES`` minutes), its ``Session:`` label changed to match.  Raises what ``write_state`` raises
    (``StateFileExists`` when every name tried is taken)."""
    from pipeline.errors import StateFileExists
    from pipeline.state.store import session_label, write_state

    moment = datetime.strptime(stamp, "%Y-%m-%d-%H%M").replace(tzinfo=timezone.utc)
    for n in range(NAME_TRIES):
        name = (moment + timedelta(minutes=n)).strftime("%Y-%m-%d-%H%M")
        body = text if n == 0 else text.replace(f"Session: {session_label(stamp, kind)} ",
                                                f"Session: {session_label(name, kind)} ", 1)
        try:
            return write_state(directory, body, stamp=name, kind=kind)
        except StateFileExists:
            if n == NAME_TRIES - 1:
                raise
    raise StateFileExists("no free state file name", path=str(directory))  # pragma: no cover - loop raises
