"""Gemini CLI reader: a ``/chat save <tag>`` checkpoint (format ``gemini-checkpoint``).

Where it comes from (google-gemini/gemini-cli, ``packages/core/src/core/logger.ts``): ``Logger.saveCheckpoint``
writes ``<project temp dir>/checkpoint-<tag>.json``, the project temp dir being
``~/.gemini/tmp/<sha256 of the project root>`` (``<project name>`` in newer versions), with
``JSON.stringify(…, null, 2)``.  The command is ``/chat save <tag>`` (``/resume save <tag>`` since the two
were unified in 2026-03, gemini-cli #20256).  Two shapes, both read here:

* up to 2025-11: a bare array of the chat history, ``Content[]``;
* since gemini-cli #13023 (2025-11-13): ``{history: Content[], authType?}``.

``Content`` is the Gemini API's ``{role: "user"|"model", parts: [Part]}``; the parts Gemini CLI writes are
``{text}`` (``thought: true`` for thinking), ``{functionCall: {id?, name, args}}``, ``{functionResponse: {id,
name, response: {output} | {error}}}`` (``coreToolScheduler``: a cancelled call's error is "[Operation
Cancelled] Reason: …"), ``{inlineData}`` / ``{fileData}``.  The file has no session id and no timestamps.

Rules:

* The history starts with Gemini's environment preamble (a user content starting "This is the Gemini CLI. We
  are setting up the context for our chat." or ``<session_context>``, ``client.startChat``): no event; the
  directory it names is ``meta.cwd``.  The model's fixed reply to it ("Got it. Thanks for the context!") gives
  no event either.
* user content: a tool result when it holds ``functionResponse`` parts (text parts after one belong to that
  result: a tool that returns several parts, ``convertToFunctionResponse``), else a user_prompt: its text
  parts, without the ``@file`` expansion between "--- Content from referenced files ---" and "--- End of
  content ---" (``atCommandProcessor``).  A ``<state_snapshot>`` text is the compression summary →
  compaction, and the fixed acknowledgement after it gives no event.
* model content: text parts → assistant_text (adjacent ones joined), ``thought`` parts → reasoning,
  ``functionCall`` → tool_call (``write_todos`` → todo_list).
* tool_result: ``response.output``; ``response.error`` → ``is_error`` (also a ``run_shell_command`` whose output
  says ``Exit Code: N``, N ≠ 0).  A call is paired with its result by ``id``; a call without one (older Gemini
  API answers) takes the id of the first result of the same name in the next user content.
* Timestamps: none are stored, but Gemini CLI builds a call id from the time it got the call
  (``<name>-<epoch ms>-<hex>`` up to 2025, ``<name>_<epoch ms>_<n>`` later: ``turn.ts``); tool events take
  that time, so the session's span is roughly known.  Prompts and replies have none.
* Unknown roles and parts are counted in ``report.unknown_types`` (``role:…``, ``part:…``); attachments
  (``inlineData``, ``fileData``) in ``report.ignored``.

Memory: the contents are streamed one by one (``records.iter_json_items``); only the calls of the last model
content wait for their results.
"""

from __future__ import annotations

import re

from pipeline.transcripts.common import (
    Caps,
    EventSink,
    call_text,
    cap,
    iso_from_epoch_ms,
    json_text,
    todo_text,
    type_tag,
)
from pipeline.transcripts.gemini import (
    COMPRESSION_ACK,
    PREAMBLES,
    SNAPSHOT,
    TODO_TOOLS,
    preamble_cwd,
    shell_failed,
    todos_of,
)
from pipeline.transcripts.detect import first_byte
from pipeline.transcripts.model import Event, ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_json_items
from pipeline.transcripts.targets import main_target

#: the model's fixed reply to the environment preamble (gemini-cli ``client.startChat``, 2025)
CONTEXT_ACK = "Got it. Thanks for the context!"
REFERENCED_START = "--- Content from referenced files ---"
REFERENCED_END = "--- End of content ---"
_ATTACHMENTS = frozenset({"inlineData", "fileData"})
#: an epoch-milliseconds time inside a call id, between ``-``/``_`` separators (2001-09-09 .. 2286-11-20)
_CALL_MS = re.compile(r"(?:^|[-_])(1\d{12})(?=[-_]|$)")


def call_time(call_id: object) -> str | None:
    """The time Gemini CLI put into a call id it made (``run_shell_command-1752005355323-e4d0…`` →
    ``2025-07-08T20:09:15.323Z``), or None when the id holds none."""
    if not isinstance(call_id, str):
        return None
    match = _CALL_MS.search(call_id)
    return iso_from_epoch_ms(int(match.group(1))) if match else None


def _part_kind(part: dict) -> str:
    """The kind of a part: its first key that is not metadata (``thoughtSignature``, ``thought``…)."""
    for key in part:
        if key not in ("thought", "thoughtSignature", "partMetadata", "videoMetadata"):
            return str(key)
    return "empty"


class _Contents:
    """Turns ``Content`` objects into events (rules: module docstring)."""

    def __init__(self, sink: EventSink, caps: Caps, report: ReadReport) -> None:
        self.sink = sink
        self.caps = caps
        self.report = report
        self.expect_ack: str | None = None  # the fixed reply the next model content may be
        self.pending: list[Event] = []  # the last model content's calls without an id, waiting for a result
        self.names: dict[str, str] = {}  # call id -> tool name
        self.synthetic = 0

    def content(self, content: dict, number: int) -> None:
        role = type_tag(content.get("role"))
        parts = content.get("parts")
        parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        expect, self.expect_ack = self.expect_ack, None
        if role == "user":
            if any(isinstance(p.get("functionResponse"), dict) for p in parts):
                self.results(parts, number)
            else:
                self.user(parts, number)
        elif role == "model":
            self.model(parts, number, expect)
        else:
            self.report.unknown_types[f"role:{role}"] += 1

    # --- user ---------------------------------------------------------------------------------------------
    def user(self, parts: list[dict], number: int) -> None:
        texts: list[str] = []
        inside = False
        for part in parts:
            text = part.get("text")
            if isinstance(text, str):
                mark = text.strip()
                if mark == REFERENCED_START:
                    inside = True
                elif mark == REFERENCED_END:
                    inside = False
                elif not inside and part.get("thought") is not True:
                    texts.append(text)
                continue
            self.other_part(part)
        text = "\n\n".join(t for t in texts if t.strip())
        if SNAPSHOT in text:
            self.expect_ack = COMPRESSION_ACK
            self.sink.add("compaction", text=cap(text.strip(), self.caps.text, self.report), line=number)
        elif text.lstrip().startswith(PREAMBLES):
            self.expect_ack = CONTEXT_ACK
            self.report.ignored["session_context"] += 1
            if self.sink.meta.cwd is None:
                self.sink.meta.cwd = preamble_cwd(text)
        elif text.strip():
            self.sink.add("user_prompt", text=cap(text, self.caps.text, self.report), line=number)
        else:
            self.report.ignored["user_without_text"] += 1

    def other_part(self, part: dict) -> None:
        kind = _part_kind(part)
        if kind in _ATTACHMENTS:
            self.report.ignored["attachment"] += 1
        else:
            self.report.unknown_types[f"part:{kind}"] += 1

    # --- model --------------------------------------------------------------------------------------------
    def model(self, parts: list[dict], number: int, expect: str | None) -> None:
        self.pending = []
        if expect and [p.get("text") for p in parts] == [expect]:
            self.report.ignored["context_ack" if expect == CONTEXT_ACK else "compression_ack"] += 1
            return
        texts: list[str] = []

        def flush() -> None:
            text = "".join(texts)
            if text.strip():
                self.sink.add("assistant_text", text=cap(text, self.caps.text, self.report), line=number)
            texts.clear()

        for part in parts:
            text = part.get("text")
            call = part.get("functionCall")
            if isinstance(text, str) and part.get("thought") is True:
                flush()
                if text.strip():
                    self.sink.add("reasoning", text=cap(text, self.caps.text, self.report), line=number)
            elif isinstance(text, str):
                texts.append(text)
            elif isinstance(call, dict):
                flush()
                self.call(call, number)
            else:
                self.other_part(part)
        flush()

    def call(self, call: dict, number: int) -> None:
        name = call.get("name") if isinstance(call.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        args = call.get("args")
        common = {"tool_name": name, "call_id": call_id, "timestamp": call_time(call_id), "line": number}
        if (name or "").lower() in TODO_TOOLS:
            items = todos_of(args)
            event = self.sink.add("todo_list", text=cap(todo_text(items), self.caps.tool_output, self.report),
                                  target=f"{len(items)} todos", todos=items, **common)
        else:
            event = self.sink.add("tool_call", text=call_text(args, self.caps.tool_output, self.report),
                                  target=main_target(name, args, limit=self.caps.target), **common)
        if call_id and name:
            self.names[call_id] = name
        elif call_id is None:
            self.pending.append(event)

    # --- tool results ---------------------------------------------------------------------------------------
    def results(self, parts: list[dict], number: int) -> None:
        current: list | None = None  # [name, call id, texts, failed] of the result being read
        for part in parts:
            response = part.get("functionResponse")
            text = part.get("text")
            if isinstance(response, dict):
                self.finish(current, number)
                current = self.start(response)
            elif isinstance(text, str) and current is not None:
                current[2].append(text)
            elif isinstance(text, str):
                self.report.ignored["text_before_result"] += 1
            else:
                self.other_part(part)
        self.finish(current, number)
        self.pending = []

    def start(self, response: dict) -> list:
        name = response.get("name") if isinstance(response.get("name"), str) else None
        call_id = response.get("id") if isinstance(response.get("id"), str) and response.get("id") else None
        if call_id not in self.names:
            event = next((e for e in self.pending if name is None or e.tool_name == name), None)
            if event is not None:
                self.pending.remove(event)
                if call_id is None:  # neither side has an id: one made up here links them
                    self.synthetic += 1
                    call_id = f"checkpoint-call-{self.synthetic}"
                event.call_id = call_id
                event.timestamp = event.timestamp or call_time(call_id)
                if name:
                    self.names[call_id] = name
        body = response.get("response")
        failed = False
        if isinstance(body, dict):
            error = body.get("error")
            if isinstance(error, dict):
                error = error.get("message")
            output = body.get("output")
            if isinstance(error, str) and error:
                failed, text = True, error
            elif isinstance(output, str):
                text = output
            else:
                text = json_text(body)[: self.caps.tool_output + 1] if body else ""
        else:
            text = body if isinstance(body, str) else ""
        return [name or self.names.get(call_id or ""), call_id, [text], failed]

    def finish(self, current: list | None, number: int) -> None:
        if current is None:
            return
        name, call_id, texts, failed = current
        if (name or "").lower() in TODO_TOOLS and not failed:
            return  # the todo_list event says it all
        text = "\n".join(t for t in texts if t)
        failed = failed or shell_failed(name, text)
        self.sink.add("tool_result", text=cap(text, self.caps.tool_output, self.report), tool_name=name,
                      call_id=call_id, is_error=failed, timestamp=call_time(call_id), line=number)


def _prefix(path: str, limit: int | None) -> str:
    """``item`` for the bare array, ``history.item`` for the ``{history, authType}`` object."""
    return "item" if first_byte(path, limit) == b"[" else "history.item"


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Gemini CLI ``/chat save`` checkpoint (either shape) into a ``Transcript`` (rules: module docstring).

    ``Event.line`` is the 1-based number of the ``Content`` in the history.  A truncated or damaged file gives
    the contents before the damage, its place counted in ``report.skipped_lines``; never raises for content
    (``JsonTooDeep`` for a document nested too deep).
    """
    sink = EventSink(TranscriptMeta(harness="gemini", format=fmt, path=path), report)
    contents = _Contents(sink, caps, report)
    for number, content in iter_json_items(path, _prefix(path, limit), report, limit):
        contents.content(content, number)
    return sink.finish()
