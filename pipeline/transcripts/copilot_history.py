"""GitHub Copilot CLI reader: the legacy ``history-session-state`` document (format ``copilot-history``).

Where it comes from: Copilot CLI up to 0.0.341 saved each session as one JSON object,
``~/.copilot/history-session-state/session_<sessionId>_<start epoch ms>.json`` (``$XDG_STATE_HOME`` replaces
``~/.copilot``); 0.0.342 (2025-10-15, the CLI's changelog) moved new sessions to ``session-state/`` and migrates
a legacy one when it is resumed.  The CLI's source is not public: the shape below is the zod schema and the
session manager in the bundled ``index.js`` of the ``@github/copilot`` 0.0.340 package, checked against a real
file of 2025-10:

``{sessionId, startTime (ISO), chatMessages: [OpenAI chat message], timeline: [entry], selectedModel?}``

* ``timeline`` (what the CLI showed, in order; every entry has ``id`` and an ISO ``timestamp``):
  ``user {text}`` (what was typed; later versions add ``mentions``, ``expandedText``), ``copilot {text,
  isStreaming?}``, ``tool_call_requested {callId, name, toolTitle?, intentionSummary, arguments}`` (a call not
  finished when the file was saved), ``tool_call_completed {…, result}`` with ``result.type`` ``success`` /
  ``failure`` / ``denied`` (each with ``log``) or ``rejected`` (the user said no, or the run was interrupted:
  the CLI then writes ``log`` "The execution of this tool, or a previous tool was interrupted."), ``info
  {text}``, ``error {text}``.  ``selectedModel`` is written after ``timeline`` (the session gets it late).
* ``chatMessages`` (what the model saw): ``system`` / ``developer``, ``user {content}`` (the prompt with the
  CLI's ``<reminder>…</reminder>`` blocks appended), ``assistant {content?, tool_calls: [{id, type:"function",
  function: {name, arguments (JSON string)}} | {id, type:"custom", custom: {name, input}}]}``, ``tool
  {tool_call_id, content}``, ``function`` (old API, unused).

Rules:

* The **timeline** gives the events: user_prompt (``text``), assistant_text (``copilot``), tool_call (name,
  target from ``arguments``, call id) and, for a completed call, tool_result (``log``; ``is_error`` for
  ``failure``, ``denied`` and ``rejected``, and for a log ending ``<exited with exit code N>``, N ≠ 0: the shell
  tools report a command that ran as ``success``).  ``error`` entries are the CLI's own failures ("Model call failed:
  …"): a failed tool_result of the harness (``copilot.HARNESS_TOOL``), as ``session.error`` in ``events.jsonl``.
  ``info`` entries are notices (no event, ``report.ignored["notice:info"]``); the working directory is read from
  the ones that name it ("Folder X has been added to trusted folders.", "Current working directory: X",
  "Changed working directory to: X"; the first wins).
* Only when the timeline holds no conversation (none of user / copilot / tool entries) are the
  **chatMessages** read instead: the user ``content`` up to its first ``<reminder>`` (the CLI cuts the title of
  a session the same way), assistant ``content`` and ``tool_calls``, ``tool`` messages as results; they carry no
  error flag (only the CLI's interruption text and a non-zero ``<exited with exit code N>`` mark ``is_error``)
  and no timestamps.
* meta: ``sessionId``, ``startTime``, ``selectedModel``; the end time is the last timeline timestamp.  The file
  stores neither the CLI version nor the git branch.

Memory: one streaming pass over the document (``records.iter_object_items``); only timeline entries are built,
one at a time.  A second pass over ``chatMessages`` happens only in the fallback above.
"""

from __future__ import annotations

import re

from pipeline.transcripts.common import Caps, EventSink, call_text, cap, norm_iso, text_of, type_tag
from pipeline.transcripts.copilot import HARNESS_TOOL, clean_prompt
from pipeline.transcripts.generic import tool_calls
from pipeline.transcripts.model import ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_object_items
from pipeline.transcripts.targets import main_target

_META_KEYS = ("sessionId", "startTime", "selectedModel")
_CONVERSATION = frozenset({"user", "copilot", "tool_call_requested", "tool_call_completed"})
_FAILED = frozenset({"failure", "denied", "rejected"})
_RESULTS = frozenset({"success"}) | _FAILED
#: the text the CLI writes as the result of calls cut off by an interruption (``completeOrphanedToolCalls``)
INTERRUPTED = "The execution of this tool, or a previous tool was interrupted."
#: how the CLI's shell tools end the output of a command that ran: ``success`` whatever the exit code
_EXIT = re.compile(r"<exited with exit code (-?\d+)>\s*\Z")
_CWD = re.compile(
    r"^(?:Folder (.+) has been added to trusted folders\.|Current working directory: (.+)|"
    r"Changed working directory to: (.+))$"
)


def prompt_text(content: object) -> str:
    """The typed prompt of a ``chatMessages`` user message: its text (a string or ``[{type:"text", text}]``
    parts) cut at the first ``<reminder>`` the CLI appended, and without a ``<current_datetime>`` suffix."""
    text = text_of(content)
    at = text.find("<reminder>")
    if at >= 0:
        text = text[:at]
    return clean_prompt(text).strip()


def exit_failed(log: str) -> bool:
    """True when a tool's output ends ``<exited with exit code N>`` with N ≠ 0 (the CLI's shell tools report a
    command that ran as ``success``, whatever its exit code)."""
    match = _EXIT.search(log[-200:])
    return match is not None and int(match.group(1)) != 0


class _Timeline:
    """Turns timeline entries into events; ``conversation`` counts the entries that made conversation."""

    def __init__(self, sink: EventSink, caps: Caps, report: ReadReport) -> None:
        self.sink = sink
        self.caps = caps
        self.report = report
        self.conversation = 0
        self.last_ts: str | None = None

    def entry(self, rec: dict, number: int) -> None:
        kind = type_tag(rec.get("type"))
        ts = norm_iso(rec.get("timestamp"))
        self.last_ts = ts or self.last_ts
        if kind in _CONVERSATION:
            self.conversation += 1
        text = rec.get("text") if isinstance(rec.get("text"), str) else ""
        if kind == "user":
            if text.strip():
                self.sink.add("user_prompt", text=cap(text, self.caps.text, self.report), timestamp=ts, line=number)
            else:
                self.report.ignored["user_without_text"] += 1
        elif kind == "copilot":
            if text.strip():
                self.sink.add("assistant_text", text=cap(text, self.caps.text, self.report), timestamp=ts,
                              line=number)
        elif kind in ("tool_call_requested", "tool_call_completed"):
            self.tool(rec, kind, ts, number)
        elif kind == "info":
            self.report.ignored["notice:info"] += 1
            match = _CWD.match(text.strip())
            if match and self.sink.meta.cwd is None:
                self.sink.meta.cwd = next(g for g in match.groups() if g)
        elif kind == "error":
            if text.strip():
                self.sink.add("tool_result", text=cap(text, self.caps.tool_output, self.report), timestamp=ts,
                              tool_name=HARNESS_TOOL, is_error=True, line=number)
        else:
            self.report.unknown_types[f"timeline:{kind}"] += 1

    def tool(self, rec: dict, kind: str, ts: str | None, number: int) -> None:
        name = rec.get("name") if isinstance(rec.get("name"), str) else None
        call_id = rec.get("callId") if isinstance(rec.get("callId"), str) else None
        args = rec.get("arguments")
        common = {"timestamp": ts, "tool_name": name, "call_id": call_id, "line": number}
        self.sink.add("tool_call", text=call_text(args, self.caps.tool_output, self.report),
                      target=main_target(name, args, limit=self.caps.target), **common)
        if kind == "tool_call_requested":
            return
        result = rec.get("result") if isinstance(rec.get("result"), dict) else {}
        outcome = type_tag(result.get("type"))
        if outcome not in _RESULTS:
            self.report.unknown_types[f"tool-result:{outcome}"] += 1
        log = result.get("log") if isinstance(result.get("log"), str) else ""
        failed = outcome in _FAILED or exit_failed(log)
        if not log and outcome == "rejected":
            log = "rejected by the user"
        self.sink.add("tool_result", text=cap(log, self.caps.tool_output, self.report), is_error=failed, **common)


def _chat_messages(path: str, sink: EventSink, caps: Caps, report: ReadReport, limit: int | None) -> None:
    """The fallback: events from ``chatMessages`` (module docstring)."""
    names: dict[str, str] = {}
    seen = ReadReport()  # the timeline pass counted the damage too, in timeline entries
    for number, msg in iter_object_items(path, "chatMessages.item", (), {}, seen, limit):
        report.records += 1
        role = type_tag(msg.get("role"))
        if role == "user":
            prompt = prompt_text(msg.get("content"))
            if prompt:
                sink.add("user_prompt", text=cap(prompt, caps.text, report), line=number)
        elif role == "assistant":
            text = text_of(msg.get("content"))
            if text.strip():
                sink.add("assistant_text", text=cap(text, caps.text, report), line=number)
            tool_calls(msg, sink, caps, report, None, number, names)
        elif role == "tool":
            call_id = msg.get("tool_call_id") if isinstance(msg.get("tool_call_id"), str) else None
            text = text_of(msg.get("content"))
            sink.add("tool_result", text=cap(text, caps.tool_output, report), tool_name=names.get(call_id or ""),
                     call_id=call_id, is_error=text.strip() == INTERRUPTED or exit_failed(text), line=number)
        elif role in ("system", "developer"):
            report.ignored[f"{role}_message"] += 1
        else:
            report.unknown_types[f"message:{role}"] += 1
    if seen.skipped_lines:  # where the damage is, counted in chatMessages like the events' lines
        report.skipped_lines[:] = seen.skipped_lines


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Copilot CLI ``history-session-state`` document into a ``Transcript`` (rules: module docstring).

    ``Event.line`` is the entry's 1-based number in ``timeline`` (or in ``chatMessages`` for the fallback).
    A truncated or damaged document gives the entries before the damage, the place counted in
    ``report.skipped_lines``; never raises for content (``JsonTooDeep`` for a document nested too deep).
    """
    sink = EventSink(TranscriptMeta(harness="copilot", format=fmt, path=path), report)
    found: dict = {}
    timeline = _Timeline(sink, caps, report)
    for number, rec in iter_object_items(path, "timeline.item", _META_KEYS, found, report, limit):
        timeline.entry(rec, number)
    if not timeline.conversation:
        _chat_messages(path, sink, caps, report, limit)
    meta = sink.meta
    sink.note_session(found.get("sessionId"))
    meta.start_time = norm_iso(found.get("startTime")) if isinstance(found.get("startTime"), str) else None
    if isinstance(found.get("selectedModel"), str) and found["selectedModel"]:
        meta.model = found["selectedModel"]
    transcript = sink.finish()
    if timeline.last_ts:
        transcript.meta.end_time = timeline.last_ts
    return transcript
