"""Regular expressions compiled on first use (DESIGN.md "Redaction": the hook path's start-up budget).

Compiling a pattern costs 0.05-0.5 ms in ``re``; the redaction rules hold ~40 of them, and most texts
(raw material, a state file) never reach most of them: a rule whose literals are absent is skipped, a
value check runs only on a candidate.  ``lazy_pattern(source)`` returns a function that compiles the
pattern on its first call and returns that same compiled pattern ever after.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~2.5 ms to import; annotations only
    from collections.abc import Callable
    from typing import AnyStr


def lazy_pattern(source: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """A function returning ``re.compile(source, flags)``, compiled on its first call only.

    Raises ``re.error`` on that first call when ``source`` is not a valid pattern.
    """
    compiled = None

    def pattern() -> re.Pattern[AnyStr]:
        nonlocal compiled
        if compiled is None:
            from pipeline.recache import compile as cached_compile

            compiled = cached_compile(source, flags)
        return compiled

    return pattern


def guarded_pattern(literals: tuple[bytes, ...], source: bytes) -> Callable[[bytes], re.Pattern[bytes] | None]:
    """A function ``pattern_for(data)``: the compiled ``source`` when ``data`` may hold a match, else None.

    ``literals``: every match of ``source`` contains one of them.  Until the pattern is compiled, a
    ``data`` holding none of them gives None (the caller skips the pass) and compiles nothing; once
    compiled, the pattern is returned without the test, because running a literal-led pattern costs
    about what the test would (``in`` on 73 kB: ~40 µs; the pattern: ~30 µs).
    """
    compiled = None

    def pattern_for(data: bytes) -> re.Pattern[bytes] | None:
        nonlocal compiled
        if compiled is None:
            for literal in literals:
                if literal in data:
                    break
            else:
                return None
            from pipeline.recache import compile as cached_compile

            compiled = cached_compile(source)
        return compiled

    return pattern_for


def finditer_at(pattern: re.Pattern[bytes], data: bytes, literals: tuple[bytes, ...], *, line: bool = False):
    """``pattern.finditer(data)``'s matches, found by trying ``pattern.match`` only where one can start.

    ``line=False``: every match starts with one of ``literals`` (a ``\\b`` or lookbehind before it is fine: they
    see the bytes before the start).  ``line=True``: every match lies within one line that holds one of
    ``literals`` and starts at that line's start (a ``(?m)^`` pattern).  A pattern without a literal prefix would
    otherwise be tried at every byte of a multi-megabyte text.  Matches are never empty.
    """
    starts: set[int] = set()
    for literal in literals:
        at = data.find(literal)
        while at >= 0:
            starts.add(data.rfind(b"\n", 0, at) + 1 if line else at)
            at = data.find(b"\n", at) if line else at
            if at < 0:
                break
            at = data.find(literal, at + 1)
    end = 0
    for at in sorted(starts):
        if at < end:
            continue
        m = pattern.match(data, at)
        if m is not None:
            end = m.end()
            yield m
