"""``--json`` reports of the commands that write state files (issue 15, item 5; shapes in docs/json.md).

``recover --json``: ``{"command": "recover", "transcript", "written": path | null, "dry_run": bool,
"stamp", "trigger", "sections": {section: engine}, "counts": {"decisions", "facts", "done", "remaining"},
"notes": [lines], "dropped": [lines], "redaction": [lines]}``.  It never asks: without ``--yes`` (and not
``--dry-run``) nothing is written and the approval is declined (exit 4).
"""

from __future__ import annotations

import json
from pathlib import Path


def recover_report(result, directory: Path, *, yes: bool, dry_run: bool) -> str:
    """Write the recovered state (unless ``dry_run``) and return the JSON report.  Raises ApprovalDeclined
    (exit 4) when neither ``yes`` nor ``dry_run`` is given (a JSON caller cannot be asked)."""
    from pipeline.errors import ApprovalDeclined
    from pipeline.state.store import state_filename, write_state

    written = None
    if not dry_run:
        if not yes:
            target = directory / state_filename(result.state.stamp, "recovered")
            raise ApprovalDeclined(f"--json never asks, so nothing was written to {target}: pass --yes to write "
                                   "or --dry-run to preview")
        written = str(write_state(directory, result.text, stamp=result.state.stamp, kind="recovered"))
    state = result.state
    engines = dict(result.run.distillate.engines) if result.run is not None else {}
    report = {"command": "recover", "transcript": getattr(result.transcript.meta, "path", None),
              "written": written, "dry_run": dry_run, "stamp": state.stamp, "trigger": state.trigger,
              "sections": engines,
              "counts": {"decisions": len(state.decisions), "facts": len(state.facts),
                         "done": len(state.position.done), "remaining": len(state.position.remaining)},
              "notes": list(result.notes), "dropped": list(result.dropped), "redaction": list(result.redaction)}
    return json.dumps(report, indent=2, ensure_ascii=False)
