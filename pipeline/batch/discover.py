"""Find the sessions of an archive: transcripts in files and folders, recursively (issue 6, item 1).

Rules (FORMATS.md §1–3 "Location"):

* A file named on the command line is always a candidate.  In a folder, ``*.jsonl`` and ``*.json`` files are
  candidates (Claude Code project folders, Copilot ``session-state/<id>/events.jsonl`` and the legacy
  ``session-state/<id>.jsonl``, opencode exports) and ``*.db`` files (opencode's ``opencode.db``), except ``*.meta.json``; hidden folders (``.git``,
  ``.duck-tape``…), ``node_modules``, ``__pycache__`` and the harnesses' side folders (Claude Code
  ``tool-results``, Copilot ``checkpoints`` and ``rewind-snapshots``) are not entered, symlinks are not
  followed, and ``exclude`` (the output and cache folders) is skipped.  Only regular files are candidates: a
  FIFO, socket or device with a transcript's name is listed as skipped without being opened (``open()`` on a
  FIFO blocks until a writer comes: a batch over a folder holding one hung); one named on the command line is
  in ``Discovery.not_regular`` (the run refuses it, exit 2, saying so).
* Claude Code sub-agent files (``agent-<hex>.jsonl``) are not sessions: each is linked to its parent session
  (``subagents.inspect``, or the caller's memo of it) when the parent is a candidate; warm-up files and orphans
  are skipped with a reason.
* ``since``: a file last modified before it cannot hold a session active since then and is skipped without
  being read (the worker also checks the session's own end time); ``Discovery.before_since`` counts them, so a
  run whose every transcript is older than ``--since`` can say so instead of "no transcripts found", and the
  sub-agent files of such a session are listed with that reason, not as orphans.

What is *in* a file (format, session id, duplicates by content) is decided later, by the runner and worker.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

AGENT_FILE = re.compile(r"agent-[0-9a-f]{6,32}\.jsonl")
"""The name of a Claude Code sub-agent transcript (FORMATS.md §1 "sub-agent (Task/Agent)")."""

SIDE_FOLDERS = frozenset({"node_modules", "__pycache__", "tool-results", "checkpoints", "rewind-snapshots", "subagents"})
"""Folders not walked as sessions (``subagents`` is reached through its parent session instead)."""
SUFFIXES = (".jsonl", ".json", ".db")
"""``.db``: opencode's SQLite storage, expanded into one file per session by ``batch.opencode_db.expand``."""


@dataclass(slots=True)
class Candidate:
    """A session to process: its transcript ``path``, whether it was named on the command line
    (``explicit``), the sub-agent files linked to it, and ``absolute``: ``os.path.abspath(path)``."""

    path: str
    explicit: bool = False
    subagents: list[str] = field(default_factory=list)
    absolute: str = ""

    def __post_init__(self) -> None:
        if not self.absolute:
            self.absolute = os.path.abspath(self.path)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that is not processed as a session, and why (one line)."""

    path: str
    reason: str


@dataclass(slots=True)
class Discovery:
    """``sessions`` in discovery order (sorted paths per argument), ``skipped`` files, ``missing`` arguments,
    ``not_regular`` arguments (FIFO, socket, device); ``before_since``: how many transcript files were skipped
    because they were last modified before ``since``."""

    sessions: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    not_regular: list[str] = field(default_factory=list)
    before_since: int = 0


def is_agent_file(path: str) -> bool:
    """True for a file named like a Claude Code sub-agent transcript (``agent-<hex>.jsonl``)."""
    return AGENT_FILE.fullmatch(os.path.basename(path)) is not None


def describe_agent(path: str) -> tuple[str | None, bool]:
    """(parent session file or None, warm-up?) of the sub-agent file at ``path`` (``subagents.inspect``, which
    reads its first lines).  Never raises."""
    from pipeline.batch.subagents import inspect

    info = inspect(path)
    return info.parent, info.warmup


NOT_REGULAR = "not a regular file (a FIFO, socket or device); not read"


def _walk(root: str, exclude: set[str]) -> tuple[list[tuple[str, str]], list[str], list[Skipped]]:
    """(files with a transcript suffix as (path, absolute path), sub-agent files, non-regular files with a
    transcript suffix) under ``root``, in the order of a sorted top-down walk; symlinks not followed.
    Unreadable folders are passed over."""
    files: list[tuple[str, str]] = []
    agents: list[str] = []
    odd: list[Skipped] = []
    _scan(root, os.path.abspath(root), exclude, files, agents, odd)
    return files, agents, odd


def _scan(folder: str, absolute: str, exclude: set[str], files: list[tuple[str, str]], agents: list[str],
          odd: list[Skipped]) -> None:
    """One folder of ``_walk``: its ``subagents`` folder's agent files, its own files, then its sub-folders.

    ``os.scandir`` gives each entry's type without a system call (except for symlinks, whose target's type
    costs one ``stat``, as in ``os.walk``): a folder of a thousand transcripts costs one directory read.
    """
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_name)
    except OSError:
        return
    folders: list[str] = []
    inner: list[str] = []
    own: list[str] = []
    prefix = os.path.join(absolute, "")  # prefix + name == os.path.join(absolute, name)
    for entry in entries:
        name = entry.name
        try:
            is_dir = entry.is_dir()  # follows a symlink, as os.walk does
        except OSError:
            is_dir = False
        try:
            link = entry.is_symlink()
        except OSError:
            link = False
        if is_dir:
            if link:
                continue
            if name == "subagents":  # 2.1.x: <project>/<session id>/subagents/agent-*.jsonl
                inner = _agent_files(entry.path)
            elif not name.startswith(".") and name not in SIDE_FOLDERS and prefix + name not in exclude:
                folders.append(name)
            continue
        if link or name.endswith(".meta.json") or not name.endswith(SUFFIXES):
            continue
        if not _regular(entry):
            odd.append(Skipped(entry.path, NOT_REGULAR))
            continue
        if name.startswith("agent-") and AGENT_FILE.fullmatch(name):
            own.append(entry.path)
        else:
            files.append((entry.path, prefix + name))
    agents += inner + own
    for name in folders:
        _scan(os.path.join(folder, name), prefix + name, exclude, files, agents, odd)


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _regular(entry: os.DirEntry) -> bool:
    """True for a regular file (the entry's type comes with the listing; no system call on Linux)."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _agent_files(folder: str) -> list[str]:
    """The sub-agent files of a ``subagents`` folder, sorted; symlinks not followed."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=_name)
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            link = entry.is_symlink()
        except OSError:
            link = False
        if not link and AGENT_FILE.fullmatch(entry.name) and _regular(entry):
            found.append(entry.path)
    return found


def discover(paths: list[str], *, exclude: list[str] | tuple[str, ...] = (), since: datetime | None = None,
             describe: Callable[[str], tuple[str | None, bool]] = describe_agent) -> Discovery:
    """Sessions and skipped files under ``paths`` (files or folders), see the module docstring.

    ``exclude``: folders never entered (absolute or relative).  ``since``: aware datetime; files last modified
    before it are skipped.  ``describe``: ``describe_agent`` or a memo of it (``cache.Index.agent``).  A path
    that does not exist is listed in ``missing``, one that is neither a folder nor a regular file (nor a
    symlink) in ``not_regular``.  Never raises for bad files, never opens a non-regular one.
    """
    found = Discovery()
    excluded = {os.path.abspath(p) for p in exclude}
    seen: set[str] = set()
    agents: list[str] = []
    older: set[str] = set()  # absolute paths skipped by --since
    for arg in paths:
        if os.path.isfile(arg) or os.path.islink(arg):
            files, explicit = [(arg, os.path.abspath(arg))], True
        elif os.path.isdir(arg):
            files, more, odd = _walk(arg, excluded)
            agents += more
            found.skipped += odd
            explicit = False
        elif os.path.exists(arg):
            found.not_regular.append(arg)
            continue
        else:
            found.missing.append(arg)
            continue
        for path, key in files:
            if key in seen:
                continue
            seen.add(key)
            if explicit and is_agent_file(path):
                agents.append(path)
                continue
            if since is not None and not explicit and _modified_before(path, since):
                found.skipped.append(Skipped(path, f"last modified before --since {since_text(since)}"))
                found.before_since += 1
                older.add(key)
                continue
            found.sessions.append(Candidate(path, explicit=explicit, absolute=key))
    _link_agents(found, agents, describe, older)
    return found


def since_text(since: datetime) -> str:
    """``--since`` for messages: ``YYYY-MM-DD`` at midnight UTC, else ``YYYY-MM-DDTHH:MM:SSZ``."""
    moment = since.astimezone(timezone.utc)
    if (moment.hour, moment.minute, moment.second, moment.microsecond) == (0, 0, 0, 0):
        return moment.date().isoformat()
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _modified_before(path: str, since: datetime) -> bool:
    try:
        return os.stat(path).st_mtime < since.timestamp()
    except OSError:
        return False


def _link_agents(found: Discovery, agents: list[str], describe: Callable[[str], tuple[str | None, bool]],
                 older: set[str]) -> None:
    """Link each sub-agent file to its parent candidate, or list it as skipped (warm-up; parent skipped by
    ``--since``, whose absolute path is in ``older``; parent not in the archive)."""
    by_path = {c.absolute: c for c in found.sessions}
    done: set[str] = set()
    for path in agents:
        key = os.path.abspath(path)
        if key in done:
            continue
        done.add(key)
        parent_path, warmup = describe(path)
        if warmup:
            found.skipped.append(Skipped(path, "warm-up sub-agent file (not a task)"))
            continue
        parent = by_path.get(os.path.abspath(parent_path)) if parent_path else None
        if parent is None and parent_path and os.path.abspath(parent_path) in older:
            found.skipped.append(Skipped(path, "sub-agent file of a session last modified before --since"))
            continue
        if parent is None:
            found.skipped.append(Skipped(path, "sub-agent file whose parent session is not in the archive"))
            continue
        parent.subagents.append(path)
        found.skipped.append(Skipped(path, f"sub-agent file, linked to its parent session {parent.path}"))
