"""Find a session's transcript by session id in the harness's own folders (FORMATS.md §1–3 "Location").

Used by the checkpoint when the hook payload's transcript path is empty or stale (the harness named a file
that does not exist, or a file of another session).  Where each harness keeps a session:

* Claude Code: ``<config>/projects/<cwd with / \\ : replaced by ->/<session id>.jsonl`` (newer versions
  replace every non-alphanumeric character), ``<config>`` = ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``;
* Copilot CLI: ``<home>/session-state/<session id>/events.jsonl`` (1.0) or ``<home>/session-state/<session
  id>.jsonl`` (legacy), ``<home>`` = ``$COPILOT_HOME`` or ``~/.copilot``;
* opencode: the snapshot the duck-tape plugin writes, ``<store>/opencode/<session id>.json``;
* Codex CLI: ``<home>/sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl`` (and
  ``<home>/archived_sessions/``), ``<home>`` = ``$CODEX_HOME`` or ``~/.codex``; its payload's ``transcript_path``
  may be null (codex-rs ``pre-compact.command.input.schema.json``);
* Gemini CLI: ``<home>/.gemini/tmp/<project>/chats/session-<time>-<first 8 characters of the id>.jsonl`` (``.json``
  before the JSONL form), ``<home>`` = ``$GEMINI_CLI_HOME`` or the home folder (gemini-cli
  ``chatRecordingService``); the newest such file wins, since 8 characters may repeat.

A session id is only used in a path when it is a plain name (letters, digits, ``._-``; not ``.``/``..``),
so a crafted payload cannot point the lookup outside these folders.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
#: Copilot CLI <= 0.0.341: ``history-session-state/session_<session id>_<start epoch ms>.json``
_COPILOT_HISTORY = re.compile(r"session_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_\d+",
                              re.IGNORECASE)
OPENCODE_SNAPSHOTS = "opencode"
"""Folder inside the store where the opencode plugin writes session snapshots."""


def safe_session_id(session_id: str | None) -> str | None:
    """``session_id`` when it is safe to use as a file name (see module docstring), else None."""
    if session_id and _SAFE_ID.fullmatch(session_id) and ".." not in session_id:
        return session_id
    return None


def claude_config_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def copilot_home() -> Path:
    """``$COPILOT_HOME`` or ``~/.copilot``."""
    return Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot")


def codex_home() -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def gemini_dir() -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini``."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def _newest(paths: list[Path]) -> Path | None:
    files = [p for p in paths if p.is_file() and not p.is_symlink()]
    return max(files, key=lambda p: (p.stat().st_mtime, p.name)) if files else None


def find_codex_rollout(session_id: str) -> Path | None:
    """The Codex rollout of ``session_id`` (``rollout-*-<id>.jsonl`` under ``sessions/YYYY/MM/DD`` or
    ``archived_sessions``), the newest when several match; None when none does or the id is unsafe."""
    sid = safe_session_id(session_id)
    if sid is None:
        return None
    home = codex_home()
    pattern = f"rollout-*-{sid}.jsonl"
    return _newest([*home.glob(f"sessions/*/*/*/{pattern}"), *home.glob(f"archived_sessions/{pattern}")])


def find_gemini_session(session_id: str) -> Path | None:
    """The Gemini CLI session file of ``session_id`` (``tmp/*/chats/session-*-<id[:8]>.json[l]``), the newest
    when several match; None when none does or the id is unsafe."""
    sid = safe_session_id(session_id)
    if sid is None or len(sid) < 8:
        return None
    chats = gemini_dir() / "tmp"
    return _newest([*chats.glob(f"*/chats/session-*-{sid[:8]}.jsonl"), *chats.glob(f"*/chats/session-*-{sid[:8]}.json")])


def claude_project_dirnames(cwd: str) -> list[str]:
    """Project folder names Claude Code uses for ``cwd``: ``/``, ``\\`` and ``:`` replaced by ``-`` (FORMATS.md
    §1), and every non-alphanumeric character replaced (newer versions); duplicates removed."""
    names = [re.sub(r"[/\\:]", "-", cwd), re.sub(r"[^A-Za-z0-9]", "-", cwd)]
    return list(dict.fromkeys(n for n in names if n.strip("-")))


def session_of_path(path: str) -> str | None:
    """The session id a transcript path names, when its name is one (``<uuid>.jsonl``, ``<uuid>/events.jsonl``,
    ``ses_….json``, Copilot CLI's legacy ``session_<uuid>_<start ms>.json``); None for other names (fixtures,
    copies)."""
    p = Path(path)
    stem = p.parent.name if p.name == "events.jsonl" else p.stem
    if _UUID.fullmatch(stem) or stem.startswith("ses_"):
        return stem
    legacy = _COPILOT_HISTORY.fullmatch(stem)
    return legacy.group(1) if legacy else None


def is_stale(path: str | None, session_id: str | None) -> bool:
    """True when ``path`` cannot be the session's transcript: empty, missing (a dangling symlink counts as
    present, so that it is refused by name later), or naming another session id than ``session_id``."""
    if not path:
        return True
    if not os.path.lexists(path):
        return True
    named = session_of_path(path)
    return bool(session_id and named and named != session_id)


def subagent_transcript(parent: str, agent_id: str | None) -> Path | None:
    """The transcript of sub-agent ``agent_id`` beside the parent transcript ``parent`` (Claude Code 2.1.x:
    ``<project>/<session>.jsonl`` -> ``<project>/<session>/subagents/agent-<id>.jsonl``; an id already starting
    with ``agent-`` is taken as the file stem).  None when the id is unsafe or no such regular file exists."""
    aid = safe_session_id(agent_id)
    if aid is None or not parent:
        return None
    stem = aid if aid.startswith("agent-") else f"agent-{aid}"
    base = Path(parent)
    path = base.parent / base.stem / "subagents" / f"{stem}.jsonl"
    try:
        if path.is_file() and not path.is_symlink():
            return path
    except OSError:
        return None
    return None


def candidates(session_id: str, *, harness: str | None = None, cwd: str | None = None,
               hint: str | None = None, store: Path | None = None) -> list[Path]:
    """Paths where the transcript of ``session_id`` may be, most likely first (not checked for existence).

    ``harness`` orders the harness folders (unknown: Claude Code, Copilot, opencode); ``cwd`` names the
    Claude Code project folder; ``hint`` (the stale path) adds its own folder; ``store`` adds the opencode
    snapshot folder.  Returns [] for an unsafe ``session_id``.
    """
    sid = safe_session_id(session_id)
    if sid is None:
        return []
    claude: list[Path] = []
    if hint:
        claude.append(Path(hint).parent / f"{sid}.jsonl")
    projects = claude_config_dir() / "projects"
    for name in claude_project_dirnames(cwd) if cwd else []:
        claude.append(projects / name / f"{sid}.jsonl")
    copilot = [copilot_home() / "session-state" / sid / "events.jsonl", copilot_home() / "session-state" / f"{sid}.jsonl"]
    opencode = [store / OPENCODE_SNAPSHOTS / f"{sid}.json"] if store is not None else []
    order = {"copilot": copilot + opencode + claude, "opencode": opencode + claude + copilot}
    found = order.get(harness or "", claude + copilot + opencode)
    return list(dict.fromkeys(found))


def find_transcript(session_id: str | None, *, harness: str | None = None, cwd: str | None = None,
                    hint: str | None = None, store: Path | None = None) -> Path | None:
    """Codex and Gemini CLI sessions: ``find_codex_rollout`` / ``find_gemini_session``.  Others: the first existing
    regular file among ``candidates(...)``; then any Claude Code project folder holding
    ``<session id>.jsonl`` (one directory listing of ``<config>/projects``).  None when nothing is found or
    the id is unsafe.  Never raises.
    """
    sid = safe_session_id(session_id)
    if sid is None:
        return None
    try:
        if harness in ("codex", "gemini"):
            return (find_codex_rollout if harness == "codex" else find_gemini_session)(sid)
        for path in candidates(sid, harness=harness, cwd=cwd, hint=hint, store=store):
            if path.is_file() and not path.is_symlink():
                return path
        projects = claude_config_dir() / "projects"
        if harness in (None, "claude-code") and projects.is_dir():
            for entry in sorted(os.scandir(projects), key=lambda e: e.name):
                path = Path(entry.path) / f"{sid}.jsonl"
                if entry.is_dir(follow_symlinks=False) and path.is_file() and not path.is_symlink():
                    return path
    except OSError:
        return None
    return None
