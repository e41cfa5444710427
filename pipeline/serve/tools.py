"""What the ``duck-tape mcp`` tools answer: plain, JSON-ready dicts built from the state store and CONTEXT.md.

No MCP import here (``pipeline.serve.mcp`` wraps these): each function is the tool's whole behaviour, so it is
tested without a server.  Every string these return is masked by ``masked`` before it leaves the server.

* ``best_state``: the state file ``duck-tape resume`` would use (``pipeline.resume.plan``: the marker's session,
  manual > recovered > auto, ``pipeline.state.owner``), read-only; when resume would recover first, the newest usable
  auto checkpoint with a note naming the transcript.
* ``find_decisions``: Decision Log entries of every state file in the store and the ``## Decisions`` entries of
  CONTEXT.md containing all the words asked for, newest first.
* ``recover_state``: ``duck-tape recover`` on a transcript path: a preview unless approved, then the written path.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pipeline.errors import InputError

_DATE = re.compile(r"\(date:\s*([0-9]{4}-[0-9]{2}-[0-9]{2})\)\s*$")
_ENTRY = re.compile(r"-\s+\*\*(?P<key>[^*]+)\*\*:\s*(?P<text>.*)")
DEFAULT_LIMIT = 20
"""Most decisions ``find_decisions`` returns unless asked for another number."""


def masked(value: Any) -> Any:
    """``value`` with every string in it (dict values and keys, list items) passed through ``pipeline.redact.safe``:
    the one mask every duck-tape output passes (issue 11).  Other values are returned as they are."""
    from pipeline.redact import safe

    if isinstance(value, str):
        return safe(value)
    if isinstance(value, dict):
        return {masked(k): masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    return value


def _state_json(text: str, path: Path) -> dict[str, Any]:
    from pipeline.state.parse import parse

    return dataclasses.asdict(parse(text, path=str(path)))


def best_state(directory: Path) -> dict[str, Any]:
    """The state file of this workspace that ``resume`` would use, read-only.

    Returns ``{"path", "kind", "messages", "text", "state"}``: ``path`` the file (None when there is none), ``kind``
    manual/auto/recovered, ``messages`` what resume says about the choice (foreign or older files left out, a
    recovery that would come first), ``text`` the file as written, ``state`` the parsed Agent State as a dict
    (``pipeline.state.model.AgentState`` fields).  Raises ``InputError`` when the marker or the chosen file is
    malformed (naming it).
    """
    from pipeline import resume as resume_mod

    found = resume_mod.plan(directory)
    messages = list(found.messages)
    path = found.state_path
    if path is None and found.recover_from and found.marker is not None:
        from pipeline.state.owner import pick_for_marker

        choice, _ = pick_for_marker(directory, found.marker)
        if choice is not None:
            path = choice.info.path
        messages.append(f"resume would first recover a fresher state from {found.recover_from}: call the recover "
                        "tool with that path (and approve: true to write it)")
    if path is None:
        return {"path": None, "kind": None, "messages": messages, "text": None, "state": None}
    from pipeline.state.store import STATE_RE

    text = path.read_text(encoding="utf-8")
    match = STATE_RE.fullmatch(path.name)
    kind = (match["kind"] or "manual") if match else None
    return {"path": str(path), "kind": kind, "messages": messages, "text": text, "state": _state_json(text, path)}


def _words(query: str) -> list[str]:
    return [w for w in re.split(r"\s+", query.lower().strip()) if w]


def _matches(text: str, words: list[str]) -> bool:
    low = text.lower()
    return all(w in low for w in words)


def _state_decisions(directory: Path, words: list[str], notes: list[str]) -> list[dict[str, Any]]:
    from pipeline.state.owner import name_skipped, trusted_states
    from pipeline.state.parse import parse

    usable, untrusted, elsewhere = trusted_states(directory)  # issue 22: only files this store wrote for this folder
    skipped = name_skipped(untrusted, elsewhere)
    if skipped:
        notes.append(skipped)
    seen: set[tuple[str, str, str]] = set()
    found = []
    for info in reversed([c.info for c in usable]):  # newest file first: its copy of a repeated entry is kept
        try:
            state = parse(info.path.read_text(encoding="utf-8"), path=str(info.path))
        except (OSError, InputError) as exc:
            notes.append(f"skipped {info.path.name}: {exc}")
            continue
        for d in state.decisions:
            key = (d.timestamp, d.status, d.what)
            if key in seen or not _matches(f"{d.what} {d.reasoning}", words):
                continue
            seen.add(key)
            found.append({"source": "state", "file": str(info.path), "when": d.timestamp, "status": d.status,
                          "what": d.what, "reasoning": d.reasoning})
    return found


def _context_decisions(context: Path, words: list[str], notes: list[str]) -> list[dict[str, Any]]:
    from pipeline.resume import context_decisions

    if not context.is_file():
        return []
    try:
        lines = context_decisions(context.read_text(encoding="utf-8", errors="replace"), path=str(context))
    except InputError as exc:
        notes.append(f"skipped {context}: {exc}")
        return []
    found = []
    for line in lines:
        if not _matches(line, words):
            continue
        entry = _ENTRY.match(line)
        date = _DATE.search(line)
        found.append({"source": "context", "file": str(context), "when": date[1] if date else None,
                      "key": entry["key"].strip() if entry else None,
                      "text": _DATE.sub("", entry["text"]).strip() if entry else line})
    return found


def find_decisions(directory: Path, context: Path, query: str = "", *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """Decisions containing every word of ``query`` (case-insensitive; empty: all), newest first, at most ``limit``.

    Returns ``{"query", "decisions", "total", "notes"}``.  Each decision is ``{"source": "state", "file", "when"
    (ISO-8601), "status" (APPROVED/REJECTED), "what", "reasoning"}`` from a state file's Decision Log (an entry
    repeated in several files, as the append-only log repeats them, is listed once), or ``{"source": "context",
    "file", "when" (YYYY-MM-DD or None), "key", "text"}`` from CONTEXT.md ``## Decisions`` (DESIGN.md format
    ``- **<name>**: <decision> (date: YYYY-MM-DD)``).  Entries without a time sort last.  ``notes`` names files
    that could not be read (skipped, never fatal).  Raises ``ValueError`` for ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    words = _words(query)
    notes: list[str] = []
    found = _state_decisions(directory, words, notes) + _context_decisions(context, words, notes)
    found.sort(key=lambda d: d["when"] or "", reverse=True)  # stable: equal times keep newest-file order
    return {"query": query, "decisions": found[:limit], "total": len(found), "notes": notes}


def recover_state(transcript: str, directory: Path, *, approve: bool = False, mask: bool = False,
                  session: str | None = None) -> dict[str, Any]:
    """``duck-tape recover TRANSCRIPT`` with the configured engine: the state text always, written only if approved.

    ``approve`` False is a dry run (the preview masks secrets; nothing is written).  ``approve`` True writes
    ``<directory>/<stamp>-recovered.state.md`` (never over an existing file, store rotated) unless the state holds
    secrets and ``mask`` is False (``RedactionRefused``, exit 3 in the CLI).  ``session``: the session of an
    opencode database.  Returns ``{"written" (path or None), "text", "state", "notes"}``.  Raises what ``recover``
    raises: ``InputError`` for an unreadable or unknown transcript, ``RedactionRefused``, ``ValidationFailed``.
    """
    from pipeline.engine_options import config_from_flags
    from pipeline.recovery import recover
    from pipeline.state.store import write_state
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

    result = recover(transcript, max_bytes=max_bytes_from_env(RECOVER_MAX_BYTES), mask=mask or not approve,
                     config=config_from_flags(None, None, None, None), session=session)
    notes = [*result.notes, *(f"validate: {line}" for line in result.dropped), *result.redaction]
    written = None
    if approve:
        written = str(write_state(directory, result.text, stamp=result.state.stamp, kind="recovered"))
    else:
        notes.append("dry run: nothing was written (call again with approve: true to write it)")
    return {"written": written, "text": result.text, "state": dataclasses.asdict(result.state), "notes": notes}
