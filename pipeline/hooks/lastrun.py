"""What the last checkpoint did, kept for ``duck-tape status`` (issue 15, item 4): ``<store>/.last-checkpoint.json``.

The hook's notes go to the harness's stderr, which the user rarely sees; this small JSON file keeps them, so
``status`` can say whether the last checkpoint wrote a state file or only the marker, and why.  Shape::

    {"time": "<ISO-8601 UTC>", "state": "<path>" | null, "written": bool, "marker": "<path>" | null,
     "transcript": "<path>" | null, "notes": ["duck-tape: checkpoint: ...", ...]}

Every string in it passes the redaction mask (``pipeline.redact.safe``).  Writing never raises (a hook never fails)
and is atomic; reading gives None for a missing or unreadable file.
Stdlib only (hook fast lane).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

RECORD_NAME = ".last-checkpoint.json"


def record(store: Path, *, state: Path | None, written: bool, marker: Path | None, transcript: str | None,
           notes: list[str], now: datetime | None = None) -> Path | None:
    """Write the record into ``store`` (only when the store exists); the path written, or None."""
    from pipeline.fsutil import atomic_write_text

    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    data = {"time": when, "state": str(state) if state else None, "written": bool(written),
            "marker": str(marker) if marker else None, "transcript": transcript, "notes": list(notes)}
    try:  # issue 22 item 6: a token in a path or a note is masked here as in every other output
        from pipeline.redact import safe

        data = {k: [safe(n) for n in v] if isinstance(v, list) else safe(v) if isinstance(v, str) else v
                for k, v in data.items()}
    except Exception:  # noqa: BLE001 - the hook must never fail; an unmasked record is not written at all
        return None
    target = store / RECORD_NAME
    try:
        if not store.is_dir() or store.is_symlink():
            return None
        atomic_write_text(target, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    except Exception:  # noqa: BLE001 - the hook must never fail over its own bookkeeping
        return None
    return target


def read(store: Path) -> dict | None:
    """The record of ``store``, or None when there is none or it is not a JSON object."""
    try:
        data = json.loads((store / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
