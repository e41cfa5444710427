"""Where duck-tape finds the files it reads at run time that are not Python (issue 15, item 1).

The source tree keeps them at the top level: ``prompts/`` (the llm engine's Jinja2 templates), ``config/``
(``default.toml``), ``fixtures/`` (the eval suites' transcripts, their generator and the llm replay cassettes);
the eval suites and thresholds live in the ``evals`` package itself.  A wheel maps the top-level folders into
the package at build time (``pyproject.toml``: ``package-dir`` ``pipeline._data.<name>`` = ``<name>``), so an
installed copy has ``pipeline/_data/prompts/…`` and the same relative layout below it.

``data_root()`` is the folder that holds that layout: ``pipeline/_data`` of an installed copy (found with
``importlib.resources``), else the checkout root (``pipeline/..``) when it has ``prompts/``.  Neither is a
packaging error (exit 1) naming both places; no command falls back to something else silently.

Stdlib only: the hook fast lane may import it.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from pipeline.errors import DuckTapeError

#: The folder of an installed copy's data, inside the ``pipeline`` package.
PACKAGE_DATA = "_data"
#: The checkout root when running from the source tree.
SOURCE_ROOT = Path(__file__).resolve().parent.parent


class PackagingError(DuckTapeError):
    """A file that ships with duck-tape is missing from this installation (exit 1): the wheel was built
    without its package data, or a file was deleted.  Reinstalling from a proper build fixes it."""

    exit_code = 1


def _installed() -> Path | None:
    try:
        root = files("pipeline").joinpath(PACKAGE_DATA)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - pipeline is always importable here
        return None
    path = Path(str(root))
    return path if path.is_dir() else None


@lru_cache(maxsize=1)
def data_root() -> Path:
    """The folder holding ``prompts/``, ``config/`` and ``fixtures/``: ``pipeline/_data`` of an installed copy,
    else the source checkout.  Raises PackagingError when neither has ``prompts/``."""
    installed = _installed()
    if installed is not None:
        return installed
    if (SOURCE_ROOT / "prompts").is_dir():
        return SOURCE_ROOT
    raise PackagingError(
        f"duck-tape's data files are missing: neither {Path(__file__).resolve().parent / PACKAGE_DATA} (an "
        f"installed copy) nor {SOURCE_ROOT / 'prompts'} (a source checkout) exists; reinstall duck-tape from a "
        "wheel built with the package data of its pyproject.toml")


def data_path(relative: str, *, must_exist: bool = True) -> Path:
    """``data_root() / relative`` (``"prompts"``, ``"config/default.toml"``, ``"fixtures/evals/…"``).

    Raises PackagingError naming the path when ``must_exist`` and it is not there.
    """
    path = data_root() / relative
    if must_exist and not path.exists():
        raise PackagingError(f"{path}: this file ships with duck-tape but is missing from this installation; "
                             "reinstall duck-tape (a wheel built from its pyproject.toml carries it)")
    return path


def prompts_dir() -> Path:
    """The folder of the llm engine's templates (``prompts/``); PackagingError when missing."""
    return data_path("prompts")


def evals_path(relative: str) -> Path:
    """A file of the ``evals`` package (``suites/core.yaml``, ``thresholds.toml``), found with
    ``importlib.resources``; PackagingError when missing."""
    path = Path(str(files("evals").joinpath(relative)))
    if not path.exists():
        raise PackagingError(f"{path}: this file ships with duck-tape but is missing from this installation; "
                             "reinstall duck-tape (a wheel built from its pyproject.toml carries it)")
    return path
