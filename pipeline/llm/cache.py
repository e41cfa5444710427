"""Response cache on disk (diskcache), so a rerun of the same transcript makes no calls (issue 4, item 8).

Key: SHA-256 of the prompt's tagged hash (template + response schema + model + parameters, see
``pipeline.llm.prompts.tag``) and of the masked messages, so a changed prompt, schema, model or parameter, or
another input, never reuses an answer.  Value: the parsed answer as JSON text (``model_dump(mode="json")``), not
a pickle: a cache folder shared or copied between machines cannot run code.  Only validated answers are stored;
failures never are.

Eviction, deliberately (STACK.md "diskcache": the default is a silent 1 GiB limit): ``size_mb`` MiB with the
``least-recently-stored`` policy, which evicts the oldest answers first and, unlike ``least-recently-used``,
costs no write on a cache hit; ``size_mb=0`` sets ``eviction_policy="none"`` (the cache grows without bound,
for a batch whose answers must all stay).  ``diskcache.Cache`` is safe across processes and threads; the
``FanoutCache`` that drops writes under contention is not used.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MIB = 1024 * 1024


def key(tag: str, messages: list[dict]) -> str:
    """The cache key of a request: ``<tag>:<sha256 of the messages' JSON>`` (hex)."""
    body = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"{tag}:{digest}"


class ResponseCache:
    """``get(key) -> dict | None`` / ``set(key, dict)`` over a ``diskcache.Cache`` in ``directory``.

    Raises OSError when the folder cannot be created (the engine then runs without a cache and says so).
    """

    def __init__(self, directory: Path | str, *, size_mb: int = 512) -> None:
        import diskcache

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if size_mb > 0:
            settings: dict[str, Any] = {"size_limit": size_mb * MIB, "eviction_policy": "least-recently-stored"}
        else:
            settings = {"eviction_policy": "none"}
        self._cache = diskcache.Cache(str(self.directory), **settings)

    @property
    def settings(self) -> dict[str, Any]:
        """The eviction settings in force (``size_limit`` bytes, ``eviction_policy``)."""
        return {"size_limit": self._cache.size_limit, "eviction_policy": self._cache.eviction_policy}

    def get(self, cache_key: str) -> dict | None:
        """The stored answer for ``cache_key`` or None (a damaged entry counts as a miss)."""
        raw = self._cache.get(cache_key)
        if not isinstance(raw, str):
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def set(self, cache_key: str, value: dict) -> None:
        """Store ``value`` (a JSON-able dict) under ``cache_key``."""
        self._cache.set(cache_key, json.dumps(value, ensure_ascii=False, sort_keys=True))

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()
