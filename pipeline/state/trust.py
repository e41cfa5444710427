"""Which files of a store this store wrote (issue 22, item 1): a keyed record beside each state file and marker.

A state file is handed to the next agent only when this store wrote it.  A file planted in ``.duck-tape/`` by hand
or by another program, a store copied from another project, or one symlinked to another project's, holds files
that look the same; a record made with a key nobody else has tells them apart.

* **The key**: 32 random bytes, hex, in ``$XDG_STATE_HOME/duck-tape/store.key`` (``~/.local/state/duck-tape/``;
  ``DUCK_TAPE_KEY_FILE`` names another file), created ``0600`` on first use.  It is the user's, never inside a
  project: a repository or an archive that ships a ``.duck-tape/`` folder cannot ship its key.  Where that folder
  cannot be written (a read-only home), the store keeps its own, ``.duck-tape/.owned/.key``: still
  unforgeable by a planted file, but copied along with a copied store (the store's path in the record then
  catches the copy).
* **The record** (``seal``): ``HMAC-SHA256(key, "duck-tape-store-v1" NUL <store's real path> NUL <file name> NUL
  <content>)`` in hex.  The store's real path binds it to this folder: a copy (or a project moved elsewhere)
  verifies nothing.  State files get theirs in ``.duck-tape/.owned/<file name>`` (one hex line per accepted
  content; a file rewritten in place has two while it is rewritten), written right after the file, removed with
  it on rotation.
  The per-session marker records (``pipeline.state.session_markers``) carry theirs inside.
* ``owned(store, path)`` checks a state file; ``sign_file``/``forget`` keep the records.

Light module (hook path): standard library only (``hmac``, ``hashlib``), no pathlib work beyond ``Path`` objects
handed in.  Never raises for a missing or unreadable record: that file is simply not this store's.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

OWNED_DIR = ".owned"
"""Folder inside the store holding one record per state file the store wrote."""
KEY_NAME = "store.key"
LOCAL_KEY = ".key"
KEY_ENV = "DUCK_TAPE_KEY_FILE"
DOMAIN = b"duck-tape-store-v1"
MAX_STATE_BYTES = 4 * 1024 * 1024
"""A state file is a few kB; a bigger one is not read to be checked (it is not one this store wrote)."""
_keys: dict[str, bytes] = {}


def key_path() -> Path:
    """Where the user's key lives: ``$DUCK_TAPE_KEY_FILE``, else ``$XDG_STATE_HOME/duck-tape/store.key``, else
    ``~/.local/state/duck-tape/store.key``."""
    named = os.environ.get(KEY_ENV, "").strip()
    if named:
        return Path(named)
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "duck-tape" / KEY_NAME


def _read_or_create(path: Path) -> bytes | None:
    """The key in ``path`` (created when missing, ``0600``), or None when it can be neither read nor created."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(200).strip()
        if len(text) == 64:
            return bytes.fromhex(text.decode("ascii"))
    except FileNotFoundError:
        pass
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:  # another process created it meanwhile: read that one
        try:
            return bytes.fromhex(path.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None
    except OSError:
        return None
    secret = os.urandom(32)
    try:
        os.write(fd, secret.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return secret


def store_key(store: str | os.PathLike[str], *, create: bool = True) -> bytes | None:
    """The key records of ``store`` are made with: the user's (``key_path``), else the store's own
    (``<store>/.owned/.key``) when the user's cannot be read or created.  None when there is none and ``create`` is
    False (nothing was ever sealed), or when neither can be made."""
    user = key_path()
    cached = _keys.get(str(user))
    if cached is not None:
        return cached
    if create or user.exists():
        found = _read_or_create(user)
        if found is not None:
            _keys[str(user)] = found
            return found
    local = Path(store) / OWNED_DIR / LOCAL_KEY
    if not create and not local.exists():
        return None
    if create:
        try:
            local.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
    return _read_or_create(local)


def store_identity(store: str | os.PathLike[str]) -> str:
    """The store's real path (symlinks resolved): what binds a record to this folder."""
    return os.path.realpath(os.fspath(store))


def seal(key: bytes, store: str | os.PathLike[str], name: str, data: bytes) -> str:
    """The hex record of ``data`` written as ``name`` in ``store`` (module docstring)."""
    message = b"\0".join((DOMAIN, store_identity(store).encode("utf-8", "surrogateescape"),
                          name.encode("utf-8", "surrogateescape"), data))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def record_path(store: str | os.PathLike[str], name: str) -> Path:
    """``<store>/.owned/<name>``: the record of the state file ``name``."""
    return Path(store) / OWNED_DIR / name


def sign_file(store: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Record that this store wrote the state file at ``path``, as its content is now (any earlier record of that
    name replaced).  True when recorded; never raises (a store that cannot keep records only makes its own files
    unusable for restore, which says so then)."""
    try:
        key = store_key(store)
        if key is None:
            return False
        target = Path(path)
        with open(target, "rb") as handle:
            data = handle.read(MAX_STATE_BYTES + 1)
        if len(data) > MAX_STATE_BYTES:
            return False
        return _write_record(record_path(store, target.name), [seal(key, store, target.name, data)])
    except Exception:  # noqa: BLE001 - bookkeeping: a missing record is reported when the file is used
        return False


def sign_text(store: str | os.PathLike[str], name: str, text: str) -> bool:
    """Record ``text`` as the content this store is about to write as ``name`` (beside any content already
    recorded for it): called before an in-place rewrite, so the file is recorded whichever content a reader sees.
    True when recorded; never raises."""
    try:
        key = store_key(store)
        if key is None:
            return False
        record = record_path(store, name)
        line = seal(key, store, name, text.encode("utf-8"))
        return _write_record(record, [line] + [old for old in _record_lines(record) if old != line][:2])
    except Exception:  # noqa: BLE001 - as sign_file
        return False


def _write_record(record: Path, lines: list[str]) -> bool:
    from pipeline.fsutil import atomic_write_text

    record.parent.mkdir(exist_ok=True)
    atomic_write_text(record, "\n".join(lines) + "\n")
    return True


def _record_lines(record: Path) -> list[str]:
    try:
        with open(record, "rb") as handle:
            text = handle.read(4096).decode("ascii", "replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if len(line.strip()) == 64]


def owned(store: str | os.PathLike[str], path: str | os.PathLike[str], data: bytes | None = None) -> bool:
    """True when the store wrote the state file at ``path`` as it is now (``data``: its bytes, when already read).
    False for a file without a record, with a record of other content or another folder, or unreadable."""
    target = Path(path)
    lines = _record_lines(record_path(store, target.name))
    if not lines:
        return False
    key = store_key(store, create=False)
    if key is None:
        return False
    if data is None:
        try:
            with open(target, "rb") as handle:
                data = handle.read(MAX_STATE_BYTES + 1)
        except OSError:
            return False
        if len(data) > MAX_STATE_BYTES:
            return False
    expected = seal(key, store, target.name, data)
    return any(hmac.compare_digest(expected, line) for line in lines)


def forget(store: str | os.PathLike[str], name: str) -> None:
    """Remove the record of the state file ``name`` (it was rotated out or removed).  Never raises."""
    try:
        os.unlink(record_path(store, name))
    except OSError:
        pass


def prune_records(store: str | os.PathLike[str], keep: set[str]) -> None:
    """Remove the records of state files that are gone (every record whose name is not in ``keep``, the store's
    state file names).  Never raises."""
    try:
        entries = list(os.scandir(Path(store) / OWNED_DIR))
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".state.md") and entry.name not in keep:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
