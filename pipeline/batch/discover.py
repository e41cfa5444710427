"""Find the sessions of an archive: transcripts in files and folders, recursively (issue 6, item 1).

Rules (FORMATS.md §1–3 "Location"):

* A file named on the command line is always a candidate.  In a folder, ``*.jsonl`` and ``*.json`` files are
  candidates (Claude Code project folders, Copilot ``session-state/<id>/events.jsonl`` and the legacy
  ``session-state/<id>.jsonl``, opencode exports), except ``*.meta.json``; hidden folders (``.git``,
  ``.duck-tape``…), ``node_modules``, ``__pycache__`` and the harnesses' side folders (Claude Code
  ``tool-results``, Copilot ``checkpoints`` and ``rewind-snapshots``) are not entered, symlinks are not
  followed, and ``exclude`` (the output and cache folders) is skipped.
* Claude Code sub-agent files (``agent-<hex>.jsonl``) are not sessions: each is linked to its parent session
  (``subagents.inspect``) when the parent is a candidate; warm-up files and orphans are skipped with a reason.
* ``since``: a file last modified before it cannot hold a session active since then and is skipped without
  being read (the worker also checks the session's own end time).

What is *in* a file (format, session id, duplicates by content) is decided later, by the runner and worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.batch.subagents import inspect, is_agent_file

SIDE_FOLDERS = frozenset({"node_modules", "__pycache__", "tool-results", "checkpoints", "rewind-snapshots", "subagents"})
"""Folders not walked as sessions (``subagents`` is reached through its parent session instead)."""
SUFFIXES = (".jsonl", ".json")


@dataclass(slots=True)
class Candidate:
    """A session to process: its transcript ``path``, whether it was named on the command line
    (``explicit``), and the sub-agent files linked to it."""

    path: str
    explicit: bool = False
    subagents: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that is not processed as a session, and why (one line)."""

    path: str
    reason: str


@dataclass(slots=True)
class Discovery:
    """``sessions`` in discovery order (sorted paths per argument), ``skipped`` files, ``missing`` arguments."""

    sessions: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _walk(root: str, exclude: set[str]) -> tuple[list[str], list[str]]:
    """(files with a transcript suffix, sub-agent files) under ``root``, sorted; symlinks not followed."""
    files: list[str] = []
    agents: list[str] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        inner = os.path.join(folder, "subagents")  # 2.1.x: <project>/<session id>/subagents/agent-*.jsonl
        if "subagents" in dirs and not os.path.islink(inner):
            agents += sorted(os.path.join(inner, n) for n in os.listdir(inner)
                             if is_agent_file(n) and not os.path.islink(os.path.join(inner, n)))
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in SIDE_FOLDERS and os.path.abspath(os.path.join(folder, d)) not in exclude
        )
        for name in sorted(names):
            if name.endswith(".meta.json") or not name.endswith(SUFFIXES):
                continue
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                (agents if is_agent_file(path) else files).append(path)
    return files, agents


def discover(paths: list[str], *, exclude: list[str] | tuple[str, ...] = (), since: datetime | None = None) -> Discovery:
    """Sessions and skipped files under ``paths`` (files or folders), see the module docstring.

    ``exclude``: folders never entered (absolute or relative).  ``since``: aware datetime; files last modified
    before it are skipped.  A path that does not exist is listed in ``missing``.  Never raises for bad files.
    """
    found = Discovery()
    excluded = {os.path.abspath(p) for p in exclude}
    seen: set[str] = set()
    agents: list[str] = []
    for arg in paths:
        if os.path.isfile(arg) or os.path.islink(arg):
            files, explicit = [arg], True
        elif os.path.isdir(arg):
            files, more = _walk(arg, excluded)
            agents += more
            explicit = False
        else:
            found.missing.append(arg)
            continue
        for path in files:
            key = os.path.abspath(path)
            if key in seen:
                continue
            seen.add(key)
            if explicit and is_agent_file(path):
                agents.append(path)
                continue
            if since is not None and not explicit and _modified_before(path, since):
                found.skipped.append(Skipped(path, f"last modified before --since {since.date().isoformat()}"))
                continue
            found.sessions.append(Candidate(path, explicit=explicit))
    _link_agents(found, agents)
    return found


def _modified_before(path: str, since: datetime) -> bool:
    try:
        return os.stat(path).st_mtime < since.timestamp()
    except OSError:
        return False


def _link_agents(found: Discovery, agents: list[str]) -> None:
    by_path = {os.path.abspath(c.path): c for c in found.sessions}
    done: set[str] = set()
    for path in agents:
        key = os.path.abspath(path)
        if key in done:
            continue
        done.add(key)
        info = inspect(path)
        if info.warmup:
            found.skipped.append(Skipped(path, "warm-up sub-agent file (not a task)"))
            continue
        parent = by_path.get(os.path.abspath(info.parent)) if info.parent else None
        if parent is None:
            found.skipped.append(Skipped(path, "sub-agent file whose parent session is not in the archive"))
            continue
        parent.subagents.append(path)
        found.skipped.append(Skipped(path, f"sub-agent file, linked to its parent session {parent.path}"))
