"""Transcripts too large to commit (the 8 MB line, the 300-event session), written at run time.

A case with ``generator: NAME`` gets its transcript from ``NAME(path)`` of ``fixtures/evals/generate.py``, the
same deterministic script that writes the committed eval fixtures, so the bytes are identical on every run.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from types import ModuleType



def _generator() -> Path:
    """``fixtures/evals/generate.py`` of the checkout or of the installed package data."""
    from pipeline.resources import data_path

    return data_path("fixtures/evals/generate.py")


def __getattr__(name: str):
    if name == "GENERATOR":
        return _generator()
    raise AttributeError(name)


@lru_cache(maxsize=1)
def _module() -> ModuleType:
    GENERATOR = _generator()
    spec = importlib.util.spec_from_file_location("duck_tape_eval_fixtures", GENERATOR)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the eval fixture generator {GENERATOR}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(name: str, path: Path) -> Path:
    """Write the transcript of generator ``name`` to ``path`` (its folder is created); returns ``path``.

    Raises ``pipeline.errors.InputError`` (exit 2) when the generator script has no such transcript.
    """
    from pipeline.errors import InputError

    module = _module()
    fn = getattr(module, "GENERATED", {}).get(name)
    if fn is None:
        raise InputError(f"no generated transcript named {name!r} in {_generator()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fn(), encoding="utf-8", newline="\n")
    return path
