"""``duck-tape status``: is duck-tape set up here, and did the last checkpoint work? (issue 15, item 4.)

``gather`` reads (never writes) and returns one JSON-able dict; ``problems`` lists what is wrong (the command
exits 1 when it is not empty), ``warnings`` what is worth knowing but not broken.  Shape (README "Machine-readable
output")::

    {"command": "status", "healthy": bool, "problems": [str], "warnings": [str],
     "root": str, "store": str,
     "hooks": [{"harness", "scope", "path", "checkpoint": bool, "restore": bool, "program", "program_found": bool}],
     "marker": null | {"path", "time", "age_seconds", "session", "cwd", "latest_state", "transcript",
                       "transcript_exists": bool},
     "last_checkpoint": null | {"time", "wrote_state": bool, "state", "reason", "notes": [str], "source"},
     "states": [{"path", "kind", "stamp", "age_seconds"}],
     "context": {"path", "exists": bool, "missing_sections": [str], "error": str | null},
     "engine": {"requested", "effective", "model", "api_base", "reachable": bool | null, "detail", "called": bool},
     "refine": {"on": bool, "model": str | null},
     "llm_usage": null | {"runs", "tokens", "since", "by_action": {action: tokens}, "last": {…}, "last_refine": {…}},
     "config": {key: {"value", "source"}}}

``llm_usage`` sums the store's ledger (``pipeline.llm.ledger``: the tokens the background refinement, ``recover``
and ``resume`` spent on a model); each entry ``{"time", "action", "model", "session", "requests", "failed",
"cached", "sent", "received", "tokens", "estimated", "seconds", "outcome", "file", "note"}``.

``last_checkpoint.source`` is ``record`` when the hook's own record (``.last-checkpoint.json``) says what it did,
``marker`` when only the marker is there to go by (then ``reason`` is inferred from it).
"""

from __future__ import annotations

import os
import shlex
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping


def _age(moment: datetime, now: datetime) -> int:
    return max(0, int((now - moment).total_seconds()))


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _stamp_time(stamp: str) -> datetime | None:
    try:
        return datetime.strptime(stamp, "%Y-%m-%d-%H%M").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _program(command: str, root: Path) -> tuple[str | None, bool]:
    try:
        words = shlex.split(command)
    except ValueError:
        return None, False
    if not words:
        return None, False
    program = words[0]
    if "/" in program or os.sep in program:
        path = Path(os.path.expandvars(os.path.expanduser(program)))
        path = path if path.is_absolute() else root / path
        return program, path.is_file() and os.access(path, os.X_OK)
    return program, shutil.which(program) is not None


COMMAND_KEYS = frozenset({"command", "bash", "powershell"})
"""The keys whose value a harness runs (Claude Code, Gemini, Codex ``command``; Copilot ``bash``/``powershell``),
not a label such as Gemini's ``name``."""


def _strings(value: Any, key: str | None = None) -> list[str]:
    if isinstance(value, str):
        return [value] if key in COMMAND_KEYS else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, k)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, key)]
    return []


def _commands(path: Path, text: str) -> list[str]:
    """The command lines in a hook file that run duck-tape: JSON string values (Claude Code, Copilot, …), or the
    word list of the opencode plugin (``const DUCK_TAPE = [...]``, followed by ``checkpoint``)."""
    import json
    import re

    from pipeline.hooks.install import OURS, OURS_RESTORE

    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError:
            return []
        return [s for s in _strings(data) if OURS.search(s) or OURS_RESTORE.search(s)]
    words = re.search(r"const DUCK_TAPE = (\[.*?\])", text)
    if words and "checkpoint" in text:
        try:
            return [shlex.join(json.loads(words.group(1))) + " checkpoint"]
        except (ValueError, TypeError):
            return []
    return []


def hooks(root: Path, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every duck-tape hook found in the project's and the user's harness settings (``detect.HARNESSES``)."""
    from pipeline.hooks import detect
    from pipeline.hooks.install import OURS, OURS_RESTORE

    found = []
    for harness in detect.HARNESSES:
        for scope, path in harness.installed_files(root, env):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            commands = _commands(path, text)
            if not commands:
                continue
            program, program_found = _program(commands[0], root)
            found.append({"harness": harness.name, "scope": scope, "path": str(path),
                          "checkpoint": any(OURS.search(c) for c in commands),
                          "restore": any(OURS_RESTORE.search(c) for c in commands),
                          "program": program, "program_found": program_found})
    return found


def _doubled(found: list[dict[str, Any]]) -> list[str]:
    """One warning per harness whose duck-tape hooks sit in more than one settings file (per project and per user,
    or two project files): the harness runs each copy, so a compaction checkpoints twice and may hand the state
    back twice (issue 24, item 6)."""
    by_harness: dict[str, list[dict[str, Any]]] = {}
    for hook in found:
        by_harness.setdefault(hook["harness"], []).append(hook)
    out = []
    for harness, hooks_of in by_harness.items():
        if len(hooks_of) > 1:
            where = ", ".join(f"{h['scope']} {h['path']}" for h in hooks_of)
            out.append(f"{harness}: duck-tape hooks are installed in {len(hooks_of)} places ({where}): each "
                       "compaction runs every copy; keep one")
    return out


def _marker(store: Path, now: datetime, problems: list[str]) -> dict[str, Any] | None:
    from pipeline.errors import InputError
    from pipeline.state.marker import marker_path, read_marker

    try:
        marker = read_marker(store)
    except InputError as exc:
        problems.append(f"the marker cannot be read: {exc}")
        return None
    if marker is None:
        return None
    from pipeline.state.owner import marker_session

    moment = _parse_time(marker.time)
    return {"path": str(marker_path(store)), "time": marker.time,
            "age_seconds": _age(moment, now) if moment else None,
            # the marker's session-id, else the one its transcript path names (issue 24, item 6: it was always null)
            "session": marker_session(marker), "cwd": marker.cwd, "latest_state": marker.latest_state,
            "transcript": marker.transcript,
            "transcript_exists": bool(marker.transcript and Path(marker.transcript).is_file())}


def _last_checkpoint(store: Path, marker: dict | None) -> dict[str, Any] | None:
    from pipeline.hooks.lastrun import read

    record = read(store)
    if record is not None:
        notes = [str(n) for n in record.get("notes") or []]
        wrote = bool(record.get("written"))
        reason = None
        if not wrote:
            reason = "; ".join(n.removeprefix("duck-tape: checkpoint: ") for n in notes) or "no reason recorded"
        return {"time": record.get("time"), "wrote_state": wrote, "state": record.get("state"), "reason": reason,
                "notes": notes, "source": "record"}
    if marker is None:
        return None
    latest = marker.get("latest_state") or ""
    moment = _parse_time(marker["time"])
    minute = moment.astimezone(timezone.utc).strftime("%Y-%m-%d-%H%M") if moment else ""
    wrote = latest == f"{minute}-auto.state.md" and (store / latest).is_file()
    reason = None
    if not wrote:
        reason = ("no transcript was recorded: the hook got no usable transcript path" if not marker["transcript"]
                  else "no state file of the compaction's minute: the transcript could not be distilled "
                       "(run duck-tape resume to recover from it)")
    return {"time": marker["time"], "wrote_state": wrote, "state": str(store / latest) if wrote else None,
            "reason": reason, "notes": [], "source": "marker"}


def _created(path: Path) -> datetime | None:
    """The ``Created:`` time in the head of the state file at ``path`` (to the second), None when unreadable."""
    import re

    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    found = re.search(r"^Created: (\S+)", head, re.MULTILINE)
    return _parse_time(found.group(1)) if found else None


def _states(store: Path, now: datetime) -> list[dict[str, Any]]:
    """The store's state files, newest first.  Age: from the file's ``Created:`` time, else its name's minute
    (issue 24, item 6: the minute in the name made a write 10 s old look 48 s old beside the marker's 10 s)."""
    from pipeline.state.store import list_states

    out = []
    for info in reversed(list_states(store, now=now)):
        moment = _created(info.path) or _stamp_time(info.stamp)
        out.append({"path": str(info.path), "kind": info.kind, "stamp": info.stamp,
                    "age_seconds": _age(moment, now) if moment else None})
    return out


def _context(path: Path) -> dict[str, Any]:
    from pipeline.errors import DuckTapeError

    report: dict[str, Any] = {"path": str(path), "exists": path.is_file(), "missing_sections": [], "error": None}
    if not report["exists"]:
        return report
    from pipeline.context.parse import parse

    try:
        doc = parse(path.read_text(encoding="utf-8", errors="replace"), path=str(path))
    except DuckTapeError as exc:
        report["error"] = str(exc)
        return report
    report["missing_sections"] = list(doc.missing())
    return report


def _engine(config, check_model: bool) -> dict[str, Any]:
    from pipeline import model_check

    effective = config.effective_engine()
    report = {"requested": config.engine, "effective": effective, "model": config.model,
              "api_base": config.api_base, "reachable": None, "detail": "the rules engine needs no model",
              "called": False}
    if effective != "llm" and not check_model:
        return report
    if check_model and config.model:
        report["reachable"], report["detail"] = model_check.call_check(config)
        report["called"] = True
    else:
        report["reachable"], report["detail"] = model_check.cheap_check(config)
    return report


def gather(root: Path, store: Path, context_path: Path, *, check_model: bool = False,
           env: Mapping[str, str] | None = None, now: datetime | None = None) -> dict[str, Any]:
    """The status of the project at ``root`` with state store ``store`` and ``context_path`` (module docstring)."""
    from pipeline import config as config_mod
    from pipeline.errors import DuckTapeError

    env = os.environ if env is None else env
    now = now or datetime.now(timezone.utc)
    problems: list[str] = []
    warnings: list[str] = []
    found = hooks(root, env)
    if not any(h["checkpoint"] for h in found):
        problems.append("no duck-tape checkpoint hook is installed for this project or user: run duck-tape init")
    for hook in found:
        if hook["program"] and not hook["program_found"]:
            problems.append(f"{hook['path']}: the hook runs {hook['program']!r}, which is not found here")
    warnings += _doubled(found)
    marker = _marker(store, now, problems)
    last = _last_checkpoint(store, marker)
    if last is not None and not last["wrote_state"]:
        problems.append(f"the last checkpoint ({last['time']}) wrote only the marker: {last['reason']}")
    if marker is not None and marker["transcript"] and not marker["transcript_exists"]:
        warnings.append(f"the marker's transcript {marker['transcript']} no longer exists")
    states = _states(store, now)
    if marker is None and not states:
        warnings.append(f"nothing saved yet in {store}: the first compaction (or duck-tape recover) writes it")
    context = _context(context_path)
    if context["error"]:
        problems.append(f"CONTEXT.md cannot be merged into: {context['error']}")
    elif context["missing_sections"]:
        warnings.append(f"{context_path} lacks the section(s) {', '.join(context['missing_sections'])} "
                        "(the next merge adds them)")
    try:
        config, sources = config_mod.resolve_with_sources(env=env, root=root)
    except DuckTapeError as exc:
        problems.append(f"configuration: {exc}")
        config, sources = config_mod.DEFAULTS, {}
    engine = _engine(config, check_model)
    if engine["effective"] == "llm" and config.model:
        from pipeline.extras import install_line, missing

        absent = missing()
        if absent:
            problems.append(f"the llm engine is configured (model {config.model}) but its optional packages are not "
                            f"installed ({', '.join(absent)}): {install_line()}")
    if engine["reachable"] is False:
        problems.append(f"the {'configured ' if engine['effective'] == 'llm' else ''}model is not reachable: "
                        f"{engine['detail']}")
    values = {key: {"value": getattr(config, key), "source": sources.get(key, "default")} for key in config_mod.KEYS}
    from pipeline.llm import ledger

    usage = ledger.summary(store)
    refine = {"on": bool(config.refine and config.model), "model": config.model if config.refine else None}
    if config.refine and not config.model:
        problems.append("refine is on but no model is configured: set model (e.g. agent:claude-code)")
    last_refine = usage["last_refine"] if usage else None
    if last_refine is not None and last_refine.get("outcome") in ("failed", "fell back"):
        warnings.append(f"the last background refinement ({last_refine.get('time')}) wrote nothing: "
                        f"{last_refine.get('note') or last_refine.get('outcome')}")
    return {"command": "status", "healthy": not problems, "problems": problems, "warnings": warnings,
            "root": str(root.resolve()), "store": str(store), "hooks": found, "marker": marker,
            "last_checkpoint": last, "states": states, "context": context, "engine": engine, "refine": refine,
            "llm_usage": usage, "config": values}
