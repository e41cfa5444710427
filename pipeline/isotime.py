"""ISO-8601 times as duck-tape writes and reads them (DESIGN.md: state files, markers, Decision Log lines).

Standard library only, no ``pathlib``: the read stage (``extract-raw``'s hook path) checks every event time with it.
"""

from __future__ import annotations

import re
from datetime import datetime

ISO_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
"""ISO-8601 extended format as written in these files: a date, optionally ``T`` + time + ``Z`` or an offset."""


def is_iso_timestamp(value: str) -> bool:
    """True when ``value`` matches ``ISO_RE`` exactly and is a real date/time (month 1-12, hour 0-23...)."""
    if not ISO_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True
