"""``duck-tape init --harness codex``: Codex CLI's ``hooks.json``.

Shapes from openai/codex (``codex-rs/hooks``: ``schema/generated/*.schema.json``, ``events/compact.rs``,
``events/session_start.rs``, ``engine/discovery.rs``; developers.openai.com/codex/hooks):

* ``{"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": …, "timeout": <seconds>,
  "statusMessage": …}]}], "SessionStart": [{"matcher": "compact", "hooks": […]}]}}`` in ``<project>/.codex/hooks.json``
  or, with ``--user``, ``$CODEX_HOME/hooks.json`` (``~/.codex``).  A ``PreCompact`` group without a matcher runs
  for both triggers (``manual``, ``auto``); ``SessionStart`` runs with ``source: "compact"`` after a compaction and
  adds ``hookSpecificOutput.additionalContext`` of its JSON stdout to the next model turn.
* Hooks run in the session's ``cwd``, so the store is ``.duck-tape`` there (the checkpoint's and restore's default).
  ``PreCompact`` stdout that does not look like JSON is ignored, so the checkpoint's status line is harmless.
* Codex runs a non-managed hook only after the user reviewed and trusted its exact definition (``/hooks``), and
  project hooks only when the project's ``.codex/`` layer is trusted; ``[features] hooks = false`` in
  ``config.toml`` turns hooks off.  ``notes`` says so.
"""

from __future__ import annotations

import os
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

TIMEOUT_SECONDS = 30
RESTORE_TIMEOUT_SECONDS = 10
RESTORE_MATCHER = "compact"


def codex_home() -> Path:
    """``$CODEX_HOME`` or ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def target_path(root: Path, *, user: bool = False) -> Path:
    """``<root>/.codex/hooks.json``, or ``$CODEX_HOME/hooks.json`` with ``user``."""
    return (codex_home() if user else root / ".codex") / "hooks.json"


def checkpoint_group(command: str | HookCommand = "duck-tape") -> dict:
    """The ``PreCompact`` group (no matcher: manual and auto) running the checkpoint."""
    return {"hooks": [{"type": "command", "command": f"{_shell(command)} checkpoint", "timeout": TIMEOUT_SECONDS,
                       "statusMessage": "duck-tape: saving the session state"}]}


def restore_group(command: str | HookCommand = "duck-tape") -> dict:
    """The ``SessionStart`` group (matcher ``compact``) printing the handoff as Codex hook JSON."""
    return {"matcher": RESTORE_MATCHER, "hooks": [
        {"type": "command", "command": f"{_shell(command)} restore --format codex", "timeout": RESTORE_TIMEOUT_SECONDS,
         "statusMessage": "duck-tape: restoring the session state"}]}


def merge(path: Path, text: str | None, command: str | HookCommand = "duck-tape", *, restore: bool = True) -> str:
    """The hooks file text with the checkpoint in ``hooks.PreCompact`` and (``restore``) the restore in
    ``hooks.SessionStart`` (every other key and hook kept; ours updated in place).  ``text`` itself when nothing changes.  Raises
    InputError for a file that is not a JSON object or whose tables have the wrong type."""
    data = _load(path, text or "")
    hooks = _table(data, "hooks", dict, path, "")
    changed = _merge_claude_event(hooks, "PreCompact", checkpoint_group(command), OURS, path)
    if restore:
        changed = _merge_claude_event(hooks, "SessionStart", restore_group(command), OURS_RESTORE, path) or changed
    if not changed and text is not None:
        return text
    return _dump(data)


def hooks_feature_off(config: Path) -> bool:
    """True when ``config`` (a ``config.toml``) sets ``[features] hooks = false`` (or the older ``codex_hooks``).
    An unreadable or invalid file counts as not turning them off."""
    import tomllib

    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    features = data.get("features")
    return isinstance(features, dict) and any(features.get(k) is False for k in ("hooks", "codex_hooks"))


def plan(root: Path, command: HookCommand, *, user: bool = False, restore: bool = True) -> InstallPlan:
    """Plan the Codex installation (reads the hooks file, writes nothing); ``restore`` False leaves the
    ``SessionStart`` restore out (``init --no-restore``).  The notes say Codex asks the user to trust the hooks, and when a ``config.toml`` turns hooks off.  Raises InputError as ``merge`` and for a target
    that is not a regular file."""
    path = target_path(root, user=user)
    if path.exists() and not path.is_file():
        raise InputError("exists but is not a regular file", path=str(path))
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    new = merge(path, old, command, restore=restore)
    wanted: dict = {"PreCompact": [checkpoint_group(command)]}
    if restore:
        wanted["SessionStart"] = [restore_group(command)]
    snippet = _dump({"hooks": wanted})
    notes = ["Codex runs hooks that are not managed by an admin only after you review and trust them: open /hooks "
             f"in Codex and trust the duck-tape hook{'s' if restore else ''} (again after any change to them)"]
    if not user:
        notes.append("project hooks load only when this project's .codex/ folder is trusted in Codex; use --user "
                     "to install them for every project")
    for config in dict.fromkeys([path.parent / "config.toml", codex_home() / "config.toml"]):
        if hooks_feature_off(config):
            notes.append(f"{config} turns hooks off ([features] hooks = false); remove that line or Codex will not "
                         "run them")
    return InstallPlan("codex", path, old, new, snippet, tuple(notes))
