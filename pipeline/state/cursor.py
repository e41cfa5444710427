"""How far the last checkpoint of a session read its transcript, and what it held (issue 23: incremental checkpoints).

A checkpoint that finds the record of the last one reads only the bytes appended since and folds them onto the state
that record holds (``pipeline.hooks.incremental``).  One record per transcript, in the store:
``<store>/.reach/<key>.json``, ``key`` = 16 hex digits of the BLAKE2b digest of the transcript's resolved path
(``transcript_key``; a session is one transcript file; the path itself is not written: it may hold a token).  Written atomically (``fsutil.atomic_write_text``); never part of rotation
(``store.list_states`` counts only state files in the store folder itself).

A record (JSON object, ``Cursor.to_json``):

* ``transcript``, ``session_id``, ``format``: the file's key, its session, its format (only append-only JSONL formats are
  read on: ``segments.APPEND_ONLY_FORMATS``);
* ``engine``: ``engine_version()`` when it was written: a changed engine reads the whole transcript again;
* ``inode``, ``device``, ``size``, ``head_hash``, ``end_hash``: the fingerprint — the file's identity, its size then,
  the BLAKE2b digest of its first KiB and of the KiB before the end of what was read.  A file replaced, rotated,
  truncated or rewritten in its read part no longer matches (``matches``);
* ``parts``: one or two ``Part``s.  The first covers the transcript from its start; a second one exists when a hook's
  time budget left a gap between them (``pipeline.hooks.incremental``): it covers the gap's end to the end read.
  Each part holds where it ends (``end``: byte offset after BOM, ``lines``: lines up to there), its event count
  (``events``) or, for the second, where it starts (``start``, ``start_line``), the time its opening request was
  made (``head_time``), its folded state (``state``: the state file text, masked as the state file is), the
  events a read that goes on starts with (``carried``: masked, see ``segments._carried``) and what the reader keeps
  for it (``reader``: Claude Code's TaskCreate/TaskUpdate list, ``ReadReport.carry``).

Unreadable, corrupt or foreign records count as none (a full read); nothing here raises for them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

try:  # hashlib sets up OpenSSL on import (~30 ms of the hook's time); BLAKE2 is built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the built-in module
    from hashlib import blake2b

FOLDER = ".reach"
FORMAT_VERSION = 1
KIB = 1024
#: What the engine version covers: the code that turns transcript bytes into a state (readers, masking, rules
#: engine, fold), below ``pipeline/``.
ENGINE_PATHS = ("stages", "transcripts", "redact", "state/fold.py", "segmented.py", "engines.py")

_engine: str | None = None


def engine_version() -> str:
    """A fingerprint of the engine: the duck-tape version and the size and modification time of every ``.py`` file
    under ``ENGINE_PATHS`` (stat only, ~0.3 ms; a reinstall or an edited rule changes it).  Computed once per
    process."""
    global _engine
    if _engine is None:
        from pipeline import __version__

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        digest = blake2b(__version__.encode(), digest_size=8)
        for rel in ENGINE_PATHS:
            top = os.path.join(root, rel)
            paths = [top] if top.endswith(".py") else sorted(
                os.path.join(folder, name) for folder, _, names in os.walk(top) for name in names if name.endswith(".py"))
            for path in paths:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{path[len(root):]}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        _engine = digest.hexdigest()
    return _engine


@dataclass(slots=True)
class Part:
    """A stretch of the transcript read and folded (module docstring): ``[start, end)`` in bytes, lines
    ``start_line``+1 … ``lines``, ``events`` events (the first part: all since the start), the folded ``state``
    text, the ``carried`` events (dicts of ``Event`` fields), ``head_time`` and what the reader keeps for a read that
    goes on (``reader``: ``ReadReport.carry``)."""

    end: int
    lines: int
    state: str
    start: int = 0
    start_line: int = 0
    events: int = 0
    head_time: str | None = None
    carried: list[dict] = field(default_factory=list)
    reader: dict = field(default_factory=dict)


@dataclass(slots=True)
class Cursor:
    """One record (module docstring)."""

    transcript: str
    format: str
    engine: str
    inode: int
    device: int
    size: int
    head_hash: str
    end_hash: str
    parts: list[Part]
    session_id: str | None = None

    @property
    def end(self) -> int:
        """Byte offset after the last part."""
        return self.parts[-1].end

    @property
    def gap(self) -> tuple[int, int] | None:
        """``(start, end)`` bytes between the two parts, or None."""
        if len(self.parts) < 2:
            return None
        return self.parts[0].end, self.parts[1].start

    def to_json(self) -> dict:
        return {"version": FORMAT_VERSION, "transcript": self.transcript, "session_id": self.session_id,
                "format": self.format, "engine": self.engine, "inode": self.inode, "device": self.device,
                "size": self.size, "head_hash": self.head_hash, "end_hash": self.end_hash,
                "parts": [{"start": p.start, "start_line": p.start_line, "end": p.end, "lines": p.lines,
                           "events": p.events, "head_time": p.head_time, "state": p.state, "carried": p.carried,
                           "reader": p.reader}
                          for p in self.parts]}

    @classmethod
    def from_json(cls, data: object) -> "Cursor | None":
        """The record in ``data``, or None when it is not one of this format."""
        try:
            if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
                return None
            parts = [Part(end=int(p["end"]), lines=int(p["lines"]), state=str(p["state"]), start=int(p["start"]),
                          start_line=int(p["start_line"]), events=int(p["events"]), head_time=p.get("head_time"),
                          carried=[c for c in p.get("carried") or [] if isinstance(c, dict)],
                          reader=p["reader"] if isinstance(p.get("reader"), dict) else {})
                     for p in data["parts"]]
            if not 1 <= len(parts) <= 2:
                return None
            return cls(transcript=str(data["transcript"]), format=str(data["format"]), engine=str(data["engine"]),
                       inode=int(data["inode"]), device=int(data["device"]), size=int(data["size"]),
                       head_hash=str(data["head_hash"]), end_hash=str(data["end_hash"]), parts=parts,
                       session_id=data.get("session_id") if isinstance(data.get("session_id"), str) else None)
        except (KeyError, TypeError, ValueError):
            return None


def transcript_key(transcript: str) -> str:
    """The key of a transcript's record: 16 hex digits of the BLAKE2b digest of its resolved path."""
    return blake2b(os.path.realpath(transcript).encode(), digest_size=8).hexdigest()


def record_path(store: str | os.PathLike[str], transcript: str) -> Path:
    """Where the record of the transcript at ``transcript`` lives in ``store``."""
    return Path(store) / FOLDER / f"{transcript_key(transcript)}.json"


def load(store: str | os.PathLike[str], transcript: str) -> Cursor | None:
    """The record of ``transcript`` in ``store``, or None (none, unreadable, another format or transcript)."""
    import orjson

    path = record_path(store, transcript)
    try:
        with open(path, "rb") as handle:
            data = orjson.loads(handle.read())
    except (OSError, ValueError):
        return None
    cursor = Cursor.from_json(data)
    if cursor is None or cursor.transcript != transcript_key(transcript):
        return None
    return cursor


def save(store: str | os.PathLike[str], cursor: Cursor) -> Path:
    """Write ``cursor`` atomically; return its path.  Raises ``OSError`` (the caller notes it: a checkpoint that
    cannot remember reads the whole transcript next time, nothing worse)."""
    import orjson

    from pipeline.fsutil import atomic_write_text

    if os.path.islink(store) or os.path.islink(os.path.join(store, FOLDER)):
        raise OSError(f"{store}: the store (or its {FOLDER} folder) is a symlink; not writing through it")
    path = Path(store) / FOLDER / f"{cursor.transcript}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, orjson.dumps(cursor.to_json()).decode())
    return path


def _kib(handle, start: int) -> str:
    handle.seek(max(0, start))
    return blake2b(handle.read(KIB), digest_size=16).hexdigest()


def fingerprint(path: str, end: int) -> tuple[int, int, int, str, str]:
    """``(inode, device, size, head_hash, end_hash)`` of the transcript at ``path`` now, the end hash taken over the
    KiB before byte ``end`` (offsets after a BOM, as the readers count).  Raises ``OSError``."""
    from pipeline.transcripts.source import open_transcript

    st = os.stat(path, follow_symlinks=False)
    with open_transcript(path) as handle:
        size = handle.raw.size
        return st.st_ino, st.st_dev, size, _kib(handle, 0), _kib(handle, min(end, size) - KIB) if end else ""


def matches(cursor: Cursor, path: str, engine: str) -> str | None:
    """Why ``cursor`` cannot be read on from for the transcript at ``path`` now (one phrase), or None when it can:
    same file (inode, device), not shorter than what was read, the same first KiB and the same KiB before the end
    read, the same engine version.  Never raises."""
    from pipeline.transcripts.segments import APPEND_ONLY_FORMATS

    if cursor.engine != engine:
        return "the engine changed since"
    if cursor.format not in APPEND_ONLY_FORMATS:
        return f"a {cursor.format} file is rewritten whole"
    try:
        inode, device, size, head, end = fingerprint(path, cursor.end)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if (inode, device) != (cursor.inode, cursor.device):
        return "it is another file now (replaced or rotated)"
    if size < cursor.end:
        return "it is shorter than what was read (truncated or rewritten)"
    if head != cursor.head_hash or end != cursor.end_hash:
        return "its content changed (rewritten)"
    return None
