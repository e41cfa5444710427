"""Generic ``{"role", "content"}`` JSONL reader (DESIGN.md "Transcript formats": generic JSONL).

One message per line.  ``role`` ``user`` -> user_prompt, ``assistant`` -> assistant_text, ``tool`` ->
tool_result; ``system``/``developer`` lines carry instructions, not conversation, and give no event.
``content`` is a string or a list of ``{type:"text", text}`` blocks / strings (FORMATS.md §6.2).

OpenAI chat-style extras are honoured when present: an assistant line's ``tool_calls[] {id, function:{name,
arguments (JSON string)}}`` become tool_call events, and a tool line's ``tool_call_id``/``name`` link its
result to the call.  ``timestamp`` (ISO string) or ``created_at``/``time`` is used when the line has one.
"""

from __future__ import annotations

import orjson

from pipeline.transcripts.common import Caps, EventSink, call_text, cap, iso_from_epoch_ms, norm_iso, text_of, type_tag
from pipeline.transcripts.model import ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_jsonl
from pipeline.transcripts.targets import main_target

_QUIET_ROLES = frozenset({"system", "developer"})


def _timestamp(rec: dict) -> str | None:
    for key in ("timestamp", "created_at", "time"):
        value = rec.get(key)
        if isinstance(value, str):
            return norm_iso(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # seconds or milliseconds since the epoch: values below 1e11 are seconds
            return iso_from_epoch_ms(value * 1000 if value < 1e11 else value)
    return None


def tool_calls(rec: dict, sink: EventSink, caps: Caps, report: ReadReport, ts: str | None, line: int,
               names: dict[str, str]) -> None:
    """The tool_call events of an OpenAI chat message's ``tool_calls[]``: ``{id, function: {name, arguments
    (JSON string)}}`` or ``{id, type: "custom", custom: {name, input (raw string)}}``; ``names`` gets call id ->
    tool name, for the results."""
    calls = rec.get("tool_calls")
    if not isinstance(calls, list):
        return
    for call in calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call.get("custom")
        function = function if isinstance(function, dict) else call
        name = function.get("name") if isinstance(function.get("name"), str) else None
        args = function.get("arguments", function.get("input"))
        if isinstance(args, str):
            try:
                args = orjson.loads(args)
            except orjson.JSONDecodeError:
                pass
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if call_id and name:
            names[call_id] = name
        sink.add(
            "tool_call", text=call_text(args, caps.tool_output, report), timestamp=ts, tool_name=name,
            target=main_target(name, args, limit=caps.target), call_id=call_id, line=line,
        )


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a ``{"role","content"}`` JSONL file (``generic-jsonl``) into a ``Transcript``.

    Blank-content lines give no event; lines with another role are counted in ``report.unknown_types`` as
    ``role:<role>``.  A ``session_id``/``sessionId`` field, when present, becomes the meta's session id.
    Never raises for content.
    """
    sink = EventSink(TranscriptMeta(harness="generic", format=fmt, path=path), report)
    names: dict[str, str] = {}  # tool call id -> tool name
    for line, rec in iter_jsonl(path, report, limit):
        sink.note_session(rec.get("session_id") or rec.get("sessionId"))
        role = type_tag(rec.get("role"))
        text = text_of(rec.get("content"))
        ts = _timestamp(rec)
        if role == "user":
            if text.strip():
                sink.add("user_prompt", text=cap(text, caps.text, report), timestamp=ts, line=line)
        elif role == "assistant":
            if text.strip():
                sink.add("assistant_text", text=cap(text, caps.text, report), timestamp=ts, line=line)
            tool_calls(rec, sink, caps, report, ts, line, names)
        elif role == "tool":
            call_id = rec.get("tool_call_id") if isinstance(rec.get("tool_call_id"), str) else None
            name = rec.get("name") if isinstance(rec.get("name"), str) else names.get(call_id or "")
            sink.add(
                "tool_result", text=cap(text, caps.tool_output, report), timestamp=ts, tool_name=name,
                call_id=call_id, is_error=rec.get("is_error") is True, line=line,
            )
        elif role in _QUIET_ROLES:
            continue
        else:
            report.unknown_types[f"role:{role}"] += 1
    return sink.finish()
