"""Transcript format detection by content, never by file name (FORMATS.md "Quick format detection").

Reads at most the first ``HEAD_LINES`` JSONL records (or the first element / top-level keys of a JSON
document), skipping leading metadata lines (Claude Code ``summary``, ``queue-operation``,
``file-history-snapshot``, ``permission-mode`` … may come first in real files).
"""

from __future__ import annotations

import orjson

from pipeline.transcripts.common import type_tag

HEAD_LINES = 60
HEAD_BYTES = 8 * 1024 * 1024  # read at most this much of a JSONL head to decide

#: Formats the read stage knows; ``unknown`` is returned for anything else.
FORMATS = (
    "claude-code-jsonl",
    "claude-code-json-array",
    "copilot-events",
    "copilot-legacy",
    "opencode-export",
    "opencode-messages",
    "codex-rollout",
    "generic-jsonl",
)

CLAUDE_META_TYPES = frozenset(
    {
        "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "permission-mode",
        "mode", "agent-setting", "agent-name", "ai-title", "custom-title", "last-prompt", "bridge-session",
    }
)


def _first_byte(path: str) -> bytes:
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(4096)
            if not chunk:
                return b""
            stripped = chunk.lstrip()
            if stripped:
                return stripped[:1]


def _classify_record(rec: dict) -> str | None:
    """Classify one JSONL record; None when it says nothing (metadata line, unknown shape)."""
    rtype = type_tag(rec.get("type"))
    if isinstance(rtype, str) and "data" in rec and "." in rtype and ("id" in rec or "timestamp" in rec):
        if rtype == "session.start":
            data = rec.get("data") or {}
            if isinstance(data, dict) and (data.get("copilotVersion") == "unknown" or "context" not in data):
                return "copilot-legacy"
            return "copilot-events"
        return "copilot-events"
    if rtype == "session_meta" and "payload" in rec:
        return "codex-rollout"
    if "parentUuid" in rec or "isSidechain" in rec or (rtype in ("user", "assistant", "system") and "sessionId" in rec):
        return "claude-code-jsonl"
    if rtype == "system" and rec.get("subtype") == "init" and "session_id" in rec:
        return "claude-code-jsonl"  # stream-json capture: the Claude Code reader tolerates its shape
    if "role" in rec and "content" in rec and rtype is None:
        return "generic-jsonl"
    return None


def _detect_jsonl(path: str) -> str:
    seen_claude_meta = False
    copilot_legacy_hint = False
    read = 0
    with open(path, "rb") as fh:
        for count, raw in enumerate(fh):
            if count >= HEAD_LINES or read > HEAD_BYTES:
                break
            read += len(raw)
            if not raw.strip():
                continue
            try:
                rec = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(rec, dict):
                continue
            kind = _classify_record(rec)
            if kind == "copilot-legacy":
                copilot_legacy_hint = True
                continue
            if kind == "copilot-events" and copilot_legacy_hint:
                return "copilot-legacy"
            if kind:
                return kind
            if type_tag(rec.get("type")) in CLAUDE_META_TYPES:
                seen_claude_meta = True
    if copilot_legacy_hint:
        return "copilot-legacy"
    return "claude-code-jsonl" if seen_claude_meta else "unknown"


def _detect_array(path: str) -> str:
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    with open(path, "rb") as fh:
        guarded = GuardedReader(fh, path)  # JsonTooDeep (an InputError) for a head nested too deep for ijson
        try:
            for item in ijson.items(guarded, "item", use_float=True, buf_size=CHUNK_BYTES):
                guarded.settled(1)
                if not isinstance(item, dict):
                    return "unknown"
                if "info" in item and "parts" in item:
                    return "opencode-messages"
                if "parentUuid" in item or "isSidechain" in item or ("sessionId" in item and "message" in item):
                    return "claude-code-json-array"
                if item.get("type") in CLAUDE_META_TYPES:
                    continue
                if "role" in item and "content" in item:
                    return "unknown"
                return "unknown"
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            return "unknown"
    return "unknown"


def _detect_object_document(path: str) -> str:
    from pipeline.transcripts.records import read_json_object_head

    # ask for "info" only: naming "messages" too would make ijson build that whole array in memory
    head = read_json_object_head(path, ("info",))
    if "info" in head:
        return "opencode-export"
    return "unknown"


def detect_format(path: str) -> str:
    """Return one of ``FORMATS`` or ``"unknown"`` for the file at ``path`` (reads content only).

    A file starting with ``[`` is a JSON array (Claude Code dump or opencode messages); a file starting
    with ``{`` is JSONL when its first line is a complete object, else a JSON document (opencode export).
    Empty and binary files are ``unknown``.
    """
    first = _first_byte(path)
    if first == b"[":
        return _detect_array(path)
    if first != b"{":
        return "unknown"
    with open(path, "rb") as fh:
        first_line = fh.readline(HEAD_BYTES)
    try:
        rec = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        rec = None
    if isinstance(rec, dict):
        if "info" in rec and "messages" in rec:
            return "opencode-export"  # a one-line export document
        return _detect_jsonl(path)
    return _detect_object_document(path)
