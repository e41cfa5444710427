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
            compiled = re.compile(source, flags)
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
            compiled = re.compile(source)
        return compiled

    return pattern_for
