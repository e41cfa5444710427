"""Start the background refinement after a checkpoint (issue 25), from the hook, without making the hook wait.

``after_checkpoint(store, state, transcript)`` is called by the checkpoint hook once it wrote its auto state file:

1. ``wanted``: off inside a nested agent run (``DUCK_TAPE_NESTED``); ``DUCK_TAPE_REFINE`` decides when set; else the
   config decides (``refine`` and a ``model``), but the config files are parsed only when one of them has a line
   setting ``refine`` (the project's ``.duck-tape/config.toml`` and ``pyproject.toml``, the user's config file,
   ``$DUCK_TAPE_CONFIG``; the shipped defaults say ``refine = false``): a checkpoint with refinement off costs a few
   ``stat`` calls, no TOML parsing;
2. ``spawn``: ``python -m pipeline refine --dir <store> --state <file> --transcript <path>`` in a new session
   (detached: it survives the hook and the harness, gets no terminal signals), stdin from ``/dev/null``, stdout
   and stderr appended to ``<store>/.refine.log`` (cut back when over ``LOG_BYTES``).  The hook returns at once.

Light module (hook path): standard library only; ``pipeline.config`` only when a config file mentions refine.
Every error is caught: the hook never fails because of the refinement (``after_checkpoint`` returns a note).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping

REFINE_ENV = "DUCK_TAPE_REFINE"
NESTED_ENV = "DUCK_TAPE_NESTED"
LOG = ".refine.log"
LOG_BYTES = 256 * 1024
_TRUE = ("1", "true", "yes", "on")


def _mentions_refine(path: Path) -> bool:
    """True when the file at ``path`` has a line setting ``refine`` (a key, not the word anywhere: a
    ``pyproject.toml`` may name a ``refine`` package)."""
    import re

    try:
        with open(path, "rb") as handle:
            data = handle.read(1024 * 1024)
    except OSError:
        return False
    return b"refine" in data and re.search(rb"(?m)^[ \t]*refine[ \t]*=", data) is not None


def project_root(store: Path) -> Path:
    """The project a store belongs to: the folder holding it when it is a ``.duck-tape`` folder (the hooks pass
    ``--dir <project>/.duck-tape``), else the working folder (``pipeline.config`` reads the project's config from
    ``<project>/.duck-tape/config.toml``)."""
    store = store.absolute()
    return store.parent if store.name == ".duck-tape" else Path.cwd()


def config_files(store: Path, env: Mapping[str, str]) -> list[Path]:
    """The config files that could turn the refinement on (module docstring), whether they exist or not."""
    root = project_root(store)
    base = env.get("XDG_CONFIG_HOME")
    home = Path(env.get("HOME") or Path.home())
    files = [root / ".duck-tape" / "config.toml", root / "pyproject.toml",
             (Path(base) if base else home / ".config") / "duck-tape" / "config.toml"]
    if env.get("DUCK_TAPE_CONFIG"):
        files.append(Path(env["DUCK_TAPE_CONFIG"]).expanduser())
    return files


def wanted(store: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether a checkpoint into ``store`` starts the background refinement (module docstring).  Never raises."""
    env = os.environ if env is None else env
    if env.get(NESTED_ENV):
        return False
    flag = (env.get(REFINE_ENV) or "").strip().lower()
    if flag:
        return flag in _TRUE and bool(env.get("DUCK_TAPE_MODEL") or _configured_model(store, env))
    if not any(_mentions_refine(path) for path in config_files(store, env)):
        return False
    try:
        from pipeline.config import resolve

        config, _ = resolve(env=env, root=project_root(store))
    except Exception:  # noqa: BLE001 - a bad config file is status's to report, not the hook's
        return False
    return config.refine and bool(config.model)


def _configured_model(store: Path, env: Mapping[str, str]) -> str | None:
    try:
        from pipeline.config import resolve

        return resolve(env=env, root=project_root(store))[0].model
    except Exception:  # noqa: BLE001
        return None


def _log(store: Path):
    path = store / LOG
    try:
        mode = "w" if path.stat().st_size > LOG_BYTES else "a"
    except OSError:
        mode = "a"
    return open(path, mode, encoding="utf-8")


def spawn(store: Path, state: Path, transcript: str | None) -> int:
    """Start the refinement process (module docstring); its pid.  Raises OSError when it cannot start."""
    import subprocess

    argv = [sys.executable, "-m", "pipeline", "refine", "--dir", str(store.absolute()), "--state", state.name]
    if transcript:
        argv += ["--transcript", transcript]
    with _log(store) as log:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   cwd=str(project_root(store)), start_new_session=True, close_fds=True)
    return process.pid


def after_checkpoint(store: Path, state: Path, transcript: str | None,
                     env: Mapping[str, str] | None = None) -> str | None:
    """Start the refinement when ``wanted``; the stderr note to print, or None.  Never raises."""
    try:
        if not wanted(store, env):
            return None
        pid = spawn(store, state, transcript)
        return f"duck-tape: checkpoint: refining {state.name} in the background (pid {pid}; log {store / LOG})"
    except Exception as exc:  # noqa: BLE001 - the hook never fails because of the refinement
        return f"duck-tape: checkpoint: could not start the background refinement: {' '.join(str(exc).split())}"
