"""``--json`` output (issue 15, item 5; shapes in docs/json.md): one JSON object on stdout, built here once.

Every command with ``--json`` prints its report through ``emit``: each string of the object (keys included) passes
the mask of every printed text (``pipeline.redact.safe``, issue 11) before it is serialized, so a secret is masked
where it sits and the JSON stays valid (masking the serialized text could cut through an escape).  A command in
JSON mode calls ``begin`` first; when it then fails, ``pipeline.cli.main`` calls ``emit_error`` and stdout gets
``{"command": <name>, "error": <message>, "exit_code": <N>}`` (plus ``"redaction"`` for a refused write) instead of
nothing (a usage error click finds while parsing the flags too, ``begin_from_args``), the exit code staying the one of DESIGN.md "Exit codes" and the error line still going to stderr.  A
command that already printed its object (``status`` with problems, exit 1) prints no second one.

``recover --json`` (``recover_report``) and ``resume --json`` (``resume_report``) are built here too: both write
state files through ``pipeline.state.store`` and never ask (a JSON caller cannot be asked): without ``--yes`` (and
not ``--dry-run``) nothing is written and the approval is declined (exit 4).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

_mode: dict[str, Any] = {"command": None, "emitted": False}


def begin(command: str) -> None:
    """Put the running command into JSON mode (an error then prints the error object, ``emit_error``)."""
    _mode.update(command=command, emitted=False)


JSON_COMMANDS = frozenset({"init", "status", "recover", "resume", "restore", "merge", "migrate", "prune", "verify"})
"""Commands whose ``--json`` flag prints the object on stdout (``eval --json FILE`` writes a file instead)."""


def begin_from_args(args: list[str]) -> None:
    """Enter JSON mode from the raw arguments when click failed before the command began: ``args[0]`` is one of
    ``JSON_COMMANDS`` and ``--json`` comes before any ``--``."""
    if _mode["command"] is None and args and args[0] in JSON_COMMANDS:
        words = args[1:args.index("--")] if "--" in args else args[1:]
        if "--json" in words:
            begin(args[0])


def reset() -> None:
    """Leave JSON mode (``pipeline.cli.main`` calls it before each command)."""
    _mode.update(command=None, emitted=False)


def masked(value: Any) -> Any:
    """``value`` with every string in it (dict keys too) masked by ``pipeline.redact.safe``; paths become strings,
    tuples lists; numbers, booleans and None are kept."""
    from pipeline.redact import safe

    if isinstance(value, str):
        return safe(value)
    if isinstance(value, Path):
        return safe(str(value))
    if isinstance(value, dict):
        return {masked(str(k)): masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return safe(str(value))


def dumps(report: dict) -> str:
    """The masked ``report`` as the indented JSON text ``emit`` prints (no final newline)."""
    return json.dumps(masked(report), indent=2, ensure_ascii=False)


def emit(report: dict) -> None:
    """Print ``report`` as the command's one JSON object on stdout (masked, ``dumps``)."""
    click.echo(dumps(report))
    _mode["emitted"] = True


def emit_error(message: str, exit_code: int, *, redaction: list[str] | None = None) -> bool:
    """In JSON mode, before any object was printed: print the error object (module docstring) and return True;
    otherwise print nothing and return False."""
    if _mode["command"] is None or _mode["emitted"]:
        return False
    report: dict[str, Any] = {"command": _mode["command"], "error": message, "exit_code": exit_code}
    if redaction:
        report["redaction"] = list(redaction)
    emit(report)
    return True


def _write_recovered(result, directory: Path, *, yes: bool, dry_run: bool) -> str | None:
    """Write the recovered state unless ``dry_run``; the path written.  ApprovalDeclined without ``yes``."""
    from pipeline.errors import ApprovalDeclined
    from pipeline.state.store import state_filename, write_state

    if dry_run:
        return None
    if not yes:
        target = directory / state_filename(result.state.stamp, "recovered")
        raise ApprovalDeclined(f"--json never asks, so nothing was written to {target}: pass --yes to write "
                               "or --dry-run to preview")
    written = str(write_state(directory, result.text, stamp=result.state.stamp, kind="recovered"))
    from pipeline.llm import ledger

    ledger.record_run(directory, "recover", result.run, written)  # the tokens a model spent, for `status`
    return written


def _recovery_fields(result) -> dict:
    state = result.state
    return {"stamp": state.stamp, "trigger": state.trigger,
            "sections": dict(result.run.distillate.engines) if result.run is not None else {},
            "counts": {"decisions": len(state.decisions), "facts": len(state.facts),
                       "done": len(state.position.done), "remaining": len(state.position.remaining)},
            "notes": list(result.notes), "dropped": list(result.dropped), "redaction": list(result.redaction)}


def recover_report(result, directory: Path, *, yes: bool, dry_run: bool) -> dict:
    """Write the recovered state (unless ``dry_run``) and return the ``recover --json`` object:
    ``{"command": "recover", "transcript", "written": path | null, "dry_run", "stamp", "trigger",
    "sections": {section: engine}, "counts": {"decisions", "facts", "done", "remaining"}, "notes", "dropped",
    "redaction"}`` (``recover --merge`` adds ``"merge"``).  Raises ApprovalDeclined (exit 4) when neither ``yes``
    nor ``dry_run`` is given."""
    written = _write_recovered(result, directory, yes=yes, dry_run=dry_run)
    return {"command": "recover", "transcript": getattr(result.transcript.meta, "path", None), "written": written,
            "dry_run": dry_run, **_recovery_fields(result)}


def resume_report(found, directory: Path, *, recovery, yes: bool, dry_run: bool, context_path: Path,
                  context_lines: list[str] | None, reconciliation: list[str] | None) -> dict:
    """The ``resume --json`` object (docs/json.md), writing the recovered state first when ``recovery`` (a
    ``pipeline.recovery.Recovery``) is given and not ``dry_run``.  ``found``: the ``pipeline.resume.ResumePlan``;
    ``context_lines``: the decision lines of CONTEXT.md (None: no such file); ``reconciliation``: the lines of
    ``--reconcile`` (None: not asked).  Raises ApprovalDeclined (exit 4) for a recovery without ``yes``."""
    marker = found.marker
    report: dict[str, Any] = {
        "command": "resume", "store": str(directory), "messages": list(found.messages),
        "marker": None if marker is None else {"time": marker.time, "session": marker.session_id,
                                               "cwd": marker.cwd, "transcript": marker.transcript},
        "state": None if found.state_path is None else str(found.state_path),
        "recovered": None, "dry_run": dry_run, "position": None, "context": str(context_path),
        "context_exists": context_lines is not None, "decisions": [], "reconciliation": reconciliation}
    if found.stop:
        return report
    state = found.state
    if recovery is not None:
        written = _write_recovered(recovery, directory, yes=yes, dry_run=dry_run)
        report["recovered"] = {"transcript": found.recover_from, "written": written, **_recovery_fields(recovery)}
        report["state"] = written
        state = recovery.state
    assert state is not None
    from pipeline.restore.guard import dropped_note
    from pipeline.resume import guarded_state, relevant_decisions

    state, context_lines, dropped = guarded_state(state, context_lines)  # issue 22: no orders to an AI agent
    pos = state.position
    report["position"] = {"current": pos.current, "done": list(pos.done), "remaining": list(pos.remaining)}
    report["decisions"] = relevant_decisions(state, context_lines) if context_lines is not None else []
    note = dropped_note("Note:", dropped)
    if note:
        report["messages"].append(note)
    return report
