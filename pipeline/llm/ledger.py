"""What the model cost, per store: ``.duck-tape/.llm-usage.jsonl`` (issue 25: the tokens spent shown by ``status``).

One JSON line per run that called a model and wrote into the store: the background refinement
(``pipeline.refine.job``), ``recover`` and ``resume`` with the llm engine.  Fields: ``time`` (ISO-8601 UTC),
``action`` (refine | recover | resume), ``model``, ``session`` (the state's session id or None), ``requests``,
``failed``, ``cached``, ``sent``, ``received``, ``tokens`` (sent + received), ``estimated`` (the counts are
estimates), ``seconds`` (wall time of the model calls, when known), ``outcome`` (written | fell back | skipped |
failed), ``file`` (the state file written, or None) and ``note`` (why, for anything but written).  The file keeps
the last ``KEEP`` lines.  Standard library only; never raises on a damaged line (it is skipped).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

FILENAME = ".llm-usage.jsonl"
KEEP = 200
_MAX_BYTES = 256 * 1024


def entry(action: str, model: str | None, usage: Any, *, session: str | None = None, seconds: float | None = None,
          outcome: str = "written", file: str | None = None, note: str | None = None,
          now: datetime | None = None) -> dict[str, Any]:
    """A ledger line from ``usage`` (``pipeline.llm.usage.Usage`` or None: nothing was spent)."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    counts = {name: int(getattr(usage, name, 0) or 0) for name in ("requests", "failed", "cached", "sent", "received")}
    return {"time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"), "action": action, "model": model, "session": session,
            **counts, "tokens": counts["sent"] + counts["received"],
            "estimated": bool(getattr(usage, "estimated", False)),
            "seconds": round(seconds, 2) if seconds is not None else None, "outcome": outcome, "file": file,
            "note": note}


def record(store: str | os.PathLike[str], line: dict[str, Any]) -> Path | None:
    """Append ``line`` to the store's ledger (created with the store's folder); trim it to the last ``KEEP`` lines
    when it grows past ``_MAX_BYTES``.  Returns the file, or None when it could not be written (never raises)."""
    path = Path(store) / FILENAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        if path.stat().st_size > _MAX_BYTES:
            from pipeline.fsutil import atomic_write_text

            kept = path.read_text(encoding="utf-8").splitlines()[-KEEP:]
            atomic_write_text(path, "\n".join(kept) + "\n")
    except OSError:
        return None
    return path


def read(store: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The ledger's lines, oldest first (``[]`` when there is none)."""
    path = Path(store) / FILENAME
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    from pipeline.llm.agents.base import json_lines

    return json_lines(text)


def summary(store: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``{"runs", "tokens", "since", "by_action": {action: tokens}, "last": <line>, "last_refine": <line> | None}``
    over the ledger, None when it is empty."""
    lines = read(store)
    if not lines:
        return None
    by_action: dict[str, int] = {}
    for line in lines:
        by_action[str(line.get("action"))] = by_action.get(str(line.get("action")), 0) + int(line.get("tokens") or 0)
    refines = [line for line in lines if line.get("action") == "refine"]
    return {"runs": len(lines), "tokens": sum(by_action.values()), "since": lines[0].get("time"),
            "by_action": by_action, "last": lines[-1], "last_refine": refines[-1] if refines else None}


def record_run(store: str | os.PathLike[str], action: str, run: Any, written: str | os.PathLike[str] | None) -> None:
    """Record a recovery that wrote ``written`` with the engine run ``run`` (``pipeline.engines.EngineRun``) when
    it called a model; nothing for the rules engine.  Never raises."""
    usage = getattr(run, "usage", None)
    if usage is None or not (usage.requests or usage.failed):
        return
    state = Path(written).name if written else None
    record(store, entry(action, getattr(run, "model", None), usage,
                        outcome="written" if getattr(run, "engine", "rules") == "llm" else "fell back", file=state,
                        note=None if getattr(run, "engine", "rules") == "llm" else "every section is the rules engine's"))
