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
    """``(path, text)`` of the kept recovery for ``cache_key``, None when there is none, it cannot be read, or this
    store did not keep it (issue 22: its seal, ``<key>.seal`` beside it, made with the store's key as
    ``pipeline.state.trust`` makes them, must match: a planted file is never reported to the agent)."""
    path = path_for(store, cache_key)
    try:
        text = path.read_text(encoding="utf-8")
        kept_seal = path.with_suffix("").with_suffix(".seal").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    expected = _seal(store, path.name, text, create=False)
    import hmac

    if expected is None or not hmac.compare_digest(expected, kept_seal):
        return None
    return path, text


def _seal(store: Path, name: str, text: str, *, create: bool) -> str | None:
    from pipeline.state.trust import seal, store_key

    secret = store_key(store, create=create)
    return seal(secret, store, f"{FOLDER}/{name}", text.encode("utf-8")) if secret is not None else None


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
        sealed = _seal(store, path.name, text, create=True)
        atomic_write_text(path, text)
        if sealed is not None:
            atomic_write_text(path.with_suffix("").with_suffix(".seal"), sealed + "\n")
        for other in [*path.parent.glob("*.state.md"), *path.parent.glob("*.seal")]:
            if other not in (path, path.with_suffix("").with_suffix(".seal")):
                os.unlink(other)
    except (OSError, InputError):
        return None
    return path
