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
* Gemini CLI and Codex CLI: one module each (``HARNESS_MODULES``: ``install_gemini``, ``install_codex``) with
  ``target_path(root, user=)`` and ``plan(root, command, user=, restore=)``; ``plan_install`` hands them over, and
  they write their own restore hook where the harness runs one after a compaction.

``user`` (``init --user``) is one mechanism for every harness: ``target_path(harness, root, user=True)`` is the
user-level file (the modules' own for Gemini and Codex, ``pipeline.hooks.detect.user_path`` for the others).

``restore`` for Claude Code (issue 7) adds, beside the pre-compact hook, a ``SessionStart`` group with the
matcher ``compact`` running ``duck-tape restore --format claude-code``: Claude Code runs ``SessionStart`` hooks
with ``source: "compact"`` right after a compaction (matchers ``startup``, ``resume``, ``clear``, ``compact``), and
adds the ``hookSpecificOutput.additionalContext`` of a hook's JSON stdout to the new context (code.claude.com
"Hooks reference", SessionStart).  Copilot CLI ignores what a ``sessionStart`` hook returns
(github/copilot-cli#2142) and opencode has no post-compaction hook that adds context (its plugin hands the handoff
to the compaction itself), so ``--restore`` is refused for them.

Merging keeps every other key and hook of an existing file; a duck-tape hook already there is recognised by
its command (``… duck-tape checkpoint …``, ``… duck-tape restore …``), left alone when identical (nothing to
write) and updated in place otherwise (its group and matcher kept).  Planning is pure (``plan_install`` reads the
current file only); writing (``apply_plan``) backs the old file up first and writes atomically.

``--command`` is read as POSIX shell words (``parse_hook_command``): a value the shell cannot split (an unbalanced
quote), an empty one, one of several lines or one whose ``#`` would comment out the rest of the hook line is refused
(InputError, exit 2); a value that is itself the path of an existing file (``/opt/x dir/duck-tape``) is one word,
quoted for the shell.  Each harness gets the words the way it runs them: Claude Code's ``command`` and Copilot's
``bash`` are shell lines (the text as given, or the quoted path); Copilot's ``powershell`` is the same line when
no quoting was used, else rebuilt from the words in PowerShell's quoting (``& 'C:\\x dir\\duck-tape.exe' checkpoint``);
opencode's plugin gets the word list (run with ``execFile``: each word one argument, no shell expansion, see
``pipeline.hooks.opencode_plugin``).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
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
HARNESS_MODULES = {"gemini": "pipeline.hooks.install_gemini", "codex": "pipeline.hooks.install_codex"}
"""Harnesses installed by a module of their own (each has ``target_path`` and ``plan``)."""
HARNESSES = ("claude-code", "copilot", "opencode", *HARNESS_MODULES)
"""Harnesses with an installer here (``--user`` works for each: ``target_path(…, user=True)``)."""


def harness_module(harness: str):
    """The install module of a harness in ``HARNESS_MODULES`` (imported on use), else None."""
    import importlib

    name = HARNESS_MODULES.get(harness)
    return importlib.import_module(name) if name else None


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
    notes: tuple[str, ...] = ()
    """What the user must know beyond the diff (a setting that turns hooks off, a trust prompt)."""

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """Unified diff from the current file (``/dev/null`` when new) to the planned one."""
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        before = str(self.path) if self.old_text is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, fromfile=before, tofile=str(self.path)))


def _starts_comment(text: str) -> bool:
    """True when ``text`` has a ``#`` at the start of an unquoted word: sh ignores the rest of the line from there
    (POSIX "Token Recognition"; a ``#`` inside a word, ``a#b``, is not a comment)."""
    quote, escaped, boundary = "", False, True
    for c in text:
        if escaped:
            escaped = False
        elif quote:
            escaped = c == "\\" and quote == '"'
            quote = "" if c == quote else quote
        elif c == "\\":
            escaped = True
        elif c in "'\"":
            quote = c
        elif c.isspace():
            boundary = True
            continue
        elif c == "#" and boundary:
            return True
        boundary = False
    return False


_POWERSHELL_BARE = re.compile(r"[\w./:\\=+-]+")
"""A word PowerShell passes to a program as it is, unquoted."""


@dataclass(frozen=True, slots=True)
class HookCommand:
    """How a hook calls duck-tape: ``shell`` is the POSIX shell text (Claude Code ``command``, Copilot ``bash``),
    ``argv`` the same as words (opencode's plugin, Copilot ``powershell``); ``quoted`` True when ``shell`` has
    quotes or backslashes, so a PowerShell line must be rebuilt from ``argv``."""

    shell: str
    argv: tuple[str, ...]
    quoted: bool = False

    @classmethod
    def from_words(cls, text: str) -> HookCommand:
        """Read ``text`` as shell words (no file system look-up).  Raises InputError, naming ``--command``, for text
        the shell cannot split (unbalanced quote, a trailing backslash), an empty one, one with a line break or NUL,
        or one whose unquoted ``#`` would turn the rest of the hook line (``checkpoint --dir …``) into a comment."""
        if any(c in text for c in "\n\r\0"):
            raise InputError(f"--command {text!r}: expected one line of shell words, not several")
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise InputError(f"--command {text!r}: the shell cannot split it into words ({exc}); expected a "
                             "command line with balanced quotes, e.g. --command \"'/opt/my tools/duck-tape'\"") from None
        if not argv:
            raise InputError("--command is empty: expected the program that runs duck-tape, e.g. --command duck-tape")
        if _starts_comment(text):
            raise InputError(f"--command {text!r}: an unquoted # starts a shell comment, which would drop the "
                             "'checkpoint' after it; quote the word that has the #")
        return cls(text, tuple(argv), quoted=any(c in text for c in "'\"\\"))

    @property
    def powershell(self) -> str:
        """The line for PowerShell: ``shell`` itself when no quoting was used, else the words in PowerShell's
        single quotes (``'`` doubled), with the call operator ``&`` when the program itself is quoted."""
        if not self.quoted:
            return self.shell
        words = [w if _POWERSHELL_BARE.fullmatch(w) else "'" + re.sub("(['\u2018\u2019\u201a\u201b])", r"\1\1", w) + "'"
                 for w in self.argv]
        return ("& " if words[0] != self.argv[0] else "") + " ".join(words)


def _is_path(word: str) -> bool:
    return "/" in word or os.sep in word or bool(os.altsep and os.altsep in word)


def _resolve(word: str, root: Path, *, expand: bool = True) -> Path:
    """``word`` as a path: ``~`` and ``$VAR`` expanded as the shell would (unless not ``expand``), relative to ``root``."""
    path = Path(os.path.expandvars(os.path.expanduser(word)) if expand else word)
    return path if path.is_absolute() else root / path


def parse_hook_command(value: str, root: Path = Path(".")) -> HookCommand:
    """Read ``--command``: when the whole ``value`` is the path of an existing file (relative paths from ``root``,
    the project folder, where the hooks run) it is one word, quoted for the shell (``shlex.quote``: ``/opt/x
    dir/duck-tape`` → ``'/opt/x dir/duck-tape'``; the value is taken literally, no ``~`` or ``$VAR``, since quoting
    stops the shell from expanding them); otherwise it is shell words (``HookCommand.from_words``, whose
    InputError it raises: exit 2)."""
    if (value.strip() and _is_path(value) and not any(c in value for c in "\n\r\0")
            and _resolve(value, root, expand=False).is_file()):
        quoted = shlex.quote(value)
        return HookCommand(quoted, (value,), quoted=quoted != value)
    return HookCommand.from_words(value)


_NOT_LITERAL = re.compile(r"[$`;&|<>()*?]|^~")


def command_notes(command: HookCommand, root: Path, harness: str) -> list[str]:
    """Warnings (not errors) about ``command`` for the user of ``init``: its program (first word; ``~`` and
    ``$VAR`` expanded, relative paths from ``root``) does not exist, is not executable, or, for a bare name, is not
    on this PATH (``shutil.which``); for opencode, words a shell would expand are passed literally."""
    notes = []
    program = command.argv[0]
    if _is_path(program):
        path = _resolve(program, root)
        where = "" if _resolve(program, Path()).is_absolute() else f" (from --root {root}, where the hook runs)"
        if not path.is_file():
            split = len(command.argv) > 1 and not command.quoted
            notes.append(f"{program!r} does not exist{where}" + (
                "; --command is split into shell words: if it is one path with spaces, quote it, e.g. "
                f"--command \"{shlex.quote(command.shell.strip())}\"" if split else ""))
        elif not os.access(path, os.X_OK):
            notes.append(f"{program!r} is not executable{where}; the hook cannot run it")
    elif shutil.which(program) is None:
        notes.append(f"{program!r} is not on PATH here; pass --command with the full path to duck-tape if the "
                     "harness will not find it either")
    literal = [w for w in command.argv if _NOT_LITERAL.search(w)]
    if harness == "opencode" and literal:
        notes.append(f"the opencode plugin runs {command.argv[0]!r} without a shell (each word passed as it is), so "
                     f"{', '.join(map(repr, literal))} will not be expanded; give the expanded words instead")
    return notes


def _shell(command: str | HookCommand) -> str:
    return command.shell if isinstance(command, HookCommand) else command


def claude_command(command: str | HookCommand = "duck-tape") -> str:
    """The Claude Code hook command: the store pinned to the project root (``$CLAUDE_PROJECT_DIR``, ``.`` if unset).
    A ``str`` command is shell text used as it is."""
    return f'{_shell(command)} checkpoint --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape"'


def claude_group(command: str | HookCommand = "duck-tape") -> dict:
    """One ``PreCompact`` matcher group running the checkpoint."""
    return {"matcher": "", "hooks": [{"type": "command", "command": claude_command(command), "timeout": TIMEOUT_SECONDS}]}


def claude_restore_command(command: str | HookCommand = "duck-tape") -> str:
    """The Claude Code ``SessionStart`` command: the handoff of the project's store as hook JSON."""
    return f'{_shell(command)} restore --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape" --format claude-code'


def claude_restore_group(command: str | HookCommand = "duck-tape") -> dict:
    """One ``SessionStart`` matcher group (matcher ``compact``: only after a compaction) running the restore."""
    return {"matcher": RESTORE_MATCHER, "hooks": [
        {"type": "command", "command": claude_restore_command(command), "timeout": RESTORE_TIMEOUT_SECONDS}]}


def copilot_entry(command: str | HookCommand = "duck-tape") -> dict:
    """One Copilot CLI ``preCompact`` command hook, run from the repository root: ``bash`` the shell text,
    ``powershell`` the same words in PowerShell's quoting (``HookCommand.powershell``).  A ``str`` command is
    read as shell words (InputError when it cannot be split)."""
    hook = command if isinstance(command, HookCommand) else HookCommand.from_words(command)
    return {"type": "command", "bash": f"{hook.shell} checkpoint", "powershell": f"{hook.powershell} checkpoint",
            "cwd": ".", "timeoutSec": TIMEOUT_SECONDS}


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


def merge_claude(path: Path, text: str | None, command: str | HookCommand = "duck-tape", *,
                 restore: bool = False, nudge: bool = False) -> str:
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
    if nudge:  # issue 17: the Stop hook (pipeline.hooks.nudge_install)
        from pipeline.hooks.nudge_install import OURS_NUDGE, claude_nudge_group

        changed = _merge_claude_event(hooks, "Stop", claude_nudge_group(_shell(command)), OURS_NUDGE, path) or changed
    if not changed and text is not None:
        return text
    return _dump(data)


def merge_copilot(path: Path, text: str | None, command: str | HookCommand = "duck-tape") -> str:
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


def target_path(harness: str, root: Path, *, project: bool = False, user: bool = False, env=None) -> Path:
    """Where ``init`` writes for ``harness`` in the project folder ``root``; with ``user`` the user's own file
    instead (every project): Gemini and Codex from their modules (``$GEMINI_CLI_HOME``, ``$CODEX_HOME``), the others
    from the registry (``pipeline.hooks.detect.user_path``, read from ``env``, default ``os.environ``).  Raises
    InputError for an unknown harness."""
    module = harness_module(harness)
    if module is not None:
        return module.target_path(root, user=user)
    if harness not in HARNESSES:
        raise InputError(f"unknown harness {harness!r}: expected one of {', '.join(HARNESSES)}")
    if user:
        from pipeline.hooks.detect import user_path

        return user_path(harness, env)
    if harness == "claude-code":
        return root / ".claude" / ("settings.json" if project else "settings.local.json")
    if harness == "copilot":
        return root / ".github" / "hooks" / "duck-tape.json"
    return root / ".opencode" / "plugins" / "duck-tape.js"


def plan_install(harness: str, root: Path, *, project: bool = False, command: str | HookCommand = "duck-tape",
                 restore: bool | None = None, nudge: bool = False, user: bool = False) -> InstallPlan:
    """Plan the installation (reads the current file, writes nothing); a ``str`` command goes through
    ``parse_hook_command``; ``user`` plans the user-level file (``target_path(…, user=True)``) instead of the
    project's.  ``restore``: the post-compaction restore hook; None is the installer's own default (off for Claude
    Code here, ``init`` turns it on; Gemini and Codex write theirs where the harness can run it, ``False`` leaves it
    out).  ``nudge``: the Claude Code Stop hook.  Raises InputError as ``merge_*`` and ``parse_hook_command``, when
    ``root`` is not an existing directory (init never creates the project folder: a misspelt --root must not become
    a new folder), when the target exists but is not a regular file, for ``restore`` with Copilot or opencode, or
    ``nudge`` with another harness than Claude Code."""
    from pipeline.hooks.opencode_plugin import installed_api, plugin_source

    if nudge and harness != "claude-code":
        raise InputError(f"--nudge is only for claude-code for now: {harness} has no after-each-turn hook here")
    if restore and harness in ("copilot", "opencode"):
        raise InputError(f"--restore is only for claude-code, gemini and codex: {harness} has no post-compaction hook "
                         "whose output is added to the context (Copilot CLI ignores what sessionStart hooks return)")
    if not root.is_dir():
        raise InputError(f"--root {root}: {'not a directory' if root.exists() else 'no such directory'} (init installs "
                         "into an existing project folder and does not create it; check the spelling)")
    if not isinstance(command, HookCommand):
        command = parse_hook_command(command, root)
    module = harness_module(harness)
    if module is not None:
        return module.plan(root, command, user=user, restore=restore is not False)
    restore = bool(restore)
    path = target_path(harness, root, project=project, user=user)
    if path.exists() and not path.is_file():
        raise InputError("exists but is not a regular file", path=str(path))
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if harness == "claude-code":
        new = merge_claude(path, old, command, restore=restore, nudge=nudge)
        wanted = {"PreCompact": [claude_group(command)]}
        if restore:
            wanted["SessionStart"] = [claude_restore_group(command)]
        if nudge:
            from pipeline.hooks.nudge_install import claude_nudge_group

            wanted["Stop"] = [claude_nudge_group(_shell(command))]
        snippet = _dump({"hooks": wanted})
    elif harness == "copilot":
        new = merge_copilot(path, old, command)
        snippet = _dump({"version": 1, "hooks": {"preCompact": [copilot_entry(command)]}})
    else:
        # the words, as plugin_source splits them back; the plugin API of the installed opencode (1.x or 2.x)
        new = snippet = plugin_source(shlex.join(command.argv), api=installed_api())
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
