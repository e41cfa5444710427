"""Check where a batch will write before it does any work (issue 6, item 1; DESIGN.md "Exit codes": 2 bad usage).

A batch writes the state files into ``--out``, its cache into ``--cache-dir`` (default ``OUT/.cache``) and two
reports (``--report FILE`` and the other one beside it, default ``OUT/report.md`` and ``OUT/report.json``).  A
target that cannot be written is refused up front with a message naming the option and the path, instead of an
``IsADirectoryError`` or ``NotADirectoryError`` after every session has been processed:

* a folder (``--out``, ``--cache-dir``) may exist, or be created: refused when it is a file, or when the nearest
  existing folder on its way is a file;
* a report must not be a folder or another non-regular file (a device, a socket: the report replaces the file);
* a report's folder must exist, unless it is ``--out`` or inside it (the batch creates ``--out``): a typo in
  the folder of ``--report`` is refused rather than created.

Symlinks are followed, as the writes follow them.  The checks only look (``stat``); nothing is created.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pipeline.errors import InputError


def _mode(path: str) -> int | None:
    """``st_mode`` of ``path`` (symlinks followed), or None when nothing is there (or it cannot be reached)."""
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def _blocker(folder: str) -> str | None:
    """The nearest existing path on the way to ``folder`` (``folder`` itself first) when it is not a folder, else
    None (the folder exists, or can be created up to it)."""
    current = os.path.abspath(folder)
    while True:
        mode = _mode(current)
        if mode is not None:
            return None if stat.S_ISDIR(mode) else current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def check_folder(option: str, folder: Path) -> None:
    """Raise InputError (exit 2) ``<option>: <folder> is a file`` or ``<option>: cannot create <folder>: <path> is
    not a folder`` when ``folder`` cannot be used as a folder; ``option`` is the flag as shown in messages."""
    blocker = _blocker(str(folder))
    if blocker is None:
        return
    if blocker == os.path.abspath(folder):
        raise InputError(f"{option}: {folder} is a file, not a folder")
    raise InputError(f"{option}: cannot create {folder}: {blocker} is not a folder")


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(os.path.join(folder, ""))


def check_report(paths: tuple[Path, Path], out: Path, *, option: str) -> None:
    """Raise InputError (exit 2) naming ``option`` and the path when either report path of ``paths`` (markdown,
    JSON: ``report.report_paths``) is a folder or another non-regular file, or when their folder does not exist
    and is not ``out`` or inside it, or is not a folder."""
    for path in paths:
        mode = _mode(str(path))
        if mode is None or stat.S_ISREG(mode):
            continue
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise InputError(f"{option}: {path} is {kind}")
    folder = paths[0].parent
    if _inside(str(folder), str(out)):
        check_folder(option, folder)  # created with --out when missing
        return
    mode = _mode(str(folder))
    if mode is None:
        raise InputError(f"{option}: the folder {folder} of {paths[0]} does not exist; create it first, or leave the "
                         "report in --out")
    if not stat.S_ISDIR(mode):
        raise InputError(f"{option}: {folder} (the folder of {paths[0]}) is not a folder")


def check_targets(out: Path, cache_dir: Path | None, report: str | None) -> None:
    """All the checks of the module docstring for a batch's ``--out``, ``--cache-dir`` and ``--report``
    (``report`` as given, None for the default).  Raises InputError (exit 2); writes nothing."""
    from pipeline.batch.report import report_paths

    check_folder("--out DIR", out)
    if cache_dir is not None:
        check_folder("--cache-dir", cache_dir)
    option = "--report FILE" if report else "--out DIR (default report)"
    check_report(report_paths(report, out), out, option=option)
