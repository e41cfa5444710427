"""Helpers shared by the transcript readers: field caps, timestamps, and the event builder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import orjson

from pipeline.transcripts.clean import clean_timestamp, strip_invisible
from pipeline.transcripts.model import Event, ReadReport, TodoItem, Transcript, TranscriptMeta


@dataclass(frozen=True, slots=True)
class Caps:
    """Field caps in characters (DESIGN.md "Transcript formats": over-long fields are capped).

    ``text``: prompts, assistant messages, compaction summaries; ``tool_output``: tool results;
    ``subagent``: sub-agent results; ``target``: a tool call's main argument.
    """

    text: int = 20_000
    tool_output: int = 4_000
    subagent: int = 12_000
    target: int = 300


DEFAULT_CAPS = Caps()


def cap(text: str, limit: int, report: ReadReport) -> str:
    """Return ``text`` cut to ``limit`` characters (marking the cut with ``...[+N chars]``), counting cuts in ``report``.

    The marker is ASCII on purpose: a non-Latin-1 character would make CPython store the whole kept text at
    2 bytes per character (the 60 MB memory budget holds thousands of capped tool outputs).
    """
    if len(text) <= limit:
        return text
    report.capped_fields += 1
    return f"{text[:limit]}...[+{len(text) - limit} chars]"


def call_text(args: object, limit: int, report: ReadReport) -> str:
    """Text of a tool call event: one ``key: value`` line per argument, capped at ``limit`` characters.

    String values are kept verbatim (so a quote of a command or an edit is found in the event text; JSON
    would escape it), other values are compact JSON; each value is cut at ``limit`` first, so a huge file
    content costs only ``limit``.  A raw-string argument (custom tools: patch text) is the text itself.
    The whole rendering is cut with ``cap`` (counted in ``report``).
    """
    if args is None:
        return ""
    if isinstance(args, str):
        return cap(args, limit, report)
    if not isinstance(args, dict):
        return cap(json_text(args)[: limit + 1], limit, report)
    lines = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json_text(value)
        lines.append(f"{key}: {text[: limit + 1]}")
    return cap("\n".join(lines), limit, report)


def todo_text(todos: list[TodoItem]) -> str:
    """Text of a ``todo_list`` event: ``[status] content`` per item, one per line."""
    return "\n".join(f"[{t.status}] {t.content}" for t in todos)


#: Text of a value too deeply nested for both orjson and ``repr`` (``json_text``).
TOO_DEEP_TEXT = "<value nested too deep to show>"


def json_text(value: object) -> str:
    """Compact JSON text of a parsed JSON value; never raises.

    orjson refuses integers beyond 64 bits and values nested 255 levels or more (measured with orjson 3.13:
    ``dumps`` raises ``TypeError: Recursion limit reached``), yet a JSONL line parses up to 1024 levels
    (``depth.MAX_DEPTH``): such values fall back to Python's ``repr``, and one too deep even for that
    (``RecursionError``, near the interpreter's 1000-frame limit) to ``TOO_DEEP_TEXT``.
    """
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        try:
            return str(value)
        except RecursionError:
            return TOO_DEEP_TEXT


def type_tag(value: object) -> str | None:
    """A record's ``type`` (or ``role``) tag: ``value`` when it is a string, else None.

    A list or an object in that place is a malformed record (counted as an unknown type by the reader), never a
    crash: an unhashable tag would raise in the readers' set lookups.
    """
    return value if isinstance(value, str) else None


def iso_from_epoch_ms(value: float | int | None) -> str | None:
    """Epoch milliseconds (opencode) -> ISO-8601 UTC ``YYYY-MM-DDTHH:MM:SS.mmmZ``; None for missing/bad values."""
    if value is None:
        return None
    try:
        dt = datetime.fromtimestamp(float(value) / 1000.0, tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def norm_iso(value: object) -> str | None:
    """Normalize a harness timestamp string to ISO-8601 UTC ending in ``Z``; None when absent or not a string.

    Accepts ``…Z`` (returned as is) and ``+00:00`` offsets (rewritten to ``Z``); other strings are kept as
    they are (still better evidence than nothing).
    """
    if not isinstance(value, str) or not value:
        return None
    if value.endswith("+00:00"):
        return value[:-6] + "Z"
    return value


def text_of(content: object) -> str:
    """Join list-form content (``[{type:"text", text}]`` blocks or plain strings) into one string.

    Strings are returned as is; non-text blocks (images, tool results) are ignored; text blocks are joined
    with a blank line (FORMATS.md §6.2 "String-or-list content").
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in ("text", "input_text", "output_text"):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n\n".join(p for p in parts if p)
    return ""


TODO_STATUS = {
    "pending": "pending",
    "in_progress": "in_progress",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
    "completed": "completed",
    "complete": "completed",
    "done": "completed",
    "cancelled": "completed",
    "deleted": "deleted",
}


def todo_items(raw: object) -> list[TodoItem]:
    """Normalize a todo list (``[{content|subject|step, status, id?}]``) into ``TodoItem``s.

    Items without text and items whose status is ``deleted`` are left out; other statuses are mapped by
    ``TODO_STATUS`` (unknown ones -> ``pending``).
    """
    items: list[TodoItem] = []
    if not isinstance(raw, list):
        return items
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        content = entry.get("content") or entry.get("subject") or entry.get("step") or entry.get("title")
        if not isinstance(content, str) or not content.strip():
            continue
        status = TODO_STATUS.get(str(entry.get("status", "pending")).lower(), "pending")
        if status == "deleted":
            continue  # a deleted item is not on the list (TodoItem.status is pending|in_progress|completed)
        ident = entry.get("id")
        items.append(TodoItem(content=content.strip(), status=status, id=str(ident) if ident is not None else None))
    return items


class EventSink:
    """Appends events with consecutive indexes and tracks session metadata while a reader streams.

    ``add(kind, **fields)`` returns the new ``Event``; ``finish()`` returns the ``Transcript``.  Start and
    end time are taken from the first and last event timestamps when the reader did not set them.

    Segments (issue 23): when the read has a segmenter (``report.segmenter``, ``segments.Segmenter``), a user
    prompt or a compaction may close the events so far as a segment before it is added: ``settle`` (set by a
    reader that completes events after adding them, or keeps maps of them) runs first, the segmenter hands the
    segment on, and the events start again at index 0.  ``finish()`` then returns the last segment.
    """

    def __init__(self, meta: TranscriptMeta, report: ReadReport) -> None:
        self.meta = meta
        self.report = report
        self.segmenter = report.segmenter
        self.events: list[Event] = self.segmenter.take_initial() if self.segmenter is not None else []
        self.settle = None  # the reader's "complete what is pending" hook, run before a segment is cut

    def add(
        self,
        kind: str,
        *,
        text: str = "",
        timestamp: str | None = None,
        tool_name: str | None = None,
        target: str | None = None,
        call_id: str | None = None,
        is_error: bool = False,
        todos: list[TodoItem] | None = None,
        agent: str | None = None,
        line: int = 0,
        session_id: str | None = None,
    ) -> Event:
        """Append and return an ``Event`` of ``kind`` with the next index (fields as in ``Event``)."""
        events = self.events
        if self.segmenter is not None and (kind == "user_prompt" or kind == "compaction") \
                and self.segmenter.due(events, kind, line):
            if self.settle is not None:
                self.settle()
            events = self.events = self.segmenter.cut(events, self.meta, line)
        # positional, in ``Event`` field order: half the cost of keywords (one call per transcript event)
        event = Event(len(events), kind, text, timestamp, tool_name, target, call_id, is_error, todos, agent, line,
                      session_id)
        events.append(event)
        return event

    def note_session(self, session_id: object) -> None:
        """Record a session id seen in the file (a file can hold two; the first is the meta's)."""
        if isinstance(session_id, str) and session_id and session_id not in self.meta.session_ids:
            self.meta.session_ids.append(session_id)
            if self.meta.session_id is None:
                self.meta.session_id = session_id

    def finish(self) -> Transcript:
        stamps = [e.timestamp for e in self.events if e.timestamp]
        if stamps:
            self.meta.start_time = self.meta.start_time or stamps[0]
            self.meta.end_time = self.meta.end_time or stamps[-1]
        return Transcript(meta=self.meta, events=self.events, report=self.report)


def clean_transcript(transcript: Transcript) -> Transcript:
    """``transcript`` as every reader hands it on (``pipeline.transcripts.clean``, issue 22), changed in place:

    * an event time, or the session's start or end time, that names no real moment (month 13, hour 25, year 0000)
      is dropped, the event's line counted in ``report.bad_timestamps``;
    * invisible characters are removed from each event's text, target and todo items (``Event.hidden``,
      ``report.invisible``).

    One pass after the reader (readers join and amend events after adding them).  ASCII text and a time equal to
    the previous event's cost a comparison each."""
    report = transcript.report
    last_good = None
    for event in transcript.events:
        stamp = event.timestamp
        if stamp is not None and stamp != last_good:
            good = clean_timestamp(stamp)
            if good is None:
                report.bad_timestamps.append(event.line)
            elif good == stamp:
                last_good = stamp
            event.timestamp = good
        hidden = 0
        text = event.text
        if text and not text.isascii():
            event.text, hidden = strip_invisible(text)
        target = event.target
        if target and not target.isascii():
            event.target, removed = strip_invisible(target)
            hidden += removed
        for todo in event.todos or ():
            if not todo.content.isascii():
                todo.content, removed = strip_invisible(todo.content)
                hidden += removed
        if hidden:
            event.hidden = hidden
            report.invisible += hidden
    meta = transcript.meta
    for name, pick in (("start_time", 0), ("end_time", -1)):
        value = getattr(meta, name)
        if value is not None:
            good = clean_timestamp(value)
            if good is None:  # the reader took it from a bad record: the nearest good event time instead
                stamps = [e.timestamp for e in transcript.events if e.timestamp]
                good = stamps[pick] if stamps else None
            if good != value:
                setattr(meta, name, good)
    return transcript
