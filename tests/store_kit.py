"""Test helpers for stores built by hand (issue 22): what the store records when it writes a file or a marker.

``restore``, ``resume`` and ``merge`` use only the state files and markers a store wrote itself
(``pipeline.state.trust``, ``pipeline.state.session_markers``).  Tests that put a file or a marker into a store by
hand, to stand for what a checkpoint or a recovery wrote, record it the way the store does with these.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.state.marker import Marker, write_marker
from pipeline.state.session_markers import write_session_marker
from pipeline.state.trust import sign_file


def own(store: Path, *paths: Path) -> None:
    """Record ``paths`` (state files in ``store``) as written by the store."""
    for path in paths:
        assert sign_file(store, path), path


def mark_as_store(store: Path, marker: Marker) -> None:
    """Write ``marker`` as a checkpoint does: ``.last-compact`` and the session's own marker record."""
    write_marker(store, marker)
    write_session_marker(store, marker)


def put_state(store: Path, name: str, text: str, *, record: bool = True) -> Path:
    """Write the state file ``text`` as ``store/name`` the way a checkpoint in the store's folder writes it: its
    ``Cwd`` that folder and (``record``) recorded by the store.  Returns the path."""
    import re

    store.mkdir(parents=True, exist_ok=True)
    path = store / name
    path.write_text(re.sub(r"^(Session: \S+ \| Cwd: ).*?( \| Repo/Branch: )", lambda m: f"{m[1]}{store.parent.absolute()}{m[2]}",
                           text, count=1, flags=re.M), encoding="utf-8")
    if record:
        own(store, path)
    return path
