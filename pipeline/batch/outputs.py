"""Write the state files of a batch into the output folder (issue 6, item 1; used by ``runner``).

* Each ``ok`` session goes to ``<out>/<session id>.state.md`` (``output_name``) through a temporary file and a
  rename, no fsync: the cache can recreate it.  The output folder is not a ``.duck-tape`` store: no rotation,
  no marker.
* Two rows with the same output name (the same session in two different files) keep the one with more events.
* A state file that already holds the text is left untouched, and not even read when the index's stat memo
  knows it (``cache.Index``): on a rerun each state file costs one ``stat``.
* A row served from the cache index carries ``text_digest`` but not its ``text``: the text is read from the
  session's record file only when the state file must be (re)written, or when the caller asks for every text
  (``fill_texts``, for ``--merge``).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from pipeline.batch.cache import Cache, Index, file_digest, replace_quickly, text_digest


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")  # characters a state file name does not keep


def output_name(record: dict) -> str:
    """``<session id>.state.md`` with characters outside ``[A-Za-z0-9._-]`` replaced by ``_``; a session without
    an id is named after its file (``<stem>-<8 hex of its key>``)."""
    sid = record.get("session_id")
    base = sid if sid else f"{Path(record['path']).stem}-{(record.get('key') or '')[:8]}"
    safe = _UNSAFE.sub("_", base).lstrip(".")[:150] or "session"
    return f"{safe}.state.md"


def _resolve_duplicates(rows: list[dict]) -> dict[int, str]:
    """Mark all but one ``ok`` row per output name ``duplicate``; return the output name by ``id(row)``."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if row["status"] == "ok":
            groups.setdefault(output_name(row), []).append(row)
    names = {id(row): name for name, group in groups.items() for row in group}
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda r: (-r["events"], r["path"]))
        winner = group[0]
        for row in group[1:]:
            row["status"] = "duplicate"
            row["notes"] = [*row["notes"], f"same session id as {winner['path']}, which has more events (or sorts "
                                           "first); kept that one"]
    return names


def _unchanged(target: str, key: str, want: str, digests: Index) -> tuple[bool, bool]:
    """(the file exists, its digest is ``want``): one stat when the memo knows the file, else it is read.
    ``key``: the absolute path of ``target``."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return False, False
    if not stat.S_ISREG(st.st_mode):
        return False, False
    digest = digests.known(key, st)
    if digest is None:
        digest = file_digest(target)
        digests.remember(key, st, digest)
    return True, digest == want


def _lost(row: dict, index: Index) -> None:
    """A row served from the index whose state file must be written but whose record file is gone or damaged:
    it fails this time and its key leaves the index, so the next run recomputes the session."""
    row["status"] = "failed"
    row["output"] = "error"
    row["errors"] = [*row["errors"], "its cache record is missing or damaged, so the state file was not written; "
                                     "the next run recomputes this session"]
    if row.get("key"):
        index.forget(row["key"])


def write_outputs(rows: list[dict], out: Path, digests: Index, cache: Cache | None = None) -> None:
    """Write ``<out>/<name>`` for every ``ok`` row (``output``: written | updated | unchanged | error).

    A file whose digest (``digests``: not even read when its stat is unchanged since it was written) equals
    the row's ``text_digest`` is left untouched.  A row without its ``text`` (served from the index) reads it
    from its record in ``cache`` only when the file must be written; when that record is unusable the row fails
    (``_lost``).
    """
    names = _resolve_duplicates(rows)
    folder, absolute = os.path.join(out, ""), os.path.join(os.path.abspath(out), "")  # + name = os.path.join
    made = False
    for row in rows:
        if row["status"] != "ok":
            continue
        text = row.get("text")
        want = row.get("text_digest") or (text_digest(text) if text is not None else None)
        name = names[id(row)]
        target = folder + name
        row["output_path"] = target
        try:
            existed, same = _unchanged(target, absolute + name, want, digests)
            if same:
                row["output"] = "unchanged"
                continue
            if text is None:
                text = cache.text(row["key"], want) if cache is not None and row.get("key") and want else None
                if text is None:
                    _lost(row, digests)
                    continue
            if not made:
                out.mkdir(parents=True, exist_ok=True)
                made = True
            replace_quickly(Path(target), text.encode("utf-8"))
            digests.record(absolute + name, want)
            row["output"] = "updated" if existed else "written"
        except OSError as exc:
            row["status"] = "failed"
            row["output"] = "error"
            row["errors"] = [*row["errors"], f"cannot write {target}: {exc.strerror or exc}"]


def fill_texts(rows: list[dict], cache: Cache) -> None:
    """Give every ``ok`` row its ``text`` (a row served from the index has only ``text_digest``): from its
    record, else from the state file ``write_outputs`` just found to hold it.  A row whose text cannot be read
    back fails."""
    for row in rows:
        if row["status"] != "ok" or row.get("text") is not None:
            continue
        want = row.get("text_digest")
        text = cache.text(row["key"], want) if row.get("key") and want else None
        if text is None and want and row.get("output_path"):
            try:
                with open(row["output_path"], encoding="utf-8", newline="") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                text = None
            if text is not None and text_digest(text) != want:
                text = None
        if text is None:
            row["status"] = "failed"
            row["errors"] = [*row["errors"], "its state text could not be read back (cache record and state file)"]
        else:
            row["text"] = text
