"""``duck-tape init --harness gemini``: the ``hooks`` object of Gemini CLI's ``settings.json``.

Shapes from gemini-cli (``docs/hooks/reference.md``, ``packages/cli/src/config/settingsSchema.ts``,
``packages/core/src/hooks/``), checked against its 0.56 sources:

* ``{"hooks": {"PreCompress": [{"matcher": "*", "hooks": [{"type": "command", "command": …, "name": …,
  "timeout": <milliseconds>}]}]}}`` in ``<project>/.gemini/settings.json`` or, with ``--user``,
  ``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME`` replaces the home folder).  ``PreCompress`` fires before Gemini
  summarises the history, with ``trigger`` ``auto``/``manual``; it cannot block the compression.
* A hook runs in the session's ``cwd`` with ``$GEMINI_PROJECT_DIR`` (and ``$CLAUDE_PROJECT_DIR``) set to it, so
  the store is pinned to ``${GEMINI_PROJECT_DIR:-.}/.duck-tape``.  Its stdout must be JSON only (the checkpoint
  prints one JSON object for a Gemini payload, ``pipeline.hooks.checkpoint.hook_main``).
* ``SessionStart`` sources are ``startup``, ``resume`` and ``clear``: no version so far runs it after a
  compression, so the restore hook is installed only when the installed Gemini CLI declares a further source
  naming a compression (``compress_source``); otherwise ``init`` says so and points to ``duck-tape resume``.
* Hooks run when ``hooksConfig.enabled`` is true (the default; 0.2x versions also had ``tools.enableHooks`` and
  ``hooks.enabled``), and project hooks only in a trusted folder: ``notes`` says when a settings file turns them off.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from pipeline.errors import InputError
from pipeline.hooks.install import (
    OURS,
    OURS_RESTORE,
    HookCommand,
    InstallPlan,
    _dump,
    _load,
    _merge_claude_event,
    _shell,
    _table,
)

TIMEOUT_MS = 30_000
RESTORE_TIMEOUT_MS = 10_000
EVENT = "PreCompress"
KNOWN_SOURCES = frozenset({"startup", "resume", "clear"})
STORE = '"${GEMINI_PROJECT_DIR:-.}/.duck-tape"'
_ENUM_VALUE = re.compile(r'SessionStartSource\w*\["\w+"\]\s*=\s*"(\w+)"')
"""A member of the compiled ``SessionStartSource`` enum (tsc: ``SessionStartSource["Startup"] = "startup"``;
a bundler may rename it ``SessionStartSource2``)."""
MAX_SCAN_BYTES = 64 * 1024 * 1024


def gemini_home() -> Path:
    """``$GEMINI_CLI_HOME`` or the home folder (Gemini keeps ``.gemini/`` there)."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())


def target_path(root: Path, *, user: bool = False) -> Path:
    """``<root>/.gemini/settings.json``, or the user's ``~/.gemini/settings.json`` with ``user``."""
    return (gemini_home() if user else root) / ".gemini" / "settings.json"


def checkpoint_entry(command: str | HookCommand = "duck-tape") -> dict:
    """The ``PreCompress`` command hook: the checkpoint into the project's store."""
    return {"type": "command", "name": "duck-tape checkpoint", "command": f"{_shell(command)} checkpoint --dir {STORE}",
            "timeout": TIMEOUT_MS}


def restore_entry(command: str | HookCommand = "duck-tape") -> dict:
    """The ``SessionStart`` command hook: the handoff as Gemini hook JSON."""
    return {"type": "command", "name": "duck-tape restore",
            "command": f"{_shell(command)} restore --dir {STORE} --format gemini", "timeout": RESTORE_TIMEOUT_MS}


def _core_types(program: str | None) -> list[Path]:
    """Files of the Gemini CLI installed as ``program`` that hold the compiled ``SessionStartSource`` enum: the
    program itself when it is the npm bundle (``bundle/gemini.js``), else ``hooks/types.js`` of the
    ``@google/gemini-cli-core`` package beside or inside it."""
    if not program:
        return []
    real = Path(os.path.realpath(program))
    found: list[Path] = [real] if real.suffix in (".js", ".mjs", ".cjs") else []
    for parent in list(real.parents)[:6]:
        for base in (parent / "node_modules" / "@google" / "gemini-cli-core", parent / "gemini-cli-core",
                     parent / "packages" / "core"):
            path = base / "dist" / "src" / "hooks" / "types.js"
            if path.is_file():
                found.append(path)
    return list(dict.fromkeys(found))


def compress_source(program: str | None = None) -> str | None:
    """The ``SessionStart`` source the installed Gemini CLI sends after a compression, if it declares one.

    Reads the compiled ``SessionStartSource`` enum of the package behind ``program`` (default: ``gemini`` on
    PATH) and returns a value beyond ``startup``/``resume``/``clear`` that names a compression (``compress``,
    ``compact``…); None when there is none, Gemini is not installed, or its files cannot be read.
    """
    for path in _core_types(program or shutil.which("gemini")):
        try:
            if path.stat().st_size > MAX_SCAN_BYTES:
                continue
            values = _ENUM_VALUE.findall(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        for value in values:
            if value not in KNOWN_SOURCES and value.lower().startswith(("compress", "compact")):
                return value
    return None


def hooks_disabled(data: dict) -> str | None:
    """Which setting of a parsed ``settings.json`` turns hooks off (``hooksConfig.enabled`` false, or the older
    ``tools.enableHooks`` / ``hooks.enabled`` false), else None."""
    for section, key in (("hooksConfig", "enabled"), ("tools", "enableHooks"), ("hooks", "enabled")):
        table = data.get(section)
        if isinstance(table, dict) and table.get(key) is False:
            return f"{section}.{key}"
    return None


def merge(path: Path, text: str | None, command: str | HookCommand = "duck-tape", *, source: str | None = None) -> str:
    """The settings text with the checkpoint in ``hooks.PreCompress`` (every other key and hook kept) and, when
    ``source`` is given, the restore in ``hooks.SessionStart`` with that matcher.  ``text`` itself when nothing
    changes.  Raises InputError for a file that is not a JSON object or whose ``hooks`` tables have the wrong type."""
    data = _load(path, text or "")
    hooks = _table(data, "hooks", dict, path, "")
    changed = _merge_claude_event(hooks, EVENT, {"matcher": "*", "hooks": [checkpoint_entry(command)]}, OURS, path)
    if source:
        group = {"matcher": source, "hooks": [restore_entry(command)]}
        changed = _merge_claude_event(hooks, "SessionStart", group, OURS_RESTORE, path) or changed
    if not changed and text is not None:
        return text
    return _dump(data)


def plan(root: Path, command: HookCommand, *, user: bool = False, program: str | None = None,
         restore: bool = True) -> InstallPlan:
    """Plan the Gemini installation (reads the settings file, writes nothing).  ``program``: the ``gemini`` whose
    package tells whether a restore hook can run (default: the one on PATH); ``restore`` False never adds it
    (``init --no-restore``).  The plan's notes say when hooks are
    disabled and why no restore hook is installed.  Raises InputError as ``merge`` and for a target that is not a
    regular file."""
    path = target_path(root, user=user)
    if path.exists() and not path.is_file():
        raise InputError("exists but is not a regular file", path=str(path))
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    source = compress_source(program) if restore else None
    new = merge(path, old, command, source=source)
    wanted: dict = {EVENT: [{"matcher": "*", "hooks": [checkpoint_entry(command)]}]}
    notes = []
    if source:
        wanted["SessionStart"] = [{"matcher": source, "hooks": [restore_entry(command)]}]
    elif restore:
        notes.append("Gemini CLI runs SessionStart hooks only on startup, resume and clear, not after a compression, "
                     "so no restore hook is installed; after Gemini compresses, run `duck-tape resume` (or ask the "
                     "agent to) to bring the saved state back")
    for settings in dict.fromkeys([path, target_path(root, user=True)]):
        try:
            data = _load(settings, settings.read_text(encoding="utf-8")) if settings.is_file() else {}
        except (InputError, OSError):
            continue
        off = hooks_disabled(data)
        if off:
            notes.append(f"hooks are turned off in {settings} ({off}: false); set \"hooksConfig\": "
                         "{\"enabled\": true} there, or Gemini will not run the checkpoint")
    if not user:
        notes.append("Gemini CLI runs project hooks only in a trusted folder (and warns once about new ones); "
                     "trust this folder, or install for every project with --user")
    return InstallPlan("gemini", path, old, new, _dump({"hooks": wanted}), tuple(notes))
