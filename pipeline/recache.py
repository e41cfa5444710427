"""Compiled regular expressions kept between runs, as Python keeps bytecode (the hooks' start-up budget).

Every hook run is a new process, and ``re`` compiles each pattern anew: the rules engine and the redaction rules
use ~200 patterns, ~0.1 s of a checkpoint before any text is read.  Most of that is ``re``'s parser and code
generator, whose output is a plain list of integers.  ``compile(source, flags)`` returns what
``re.compile(source, flags)`` returns, but keeps that output (with the group names) in a table saved beside the
package's bytecode (``importlib.util.cache_from_source``: ``__pycache__`` or ``PYTHONPYCACHEPREFIX``, never
written when Python writes no bytecode, ``PYTHONDONTWRITEBYTECODE``), and builds the pattern from it in
microseconds on later runs.  The table is keyed by the Python version and the regular expression engine's
``MAGIC``; anything unexpected (another Python, a damaged table, an engine that refuses the code) falls back to
``re.compile``, so the cache can only save time.  ``python -m pipeline.recache`` fills the table for every
pattern the package defines (``make`` runs it next to ``compileall``), whatever PYTHONDONTWRITEBYTECODE says.
"""

from __future__ import annotations

import atexit
import marshal
from array import array
import os
import re
import sys

try:  # the standard library's compiler internals (CPython >= 3.11); without them this is re.compile
    import _sre
    from re import _compiler, _parser
    from re._constants import MAGIC
except ImportError:  # pragma: no cover - another implementation of Python
    _sre = None

_CODE = "I"  # the engine's code words: unsigned 32-bit (``_sre.CODESIZE`` is 4)
_TAG = f"{sys.implementation.cache_tag}-{getattr(sys, 'hexversion', 0):x}-{MAGIC if _sre else 0}"
_table: dict[tuple[str, int], tuple] | None = None
_dirty = False
_force = False  # ``python -m pipeline.recache``: write even where Python writes no bytecode


def _path() -> str | None:
    """Where the table lives: beside this module's bytecode; None where Python keeps no bytecode cache
    (``sys.implementation.cache_tag`` is None)."""
    if sys.implementation.cache_tag is None:
        return None
    from importlib.util import cache_from_source

    try:
        return os.path.join(os.path.dirname(cache_from_source(__file__)), f"recache.{_TAG}.marshal")
    except (ValueError, TypeError):
        return None


def _load() -> dict[tuple[str, int], tuple]:
    global _table
    if _table is None:
        _table = {}
        path = _path()
        if path:
            try:
                with open(path, "rb") as fh:
                    got = marshal.load(fh)
                if isinstance(got, dict):
                    _table = got
            except (OSError, EOFError, ValueError, TypeError):
                pass
        atexit.register(save)
    return _table


def compile(source: str | bytes, flags: int = 0) -> re.Pattern:  # noqa: A001 - the name re uses
    """``re.compile(source, flags)``, from the table when this pattern was compiled before (module rules).

    Raises ``re.error`` for an invalid pattern, as ``re.compile`` does."""
    global _dirty
    if _sre is None or flags & re.DEBUG or _sre.CODESIZE != array(_CODE).itemsize:
        return re.compile(source, flags)
    flags = int(flags)
    table = _load()
    key = (source, flags)
    entry = table.get(key)
    if entry is not None:
        try:
            final, code, groups, groupindex, indexgroup = entry
            return _sre.compile(source, final, array(_CODE, code).tolist(), groups, groupindex, indexgroup)
        except Exception:  # noqa: BLE001 - a table from another engine: compile afresh below
            table.pop(key, None)
    if not isinstance(source, (str, bytes)):
        return re.compile(source, flags)
    tree = _parser.parse(source, flags)
    code = [int(op) for op in _compiler._code(tree, flags)]  # opcodes are int subclasses marshal cannot write
    groupindex = dict(tree.state.groupdict)
    indexgroup = [None] * tree.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    final = flags | tree.state.flags
    try:
        pattern = _sre.compile(source, final, code, tree.state.groups - 1, groupindex, tuple(indexgroup))
        packed = array(_CODE, code).tobytes()  # one bytes object: a list of ints costs more to load than to compile
    except Exception:  # noqa: BLE001 - an engine that builds patterns differently: plain re, uncached
        return re.compile(source, flags)
    table[key] = (final, packed, tree.state.groups - 1, groupindex, tuple(indexgroup))
    _dirty = True
    return pattern


def memo(key: tuple, make):
    """``make()``'s value for ``key`` (a tuple of plain values; the value must be marshal-able), from the table
    when a run before computed it; for data derived from a pattern's source (``litgate.plan``)."""
    global _dirty
    table = _load()
    got = table.get(key)
    if got is None:
        got = table[key] = make()
        _dirty = True
    return got


def replace(key: tuple, value):
    """Store ``value`` for ``key`` (over a damaged entry); returns ``value``."""
    global _dirty
    _load()[key] = value
    _dirty = True
    return value


def save() -> None:
    """Write the table if this run added to it and Python writes bytecode here (or ``_force``); atomic, and
    never an error: a cache that cannot be written is only slower."""
    global _dirty
    if not _dirty or _table is None or (sys.dont_write_bytecode and not _force):
        return
    path = _path()
    if not path:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump(_table, fh)
        os.replace(tmp, path)
        _dirty = False
    except (OSError, ValueError):  # ValueError: a value marshal cannot write (a bug of ours, never the user's)
        _dirty = False
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _fill() -> int:
    """Compile every module-level pattern of the package (lazy ones included) into the table; their count."""
    import importlib
    import pkgutil

    import pipeline
    from pipeline.lazyre import LazyPattern
    from pipeline.litgate import GatedAlternation

    count = 0
    for info in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        if info.name.startswith(("pipeline.serve", "pipeline.llm", "pipeline.stages.llm", "pipeline.__main__")):
            continue  # optional extras, the llm path, the command line's entry point: not what hooks compile
        try:
            mod = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a module that needs an optional dependency
            continue
        for value in list(vars(mod).values()):
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                for obj in (item if isinstance(item, tuple) else (item,)):
                    if isinstance(obj, LazyPattern):
                        obj.compiled
                        count += 1
                    elif isinstance(obj, GatedAlternation):
                        obj.warm()
                        count += 1
    return count


def main() -> None:
    """``python -m pipeline.recache``: fill and write the table (the module the package imports, not ``__main__``)."""
    from pipeline import recache

    recache._force = True
    count = recache._fill()
    recache.save()
    print(f"pipeline.recache: {count} patterns, {len(recache._table or {})} entries in {recache._path()}")


if __name__ == "__main__":
    main()
