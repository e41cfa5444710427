"""opencode databases in a batch: one session file per session of an ``opencode.db`` (issue 16).

``discover`` lists ``*.db`` files as candidates; ``expand`` replaces each that is an opencode database with one
export-shaped JSON file per session (``pipeline.transcripts.opencode_db.export_session``), written under the
batch's cache folder (``<cache>/opencode-db/<db name>-<8 hex of its path>/<session id>.json``) and rewritten only
when its content changed, so the cache's file digests work as for any transcript.  The database is only read.
A ``.db`` file that is not a readable opencode database is skipped with the reason (and ``opencode export`` as
the way out).
"""

from __future__ import annotations

import hashlib
import os

import orjson

from pipeline.batch.discover import Candidate, Discovery, Skipped
from pipeline.errors import InputError

FOLDER = "opencode-db"


def _write_if_changed(path: str, data: bytes) -> None:
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return
    except OSError:
        pass
    from pipeline.fsutil import atomic_write_text

    atomic_write_text(path, data.decode("utf-8"))


def expand(found: Discovery, cache_dir: str) -> None:
    """Replace the ``.db`` candidates of ``found`` by their sessions' files under ``cache_dir`` (in place; order
    kept, newest session first within a database).  Unreadable or foreign databases go to ``found.skipped``.
    Raises OSError when a session file cannot be written."""
    from pipeline.transcripts.opencode_db import export_sessions, is_sqlite, list_sessions

    sessions: list[Candidate] = []
    for cand in found.sessions:
        if not cand.path.endswith(".db"):
            sessions.append(cand)
            continue
        if not is_sqlite(cand.path):
            found.skipped.append(Skipped(cand.path, "not an SQLite database (opencode keeps sessions in opencode.db)"))
            continue
        try:
            rows = list_sessions(cand.path)
            if not rows:
                found.skipped.append(Skipped(cand.path, "an opencode database without sessions"))
                continue
            tag = hashlib.blake2b(cand.absolute.encode(), digest_size=4).hexdigest()
            folder = os.path.join(cache_dir, FOLDER, f"{os.path.basename(cand.path)[:-3]}-{tag}")
            os.makedirs(folder, exist_ok=True)
            for row, document in export_sessions(cand.path, rows):  # one listing, one connection: linear
                target = os.path.join(folder, f"{row.id}.json")
                _write_if_changed(target, orjson.dumps(document))
                sessions.append(Candidate(target, explicit=cand.explicit))
        except InputError as exc:
            found.skipped.append(Skipped(cand.path, " ".join(str(exc).split())))
    found.sessions = sessions
