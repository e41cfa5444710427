"""Module-level regular expressions that compile on first use (issue 6: the checkpoint hook's start-up budget).

The rules engine holds ~165 module-level patterns; compiling them all costs ~35 ms here, a quarter of the
pre-compact hook's 0.15 s (process start included), while a given transcript reaches about half of them (a
phrasing family is only tried when its trigger words occur).  ``lazy_re(source, flags)`` stands in for
``re.compile(source, flags)`` at module level: the first method call compiles the pattern and binds the compiled
pattern's methods onto the object, so later calls cost what a compiled pattern's calls cost.
"""

from __future__ import annotations

import re

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A ``re.Pattern`` stand-in compiled on the first use of ``search``, ``match``, ``fullmatch``, ``finditer``,
    ``findall``, ``sub``, ``subn`` or ``split`` (each behaves exactly as the compiled pattern's method).

    ``pattern`` (the source) and ``compiled`` (the ``re.Pattern``, compiling it if needed) are also available.
    Raises ``re.error`` on first use when the source is not a valid pattern.
    """

    __slots__ = ("_source", "_flags", "_compiled", *_METHODS)

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> str:
        return self._source

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            from pipeline.recache import compile as cached_compile

            self._compiled = cached_compile(self._source, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(self._compiled, name))
        return self._compiled

    def __getattr__(self, name: str):  # only reached while a method slot is still empty
        if name not in _METHODS:
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re({self._source!r}, {self._flags!r})"


def lazy_re(source: str, flags: int = 0) -> LazyPattern:
    """``re.compile(source, flags)``, deferred until the pattern is first used (see ``LazyPattern``)."""
    return LazyPattern(source, flags)
