"""Transcript format detection by content, never by file name (FORMATS.md "Quick format detection").

Reads a bounded head: at most the first ``HEAD_LINES`` JSONL records and ``HEAD_BYTES`` bytes of them (or
the first elements / top-level keys within the first ``HEAD_BYTES`` of a JSON document), skipping leading
metadata lines (Claude Code ``summary``, ``queue-operation``, ``file-history-snapshot``, ``permission-mode`` …
may come first in real files).

One bad line never decides (issue 11, part 5): a UTF-8 BOM is skipped (``source.open_transcript``), lines that
do not parse (a torn or garbage first line, a bit flip, invalid UTF-8 or numbers out of double range, read as
the readers read them: ``records.parse_line``) are passed over, and the format comes from the first lines that
say something.  A file starting with ``{`` or ``[`` that is not a JSON document is tried as JSONL.  A line
longer than what is left of ``HEAD_BYTES`` is passed over unparsed (``SCAN_BYTES`` at most), so a 50 MB first
line costs a scan for its end, not a parse.
"""

from __future__ import annotations

from pipeline.transcripts.common import type_tag
from pipeline.transcripts.depth import JsonTooDeep
from pipeline.transcripts.records import parse_line
from pipeline.transcripts.source import open_transcript

HEAD_LINES = 60
HEAD_BYTES = 8 * 1024 * 1024  # parse at most this much of a JSONL head (or read of a JSON document) to decide
SCAN_BYTES = 64 * 1024 * 1024  # pass over at most this much (lines too long to parse) before giving up
_SKIP_CHUNK = 1024 * 1024

#: Codex rollout record types besides ``session_meta`` (FORMATS.md §4): a rollout whose first line is damaged
#: is still recognised by the ``{timestamp, type, payload}`` lines that follow.
CODEX_TYPES = frozenset({"response_item", "event_msg", "turn_context", "compacted"})

#: Formats the read stage knows; ``unknown`` is returned for anything else.
FORMATS = (
    "claude-code-jsonl",
    "claude-code-json-array",
    "copilot-events",
    "copilot-legacy",
    "opencode-export",
    "opencode-messages",
    "codex-rollout",
    "gemini-chat-jsonl",
    "gemini-chat-json",
    "gemini-stream-json",
    "gemini-checkpoint",
    "copilot-history",
    "gemini-prompt-log",  # recognised only to be refused: not a session transcript (pipeline.transcripts)
    "generic-jsonl",
)

#: Gemini CLI chat record types (FORMATS.md §5) and ``stream-json`` line types that only Gemini writes.
GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
GEMINI_STREAM_TYPES = frozenset({"tool_use", "tool_result"})

CLAUDE_META_TYPES = frozenset(
    {
        "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "permission-mode",
        "mode", "agent-setting", "agent-name", "ai-title", "custom-title", "last-prompt", "bridge-session",
    }
)


def first_byte(path: str, limit: int | None = None) -> bytes:
    """The first byte of the file that is not whitespace (after a BOM); b"" when there is none in the head."""
    scanned = 0
    with open_transcript(path, limit) as fh:
        while scanned < SCAN_BYTES:
            chunk = fh.read(4096)
            if not chunk:
                return b""
            scanned += len(chunk)
            stripped = chunk.lstrip()
            if stripped:
                return stripped[:1]
    return b""


def _classify_record(rec: dict) -> str | None:
    """Classify one JSONL record; None when it says nothing (metadata line, unknown shape, or an envelope whose
    ``data``/``payload`` is not an object: a damaged line decides nothing)."""
    rtype = type_tag(rec.get("type"))
    if (isinstance(rtype, str) and "." in rtype and isinstance(rec.get("data"), dict)
            and ("id" in rec or "timestamp" in rec)):
        if rtype == "session.start":
            data = rec["data"]
            if data.get("copilotVersion") == "unknown" or "context" not in data:
                return "copilot-legacy"
        return "copilot-events"
    if rtype == "session_meta" and isinstance(rec.get("payload"), dict):
        return "codex-rollout"
    if rtype in CODEX_TYPES and isinstance(rec.get("payload"), dict) and "timestamp" in rec:
        return "codex-rollout"
    gemini = _classify_gemini(rec, rtype)
    if gemini:
        return gemini
    if "parentUuid" in rec or "isSidechain" in rec or (rtype in ("user", "assistant", "system") and "sessionId" in rec):
        return "claude-code-jsonl"
    if rtype in ("user", "assistant") and _is_message(rec.get("message")):
        # a minimal Claude Code line, {type, message, timestamp} without uuid or sessionId (test fixtures and
        # trimmed exports write these; issue 24, item 5)
        return "claude-code-jsonl"
    if rtype == "system" and rec.get("subtype") == "init" and "session_id" in rec:
        return "claude-code-jsonl"  # stream-json capture: the Claude Code reader tolerates its shape
    if "role" in rec and "content" in rec and rtype is None:
        return "generic-jsonl"
    return None


def _is_message(message: object) -> bool:
    """Whether ``message`` is a Claude Code API message: an object with a ``role`` and a ``content``."""
    return isinstance(message, dict) and message.get("role") in ("user", "assistant") and "content" in message


def _classify_gemini(rec: dict, rtype: str | None) -> str | None:
    """A Gemini CLI chat JSONL line (header, message record, ``$set`` / ``$rewindTo``) or ``stream-json`` line."""
    if "parentUuid" in rec or "uuid" in rec or "message" in rec:
        return None  # Claude Code
    if "sessionId" in rec and "projectHash" in rec:
        return "gemini-chat-jsonl"  # the header (or a whole legacy session object on one line)
    if isinstance(rec.get("$set"), dict) or isinstance(rec.get("$rewindTo"), str):
        return "gemini-chat-jsonl"
    if rtype in GEMINI_TYPES and isinstance(rec.get("id"), str) and "content" in rec and "role" not in rec:
        return "gemini-chat-jsonl"
    if rtype == "init" and "session_id" in rec and "subtype" not in rec:
        return "gemini-stream-json"
    if rtype in GEMINI_STREAM_TYPES and "tool_id" in rec:
        return "gemini-stream-json"
    if (rtype == "message" and rec.get("role") in ("user", "assistant") and isinstance(rec.get("content"), str)
            and "timestamp" in rec):
        return "gemini-stream-json"
    return None


def _detect_jsonl(path: str, limit: int | None) -> str:
    seen_claude_meta = False
    copilot_legacy_hint = False
    parsed = scanned = lines = 0
    with open_transcript(path, limit) as fh:
        while lines < HEAD_LINES and scanned < SCAN_BYTES and parsed < HEAD_BYTES:
            room = HEAD_BYTES - parsed
            raw = fh.readline(room)
            if not raw:
                break
            scanned += len(raw)
            if len(raw) == room and not raw.endswith(b"\n"):  # longer than the parse budget left: pass over it
                while scanned < SCAN_BYTES:
                    rest = fh.readline(_SKIP_CHUNK)
                    scanned += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                lines += 1
                continue
            if raw.isspace():
                continue
            lines += 1
            parsed += len(raw)
            rec = parse_line(raw)
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


def _head_limit(limit: int | None) -> int:
    return HEAD_BYTES if limit is None else min(limit, HEAD_BYTES)


def _detect_array(path: str, limit: int | None) -> str:
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    with open_transcript(path, _head_limit(limit)) as fh:
        guarded = GuardedReader(fh, path)  # JsonTooDeep (an InputError) for a head nested too deep for ijson
        try:
            # like JSONL lines: the first elements that say something decide, a damaged one is passed over
            for count, item in enumerate(ijson.items(guarded, "item", use_float=True, buf_size=CHUNK_BYTES)):
                guarded.settled(1)
                if count >= HEAD_LINES:
                    break
                if not isinstance(item, dict):
                    continue
                if "info" in item and "parts" in item:
                    return "opencode-messages"
                if is_content(item):
                    return "gemini-checkpoint"  # a /chat save checkpoint: Content[] (gemini-cli, up to 2025-11)
                if "messageId" in item and isinstance(item.get("message"), str) and "parentUuid" not in item:
                    return "gemini-prompt-log"  # logs.json: {sessionId, messageId, type, message, timestamp}
                if "parentUuid" in item or "isSidechain" in item or ("sessionId" in item and "message" in item):
                    return "claude-code-json-array"
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            return "unknown"
    return "unknown"


def is_content(item: object) -> bool:
    """Whether ``item`` is a Gemini API ``Content``: ``{role: "user"|"model", parts: [...]}`` and nothing that
    makes it an opencode message (``info``)."""
    return (isinstance(item, dict) and item.get("role") in ("user", "model") and isinstance(item.get("parts"), list)
            and "info" not in item)


#: top-level keys after which ``_object_keys`` stops: the arrays that hold a document's messages
_BODY_KEYS = frozenset({"messages", "info", "chatMessages", "timeline", "history"})


def _object_keys(path: str, limit: int | None) -> set[str]:
    """Top-level keys of a JSON object document up to the first key of ``_BODY_KEYS`` (ijson events: no value
    is built, so a huge ``messages`` array costs nothing)."""
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    keys: set[str] = set()
    with open_transcript(path, limit) as fh:
        guarded = GuardedReader(fh, path)
        try:
            for prefix, event, value in ijson.parse(guarded, use_float=True, buf_size=CHUNK_BYTES):
                if prefix == "" and event == "map_key":
                    keys.add(value)
                    if value in _BODY_KEYS:
                        break
                elif prefix == "" and event != "start_map":
                    break  # not an object
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            pass
    return keys


def _first_item_is_content(path: str, prefix: str, limit: int | None) -> bool:
    """Whether the first element under ``prefix`` of a JSON document is a Gemini ``Content`` (``is_content``)."""
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    with open_transcript(path, _head_limit(limit)) as fh:
        try:
            for item in ijson.items(GuardedReader(fh, path), prefix, use_float=True, buf_size=CHUNK_BYTES):
                return is_content(item)
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            pass
    return False


def _one_line_document(rec: dict) -> str | None:
    """The format of a whole JSON object document written on one line, or None for a JSONL record."""
    if "info" in rec and "messages" in rec:
        return "opencode-export"
    if isinstance(rec.get("sessionId"), str) and (isinstance(rec.get("chatMessages"), list)
                                                  or isinstance(rec.get("timeline"), list)):
        return "copilot-history"
    history = rec.get("history")
    if isinstance(history, list) and history and is_content(history[0]):
        return "gemini-checkpoint"
    return None


def _detect_object_document(path: str, limit: int | None) -> str:
    from pipeline.transcripts.records import read_json_object_head

    keys = _object_keys(path, _head_limit(limit))
    if "sessionId" in keys and ("chatMessages" in keys or "timeline" in keys):
        return "copilot-history"  # ~/.copilot/history-session-state/session_<id>_<ms>.json (Copilot CLI <= 0.0.341)
    if "history" in keys:
        # a /chat save checkpoint {history: Content[], authType?} (gemini-cli since 2025-11)
        return "gemini-checkpoint" if _first_item_is_content(path, "history.item", limit) else "unknown"
    if {"sessionId", "projectHash", "messages"} <= keys:
        # the legacy session object {sessionId, projectHash, …, messages}; without reaching "messages" it may
        # be a chat JSONL whose header line is torn (then the lines after it decide)
        return "gemini-chat-json"

    # ask for "info" only: naming "messages" too would make ijson build that whole array in memory
    head = read_json_object_head(path, ("info",), _head_limit(limit))
    info = head.get("info")
    if isinstance(info, dict) and "role" not in info:  # a message's info has a role, a session's has none
        return "opencode-export"
    return "unknown"


def detect_format(path: str, limit: int | None = None) -> str:
    """Return one of ``FORMATS`` or ``"unknown"`` for the file at ``path`` (reads content only, at most ``limit``
    bytes of it and a bounded head of those: module docstring).

    A file starting with ``{`` is JSONL when its first line is a complete object (unless that object is a whole
    document: an opencode export, a Copilot CLI history document, a Gemini CLI checkpoint), else a JSON document
    (those three, or a Gemini CLI legacy chat object) or, when the document does not say, JSONL whose first line
    is the bad one.  A file starting with ``[`` is JSONL when its head has object lines (the ``[`` is a bad first
    line), else a JSON array (Claude Code dump, opencode messages, Gemini CLI checkpoint ``Content[]``, Gemini CLI
    prompt log).  A file starting with anything else is tried as JSONL.
    Empty and binary files are ``unknown``.  Raises ``NotRegularFile`` (an ``InputError``) for a FIFO or
    device, ``JsonTooDeep`` for a document head nested too deep.
    """
    first = first_byte(path, limit)
    if not first:
        return "unknown"
    if first == b"[":
        # JSONL first: a JSONL file whose first line is a bare "[" would pass for an array whose first element
        # ijson yields before it meets the missing comma.  A real array (one line, or indented) has no line that
        # is a JSON object on its own, so this costs it a failed parse of a few head lines.
        fmt = _detect_jsonl(path, limit)
        return fmt if fmt != "unknown" else _detect_array(path, limit)
    too_deep = None
    if first == b"{":
        with open_transcript(path, limit) as fh:
            first_line = fh.readline(HEAD_BYTES)
        rec = parse_line(first_line) if first_line.endswith(b"\n") or len(first_line) < HEAD_BYTES else None
        if isinstance(rec, dict):
            return _one_line_document(rec) or _detect_jsonl(path, limit)
        try:
            fmt = _detect_object_document(path, limit)
        except JsonTooDeep as exc:  # not a document ijson may read; a JSONL file whose first line is the deep one?
            too_deep = exc
        else:
            if fmt != "unknown":
                return fmt
    fmt = _detect_jsonl(path, limit)
    if fmt == "unknown" and too_deep is not None:
        raise too_deep
    return fmt
