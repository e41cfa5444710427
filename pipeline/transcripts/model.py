"""Normalized transcript: the output of the read stage (DESIGN.md "Stages", "Transcript formats").

These are plain slotted dataclasses, not pydantic models, on purpose: the read stage sits on the hook and
``extract-raw`` paths, where importing pydantic (~80 ms here) would eat the whole time budget.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: What ``Event.kind`` can be:
#:   user_prompt: what the person typed (slash commands as "/name args");
#:   assistant_text: one assistant message (lines sharing a message id are joined);
#:   reasoning: thinking / reasoning text (often empty in new harness versions; then not emitted);
#:   tool_call: a tool call: tool_name + target (main argument);
#:   tool_result: a tool result: call_id, is_error, text (capped);
#:   compaction: the harness's compaction summary (model-written; never a user prompt);
#:   subagent_call: a sub-agent (Task/Agent/task) call: tool_name, target = description, text = prompt;
#:   subagent_result: a sub-agent's final answer: call_id, agent, text;
#:   todo_list: a todo list write (TodoWrite, TaskCreate/TaskUpdate, todowrite): todos = full list after it.
EVENT_KINDS: tuple[str, ...] = (
    "user_prompt",
    "assistant_text",
    "reasoning",
    "tool_call",
    "tool_result",
    "compaction",
    "subagent_call",
    "subagent_result",
    "todo_list",
)

#: Kinds that are a call of a tool by the assistant (listed under "Tool Calls" in raw material).
CALL_KINDS: frozenset[str] = frozenset({"tool_call", "subagent_call", "todo_list"})

HARNESSES: tuple[str, ...] = ("claude-code", "copilot", "opencode", "codex", "gemini", "generic")
TODO_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")

# The Literal aliases below are for type checkers; at run time they are built on first access
# (``__getattr__``), because importing ``typing`` costs ~2.5 ms of the hook path's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    EventKind = Literal[
        "user_prompt", "assistant_text", "reasoning", "tool_call", "tool_result", "compaction",
        "subagent_call", "subagent_result", "todo_list",
    ]
    Harness = Literal["claude-code", "copilot", "opencode", "codex", "gemini", "generic"]
    TodoStatus = Literal["pending", "in_progress", "completed"]

_LITERAL_ALIASES = {"EventKind": EVENT_KINDS, "Harness": HARNESSES, "TodoStatus": TODO_STATUSES}


def __getattr__(name: str) -> object:
    """``EventKind``, ``Harness``, ``TodoStatus``: ``typing.Literal`` aliases, imported only when asked for."""
    values = _LITERAL_ALIASES.get(name)
    if values is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Literal

    alias = Literal[values]
    globals()[name] = alias
    return alias


@dataclass(slots=True)
class TodoItem:
    """One todo list item.  ``status`` is normalized to pending | in_progress | completed."""

    content: str
    status: str = "pending"
    id: str | None = None


@dataclass(slots=True)
class Event:
    """One normalized transcript event.

    Fields:
      index: position in ``Transcript.events`` (0-based); evidence refers to it.
      kind: one of ``EVENT_KINDS``.
      text: the event's text, capped at the reader's field cap (characters).  Prompt, message, summary,
        tool output, sub-agent answer; for a tool call a short rendering of its arguments.
      timestamp: ISO-8601 UTC with ``Z`` (e.g. ``2026-09-01T10:00:00.000Z``) or None when the record has none.
      tool_name: tool name for call/result kinds (``Bash``, ``edit``, ``Task``…).
      target: main argument of a call (path, command, pattern, url, query, sub-agent description, "3 todos");
        for a ``subagent_result``, the id that resumes that sub-agent session when the harness prints one
        (opencode ``task_id: ses_…``).
      call_id: tool call id linking a call to its result.
      is_error: tool result flagged as failed by the harness (``is_error``, ``success:false``, ``status=="error"``).
      todos: for ``todo_list`` the whole list after this write.
      agent: sub-agent type/name for sub-agent events.
      line: 1-based line (JSONL) or element number (JSON array) of the source record.
      session_id: the record's session id, when the record carries one.
      uuid: the record's own id where the harness links records into a tree (Claude Code ``uuid``), else None.
      parent_uuid: the nearest ancestor record that produced an event (Claude Code ``parentUuid``, across a
        compaction ``logicalParentUuid``, skipping records that made no event); an id no event carries when the
        chain is broken; None at a chain start.
      hidden: how many invisible characters (TAG characters, zero-width and bidi controls) the read stage removed
        from ``text``, ``target`` and the todo items (``pipeline.transcripts.clean``); 0 for almost every event.
    """

    index: int
    kind: str
    text: str = ""
    timestamp: str | None = None
    tool_name: str | None = None
    target: str | None = None
    call_id: str | None = None
    is_error: bool = False
    todos: list[TodoItem] | None = None
    agent: str | None = None
    line: int = 0
    session_id: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    hidden: int = 0


@dataclass(slots=True)
class TranscriptMeta:
    """Session metadata read from the transcript itself (never from the current shell)."""

    harness: str
    format: str  # e.g. claude-code-jsonl, claude-code-json-array, copilot-events, opencode-export
    path: str
    session_id: str | None = None
    session_ids: list[str] = field(default_factory=list)
    cwd: str | None = None
    git_branch: str | None = None
    repo: str | None = None
    model: str | None = None
    version: str | None = None
    start_time: str | None = None  # ISO-8601 UTC
    end_time: str | None = None  # ISO-8601 UTC


@dataclass(slots=True)
class ReadReport:
    """What the reader skipped or trimmed; never fatal (DESIGN.md "Transcript formats").

    ``skipped_lines``: 1-based line numbers of records that could not be parsed (bad JSON, torn last line).
    ``repaired_lines``: lines whose invalid UTF-8 bytes were replaced by U+FFFD and kept.  ``unknown_types``: record type -> count of records of types the reader does not know.
    ``capped_fields``: number of fields cut at the field cap.
    ``ignored``: reason -> count of known records deliberately not turned into events (noise such as Copilot
    ``report_intent`` calls, sub-agent-internal messages, ``abort`` markers); unlike ``unknown_types`` these
    are understood, just not part of the main thread.
    Positions of a JSONL read (``records.iter_jsonl``; issue 23, incremental reads and segments): ``start_at`` is
    ``(byte offset, lines before it)`` to start the read at (None: the file's start), ``end_at`` the byte offset of a
    line start to end it at (None: the file's end); ``line_start`` the byte
    offset of the line being read; ``covered`` and ``lines`` the byte offset and line count up to the last complete
    line once the file was read to its end (None before).  Offsets count after a leading BOM.  ``segmenter``: the
    ``segments.Segmenter`` that cuts the events of a read into segments as they come (None: one transcript);
    ``format``: the format detected (set before the reader starts).  ``carry``: what a reader keeps across a read that
    goes on from ``start_at`` (JSON-able; the reader of the format reads it when it starts and writes it at every cut and
    at its end: Claude Code's TaskCreate/TaskUpdate list).  ``bad_timestamps``: lines whose timestamp could not be
    read; ``invisible``: invisible characters removed; ``long_lines``: ``(line, bytes)`` of lines over the line cap
    (``records.line_cap``), read through and skipped.
    """

    records: int = 0
    skipped_lines: list[int] = field(default_factory=list)
    repaired_lines: list[int] = field(default_factory=list)
    unknown_types: Counter = field(default_factory=Counter)
    capped_fields: int = 0
    ignored: Counter = field(default_factory=Counter)
    start_at: tuple[int, int] | None = None
    end_at: int | None = None
    line_start: int = 0
    covered: int | None = None
    lines: int | None = None
    segmenter: object | None = None
    format: str | None = None
    carry: dict = field(default_factory=dict)
    bad_timestamps: list[int] = field(default_factory=list)
    invisible: int = 0
    long_lines: list[tuple[int, int]] = field(default_factory=list)

    def warning(self, path: str) -> str | None:
        """One-line stderr warning naming the file and skipped line numbers, or None when nothing was skipped."""
        parts = []
        for label, lines in (("skipped", self.skipped_lines), ("replaced invalid UTF-8 in", self.repaired_lines),
                             ("ignored an invalid timestamp in", self.bad_timestamps)):
            if lines:
                shown = ", ".join(str(n) for n in lines[:10])
                more = f" (+{len(lines) - 10} more)" if len(lines) > 10 else ""
                parts.append(f"{label} {len(lines)} record(s) at line(s) {shown}{more}")
        if self.long_lines:
            from pipeline.transcripts.records import line_cap

            cap = line_cap()
            limit = f"{cap / (1024 * 1024):g} MiB" if cap >= 1024 * 1024 else f"{cap} bytes"
            shown = ", ".join(f"{n} ({size / 1e6:.1f} MB)" for n, size in self.long_lines[:5])
            more = f" (+{len(self.long_lines) - 5} more)" if len(self.long_lines) > 5 else ""
            parts.append(f"skipped {len(self.long_lines)} line(s) longer than {limit} (DUCK_TAPE_LINE_CAP sets "
                         f"another cap): {shown}{more}")
        if self.invisible:
            parts.append(f"removed {self.invisible} invisible character(s) (zero-width, bidi control or Unicode TAG: "
                         "text not shown on screen)")
        if not parts:
            return None
        return f"duck-tape: warning: {path}: " + "; ".join(parts)


@dataclass(slots=True)
class Transcript:
    """The read stage's output: ``meta`` plus ordered ``events`` and the ``report`` of what was skipped."""

    meta: TranscriptMeta
    events: list[Event] = field(default_factory=list)
    report: ReadReport = field(default_factory=ReadReport)
