"""``duck-tape init``: the hook configuration that calls ``duck-tape checkpoint``, per harness (issue 6).

Shapes follow each harness's documentation:

* Claude Code (docs.claude.com "Hooks reference"): ``{"hooks": {"PreCompact": [{"matcher": "", "hooks":
  [{"type": "command", "command": …, "timeout": 30}]}]}}`` in ``.claude/settings.local.json`` (personal) or
  ``.claude/settings.json`` (shared, ``--project``); ``""`` matches both triggers (manual, auto);
  ``$CLAUDE_PROJECT_DIR`` is set for hook commands, so the store is pinned to the project root.
* Copilot CLI (docs.github.com "GitHub Copilot hooks reference"): ``.github/hooks/*.json`` =
  ``{"version": 1, "hooks": {"preCompact": [{"type": "command", "bash": …, "powershell": …, "cwd": ".",
  "timeoutSec": 30}]}}``.
* opencode: a plugin file in ``.opencode/plugins/`` (``pipeline.hooks.opencode_plugin``).

``--restore`` (issue 7, Claude Code only) adds, beside the pre-compact hook, a ``SessionStart`` group with the
matcher ``compact`` running ``duck-tape restore --format claude-code``: Claude Code runs ``SessionStart`` hooks
with ``source: "compact"`` right after a compaction (matchers ``startup``, ``resume``, ``clear``, ``compact``), and
adds the ``hookSpecificOutput.additionalContext`` of a hook's JSON stdout to the new context (code.claude.com
"Hooks reference", SessionStart).  Copilot CLI ignores what a ``sessionStart`` hook returns
(github/copilot-cli#2142) and opencode has no post-compaction hook that adds context, so ``--restore`` is refused
for them.

Merging keeps every other key and hook of an existing file; a duck-tape hook already there is recognised by
its command (``… duck-tape checkpoint …``, ``… duck-tape restore …``), left alone when identical (nothing to
write) and updated in place otherwise (its group and matcher kept).  Planning is pure (``plan_install`` reads the
current file only); writing (``apply_plan``) backs the old file up first and writes atomically.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pipeline.errors import InputError
from pipeline.fsutil import atomic_write_text

TIMEOUT_SECONDS = 30
OURS = re.compile(r"(?:^|[\s/\\\"'])duck-tape(?:\.exe)?[\"']?\s+checkpoint\b")
"""A hook command that runs ``duck-tape checkpoint`` (any path to duck-tape, any flags after it)."""
OURS_RESTORE = re.compile(r"(?:^|[\s/\\\"'])duck-tape(?:\.exe)?[\"']?\s+restore\b")
"""A hook command that runs ``duck-tape restore``."""
RESTORE_TIMEOUT_SECONDS = 10
RESTORE_MATCHER = "compact"


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """What ``init`` would do: write ``new_text`` to ``path`` (``old_text`` None: the file is new).

    ``snippet`` is the configuration to show (the hook alone); ``changed`` False means the hook is already
    installed exactly so and nothing would be written.
    """

    harness: str
    path: Path
    old_text: str | None
    new_text: str
    snippet: str

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """Unified diff from the current file (``/dev/null`` when new) to the planned one."""
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        before = str(self.path) if self.old_text is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, fromfile=before, tofile=str(self.path)))


def claude_command(command: str = "duck-tape") -> str:
    """The Claude Code hook command: the store pinned to the project root (``$CLAUDE_PROJECT_DIR``, ``.`` if unset)."""
    return f'{command} checkpoint --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape"'


def claude_group(command: str = "duck-tape") -> dict:
    """One ``PreCompact`` matcher group running the checkpoint."""
    return {"matcher": "", "hooks": [{"type": "command", "command": claude_command(command), "timeout": TIMEOUT_SECONDS}]}


def claude_restore_command(command: str = "duck-tape") -> str:
    """The Claude Code ``SessionStart`` command: the handoff of the project's store as hook JSON."""
    return f'{command} restore --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape" --format claude-code'


def claude_restore_group(command: str = "duck-tape") -> dict:
    """One ``SessionStart`` matcher group (matcher ``compact``: only after a compaction) running the restore."""
    return {"matcher": RESTORE_MATCHER, "hooks": [
        {"type": "command", "command": claude_restore_command(command), "timeout": RESTORE_TIMEOUT_SECONDS}]}


def copilot_entry(command: str = "duck-tape") -> dict:
    """One Copilot CLI ``preCompact`` command hook (bash and PowerShell), run from the repository root."""
    line = f"{command} checkpoint"
    return {"type": "command", "bash": line, "powershell": line, "cwd": ".", "timeoutSec": TIMEOUT_SECONDS}


def _dump(obj: object) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def _load(path: Path, text: str) -> dict:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg}); fix or move it, then run init again",
                         path=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object at the top level", path=str(path))
    return data


def _table(data: dict, key: str, kind: type, path: Path, where: str) -> object:
    value = data.setdefault(key, kind())
    if not isinstance(value, kind):
        raise InputError(f"expected {where}{key!r} to be a JSON {'object' if kind is dict else 'array'}", path=str(path))
    return value


def _merge_claude_event(hooks: dict, event: str, group: dict, ours: re.Pattern, path: Path) -> bool:
    """Put ``group``'s hook into ``hooks[event]``: update our entry in place where one is found (its group and
    matcher left as they are), else append ``group``.  True when something changed."""
    groups = _table(hooks, event, list, path, "hooks.")
    wanted = group["hooks"][0]
    for existing in groups:
        entries = existing.get("hooks") if isinstance(existing, dict) else None
        for n, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and isinstance(entry.get("command"), str) and ours.search(entry["command"]):
                if entry == wanted:
                    return False
                entries[n] = wanted
                return True
    groups.append(group)
    return True


def merge_claude(path: Path, text: str | None, command: str = "duck-tape", *, restore: bool = False) -> str:
    """The settings text with the checkpoint hook added to ``hooks.PreCompact`` (every other key kept), and with
    ``restore`` the restore hook to ``hooks.SessionStart`` (matcher ``compact``).

    Returns ``text`` itself when identical duck-tape hooks are present.  Raises InputError for a file that
    is not a JSON object, or whose ``hooks``/``PreCompact``/``SessionStart`` has the wrong type (names the file
    and line).
    """
    data = _load(path, text or "")
    hooks = _table(data, "hooks", dict, path, "")
    changed = _merge_claude_event(hooks, "PreCompact", claude_group(command), OURS, path)
    if restore:
        changed = _merge_claude_event(hooks, "SessionStart", claude_restore_group(command), OURS_RESTORE, path) or changed
    if not changed and text is not None:
        return text
    return _dump(data)


def merge_copilot(path: Path, text: str | None, command: str = "duck-tape") -> str:
    """The hook file text with the checkpoint in ``hooks.preCompact`` (``version`` 1; other hooks kept)."""
    data = _load(path, text or "")
    data.setdefault("version", 1)
    hooks = _table(data, "hooks", dict, path, "")
    entries = _table(hooks, "preCompact", list, path, "hooks.")
    wanted = copilot_entry(command)
    for n, entry in enumerate(entries):
        line = entry.get("bash") or entry.get("command") if isinstance(entry, dict) else None
        if isinstance(line, str) and OURS.search(line):
            if entry == wanted:
                return text if text is not None else _dump(data)
            entries[n] = wanted
            return _dump(data)
    entries.append(wanted)
    return _dump(data)


def target_path(harness: str, root: Path, *, project: bool = False) -> Path:
    """Where ``init`` writes for ``harness`` in the project folder ``root``.  Raises InputError for an unknown harness."""
    if harness == "claude-code":
        return root / ".claude" / ("settings.json" if project else "settings.local.json")
    if harness == "copilot":
        return root / ".github" / "hooks" / "duck-tape.json"
    if harness == "opencode":
        return root / ".opencode" / "plugins" / "duck-tape.js"
    raise InputError(f"unknown harness {harness!r}: expected claude-code, copilot or opencode")


def plan_install(harness: str, root: Path, *, project: bool = False, command: str = "duck-tape",
                 restore: bool = False) -> InstallPlan:
    """Plan the installation (reads the current file, writes nothing); ``restore`` adds the post-compaction
    restore hook (Claude Code only).  Raises InputError as ``merge_*``, when the target exists but is not a
    regular file, or for ``restore`` with another harness."""
    from pipeline.hooks.opencode_plugin import plugin_source

    if restore and harness != "claude-code":
        raise InputError(f"--restore is only for claude-code: {harness} has no post-compaction hook whose output "
                         "is added to the context (Copilot CLI ignores what sessionStart hooks return)")
    path = target_path(harness, root, project=project)
    if path.exists() and not path.is_file():
        raise InputError("exists but is not a regular file", path=str(path))
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if harness == "claude-code":
        new = merge_claude(path, old, command, restore=restore)
        wanted = {"PreCompact": [claude_group(command)]}
        if restore:
            wanted["SessionStart"] = [claude_restore_group(command)]
        snippet = _dump({"hooks": wanted})
    elif harness == "copilot":
        new = merge_copilot(path, old, command)
        snippet = _dump({"version": 1, "hooks": {"preCompact": [copilot_entry(command)]}})
    else:
        new = snippet = plugin_source(command)
    return InstallPlan(harness, path, old, new, snippet)


def apply_plan(plan: InstallPlan, *, now: datetime | None = None) -> Path | None:
    """Write ``plan`` (nothing when unchanged); return the backup of the old file, or None when there was none.

    The backup is ``<file>.<UTC YYYYMMDD-HHMMSS>.bak`` beside it (a counter is appended if that exists).
    Raises OSError on I/O failure; the old file is intact until the atomic replace.
    """
    if not plan.changed:
        return None
    plan.path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if plan.old_text is not None:
        stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")
        backup = plan.path.with_name(f"{plan.path.name}.{stamp}.bak")
        n = 1
        while backup.exists():
            backup = plan.path.with_name(f"{plan.path.name}.{stamp}.{n}.bak")
            n += 1
        shutil.copy2(plan.path, backup)
    atomic_write_text(plan.path, plan.new_text)
    return backup
