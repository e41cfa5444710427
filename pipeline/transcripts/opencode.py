"""opencode reader: ``opencode export`` ``{info, messages}`` and the bare ``[ {info, parts} ]`` array (FORMATS.md §3).

Both shapes are streamed message by message with ijson (``messages.item`` / ``item``); only the current
message is in memory.  The export's session ``info`` is read first with ``read_json_object_head``.

Rules (FORMATS.md §3, §6, §7):

* user_prompt: a user message's ``text`` parts without ``synthetic:true`` (opencode's own ``@file``
  expansions), joined with a blank line; a user message made only of a ``compaction`` part is the
  ``/compact`` command -> user_prompt ``/compact``.
* assistant_text: an assistant message's ``text`` parts joined with a blank line, placed where the first
  text part stands.  An assistant message with ``info.agent=="compaction"`` or ``info.summary==true`` is the
  compaction summary: its text is a **compaction** event instead.
* reasoning: ``reasoning`` parts with non-blank ``text``.
* tool parts: a tool_call, then its result: ``state.status=="completed"`` -> tool_result ``state.output``;
  ``"error"`` -> tool_result with ``is_error`` and ``state.error``; ``"running"``/``"pending"`` -> the call only.
  ``task`` -> subagent_call (target = description, agent = ``subagent_type``, text = prompt) and a
  subagent_result with the ``<task_result>…</task_result>`` content of the output (its ``target`` is the
  ``task_id: ses_…`` the output names, with which a later task call resumes that sub-agent session).  ``todowrite`` ->
  todo_list with ``state.input.todos`` (its successful echo of the list is not repeated as a result).
* timestamps: epoch milliseconds -> ISO-8601 UTC (``iso_from_epoch_ms``): tool ``state.time.start``/``end``,
  part ``time.start``, else the message's ``info.time.created``.
* meta: export ``info`` (id, directory, version, time.created/updated); else message infos (``sessionID``,
  assistant ``path.cwd``); model ``providerID/modelID`` of the first message that names one.
"""

from __future__ import annotations

import re

from pipeline.transcripts.common import (
    Caps,
    EventSink,
    call_text,
    cap,
    iso_from_epoch_ms,
    todo_items,
    todo_text,
    type_tag,
)
from pipeline.transcripts.model import Event, ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_json_items, read_json_object_head
from pipeline.transcripts.summaries import useless_summary
from pipeline.transcripts.targets import main_target

_TASK_ID = re.compile(r"\s*task_id:\s*(ses_[A-Za-z0-9]+)")  # the child session a later task call can resume
_TASK_RESULT = re.compile(r"<task_result>\s*(.*?)\s*(?:</task_result>|\Z)", re.DOTALL)

#: Part types seen in real files (or documented) that give no event of their own.
_QUIET_PARTS = frozenset(
    {"step-start", "step-finish", "patch", "file", "agent", "compaction", "subtask", "snapshot", "retry"}
)
_TODO_TOOLS = frozenset({"todowrite", "todo_write"})
_SUBAGENT_TOOLS = frozenset({"task"})


def task_result_text(output: str) -> str:
    """The sub-agent's answer inside a ``task`` output: the ``<task_result>…</task_result>`` content.

    ``output`` looks like ``task_id: ses_… (for resuming…)\\n\\n<task_result>…</task_result>`` (FORMATS.md §3
    "sub-agent"); without the tag (or with an unclosed one) the text after it / the whole output is returned.
    """
    match = _TASK_RESULT.search(output)
    return match.group(1) if match else output


def _ms(value: object) -> str | None:
    return iso_from_epoch_ms(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _time_of(obj: object, key: str) -> str | None:
    """``obj.time[key]`` (epoch ms) as ISO, or None."""
    if isinstance(obj, dict):
        time = obj.get("time")
        if isinstance(time, dict):
            return _ms(time.get(key))
    return None


def _model_of(info: dict) -> str | None:
    provider, model = info.get("providerID"), info.get("modelID")
    nested = info.get("model")
    if not isinstance(model, str) and isinstance(nested, dict):
        provider, model = nested.get("providerID"), nested.get("modelID")
    if not isinstance(model, str) or not model:
        return None
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


class _OpencodeState:
    """Streaming state: the sink; opencode parts carry their results, so no call-id map is needed."""

    def __init__(self, sink: EventSink, caps: Caps, report: ReadReport) -> None:
        self.sink = sink
        self.caps = caps
        self.report = report
        self.meta = sink.meta

    def message(self, message: dict, number: int) -> None:
        info = message.get("info")
        parts = message.get("parts")
        if not isinstance(info, dict):
            self.report.unknown_types["message-without-info"] += 1
            return
        parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        session_id = info.get("sessionID") if isinstance(info.get("sessionID"), str) else None
        self.sink.note_session(session_id)
        if self.meta.model is None:
            self.meta.model = _model_of(info)
        created = _time_of(info, "created")
        role = type_tag(info.get("role"))
        if role == "user":
            self.user_message(parts, created, number, session_id)
        elif role == "assistant":
            path = info.get("path")
            if self.meta.cwd is None and isinstance(path, dict) and isinstance(path.get("cwd"), str):
                self.meta.cwd = path["cwd"]
            error = info.get("error")
            if isinstance(error, dict):
                self.report.ignored[f"assistant_error:{error.get('name', 'unknown')}"] += 1
            summary = info.get("agent") == "compaction" or info.get("summary") is True
            self.assistant_message(parts, created, number, session_id, summary)
        else:
            self.report.unknown_types[f"role:{role}"] += 1

    def user_message(self, parts: list[dict], ts: str | None, number: int, session_id: str | None) -> None:
        texts = []
        only_compaction = bool(parts)
        auto_compaction = False
        for part in parts:
            ptype = type_tag(part.get("type"))
            if ptype != "compaction":
                only_compaction = False
            elif part.get("auto") is True:
                auto_compaction = True
            if ptype == "text":
                if part.get("synthetic") is True:
                    self.report.ignored["synthetic_text"] += 1
                    continue
                text = part.get("text")
                if isinstance(text, str) and text.strip():
                    texts.append(text)
            elif ptype not in _QUIET_PARTS:
                self.report.unknown_types[f"part:{ptype}"] += 1
        if texts:
            prompt = "\n\n".join(texts)
        elif only_compaction and not auto_compaction:
            prompt = "/compact"  # typed by the person; an automatic compaction (auto:true) is not a prompt
        else:
            if only_compaction:
                self.report.ignored["auto_compaction_request"] += 1
            return
        self.sink.add(
            "user_prompt", text=cap(prompt, self.caps.text, self.report), timestamp=ts, line=number,
            session_id=session_id,
        )

    def assistant_message(
        self, parts: list[dict], ts: str | None, number: int, session_id: str | None, summary: bool
    ) -> None:
        text_event: Event | None = None
        texts: list[str] = []
        for part in parts:
            ptype = type_tag(part.get("type"))
            if ptype == "text":
                text = part.get("text")
                if not isinstance(text, str) or not text.strip():
                    continue
                texts.append(text)
                if text_event is None:  # the joined text stands where the message's first text part stands
                    text_event = self.sink.add(
                        "compaction" if summary else "assistant_text", timestamp=_time_of(part, "start") or ts,
                        line=number, session_id=session_id,
                    )
            elif ptype == "reasoning":
                text = part.get("text")
                if isinstance(text, str) and text.strip():
                    self.sink.add(
                        "reasoning", text=cap(text, self.caps.text, self.report),
                        timestamp=_time_of(part, "start") or ts, line=number, session_id=session_id,
                    )
            elif ptype == "tool":
                self.tool_part(part, ts, number, session_id)
            elif ptype not in _QUIET_PARTS:
                self.report.unknown_types[f"part:{ptype}"] += 1
        if text_event is not None:
            text_event.text = cap("\n\n".join(texts), self.caps.text, self.report)
            if summary and useless_summary(text_event.text):  # the bare template: "## Goal - (none) …"
                self.report.ignored["useless_compaction_summary"] += 1
                text_event.text = ""

    def tool_part(self, part: dict, ts: str | None, number: int, session_id: str | None) -> None:
        name = part.get("tool") if isinstance(part.get("tool"), str) else None
        call_id = part.get("callID") if isinstance(part.get("callID"), str) else None
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        args = state.get("input")
        status = state.get("status")
        start = _time_of(state, "start") or ts
        end = _time_of(state, "end") or start
        lname = (name or "").lower()
        common = {"tool_name": name, "call_id": call_id, "line": number, "session_id": session_id}
        if lname in _SUBAGENT_TOOLS:
            agent = args.get("subagent_type") if isinstance(args, dict) else None
            agent = agent if isinstance(agent, str) else None
            prompt = args.get("prompt") if isinstance(args, dict) else None
            self.sink.add(
                "subagent_call", text=cap(prompt if isinstance(prompt, str) else "", self.caps.subagent, self.report),
                timestamp=start, target=main_target(name, args, limit=self.caps.target), agent=agent, **common,
            )
            if status == "completed":
                output = state.get("output")
                answer = task_result_text(output) if isinstance(output, str) else ""
                resume = _TASK_ID.match(output) if isinstance(output, str) else None
                self.sink.add(
                    "subagent_result", text=cap(answer, self.caps.subagent, self.report), timestamp=end,
                    agent=agent, target=resume.group(1) if resume else None, **common,
                )
            elif status == "error":
                self.sink.add(
                    "subagent_result", text=cap(_error_text(state), self.caps.subagent, self.report),
                    timestamp=end, agent=agent, is_error=True, **common,
                )
            return
        if lname in _TODO_TOOLS:
            items = todo_items(args.get("todos") if isinstance(args, dict) else None)
            self.sink.add(
                "todo_list", text=cap(todo_text(items), self.caps.tool_output, self.report), timestamp=start,
                target=f"{len(items)} todos", todos=items, **common,
            )
            if status == "error":
                self.sink.add(
                    "tool_result", text=cap(_error_text(state), self.caps.tool_output, self.report),
                    timestamp=end, is_error=True, **common,
                )
            return
        self.sink.add(
            "tool_call", text=call_text(args, self.caps.tool_output, self.report), timestamp=start,
            target=main_target(name, args, limit=self.caps.target), **common,
        )
        if status == "completed":
            output = state.get("output")
            self.sink.add(
                "tool_result", text=cap(output if isinstance(output, str) else "", self.caps.tool_output, self.report),
                timestamp=end, **common,
            )
        elif status == "error":
            self.sink.add(
                "tool_result", text=cap(_error_text(state), self.caps.tool_output, self.report), timestamp=end,
                is_error=True, **common,
            )
        elif status not in ("running", "pending"):
            self.report.unknown_types[f"tool-status:{status}"] += 1


def _error_text(state: dict) -> str:
    error = state.get("error")
    return error if isinstance(error, str) and error else "tool call failed"


def _export_meta(meta: TranscriptMeta, info: object) -> None:
    """Fill ``meta`` from the export's session ``info`` (FORMATS.md §3 "Session")."""
    if not isinstance(info, dict):
        return
    if isinstance(info.get("id"), str):
        meta.session_id = info["id"]
        meta.session_ids.append(info["id"])
    if isinstance(info.get("directory"), str):
        meta.cwd = info["directory"]
    if isinstance(info.get("version"), str):
        meta.version = info["version"]
    meta.start_time = _time_of(info, "created")
    meta.end_time = _time_of(info, "updated")
    model = info.get("model")
    if isinstance(model, dict):
        meta.model = _model_of({"model": model})


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read an opencode session (``opencode-export`` or ``opencode-messages``) into a ``Transcript``.

    ``Event.line`` is the 1-based message number.  A document cut short keeps the messages before the cut
    and records the message number where it stopped in ``report.skipped_lines`` (FORMATS.md §3, DESIGN.md
    "Transcript formats").  Never raises for content.
    """
    meta = TranscriptMeta(harness="opencode", format=fmt, path=path)
    sink = EventSink(meta, report)
    if fmt == "opencode-export":
        _export_meta(meta, read_json_object_head(path, ("info",), limit).get("info"))
        prefix = "messages.item"
    else:
        prefix = "item"
    state = _OpencodeState(sink, caps, report)
    for number, message in iter_json_items(path, prefix, report, limit):
        state.message(message, number)
    return sink.finish()


def read_export(document: dict, path: str, fmt: str, report: ReadReport, caps: Caps) -> Transcript:
    """Read an export-shaped ``document`` already in memory (``{"info": …, "messages": [{info, parts}]}``, as
    ``opencode_db.export_session`` builds from a database) into a ``Transcript`` whose ``meta.path`` is ``path``.
    ``Event.line`` is the 1-based message number.  Never raises for content."""
    meta = TranscriptMeta(harness="opencode", format=fmt, path=path)
    sink = EventSink(meta, report)
    _export_meta(meta, document.get("info"))
    state = _OpencodeState(sink, caps, report)
    messages = document.get("messages")
    for number, message in enumerate(messages if isinstance(messages, list) else [], 1):
        report.records += 1
        if isinstance(message, dict):
            state.message(message, number)
    return sink.finish()
