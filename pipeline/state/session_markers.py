"""One compaction marker per session (issue 22, item 1; issue 23, item 5): ``.duck-tape/.markers/<session>.json``.

``.duck-tape/.last-compact`` (DESIGN.md's one-line marker) names the newest compaction of the whole store: with two
sessions in one project, the second checkpoint overwrites the first one's.  So every checkpoint also writes a
record of its own session, and ``restore`` — told which session starts by the harness's ``SessionStart`` payload —
reads that session's record.  ``.last-compact`` keeps its format and meaning (the newest overall) for every reader
that knows only it.

A record is one JSON object::

    {"time": "<ISO-8601>", "cwd": "<path>" | null, "session_id": "<id>" | null, "latest_state": "<file>" | null,
     "transcript": "<path>" | null, "seal": "<hex>"}

the fields of a ``Marker`` plus ``seal``, the store's keyed record of them (``pipeline.state.trust``): a record
planted by hand, or copied from another folder, does not verify and is not used.  The file is named after the
session id when it is a plain name (``locate.safe_session_id``), else ``~<16 hex of its SHA-256>.json``; a marker of
no known session goes to ``~none.json`` (``~`` starts no plain session id).  Writes are atomic; at most
``KEEP_RECORDS`` records are kept (the oldest go first).

``read_trusted_last_compact`` is how a reader without a session id uses ``.last-compact``: only when the record of
the session it names holds the same fields (this store wrote it).

Light module (hook path): standard library and ``pipeline.state``/``fsutil``/``hooks.locate`` only.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pipeline.state.marker import Marker, format_marker, read_marker

MARKERS_DIR = ".markers"
KEEP_RECORDS = 200
NO_SESSION = "~none"
MAX_RECORD_BYTES = 64 * 1024
_FIELDS = ("time", "cwd", "session_id", "latest_state", "transcript")


def record_name(session_id: str | None) -> str:
    """The record file name of ``session_id`` (module docstring)."""
    if not session_id:
        return NO_SESSION + ".json"
    from pipeline.hooks.locate import safe_session_id

    if safe_session_id(session_id) == session_id:
        return session_id + ".json"
    return "~" + hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:16] + ".json"


def _canonical(m: Marker) -> bytes:
    return json.dumps([getattr(m, name) for name in _FIELDS], ensure_ascii=False).encode("utf-8")


def _seal(store: str | os.PathLike[str], m: Marker, *, create: bool) -> str | None:
    from pipeline.state.trust import seal, store_key

    key = store_key(store, create=create)
    if key is None:
        return None
    return seal(key, store, MARKERS_DIR + "/" + record_name(m.session_id), _canonical(m))


def write_session_marker(store: str | os.PathLike[str], m: Marker) -> Path | None:
    """Write the record of ``m`` (sealed) as ``<store>/.markers/<record_name(m.session_id)>``; the path, or None when
    the store keeps no key (then there is nothing a reader could verify).  Raises ``ValueError`` when ``m`` is not a
    marker ``format_marker`` accepts, ``OSError`` when the record cannot be written.  Prunes to ``KEEP_RECORDS``."""
    format_marker(m)  # the same values a marker line may hold
    sealed = _seal(store, m, create=True)
    if sealed is None:
        return None
    folder = Path(store) / MARKERS_DIR
    folder.mkdir(exist_ok=True)
    data = {name: getattr(m, name) for name in _FIELDS}
    data["seal"] = sealed
    from pipeline.fsutil import atomic_write_text

    path = folder / record_name(m.session_id)
    atomic_write_text(path, json.dumps(data, ensure_ascii=False) + "\n")
    _prune(folder, keep=KEEP_RECORDS, protect=path.name)
    return path


@dataclass(slots=True)
class SessionMarker:
    """What ``read_session_marker`` found: the ``marker`` (None when there is no record) and whether this store
    wrote it (``trusted``); ``problem``: why a record that is there is not used (one line), else None."""

    marker: Marker | None
    trusted: bool = False
    problem: str | None = None


def read_session_marker(store: str | os.PathLike[str], session_id: str | None) -> SessionMarker:
    """The record of ``session_id`` in ``store``.  Never raises: no record gives ``SessionMarker(None)``; a record
    that does not read as one, or does not verify, gives its marker (when readable) untrusted, with the problem."""
    path = Path(store) / MARKERS_DIR / record_name(session_id)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        return SessionMarker(None)
    except OSError as exc:
        return SessionMarker(None, problem=f"cannot read {path}: {exc.strerror or exc}")
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or len(raw) > MAX_RECORD_BYTES:
            raise ValueError("not a JSON object")
        values = {name: data.get(name) for name in _FIELDS}
        if not all(v is None or isinstance(v, str) for v in values.values()) or not values["time"]:
            raise ValueError("a field is not text")
        m = Marker(values["time"], values["cwd"], values["latest_state"], values["transcript"], values["session_id"])
        format_marker(m)
    except (ValueError, UnicodeDecodeError) as exc:
        return SessionMarker(None, problem=f"{path} is not a marker record ({exc})")
    if m.session_id != session_id:
        return SessionMarker(m, problem=f"{path} names session {m.session_id}, not {session_id}")
    expected = _seal(store, m, create=False)
    import hmac

    if expected is None or not isinstance(data.get("seal"), str) or not hmac.compare_digest(expected, data["seal"]):
        return SessionMarker(m, problem=f"{path} was not written by this store (copied or planted?); not used")
    return SessionMarker(m, trusted=True)


def read_trusted_last_compact(store: str | os.PathLike[str]) -> SessionMarker:
    """``.last-compact`` when this store wrote it: its fields equal the trusted record of the session it names.
    ``SessionMarker(None)`` when there is no marker; raises ``InputError`` for a corrupt one (``read_marker``)."""
    m = read_marker(store)
    if m is None:
        return SessionMarker(None)
    own = read_session_marker(store, m.session_id)
    if own.trusted and own.marker == m:
        return SessionMarker(m, trusted=True)
    why = own.problem or ("no record of it in " + str(Path(store) / MARKERS_DIR) if own.marker is None else
                          "its record names another compaction")
    return SessionMarker(m, problem=f"the marker {Path(store) / '.last-compact'} was not written by this store "
                                    f"({why}); not used")


def _prune(folder: Path, *, keep: int, protect: str) -> None:
    """Remove the oldest records (by modification time) beyond ``keep``; never ``protect``.  Never raises."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json") and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    if len(entries) <= keep:
        return
    def age(entry: os.DirEntry) -> float:
        try:
            return entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            return 0.0
    for entry in sorted(entries, key=age)[: len(entries) - keep]:
        if entry.name != protect:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
