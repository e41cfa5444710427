"""The recovery ``resume`` makes off a terminal, kept once per compaction (issue 24, item 3).

An agent runs ``duck-tape resume`` without a terminal; when the compacted session has only an auto checkpoint,
resume recovers a state from the marker's transcript but may not write a state file without approval (DESIGN.md
"Resume", step 5).  Distilling again on every run cost seconds and repeated the same output, so the masked
recovery is kept here and reused by the later runs of the same compaction:

``<store>/.resume/<key>.state.md``, ``key`` = the first 16 hex digits of the SHA-256 of the marker's fields and
the engine that made it (engine and model).  It is not a state file of the store (``list_states`` reads only the
store's own folder, so rotation, ``restore`` and ``merge`` never see it); writing one removes the others, so the
folder holds at most the latest compaction's.  Its text went through the redaction mask (secrets as
``<REDACTED>``).  ``resume --yes`` still recovers and writes a real ``-recovered`` state file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pipeline.state.marker import Marker

FOLDER = ".resume"


def key(marker: Marker, engine: str, model: str | None) -> str:
    """The cache key of the recovery of ``marker``'s compaction by ``engine``/``model``: 16 hex digits."""
    fields = (marker.time, marker.cwd, marker.transcript, marker.session_id, engine, model)
    return hashlib.sha256("\x00".join(f or "" for f in fields).encode("utf-8")).hexdigest()[:16]


def path_for(store: Path, cache_key: str) -> Path:
    """``<store>/.resume/<cache_key>.state.md``."""
    return store / FOLDER / f"{cache_key}.state.md"


def load(store: Path, cache_key: str) -> tuple[Path, str] | None:
    """``(path, text)`` of the kept recovery for ``cache_key``, None when there is none or it cannot be read."""
    path = path_for(store, cache_key)
    try:
        return path, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def save(store: Path, cache_key: str, text: str) -> Path | None:
    """Keep ``text`` (a masked state text) for ``cache_key`` atomically and remove the other kept recoveries.
    Returns the path, or None when the store cannot be written (the report goes on without it: a read-only
    checkout must not stop ``resume``)."""
    from pipeline.errors import InputError
    from pipeline.fsutil import atomic_write_text
    from pipeline.state.store import ensure_store

    path = path_for(store, cache_key)
    try:
        ensure_store(store)  # its .gitignore (`*`) keeps the kept recovery out of git too
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, text)
        for other in path.parent.glob("*.state.md"):
            if other != path:
                os.unlink(other)
    except (OSError, InputError):
        return None
    return path
