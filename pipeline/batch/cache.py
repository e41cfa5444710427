"""The batch cache: one JSON record per session, keyed by transcript content + engine + configuration.

Key = BLAKE2b of (the transcript's bytes digest, the digests of its linked sub-agent files, the
configuration fingerprint).  The fingerprint covers the engine actually used (``rules``, or ``llm`` with the
settings that change its output: model, api base, mode, temperature, budgets), the masking and size-cap
options, the duck-tape version, and a digest of the source of ``pipeline/`` and ``prompts/`` (a changed rule
or prompt invalidates every record).  Unchanged archive + unchanged configuration = every session a cache
hit, so a rerun does no work; records are written as each session finishes, so an interrupted run resumes
where it stopped.

Files: ``<cache dir>/<key[:2]>/<key>.json``, written by the main process only (workers return results),
through a temporary file and a rename (``replace_quickly``), so a reader never sees half a record.  No
fsync: a record lost in a crash is only a miss, recomputed next time.  A record that does not parse is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import orjson

from pipeline import __version__

CHUNK = 1 << 20
#: Config fields that change what the llm engine writes (operational ones — timeouts, retries, the
#: response cache — do not).
LLM_OUTPUT_KEYS = ("model", "api_base", "mode", "temperature", "max_output_tokens", "reasks", "token_budget",
                   "max_tokens", "tool_output_chars")
_SOURCE_ROOTS = (Path(__file__).resolve().parent.parent, Path(__file__).resolve().parent.parent.parent / "prompts")


def file_digest(path: str) -> str:
    """BLAKE2b-128 hex digest of the file's bytes (read in 1 MiB chunks).  Raises OSError."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class Digests:
    """``file_digest`` with a memo of (size, mtime in ns, inode) per file in ``<cache dir>/digests.json``.

    A file whose size, modification time and inode are unchanged since its digest was taken is not read again,
    so a rerun over an archive of gigabytes only stats its files.  (A file rewritten with the same size within
    the same nanosecond timestamp would be missed; no editor or harness does that.)  The memo is a speed-up only:
    a missing or unreadable one just means every file is hashed.
    """

    NAME = "digests.json"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.path = Path(root) / self.NAME
        try:
            memo = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            memo = {}
        self.memo: dict = memo if isinstance(memo, dict) else {}
        self.changed = False

    def digest(self, path: str) -> str:
        """The BLAKE2b digest of the file at ``path`` (from the memo when its stat is unchanged).  Raises OSError."""
        key = os.path.abspath(path)
        st = os.stat(path)
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        known = self.memo.get(key)
        if isinstance(known, list) and len(known) == 4 and known[:3] == stamp:
            return known[3]
        value = file_digest(path)
        self.memo[key] = [*stamp, value]
        self.changed = True
        return value

    def record(self, path: str | os.PathLike[str], digest: str) -> None:
        """Remember ``digest`` for the file just written at ``path`` (its current stat)."""
        st = os.stat(path)
        self.memo[os.path.abspath(path)] = [st.st_size, st.st_mtime_ns, st.st_ino, digest]
        self.changed = True

    def save(self) -> None:
        """Write the memo back when it changed.  Raises OSError."""
        if self.changed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_quickly(self.path, orjson.dumps(self.memo))
            self.changed = False


def text_digest(text: str) -> str:
    """``file_digest`` of a file holding ``text`` in UTF-8."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def code_fingerprint(digests: Digests | None = None) -> str:
    """Digest of every ``*.py`` under ``pipeline/`` and every file under ``prompts/`` (paths and contents);
    ``digests`` saves reading the files that did not change since the last run."""
    digest = hashlib.blake2b(digest_size=16)
    for root in _SOURCE_ROOTS:
        if not root.is_dir():
            continue
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(names):
                if root.name == "pipeline" and not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode())
                digest.update((digests.digest(path) if digests is not None else file_digest(path)).encode())
    return digest.hexdigest()


def config_fingerprint(engine: str, settings: dict, *, mask: bool, max_bytes: int, code: str | None = None) -> str:
    """Fingerprint of what decides a session's result besides its transcript.

    ``engine``: the engine that will run (``rules`` | ``llm``); ``settings``: the engine's output-relevant
    settings (``LLM_OUTPUT_KEYS`` for llm, ``{}`` for rules); ``code``: ``code_fingerprint()`` (computed when None).
    """
    blob = json.dumps({"engine": engine, "settings": settings, "mask": mask, "max_bytes": max_bytes,
                       "version": __version__, "code": code or code_fingerprint()}, sort_keys=True)
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def session_key(transcript_digest: str, subagent_digests: list[str], fingerprint: str) -> str:
    """The cache key of one session (hex)."""
    blob = "\n".join([transcript_digest, *sorted(subagent_digests), fingerprint])
    return hashlib.blake2b(blob.encode(), digest_size=20).hexdigest()


class Cache:
    """Records under ``root`` (created on first write).  ``get`` -> dict or None; ``put`` writes atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], f"{key}.json")

    def get(self, key: str) -> dict | None:
        """The record stored under ``key``, or None (missing, unreadable or not a JSON object)."""
        try:
            with open(self.path(key), "rb") as handle:
                data = orjson.loads(handle.read())
        except (OSError, orjson.JSONDecodeError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` (JSON-serialisable) under ``key``.  Raises OSError."""
        path = Path(self.path(key))
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_quickly(path, orjson.dumps(record, option=orjson.OPT_SORT_KEYS))


def replace_quickly(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, without fsync.

    Readers never see a partial file; a crash (power loss) may lose the write, which is fine for files that a
    rerun recreates (cache records, batch state files: both are derived from the transcripts).  A thousand
    fsync'ed writes cost ~1 s here.  Raises OSError; the temporary file is removed on failure.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
