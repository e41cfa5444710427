"""The batch cache: one JSON record per session, keyed by transcript content + engine + configuration, and an
index that serves a whole rerun from one read.

Key = BLAKE2b of (the transcript's bytes digest, the digests of its linked sub-agent files, the
configuration fingerprint).  The fingerprint covers the engine actually used (``rules``, or ``llm`` with the
settings that change its output: model, api base, mode, temperature, budgets), the masking and size-cap
options, the duck-tape version, and a digest of the source of ``pipeline/`` and ``prompts/`` (a changed rule
or prompt invalidates every record).  Unchanged archive + unchanged configuration = every session a cache
hit, so a rerun does no work; records are written as each session finishes, so an interrupted run resumes
where it stopped.

Files (written by the main process only; workers return results), each through a temporary file and a rename
(``replace_quickly``), so a reader never sees half a file.  No fsync: a file lost in a crash is only a miss,
recomputed next time.  A file that does not parse is a miss.

* ``<cache dir>/<key[:2]>/<key>.json``: the record of one session (``Cache``), written as soon as it finishes;
* ``<cache dir>/index.json`` (``Index``): written at the end of a run (also an interrupted one), when something
  changed.  It holds (1) the memo of file digests: per absolute path of a file the run looked at, the file's stat stamp (size, mtime and
  ctime in ns, inode, device) and its BLAKE2b digest, so an unchanged file is only stat'ed, never read; (2) the
  same memo of what discovery reads in a Claude Code sub-agent file (its parent session, warm-up or not); and
  (3) the records of the sessions of the last run, by key, without their state text (``text_digest`` in its
  place), so a rerun takes them from this one file instead of opening one record file per session; the text
  is read from the record file only when a state file must be (re)written or merged.  An index that is
  missing, unreadable or from another format is ignored: every file is hashed again and the records are read
  from their files (slower, same result).

Limit of the stat memo: a file rewritten with the same size, within the same tick of the file system's clock
as its previous write (a few ms on Linux file systems, 2 s on FAT), and read by the batch in between, keeps its
old digest until it changes again.  An mtime put back on purpose (``touch -r``, ``cp -p``, ``rsync -t
--inplace``) is not enough to fool it, because the stamp holds the ctime, the inode change time that every
write and every ``utime`` call sets to now on Linux and macOS (on Windows ``st_ctime`` is the creation time,
so there only the size and mtime guard the memo).  Deleting ``<cache dir>/index.json`` makes the next run hash
every file again.
"""

from __future__ import annotations

import errno
import gc
import json
import os
from hashlib import blake2b
from pathlib import Path

import orjson


from pipeline import __version__

CHUNK = 1 << 20
#: Config fields that change what the llm engine writes (operational ones — timeouts, retries, the
#: response cache — do not).
LLM_OUTPUT_KEYS = ("model", "api_base", "mode", "temperature", "max_output_tokens", "reasks", "token_budget",
                   "max_tokens", "tool_output_chars", "agent_tokens")  # agent_tokens: the agent CLIs' cap per session
def _source_roots() -> tuple[Path, ...]:
    """``pipeline/`` and the prompts folder in use (the checkout's, or the installed package data's)."""
    from pipeline.resources import PackagingError, prompts_dir

    try:
        prompts = prompts_dir()
    except PackagingError:  # no prompts: the llm engine will say so; the rules code is still fingerprinted
        return (Path(__file__).resolve().parent.parent,)
    return (Path(__file__).resolve().parent.parent, prompts.resolve())


def file_digest(path: str) -> str:
    """BLAKE2b-128 hex digest of the file's bytes (read in 1 MiB chunks), up to its size when opened (a file
    that grows meanwhile is not read forever).  Raises OSError, also for a FIFO or device (never opened for a
    blocking read)."""
    from pipeline.transcripts.source import NOT_REGULAR, NotRegularFile, open_transcript

    digest = blake2b(digest_size=16)
    try:
        handle = open_transcript(path, follow=True, skip_bom=False)
    except NotRegularFile:
        raise OSError(errno.EINVAL, NOT_REGULAR, path) from None
    with handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class Index:
    """``<cache dir>/index.json``, loaded with one read (see the module docstring).

    ``digest(path)``: ``file_digest`` through the stat memo; ``agent(path)``: ``discover.describe_agent``
    through it.  ``row(key)``: the record the last run kept under ``key``, without ``text`` (a dict shared with
    the index: copy before changing it), or None.  ``keep(key, record)``: keep a record for the next index;
    ``forget(key)`` drops it.  ``save()`` writes the index when a memo changed or the kept records differ from
    the loaded ones; the next index holds only the records kept in this run (the sessions of the last run), and
    the memos of every file seen so far.
    """

    NAME = "index.json"
    FORMAT = 2  # 2: sub-agent parents are absolute paths (1 kept them as discovery spelled them)
    LEGACY = "digests.json"  # the memo before the index (format 0): removed when the index is written

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.path = Path(root) / self.NAME
        data = None
        paused = gc.isenabled()
        if paused:  # a few ms: the collector would otherwise scan the young objects of the load over and over
            gc.disable()
        try:
            data = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            pass
        finally:
            if paused:
                gc.enable()
        if not isinstance(data, dict) or data.get("format") != self.FORMAT:
            data = {}
        files, agents, rows = data.get("files"), data.get("agents"), data.get("rows")
        self.files: dict = files if isinstance(files, dict) else {}
        self.agents: dict = agents if isinstance(agents, dict) else {}
        self.rows: dict = rows if isinstance(rows, dict) else {}
        self.kept: dict = {}
        self.changed = False
        self.seen: set[str] = set()  # memo keys (files and sub-agent files) looked up in this run

    def known(self, path: str, st: os.stat_result) -> str | None:
        """The memo's digest of the file at absolute ``path`` whose stat is ``st``, or None when it is stale."""
        self.seen.add(path)
        entry = self.files.get(path)
        if (type(entry) is list and len(entry) == 6 and entry[0] == st.st_size and entry[1] == st.st_mtime_ns
                and entry[2] == st.st_ctime_ns and entry[3] == st.st_ino and entry[4] == st.st_dev
                and type(entry[5]) is str):
            return entry[5]
        return None

    def remember(self, path: str, st: os.stat_result, digest: str) -> None:
        """Memo ``digest`` for the file at absolute ``path`` whose stat is ``st``."""
        self.files[path] = [*_stamp(st), digest]
        self.seen.add(path)
        self.changed = True

    def digest(self, path: str, absolute: str | None = None) -> str:
        """The BLAKE2b digest of the file at ``path`` (from the memo when its stat is unchanged); ``absolute``:
        ``os.path.abspath(path)`` when the caller has it.  Raises OSError."""
        key = absolute or os.path.abspath(path)
        st = os.stat(path)
        value = self.known(key, st)
        if value is None:
            value = file_digest(path)
            self.remember(key, st, value)
        return value

    def agent(self, path: str) -> tuple[str | None, bool]:
        """``discover.describe_agent(path)`` (parent session file, warm-up?), read from the file only when its
        stat changed since the memo was taken.  Never raises."""
        from pipeline.batch.discover import describe_agent

        key = os.path.abspath(path)
        try:
            stamp = _stamp(os.stat(path))
        except OSError:
            return describe_agent(path)
        self.seen.add(key)
        entry = self.agents.get(key)
        if type(entry) is list and len(entry) == 7 and entry[:5] == stamp and (entry[5] is None or type(entry[5]) is str):
            return entry[5], bool(entry[6])
        parent, warmup = describe_agent(path)
        # absolute: the memo must mean the same file when the next run starts in another directory
        parent = os.path.abspath(parent) if parent else None
        self.agents[key] = [*stamp, parent, warmup]
        self.changed = True
        return parent, warmup

    def record(self, path: str | os.PathLike[str], digest: str) -> None:
        """Remember ``digest`` for the file just written at ``path`` (its current stat).  Raises OSError."""
        key = os.path.abspath(path)
        self.remember(key, os.stat(key), digest)

    def row(self, key: str) -> dict | None:
        """The record the last run kept under ``key``, or None (also for an entry without a string ``status`` and
        ``path``: a damaged index is a miss, never a crash)."""
        found = self.rows.get(key)
        if type(found) is dict and type(found.get("status")) is str and type(found.get("path")) is str:
            return found
        return None

    def keep(self, key: str, record: dict) -> None:
        """Keep ``record`` under ``key`` in the next index: as it is when it came from ``row`` (it must not be
        changed afterwards), else a copy without ``text`` and with ``text_digest``."""
        if "text" in record:
            text = record["text"]
            record = {k: (list(v) if type(v) is list else v) for k, v in record.items() if k != "text"}
            if text is not None and not record.get("text_digest"):
                record["text_digest"] = text_digest(text)
        self.kept[key] = record

    def forget(self, key: str) -> None:
        """Leave ``key`` out of the next index (its record is unusable)."""
        self.kept.pop(key, None)

    def save(self) -> None:
        """Write the index when it changed (temporary file + rename).  The memos keep only the files looked up in
        this run, so files deleted or left out of the archive drop out (a later run that names them hashes them
        again).  Raises OSError."""
        same_rows = self.kept.keys() == self.rows.keys() and all(v is self.rows[k] for k, v in self.kept.items())
        files = {k: v for k, v in self.files.items() if k in self.seen}
        agents = {k: v for k, v in self.agents.items() if k in self.seen}
        if same_rows and not self.changed and len(files) == len(self.files) and len(agents) == len(self.agents):
            return
        self.files, self.agents = files, agents
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_quickly(self.path, orjson.dumps({"format": self.FORMAT, "files": self.files, "agents": self.agents,
                                                 "rows": self.kept}))
        self.rows = dict(self.kept)
        self.changed = False
        try:
            os.unlink(self.path.with_name(self.LEGACY))
        except OSError:
            pass


def text_digest(text: str) -> str:
    """``file_digest`` of a file holding ``text`` in UTF-8."""
    return blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def code_fingerprint(digests: Index | None = None) -> str:
    """Digest of every ``*.py`` under ``pipeline/`` and every file under ``prompts/`` (paths and contents);
    ``digests`` saves reading the files that did not change since the last run."""
    digest = blake2b(digest_size=16)
    for root in _source_roots():
        if not root.is_dir():
            continue
        top = str(root)  # absolute and resolved: every path below is too, and its tail after top is its relpath
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_data") and not d.startswith("."))
            for name in sorted(names):
                if root.name == "pipeline" and not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                digest.update(path[len(top) + 1:].encode())
                digest.update((digests.digest(path, path) if digests is not None else file_digest(path)).encode())
    return digest.hexdigest()


def config_fingerprint(engine: str, settings: dict, *, mask: bool, max_bytes: int, code: str | None = None) -> str:
    """Fingerprint of what decides a session's result besides its transcript.

    ``engine``: the engine that will run (``rules`` | ``llm``); ``settings``: the engine's output-relevant
    settings (``LLM_OUTPUT_KEYS`` for llm, ``{}`` for rules); ``code``: ``code_fingerprint()`` (computed when None).
    """
    blob = json.dumps({"engine": engine, "settings": settings, "mask": mask, "max_bytes": max_bytes,
                       "version": __version__, "code": code or code_fingerprint()}, sort_keys=True)
    return blake2b(blob.encode(), digest_size=16).hexdigest()


def session_key(transcript_digest: str, subagent_digests: list[str], fingerprint: str) -> str:
    """The cache key of one session (hex)."""
    blob = "\n".join([transcript_digest, *sorted(subagent_digests), fingerprint])
    return blake2b(blob.encode(), digest_size=20).hexdigest()


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

    def text(self, key: str, digest: str | None = None) -> str | None:
        """The state text of the record under ``key`` (None when the record or its text is missing, or when
        ``digest`` is given and the text's ``text_digest`` differs)."""
        record = self.get(key)
        text = record.get("text") if record is not None else None
        if type(text) is not str or (digest is not None and text_digest(text) != digest):
            return None
        return text


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
    except OSError as exc:  # a full or read-only disk names the file, not nothing (issue 11 part 6)
        from pipeline.fsutil import named_os_error

        named = named_os_error(exc, path)
        if named is exc:
            raise
        raise named from exc
    finally:
        if tmp.exists():
            tmp.unlink()
