"""Response cache in one SQLite file: the cache when diskcache is not installed (issue 25).

The agent CLIs (``pipeline.llm.agents``) work in an install without the litellm extra, which also leaves out
diskcache.  This cache has the interface of ``pipeline.llm.cache.ResponseCache`` (``get``/``set``/``len``/
``close``/``settings``) and its rules: keys from ``pipeline.llm.cache.key``, values stored as JSON text (never a
pickle), only validated answers stored.  The file is ``<directory>/responses.sqlite3`` (diskcache's own files in
the same folder are ``cache.db*``, so both can share the cache folder).

Eviction: past ``size_mb`` MiB of stored values the oldest answers are deleted first (least recently stored, as
``ResponseCache``); ``size_mb=0`` never evicts.  Several processes may share the file: SQLite locks it, and a
writer waits up to ``TIMEOUT`` seconds for the lock.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
FILENAME = "responses.sqlite3"
TIMEOUT = 30.0


class SqliteCache:
    """``get(key) -> dict | None`` / ``set(key, dict)`` over ``<directory>/responses.sqlite3``.

    Raises OSError (or ``sqlite3.Error``) when the folder or file cannot be created; the engine then runs without
    a cache and says so.
    """

    def __init__(self, directory: Path | str, *, size_mb: int = 512) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.size_limit = size_mb * MIB if size_mb > 0 else None
        self._db = sqlite3.connect(str(self.directory / FILENAME), timeout=TIMEOUT)
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                         "stored REAL NOT NULL)")
        self._db.commit()

    @property
    def settings(self) -> dict[str, Any]:
        """The eviction settings in force (``size_limit`` bytes or None, ``eviction_policy``)."""
        policy = "least-recently-stored" if self.size_limit else "none"
        return {"size_limit": self.size_limit, "eviction_policy": policy}

    def get(self, cache_key: str) -> dict | None:
        """The stored answer for ``cache_key`` or None (a damaged entry counts as a miss)."""
        row = self._db.execute("SELECT value FROM answers WHERE key = ?", (cache_key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def set(self, cache_key: str, value: dict) -> None:
        """Store ``value`` (a JSON-able dict) under ``cache_key``, then evict past the size limit."""
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO answers (key, value, stored) VALUES (?, ?, ?)",
                             (cache_key, text, time.time()))
            if self.size_limit is not None:
                self._evict()

    def _evict(self) -> None:
        (total,) = self._db.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM answers").fetchone()
        if total <= self.size_limit:
            return
        for key, size in self._db.execute("SELECT key, LENGTH(value) FROM answers ORDER BY stored").fetchall():
            if total <= self.size_limit:
                break
            self._db.execute("DELETE FROM answers WHERE key = ?", (key,))
            total -= size

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        self._db.close()
