"""Which agent harnesses are in use here, and where their user-level settings live (``duck-tape init``, issue 15).

One registry, ``HARNESSES``: a harness is one ``Harness`` line naming the folders that show it is in use (in the
project, in the home folder), the file ``init --user`` writes, and whether it can feed text back into the
context after a compaction (then ``init`` installs the restore hook by default).  A harness without an installer
in ``pipeline.hooks.install`` is still detected and reported, and skipped by ``init``.

Where the folders come from (each harness's own documentation):

* Claude Code: project ``.claude/``; user ``~/.claude/`` (``$CLAUDE_CONFIG_DIR``), user settings
  ``~/.claude/settings.json``; a ``SessionStart`` hook's ``additionalContext`` joins the context.
* Copilot CLI: project ``.github/hooks/``; user ``~/.copilot/`` (``$COPILOT_HOME``), user-level hook files in
  ``~/.copilot/hooks/`` (docs.github.com "CLI configuration directory"); sessionStart output is ignored.
* opencode: project ``.opencode/``; user ``~/.config/opencode/`` (``$XDG_CONFIG_HOME``), global plugins in
  ``~/.config/opencode/plugins/``.
* Gemini CLI: project ``.gemini/``; user ``~/.gemini/`` (``$GEMINI_CLI_HOME`` replaces the home folder), user
  settings ``~/.gemini/settings.json``; a ``SessionStart`` restore only where the installed CLI runs one after a
  compression (``pipeline.hooks.install_gemini``).
* Codex CLI: project ``.codex/``; user ``~/.codex/`` (``$CODEX_HOME``), user hooks ``~/.codex/hooks.json``
  (developers.openai.com/codex/hooks); ``SessionStart`` with source ``compact`` adds its context.

Pure look-ups (``Path.is_dir``), no writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _under(variable: str, *default: str) -> Callable[[Mapping[str, str]], Path]:
    """A folder: ``$variable`` when set, else ``~/<default…>``."""

    def folder(env: Mapping[str, str]) -> Path:
        value = env.get(variable)
        return Path(value).expanduser() if value else _home(env).joinpath(*default)

    return folder


def _in_home(variable: str, folder_name: str) -> Callable[[Mapping[str, str]], Path]:
    """A folder in a home folder that ``$variable`` replaces (Gemini CLI: ``$GEMINI_CLI_HOME/.gemini``)."""

    def folder(env: Mapping[str, str]) -> Path:
        value = env.get(variable)
        return (Path(value).expanduser() if value else _home(env)) / folder_name

    return folder


def _xdg_config(*parts: str) -> Callable[[Mapping[str, str]], Path]:
    def folder(env: Mapping[str, str]) -> Path:
        base = env.get("XDG_CONFIG_HOME")
        return (Path(base) if base else _home(env) / ".config").joinpath(*parts)

    return folder


@dataclass(frozen=True, slots=True)
class Harness:
    """One agent harness.  ``project``: folders (relative to the project root) that show it is used there;
    ``user_dir``: its user-level folder from the environment; ``user_file``: the file ``init --user`` writes,
    relative to ``user_dir``; ``restore``: its post-compaction hook output can reach the context (``init`` then
    installs the restore hook unless ``--no-restore``; Gemini's installer still checks its CLI can run it)."""

    name: str
    project: tuple[str, ...]
    user_dir: Callable[[Mapping[str, str]], Path]
    user_file: str
    restore: bool = False
    hook_files: tuple[str, ...] = ()
    """Globs (relative to the project root) of the project files a duck-tape hook may sit in (``status``)."""

    def installed_files(self, root: Path, env: Mapping[str, str]) -> list[tuple[str, Path]]:
        """``(scope, path)`` of every existing file that may hold this harness's duck-tape hook: the project's
        (``hook_files``) and the user-level one (with its siblings of the same suffix for a hooks folder)."""
        out: list[tuple[str, Path]] = []
        for pattern in self.hook_files:
            out += [("project", p) for p in sorted(root.glob(pattern)) if p.is_file()]
        user = self.user_dir(env) / self.user_file
        folder = user.parent
        if folder.name in ("hooks", "plugins") and folder.is_dir():
            out += [("user", p) for p in sorted(folder.glob(f"*{user.suffix}")) if p.is_file()]
        elif user.is_file():
            out.append(("user", user))
        return out


#: Every harness duck-tape knows, in the order ``init`` reports them.  Adding one is one line here (and an
#: installer in ``pipeline.hooks.install``).
HARNESSES: tuple[Harness, ...] = (
    Harness("claude-code", (".claude",), _under("CLAUDE_CONFIG_DIR", ".claude"), "settings.json", restore=True,
            hook_files=(".claude/settings.local.json", ".claude/settings.json")),
    Harness("copilot", (".github/hooks",), _under("COPILOT_HOME", ".copilot"), "hooks/duck-tape.json",
            hook_files=(".github/hooks/*.json",)),
    Harness("opencode", (".opencode",), _xdg_config("opencode"), "plugins/duck-tape.js",
            hook_files=(".opencode/plugins/*.js", ".opencode/plugins/*.ts")),
    # Gemini and Codex installers write their own restore hook where the harness runs one after a compaction
    # (Codex: SessionStart source compact; Gemini: only when the installed CLI declares a compression source)
    Harness("gemini", (".gemini",), _in_home("GEMINI_CLI_HOME", ".gemini"), "settings.json", restore=True,
            hook_files=(".gemini/settings.json",)),
    Harness("codex", (".codex",), _under("CODEX_HOME", ".codex"), "hooks.json", restore=True,
            hook_files=(".codex/hooks.json",)),
)
BY_NAME: dict[str, Harness] = {h.name: h for h in HARNESSES}


@dataclass(frozen=True, slots=True)
class Found:
    """A harness in use: ``harness`` and the folders that show it (``evidence``, existing paths)."""

    harness: Harness
    evidence: tuple[Path, ...]


def harness(name: str) -> Harness:
    """The registry entry of ``name``; KeyError for an unknown one."""
    return BY_NAME[name]


def installable(name: str) -> bool:
    """Whether ``pipeline.hooks.install`` has an installer for ``name``."""
    from pipeline.errors import InputError
    from pipeline.hooks.install import target_path

    try:
        target_path(name, Path("."))
    except InputError:
        return False
    return True


def user_path(name: str, env: Mapping[str, str] | None = None) -> Path:
    """The user-level file ``init --user`` writes for harness ``name``."""
    entry = BY_NAME[name]
    return entry.user_dir(os.environ if env is None else env) / entry.user_file


def detect(root: Path, env: Mapping[str, str] | None = None) -> list[Found]:
    """The harnesses in use for the project at ``root``: a project folder of the harness exists, or its
    user-level folder does.  In registry order; each with the folders found."""
    env = os.environ if env is None else env
    found = []
    for entry in HARNESSES:
        evidence = [root / rel for rel in entry.project if (root / rel).is_dir()]
        user = entry.user_dir(env)
        if user.is_dir():
            evidence.append(user)
        if evidence:
            found.append(Found(entry, tuple(evidence)))
    return found
