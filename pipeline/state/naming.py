"""A session's state file of one minute, whoever else writes in that minute (issue 23, item 5).

State files are named by the minute (DESIGN.md: ``<stamp>-auto.state.md``).  Two sessions checkpointing in one
project in the same minute used to collide: the second found the name taken, kept the other session's file and
wrote only the marker (which then named the other's file).  And a second checkpoint of the *same* session in that
minute was dropped, though it holds the newer state.

``write_session_state`` settles both:

* the first file of a minute keeps the plain name;
* another session's file there: this one gets ``<stamp>-<kind>-<tag>.state.md``, ``tag`` the first 6 hex digits of
  the SHA-256 of its session id (the same every time for one session; random when the session is unknown).  The
  header's fixed fields do not change: its ``Session:`` label stays ``<stamp>-<kind>``;
* the session's own file of that minute (same ``Session-Id``, written by this store: ``pipeline.state.trust``) is
  replaced by the new state, atomically.  The new state already holds the old one's: each automatic write carries
  the previous state file forward (``pipeline.state.carry``) before it is written.

Light module (hook path).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pipeline.errors import StateFileExists
from pipeline.state.store import KEEP_DEFAULT, session_label, write_state

TAG_DIGITS = 6
RANDOM_TRIES = 3


def tagged_filename(stamp: str, kind: str, tag: str) -> str:
    """``<stamp>[-kind]-<tag>.state.md``.  ``ValueError`` as ``store.session_label``."""
    return f"{session_label(stamp, kind)}-{tag}.state.md"


def session_tag(session_id: str | None) -> str:
    """The disambiguator of ``session_id``: 6 hex digits of its SHA-256; random for an unknown session."""
    if not session_id:
        return os.urandom(3).hex()
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:TAG_DIGITS]


def is_own(store: str | os.PathLike[str], path: Path, session_id: str | None) -> bool:
    """True when the state file at ``path`` is ``session_id``'s and this store wrote it."""
    if not session_id:
        return False
    from pipeline.state.owner import file_session
    from pipeline.state.trust import owned

    return file_session(path) == session_id and owned(store, path)


def replace_own(store: str | os.PathLike[str], path: Path, text: str) -> Path:
    """Rewrite the session's own state file at ``path`` with ``text`` atomically, its record kept valid throughout
    (the new content is recorded before the rename, the old one dropped after).  Raises ``OSError``."""
    from pipeline.fsutil import atomic_write_text
    from pipeline.state.trust import sign_file, sign_text

    sign_text(store, path.name, text)
    atomic_write_text(path, text)
    sign_file(store, path)
    return path


def write_session_state(store: str | os.PathLike[str], text: str, *, stamp: str, kind: str,
                        session_id: str | None, keep: int = KEEP_DEFAULT) -> tuple[Path, bool]:
    """Write ``text`` as the state file of ``session_id`` for the minute ``stamp`` (module docstring);
    ``(path, replaced)``: ``replaced`` True when it rewrote the session's own file of that minute.

    Raises ``StateFileExists`` when every name tried is another session's (a tag collision and three random ones),
    and what ``store.write_state`` raises (``InputError`` for an unusable store, ``OSError`` when rotation fails
    after the write)."""
    root = Path(store)
    names = [None, tagged_filename(stamp, kind, session_tag(session_id))]
    names += [tagged_filename(stamp, kind, os.urandom(3).hex()) for _ in range(RANDOM_TRIES)]
    last: StateFileExists | None = None
    for name in names:
        try:
            return write_state(root, text, stamp=stamp, kind=kind, keep=keep, name=name), False
        except StateFileExists as exc:
            last = exc
            taken = Path(exc.path) if getattr(exc, "path", None) else root / (name or "")
            if is_own(root, taken, session_id):
                try:
                    return replace_own(root, taken, text), True
                except OSError as err:
                    from pipeline.errors import input_error_from_os

                    raise input_error_from_os(err, str(taken), action="cannot rewrite the state file") from None
    assert last is not None
    raise last
