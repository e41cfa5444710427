"""The optional ``[llm]`` extra: which packages it brings and the install line to name when they are missing.

The default install is what the rules engine, the hooks and the MCP server need (issue 24, item 2: the llm
engine's stack was ~450 MB and ~80 packages that the default engine never imports).  The llm engine needs
``pyproject.toml``'s ``[project.optional-dependencies] llm``: litellm (any provider), instructor (structured
output), tiktoken (token budgets), diskcache (response cache), tenacity (retries) and vcrpy (``eval --engine llm``
replays recorded cassettes).  The prompt templates' jinja2 is in the default install: the agent CLIs
(``agent:claude-code``…, ``pipeline.llm.agents``) are the model a default install can use (issue 25).  A command that needs them and finds one missing stops
with ``MissingExtra`` (exit 2) naming the line that installs them, from where this copy was installed
(``direct_url.json``, PEP 610) when it says so.

Standard library only; nothing here imports the packages it checks (``importlib.util.find_spec``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import lru_cache
from pathlib import Path

from pipeline.errors import InputError

DISTRIBUTION = "duck-tape-pipeline"
LLM_EXTRA = "llm"
LLM_MODULES = ("litellm", "instructor", "tiktoken", "diskcache", "tenacity")
"""Importable names the llm engine needs (each package of the ``llm`` extra but vcrpy, which only ``eval`` uses)."""
PLACEHOLDER_SOURCE = "/path/to/duck-tape"


class MissingExtra(InputError):
    """A command needs packages of an extra that is not installed (exit 2: install it, or do not ask for it)."""


def _absent(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):  # a finder refusing it, or a module entry set to None
        return True


def missing(modules: tuple[str, ...] = LLM_MODULES) -> list[str]:
    """The names of ``modules`` that cannot be imported here (nothing is imported to find out)."""
    return [name for name in modules if _absent(name)]


@lru_cache(maxsize=1)
def _origin() -> tuple[str, bool]:
    """``(source, editable)``: where this copy was installed from (a path, a wheel file or ``git+URL@ref``) as
    its ``direct_url.json`` records it; else the source checkout it runs from; else ``PLACEHOLDER_SOURCE``."""
    from importlib.metadata import PackageNotFoundError, distribution
    from urllib.parse import unquote, urlparse

    try:
        raw = distribution(DISTRIBUTION).read_text("direct_url.json")
        info = json.loads(raw) if raw else {}
    except (PackageNotFoundError, ValueError, OSError):
        info = {}
    url = info.get("url") if isinstance(info, dict) else None
    if not isinstance(url, str):
        checkout = Path(__file__).resolve().parent.parent
        if (checkout / "pyproject.toml").is_file():  # running from a source checkout (make's editable .venv)
            return str(checkout), True
        return PLACEHOLDER_SOURCE, False
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        ref = vcs.get("requested_revision")
        return f"git+{url}" + (f"@{ref}" if isinstance(ref, str) and ref else ""), False
    if url.startswith("file://"):
        editable = bool((info.get("dir_info") or {}).get("editable"))
        return unquote(urlparse(url).path), editable
    return url, False


def install_line(extra: str | None = LLM_EXTRA) -> str:
    """The shell line that adds ``extra`` to this installation (None: reinstalls it as it is):
    ``pipx install --force '<source>[extra]'`` when it lives in a pipx virtualenv (``pipx_metadata.json`` beside
    it, or a ``pipx`` folder on its path), else
    ``<this python> -m pip install '<source>[extra]'`` (``-e`` for an editable checkout); ``<source>`` is where it
    was installed from (``_origin``)."""
    source, editable = _origin()
    extras = f"[{extra}]" if extra else ""
    spec = f"{DISTRIBUTION}{extras} @ {source}" if source.startswith("git+") else f"{source}{extras}"
    if (Path(sys.prefix) / "pipx_metadata.json").is_file() or "pipx" in Path(sys.prefix).parts:
        return f"pipx install --force '{spec}'"
    return f"{sys.executable} -m pip install {'-e ' if editable else ''}'{spec}'"


def require_llm(what: str = "the llm engine") -> None:
    """Return when the llm engine's packages are importable; else raise ``MissingExtra`` naming ``what`` needed
    them, the missing ones and ``install_line()``."""
    absent = missing()
    if absent:
        raise MissingExtra(f"{what} needs the optional llm packages ({', '.join(absent)} not installed): "
                           f"install them with: {install_line()}")
