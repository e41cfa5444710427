"""Read stage: transcript file -> normalized ``Transcript`` (DESIGN.md "Transcript formats", FORMATS.md).

``read_transcript(path)`` checks the input, detects the format by content and dispatches to the reader
module of that harness.  Reader modules are imported lazily and each exposes
``read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None) -> Transcript``; ``limit`` is
the size the check saw, so a transcript that grows while it is read is read only that far.  An opencode SQLite
database (``opencode.db``) is read one session at a time (``session``; ``pipeline.transcripts.opencode_db``).
"""

from __future__ import annotations

import importlib
import sys

from pipeline.errors import InputError
from pipeline.transcripts.common import DEFAULT_CAPS, Caps, clean_transcript
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.model import ReadReport, Transcript
from pipeline.transcripts.safety import RECOVER_MAX_BYTES, checked_transcript
from pipeline.transcripts.segments import APPEND_ONLY_FORMATS

#: format -> reader module (each has ``read(path, fmt, report, caps)``)
READERS: dict[str, str] = {
    "claude-code-jsonl": "pipeline.transcripts.claude_code",
    "claude-code-json-array": "pipeline.transcripts.claude_code",
    "copilot-events": "pipeline.transcripts.copilot",
    "copilot-legacy": "pipeline.transcripts.copilot",
    "copilot-history": "pipeline.transcripts.copilot_history",
    "opencode-export": "pipeline.transcripts.opencode",
    "opencode-messages": "pipeline.transcripts.opencode",
    "codex-rollout": "pipeline.transcripts.codex",
    "gemini-chat-jsonl": "pipeline.transcripts.gemini",
    "gemini-chat-json": "pipeline.transcripts.gemini",
    "gemini-stream-json": "pipeline.transcripts.gemini",
    "gemini-checkpoint": "pipeline.transcripts.gemini_checkpoint",
    "generic-jsonl": "pipeline.transcripts.generic",
}

#: formats that are recognised but hold no session to recover from -> why they are refused
NOT_TRANSCRIPTS: dict[str, str] = {
    "gemini-prompt-log": (
        "not a session transcript (a Gemini CLI prompt log, logs.json: only the prompts typed, no replies or tool "
        "calls); pass the session file under ~/.gemini/tmp/<project>/chats/ instead"
    ),
}


def read_transcript(
    path: str,
    *,
    max_bytes: int = RECOVER_MAX_BYTES,
    trusted_root: str | None = None,
    caps: Caps = DEFAULT_CAPS,
    warn: bool = True,
    session: str | None = None,
    report: ReadReport | None = None,
) -> Transcript:
    """Read the transcript at ``path`` into a ``Transcript``.

    Raises InputError (exit 2) for a missing file, a symlink, a file that is not a regular file (a FIFO, a
    device), a file outside the trusted root, a file over ``max_bytes`` bytes, an unknown format (naming the formats it knows),
    or a recognised file that is not a session transcript (``NOT_TRANSCRIPTS``: a Gemini CLI prompt log).  Bad records are skipped and
    counted in ``transcript.report``; with ``warn`` one line naming the file and line numbers goes to stderr.

    ``session``: which session of an opencode database to read (None: its only one); the size cap then applies to
    that session's data, not to the database file.  InputError for ``session`` with any other file, for a
    database that cannot be read (named with the reason and ``opencode export`` as the way out), and for a
    session it does not hold.

    ``report``: the ``ReadReport`` to fill (a new one by default); its ``start_at`` and ``segmenter`` start a JSONL
    read at a byte offset and cut it into segments (``pipeline.transcripts.segments``): the transcript returned
    then holds the last segment's events only.
    """
    if _database(path):
        return _read_database(str(path), session, max_bytes=max_bytes, trusted_root=trusted_root, caps=caps, warn=warn,
                              report=report or ReadReport())
    if session is not None:
        raise InputError(f"--session {session} is for an opencode database (opencode.db); this file holds one "
                         "session already", path=str(path))
    resolved, size = checked_transcript(path, max_bytes=max_bytes, trusted_root=trusted_root)
    fmt = detect_format(str(resolved), size)
    if fmt in NOT_TRANSCRIPTS:
        raise InputError(NOT_TRANSCRIPTS[fmt], path=str(path))
    module_name = READERS.get(fmt)
    if module_name is None:
        raise InputError(
            "unknown transcript format (expected Claude Code JSONL or JSON array, Copilot CLI events.jsonl or "
            "history-session-state JSON, opencode export/messages JSON, Codex rollout JSONL, Gemini CLI chat "
            "JSONL/JSON, stream-json or /chat save checkpoint, or {role, content} JSONL)",
            path=str(path),
        )
    reader = importlib.import_module(module_name)
    report = report or ReadReport()
    report.format = fmt
    if (report.start_at or report.end_at is not None) and fmt not in APPEND_ONLY_FORMATS:
        report.start_at = report.end_at = None  # only a file that grows by appended lines is read in parts
    transcript = clean_transcript(reader.read(str(path), fmt, report, caps, size))
    if warn:
        message = report.warning(str(path))
        if message:
            print(message, file=sys.stderr)
    return transcript


def _database(path: str) -> bool:
    """True for a regular file (not a symlink) that starts with the SQLite header (read here: the hook path must
    not import the database reader, sqlite3 and pathlib, for every transcript)."""
    import os

    if not (os.path.isfile(path) and not os.path.islink(path)):
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _read_database(path: str, session: str | None, *, max_bytes: int, trusted_root: str | None, caps: Caps,
                   warn: bool, report: ReadReport) -> Transcript:
    import orjson

    from pipeline.transcripts.opencode import read_export
    from pipeline.transcripts.opencode_db import export_session, pick_session

    checked_transcript(path, max_bytes=1 << 62, trusted_root=trusted_root)  # symlink, regular file, trusted root
    document = export_session(path, pick_session(path, session))
    size = len(orjson.dumps(document))
    if size > max_bytes:
        raise InputError(f"session {document['info'].get('id')} holds {size} bytes of data, over the {max_bytes}-byte "
                         "cap (raise it with --max-bytes)", path=path)
    report.format = "opencode-db"
    transcript = clean_transcript(_fold_subagents(path, read_export(document, path, "opencode-db", report, caps), caps,
                                                  max_bytes))
    if warn:
        message = report.warning(path)
        if message:
            print(message, file=sys.stderr)
    return transcript


def _fold_subagents(path: str, transcript: Transcript, caps: Caps, max_bytes: int) -> Transcript:
    """``transcript`` (a session of the opencode database at ``path``) with the final answers of its sub-agent
    sessions that it lacks added as ``subagent_result`` events (``pipeline.batch.subagents.link``, the rule Claude
    Code sub-agent files follow).  opencode's ``task`` result normally carries the answer already; a sub-agent
    that ended after its parent's last message, or whose call was interrupted, is found only here.  A sub-agent
    session over the ``max_bytes`` cap is left out, as the parent would be refused."""
    import re

    import orjson

    from pipeline.batch.subagents import SubagentFile, link
    from pipeline.transcripts.opencode import read_export
    from pipeline.transcripts.opencode_db import descendants, export_session, list_sessions

    subs = []
    for row in descendants(list_sessions(path), transcript.meta.session_id or ""):
        document = export_session(path, row.id)
        if len(orjson.dumps(document)) > max_bytes:
            continue
        sub = read_export(document, path, "opencode-db", ReadReport(), caps)
        title = (row.title or "").strip()
        # opencode's task tool titles the child session `<description> (@<agent> subagent)`
        named = re.fullmatch(r"(?P<what>.*) \(@(?P<agent>[^()\s]+) subagent\)", title)
        subs.append((SubagentFile(path=path, parent=path, agent_id=row.id,
                                  agent_type=named["agent"] if named else None,
                                  description=(named["what"] if named else title) or None), sub))
    return link(transcript, subs)[0] if subs else transcript


__all__ = ["read_transcript", "detect_format", "READERS", "NOT_TRANSCRIPTS", "Transcript"]
