"""``duck-tape init`` for every harness in use (issue 15, item 3): which ones, which file, which command.

* ``choose``: the harnesses named with ``--harness``, else the ones ``pipeline.hooks.detect`` finds (a harness
  found but without an installer is reported as skipped, not an error).
* ``default_command``: how the hook calls duck-tape when ``--command`` is not given: ``duck-tape`` when that is
  on ``PATH``, else the absolute path of the running duck-tape (the console script beside this interpreter, or
  the program this process was started as), so a hook works from a virtualenv that is not activated.
* ``plan``: the ``InstallPlan`` of one harness in the project or, with ``user``, in its user-level file
  (``install.target_path(…, user=True)``); restore is on by default where the harness can feed the handoff back
  (``detect``), ``--nudge`` adds Claude Code's Stop hook.
* ``ignore_in_git``: a personal settings file written into a git work tree (Claude Code's
  ``.claude/settings.local.json``) is added to the repository's ``info/exclude`` unless git already ignores it:
  it is the user's own and must not be committed by accident.  Shared files (``.claude/settings.json``,
  ``.github/hooks/*.json``, the opencode plugin) are meant to be committed and are left alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError
from pipeline.hooks import detect
from pipeline.hooks.install import HookCommand, InstallPlan, parse_hook_command, plan_install


@dataclass(frozen=True, slots=True)
class Choice:
    """A harness ``init`` will set up (``skip`` None) or skip (``skip`` = the reason); ``evidence``: the folders
    that showed it is in use (empty when named with ``--harness``)."""

    name: str
    evidence: tuple[Path, ...] = ()
    skip: str | None = None


def choose(named: tuple[str, ...], root: Path, env=None) -> list[Choice]:
    """The harnesses to set up: ``named`` as given, else the detected ones in registry order.  Raises InputError
    (exit 2) when nothing is named and nothing is found."""
    if named:
        return [Choice(name) for name in dict.fromkeys(named)]
    found = detect.detect(root, env)
    if not found:
        looked = ", ".join(f"{'/, '.join(h.project)}/" for h in detect.HARNESSES)
        raise InputError(f"no agent harness found in use here (looked for {looked} in {root} and their folders in "
                         "your home folder); name one with --harness, e.g. --harness claude-code")
    out = []
    for item in found:
        name = item.harness.name
        skip = None if detect.installable(name) else "this duck-tape has no installer for it yet"
        out.append(Choice(name, item.evidence, skip))
    return out


def running_program() -> Path | None:
    """The duck-tape executable of this installation: the console script beside ``sys.executable`` (a
    virtualenv's ``bin/``), else ``sys.argv[0]`` when it is a duck-tape program; None when neither exists."""
    names = ("duck-tape.exe", "duck-tape") if os.name == "nt" else ("duck-tape",)
    folder = Path(sys.executable).parent
    for name in names:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.absolute()
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name.startswith("duck-tape") and argv0.is_file():
        return argv0.absolute()
    return None


def default_command(root: Path) -> tuple[HookCommand, str | None]:
    """The hook command when ``--command`` is not given, and a note saying why when it is not plain
    ``duck-tape``: ``duck-tape`` when on ``PATH``, else the running duck-tape's absolute path."""
    if shutil.which("duck-tape"):
        return parse_hook_command("duck-tape", root), None
    program = running_program()
    if program is None:
        return parse_hook_command("duck-tape", root), ("duck-tape is not on PATH and this installation has no "
                                                        "duck-tape program; pass --command with its full path")
    return parse_hook_command(str(program), root), f"duck-tape is not on PATH: the hook calls {program}"


def plan(name: str, root: Path, command: HookCommand, *, user: bool, project: bool, restore: bool | None,
         nudge: bool = False, named: bool = True) -> tuple[InstallPlan, bool, list[str]]:
    """The plan of harness ``name``, whether it includes the restore hook, and notes for the user.

    ``restore`` None is the registry's default for the harness (``detect``); ``nudge`` the Claude Code Stop hook.
    ``named``: the harness was named with ``--harness``; then ``--restore``/``--nudge`` it cannot take are refused
    (InputError, exit 2), while for a detected harness they are left out with a note.  ``user`` plans its
    user-level file (``install.target_path(…, user=True)``).  Raises InputError as ``plan_install``."""
    entry = detect.harness(name)
    notes: list[str] = []
    wanted = entry.restore if restore is None else restore
    if wanted and not entry.restore and not named:
        notes.append("--restore left out: it has no post-compaction hook whose output reaches the context")
        wanted = False
    if nudge and name != "claude-code" and not named:
        notes.append("--nudge left out: it is for claude-code only")
        nudge = False
    result = plan_install(name, root, project=project, command=command, restore=wanted, nudge=nudge, user=user)
    return result, _has_restore(result, wanted), notes


def _has_restore(result: InstallPlan, wanted: bool) -> bool:
    """Whether the planned hook set has a restore hook: the snippet's ``SessionStart`` for the JSON settings
    (Gemini adds it only where its CLI runs one after a compression), else what was asked."""
    import json

    try:
        hooks = json.loads(result.snippet).get("hooks", {})
    except (ValueError, AttributeError):
        return wanted
    return isinstance(hooks, dict) and "SessionStart" in hooks


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None


def ignore_in_git(path: Path, root: Path) -> Path | None:
    """Add ``path`` (a file under the git work tree of ``root``) to the repository's ``info/exclude`` when git
    does not ignore it yet; return the exclude file written, None when nothing was needed or possible (no git,
    not a work tree, already ignored)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return None
    work_tree = Path(top.stdout.strip())
    try:
        relative = path.resolve().relative_to(work_tree.resolve())
    except ValueError:
        return None
    checked = _git(root, "check-ignore", "-q", "--no-index", str(path.resolve()))
    if checked is None or checked.returncode == 0:
        return None
    where = _git(root, "rev-parse", "--git-path", "info/exclude")
    if where is None or where.returncode != 0:
        return None
    exclude = Path(where.stdout.strip())
    if not exclude.is_absolute():
        exclude = root / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    line = "/" + relative.as_posix()
    sep = "" if not text or text.endswith("\n") else "\n"
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write(f"{sep}# personal duck-tape hook settings (duck-tape init)\n{line}\n")
    return exclude


def personal(name: str, *, user: bool, project: bool) -> bool:
    """Whether the file ``init`` writes for ``name`` is a personal one inside the project (to keep out of git)."""
    return name == "claude-code" and not user and not project
