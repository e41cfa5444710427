"""Gemini CLI reader: the chat JSONL, the legacy chat JSON object and the ``stream-json`` capture (FORMATS.md §5).

Three shapes (detected by ``detect.py``):

* ``gemini-chat-jsonl`` (``~/.gemini/tmp/<project>/chats/session-*.jsonl``): a header line ``{sessionId,
  projectHash, startTime, lastUpdated, kind}``, then message records ``{id, timestamp, type, content, …}``
  interleaved with ``{"$set": {…}}`` metadata lines and ``{"$rewindTo": id}`` lines.  A record is re-appended
  under the same ``id`` each time it changes (a ``gemini`` record first without, then with its ``toolCalls``
  results): the **last** version of an id wins, in the order the ids were **first** seen.  ``$rewindTo`` drops
  that message and every later one (the user rewound the conversation).  A ``$set`` with ``messages`` is a
  checkpoint Gemini writes after rewriting its history (compression, output masking): its messages with ids
  not seen before are read (the compression summary), the others keep their own last record (the checkpoint
  copy may be masked).  Read in two streaming passes: the first keeps only ids (first-seen rank, last line,
  rewound or not), the second turns each id's winning record into events; memory is the events plus the ids.
* ``gemini-chat-json`` (older ``session-*.json``): one object ``{sessionId, projectHash, startTime,
  lastUpdated, messages: [records]}``; the top-level scalars are read from the head with ijson events (the
  ``messages`` array is never built), then the messages are streamed one by one (``messages.item``).
* ``gemini-stream-json`` (``gemini -p … --output-format stream-json``): ``init``, ``message`` (``delta``
  chunks of one assistant reply are joined), ``tool_use``, ``tool_result``, ``error``, ``result`` lines.

Rules (FORMATS.md §5, §6):

* user_prompt: ``type=="user"`` → ``displayContent`` (what was typed) or ``content`` (a string, or a list of
  ``{text}`` parts; other parts such as ``inlineData`` / ``functionResponse`` are left out).  A user record
  that is Gemini's own environment preamble (``<session_context>`` / "This is the Gemini CLI. We are setting up
  the context …") gives no event; its workspace directory becomes ``meta.cwd``.  A user record holding a
  ``<state_snapshot>`` is the compression summary → **compaction** (and the model's fixed acknowledgement after
  it gives no event).
* ``type=="gemini"``: ``thoughts[] {subject, description}`` → one reasoning event; ``content`` →
  assistant_text; ``toolCalls[] {id, name, args, status, result, resultDisplay}`` → tool_call (target by
  tool: file path, command, pattern…) and, once finished, tool_result: ``status`` ``error`` / ``cancelled``
  → ``is_error`` with ``functionResponse.response.error``; ``success`` → ``response.output``; still
  running / awaiting approval → the call only; a ``run_shell_command`` whose output says ``Exit Code: N``
  (N ≠ 0) is an error too (Gemini marks a command that ran as ``success``).  ``write_todos`` → todo_list.  ``model`` → ``meta.model``.
* ``info`` / ``warning`` / ``error`` records are session notices (MCP connection errors, cancelled requests,
  API errors), not conversation: no event, counted in ``report.ignored`` (``notice:<type>``).
* meta: session id, start time and ``kind`` (``subagent`` → ``meta.version`` ``(subagent)``) from the header;
  end time from the last ``lastUpdated``; git branch is not stored by Gemini, and cwd only in the environment
  preamble.  Without one, the cwd is the project root Gemini's own tools resolved a relative path against: a
  call whose ``file_path`` / ``dir_path`` / ``path`` argument is relative and whose result names it absolute
  (``File not found: /home/dev/src/x.ts`` for ``src/x.ts``, ``Successfully modified file: /home/dev/a/b.ts``
  for ``a/b.ts``) gives the prefix (``_root_from``); the first such call wins.
"""

from __future__ import annotations

import re

from pipeline.transcripts.common import (
    Caps,
    EventSink,
    call_text,
    cap,
    norm_iso,
    todo_items,
    todo_text,
    type_tag,
)
from pipeline.transcripts.model import ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_json_items, iter_jsonl
from pipeline.transcripts.source import open_transcript
from pipeline.transcripts.targets import main_target

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_NOTICE_TYPES = frozenset({"info", "error", "warning"})
_ERROR_STATUSES = frozenset({"error", "cancelled"})
_DONE_STATUSES = frozenset({"success"}) | _ERROR_STATUSES
TODO_TOOLS = frozenset({"write_todos", "todo_write", "todowrite"})
SNAPSHOT = "<state_snapshot>"
PREAMBLES = ("<session_context>", "This is the Gemini CLI. We are setting up the context for our chat.")
COMPRESSION_ACK = "Got it. Thanks for the additional context!"
#: ``run_shell_command`` reports ``success`` for a command that ran and failed; its output ends ``Exit Code: N``
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)
_SHELL_TOOLS = frozenset({"run_shell_command", "shell"})
_CWD = re.compile(
    r"Workspace Directories:\**\s*\n\s*-\s+(\S[^\n]*)|working in the directory:\s*(\S[^\n]*)", re.IGNORECASE
)
#: arguments of Gemini's file tools that hold a path resolved against the project root
_PATH_ARGS = ("file_path", "dir_path", "path", "absolute_path")
#: top-level keys of a session object that go into the meta
_META_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind")


def parts_text(content: object) -> str:
    """Text of a Gemini ``content``: a string, a ``{text}`` part, or a list of parts / strings (others left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str) and part.get("thought") is not True:
                texts.append(part["text"])
        return "\n\n".join(t for t in texts if t)
    return ""


def _response_text(result: object) -> tuple[str, str]:
    """(output, error) of a tool call's ``result``: ``[{functionResponse: {response: {output}|{error}}}]``."""
    outputs: list[str] = []
    errors: list[str] = []
    items = result if isinstance(result, list) else [result]
    for item in items:
        if isinstance(item, str):
            outputs.append(item)
            continue
        if not isinstance(item, dict):
            continue
        fr = item.get("functionResponse")
        response = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(response, dict):
            for key, bucket in (("output", outputs), ("error", errors)):
                value = response.get(key)
                if isinstance(value, str) and value:
                    bucket.append(value)
                elif isinstance(value, dict) and isinstance(value.get("message"), str):
                    bucket.append(value["message"])
        elif isinstance(item.get("text"), str):
            outputs.append(item["text"])
    return "\n".join(outputs), "\n".join(errors)


def _display_text(display: object) -> str:
    """``resultDisplay``: a string, or a file diff object (its ``fileDiff`` / ``fileName``)."""
    if isinstance(display, str):
        return display
    if isinstance(display, dict):
        for key in ("fileDiff", "fileName"):
            if isinstance(display.get(key), str):
                return display[key]
    return ""


def _root_from(args: object, text: str) -> str | None:
    """The directory a relative path argument of ``args`` was resolved against, read from the tool's ``text``
    (its output or error naming the absolute path); None when no argument is relative or the text shows none.

    ``{"file_path": "src/a.ts"}`` with "File not found: /home/dev/src/a.ts" -> ``/home/dev``; ``"."`` with
    "Directory listing for /home/dev:" -> ``/home/dev``."""
    if not isinstance(args, dict) or not text:
        return None
    for key in _PATH_ARGS:
        rel = args.get(key)
        if not isinstance(rel, str) or not rel or rel.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:", rel):
            continue
        rel = rel.strip().rstrip("/")
        if rel in (".", "./"):
            m = re.search(r"(?:listing for|within) (/[^\s:]*)", text)
            if m:
                return m.group(1).rstrip("/") or "/"
            continue
        rel = rel[2:] if rel.startswith("./") else rel
        at = text.find("/" + rel)
        while at > 0:
            end = at + 1 + len(rel)
            if end == len(text) or not (text[end].isalnum() or text[end] in "_-."):
                start = at
                while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "'\"`(:":
                    start -= 1
                root = text[start:at]
                if root.startswith("/"):
                    return root
            at = text.find("/" + rel, at + 1)
    return None


def preamble_cwd(content: str) -> str | None:
    """The working directory named in Gemini's environment preamble (``Workspace Directories:`` list, or
    "I'm currently working in the directory: …"), or None."""
    match = _CWD.search(content)
    return (match.group(1) or match.group(2)).strip() if match else None


def shell_failed(name: str | None, output: str) -> bool:
    """True for a shell tool (``run_shell_command``) whose output reports ``Exit Code: N`` with N ≠ 0: Gemini
    marks a command that ran as a success whatever its exit code."""
    if (name or "").lower() not in _SHELL_TOOLS:
        return False
    code = _EXIT_CODE.search(output)
    return code is not None and int(code.group(1)) != 0


def todos_of(args: object) -> list:
    """``write_todos`` args ``{todos: [{description, status}]}`` as todo items."""
    raw = args.get("todos") if isinstance(args, dict) else None
    if not isinstance(raw, list):
        return []
    entries = [
        {**t, "content": t.get("description")} if isinstance(t, dict) and "content" not in t else t for t in raw
    ]
    return todo_items(entries)


class _Records:
    """Turns message records into events through ``emit`` (a sink's ``add`` or a buffer of it)."""

    def __init__(self, emit, meta: TranscriptMeta, caps: Caps, report: ReadReport) -> None:
        self.emit = emit
        self.meta = meta
        self.caps = caps
        self.report = report
        self.after_snapshot = False

    def record(self, rec: dict, line: int, session_id: str | None) -> None:
        rtype = type_tag(rec.get("type"))
        ts = norm_iso(rec.get("timestamp"))
        after_snapshot, self.after_snapshot = self.after_snapshot, False
        if rtype == "user":
            self.user(rec, ts, line, session_id)
        elif rtype == "gemini":
            self.gemini(rec, ts, line, session_id, after_snapshot)
        elif rtype in _NOTICE_TYPES:
            self.report.ignored[f"notice:{rtype}"] += 1
        else:
            self.report.unknown_types[f"message:{rtype}"] += 1

    def user(self, rec: dict, ts: str | None, line: int, session_id: str | None) -> None:
        content = parts_text(rec.get("content"))
        stripped = content.lstrip()
        if SNAPSHOT in content:
            self.after_snapshot = True
            self.emit("compaction", text=cap(content.strip(), self.caps.text, self.report), timestamp=ts, line=line,
                      session_id=session_id)
            return
        if stripped.startswith(PREAMBLES):
            self.report.ignored["session_context"] += 1
            if self.meta.cwd is None:
                self.meta.cwd = preamble_cwd(content)
            return
        text = parts_text(rec.get("displayContent")) or content
        if not text.strip():
            self.report.ignored["user_without_text"] += 1  # e.g. function responses in a rewritten history
            return
        self.emit("user_prompt", text=cap(text, self.caps.text, self.report), timestamp=ts, line=line,
                  session_id=session_id)

    def gemini(self, rec: dict, ts: str | None, line: int, session_id: str | None, after_snapshot: bool) -> None:
        model = rec.get("model")
        if self.meta.model is None and isinstance(model, str) and model:
            self.meta.model = model
        thoughts = rec.get("thoughts")
        if isinstance(thoughts, list):
            texts, first_ts = [], None
            for thought in thoughts:
                if not isinstance(thought, dict):
                    continue
                subject, description = thought.get("subject"), thought.get("description")
                bits = [b.strip() for b in (subject, description) if isinstance(b, str) and b.strip()]
                if bits:
                    texts.append(": ".join(bits))
                    first_ts = first_ts or norm_iso(thought.get("timestamp"))
            if texts:
                self.emit("reasoning", text=cap("\n\n".join(texts), self.caps.text, self.report),
                          timestamp=first_ts or ts, line=line, session_id=session_id)
        text = parts_text(rec.get("content"))
        if after_snapshot and text.strip() == COMPRESSION_ACK:
            self.report.ignored["compression_ack"] += 1
        elif text.strip():
            self.emit("assistant_text", text=cap(text, self.caps.text, self.report), timestamp=ts, line=line,
                      session_id=session_id)
        calls = rec.get("toolCalls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self.tool_call(call, ts, line, session_id)

    def tool_call(self, call: dict, ts: str | None, line: int, session_id: str | None) -> None:
        name = call.get("name") if isinstance(call.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        args = call.get("args")
        status = type_tag(call.get("status"))
        when = norm_iso(call.get("timestamp")) or ts
        common = {"tool_name": name, "call_id": call_id, "line": line, "session_id": session_id, "timestamp": when}
        failed = status in _ERROR_STATUSES
        if (name or "").lower() in TODO_TOOLS:
            items = todos_of(args)
            self.emit("todo_list", text=cap(todo_text(items), self.caps.tool_output, self.report),
                      target=f"{len(items)} todos", todos=items, **common)
            if not failed:
                return
        else:
            self.emit("tool_call", text=call_text(args, self.caps.tool_output, self.report),
                      target=main_target(name, args, limit=self.caps.target), **common)
        if status not in _DONE_STATUSES:
            if status not in ("executing", "scheduled", "validating", "awaiting_approval", None):
                self.report.unknown_types[f"tool-status:{status}"] += 1
            return
        output, error = _response_text(call.get("result"))
        display = _display_text(call.get("resultDisplay"))
        if self.meta.cwd is None:
            root = _root_from(args, error or output)
            if root:
                self.meta.cwd = root
        if failed:
            text = error or display or output or f"tool call {status}"
        else:
            text = output or display
            failed = shell_failed(name, text)
        self.emit("tool_result", text=cap(text, self.caps.tool_output, self.report), is_error=failed, **common)


def _header(meta: TranscriptMeta, sink: EventSink, rec: dict) -> None:
    """Fill ``meta`` from a session header (JSONL line 1, or the legacy object's top-level scalars)."""
    sink.note_session(rec.get("sessionId"))
    if meta.start_time is None:
        meta.start_time = norm_iso(rec.get("startTime"))
    _metadata(meta, rec)


def _metadata(meta: TranscriptMeta, values: dict) -> None:
    last = norm_iso(values.get("lastUpdated"))
    if last:
        meta.end_time = last
    if values.get("kind") == "subagent":
        meta.version = "(subagent)"


def _is_message(rec: dict) -> bool:
    return isinstance(rec.get("id"), str) and type_tag(rec.get("type")) in MESSAGE_TYPES


def _entries(messages: object, line: int):
    """``(key, message)`` for the message records of a checkpoint or one-line session object: the record's
    ``id``, or (a record without one) its place in the list."""
    if not isinstance(messages, list):
        return
    for n, msg in enumerate(messages):
        if isinstance(msg, dict) and type_tag(msg.get("type")) in MESSAGE_TYPES:
            ident = msg.get("id")
            yield (ident if isinstance(ident, str) else f"\0{line}:{n}"), msg


# --- chat JSONL ----------------------------------------------------------------------------------------------


class _Plan:
    """Pass 1 of the JSONL: which line holds each message's winning record, and in which order they come."""

    def __init__(self) -> None:
        self.rank: dict[str, int] = {}  # id -> first-seen rank (live ids, in Gemini's map order)
        self.last: dict[str, int] = {}  # id -> line of its last record
        self.from_checkpoint: dict[int, set[str]] = {}  # $set line -> ids first seen in its messages
        self.next_rank = 0

    def see(self, ident: str, line: int, checkpoint: bool = False) -> None:
        if ident in self.rank:
            if not checkpoint:
                self.last[ident] = line
            return
        self.rank[ident] = self.next_rank
        self.next_rank += 1
        self.last[ident] = line
        if checkpoint:
            self.from_checkpoint.setdefault(line, set()).add(ident)

    def rewind(self, ident: str) -> int:
        """Drop ``ident`` and every message after it (all of them when it is unknown); returns how many."""
        if ident in self.rank:
            cut = self.rank[ident]
            dropped = [i for i, r in self.rank.items() if r >= cut]
        else:
            dropped = list(self.rank)
        for i in dropped:
            del self.rank[i]
            line = self.last.pop(i)
            ids = self.from_checkpoint.get(line)
            if ids:
                ids.discard(i)
        return len(dropped)


def _plan(path: str, limit: int | None) -> tuple[_Plan, int]:
    plan = _Plan()
    rewound = 0
    for line, rec in iter_jsonl(path, ReadReport(), limit):  # bad lines are counted by pass 2
        if _is_message(rec):
            plan.see(rec["id"], line)
            continue
        target = rec.get("$rewindTo")
        if isinstance(target, str):
            rewound += plan.rewind(target)
            continue
        values = rec.get("$set")
        messages = values.get("messages") if isinstance(values, dict) else rec.get("messages")  # or a whole
        for key, _msg in _entries(messages, line):  # legacy object on one line
            plan.see(key, line, checkpoint=True)
    return plan, rewound


def _read_chat_jsonl(path: str, sink: EventSink, caps: Caps, report: ReadReport, limit: int | None) -> None:
    meta = sink.meta
    plan, rewound = _plan(path, limit)
    if rewound:
        report.ignored["rewound_message"] += rewound
    groups: dict[int, list[tuple[str, dict]]] = {}
    current: list[tuple[str, dict]] = []

    def emit(kind: str, **fields) -> None:
        current.append((kind, fields))

    records = _Records(emit, meta, caps, report)
    superseded = 0

    def take(key: str, msg: dict, line: int) -> None:
        nonlocal current
        current = groups.setdefault(plan.rank[key], [])
        records.record(msg, line, meta.session_id)

    for line, rec in iter_jsonl(path, report, limit):
        if _is_message(rec):
            ident = rec["id"]
            if plan.last.get(ident) == line:
                take(ident, rec, line)
            else:
                superseded += 1
            continue
        if "$rewindTo" in rec:
            continue
        values = rec.get("$set")
        if isinstance(values, dict):
            _metadata(meta, values)
            messages = values.get("messages")
        elif "sessionId" in rec or "projectHash" in rec:
            _header(meta, sink, rec)
            messages = rec.get("messages")
        else:
            report.unknown_types[str(type_tag(rec.get("type")))] += 1
            continue
        wanted = plan.from_checkpoint.get(line)
        if wanted:
            for key, msg in _entries(messages, line):
                if key in wanted:
                    wanted.discard(key)  # a checkpoint naming an id twice: the first copy
                    take(key, msg, line)
    if superseded:
        report.ignored["superseded_record"] += superseded
    # the records' order: first-seen (the records' own order unless one was updated after a later one appeared)
    for rank in sorted(groups):
        for kind, fields in groups[rank]:
            sink.add(kind, **fields)


# --- legacy chat JSON ----------------------------------------------------------------------------------------


def _object_scalars(path: str, limit: int | None) -> dict:
    """Top-level string values of ``_META_KEYS`` of a JSON object, read from ijson events (no value is built:
    the scan stops at the ``messages`` array once the session id is known, or at ``limit`` bytes)."""
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    found: dict = {}
    with open_transcript(path, limit) as fh:
        guarded = GuardedReader(fh, path)
        try:
            for prefix, event, value in ijson.parse(guarded, use_float=True, buf_size=CHUNK_BYTES):
                if prefix == "messages" and event == "start_array" and "sessionId" in found:
                    break
                if prefix in _META_KEYS and event == "string":
                    found[prefix] = value
                    if len(found) == len(_META_KEYS):
                        break
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            pass
    return found


def _read_chat_json(path: str, sink: EventSink, caps: Caps, report: ReadReport, limit: int | None) -> None:
    _header(sink.meta, sink, _object_scalars(path, limit))
    records = _Records(sink.add, sink.meta, caps, report)
    for number, msg in iter_json_items(path, "messages.item", report, limit):
        if type_tag(msg.get("type")) is None:
            report.unknown_types["message-without-type"] += 1
            continue
        records.record(msg, number, sink.meta.session_id)


# --- stream-json capture -------------------------------------------------------------------------------------


def _read_stream_json(path: str, sink: EventSink, caps: Caps, report: ReadReport, limit: int | None) -> None:
    meta = sink.meta
    names: dict[str, str] = {}
    reply: list[str] = []
    reply_at: tuple[str | None, int] = (None, 0)

    def flush() -> None:
        if reply:
            text = "".join(reply)
            if text.strip():
                sink.add("assistant_text", text=cap(text, caps.text, report), timestamp=reply_at[0],
                         line=reply_at[1], session_id=meta.session_id)
            reply.clear()

    for line, rec in iter_jsonl(path, report, limit):
        rtype = type_tag(rec.get("type"))
        ts = norm_iso(rec.get("timestamp"))
        if rtype == "message" and rec.get("role") == "assistant":
            content = rec.get("content")
            if isinstance(content, str):
                if not reply:
                    reply_at = (ts, line)
                reply.append(content)
                if rec.get("delta") is not True:
                    flush()
            continue
        flush()
        if rtype == "init":
            sink.note_session(rec.get("session_id"))
            if isinstance(rec.get("model"), str):
                meta.model = meta.model or rec["model"]
            meta.start_time = meta.start_time or ts
        elif rtype == "message":
            content = rec.get("content")
            if rec.get("role") == "user" and isinstance(content, str) and content.strip():
                sink.add("user_prompt", text=cap(content, caps.text, report), timestamp=ts, line=line,
                         session_id=meta.session_id)
            else:
                report.unknown_types[f"message:{rec.get('role')}"] += 1
        elif rtype == "tool_use":
            name = rec.get("tool_name") if isinstance(rec.get("tool_name"), str) else None
            call_id = rec.get("tool_id") if isinstance(rec.get("tool_id"), str) else None
            if call_id and name:
                names[call_id] = name
            args = rec.get("parameters")
            if (name or "").lower() in TODO_TOOLS:
                items = todos_of(args)
                sink.add("todo_list", text=cap(todo_text(items), caps.tool_output, report), timestamp=ts,
                         tool_name=name, target=f"{len(items)} todos", call_id=call_id, todos=items, line=line,
                         session_id=meta.session_id)
                continue
            sink.add("tool_call", text=call_text(args, caps.tool_output, report), timestamp=ts, tool_name=name,
                     target=main_target(name, args, limit=caps.target), call_id=call_id, line=line,
                     session_id=meta.session_id)
        elif rtype == "tool_result":
            call_id = rec.get("tool_id") if isinstance(rec.get("tool_id"), str) else None
            name = names.get(call_id) if call_id else None
            failed = rec.get("status") == "error"
            if (name or "").lower() in TODO_TOOLS and not failed:
                continue
            error = rec.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            output = rec.get("output")
            text = (message if failed and isinstance(message, str) else None) or (
                output if isinstance(output, str) else "")
            sink.add("tool_result", text=cap(text, caps.tool_output, report), timestamp=ts, tool_name=name,
                     call_id=call_id, is_error=failed, line=line, session_id=meta.session_id)
        elif rtype in ("error", "result"):
            report.ignored[f"notice:{rtype}"] += 1
            if ts:
                meta.end_time = ts
        else:
            report.unknown_types[str(rtype)] += 1
    flush()


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Gemini CLI session (``gemini-chat-jsonl``, ``gemini-chat-json`` or ``gemini-stream-json``).

    ``Event.line`` is the 1-based line (JSONL) or message number (JSON object; for a message first seen in a
    checkpoint, the checkpoint's line).  Bad lines are skipped and counted in ``report``; never raises for
    content.
    """
    sink = EventSink(TranscriptMeta(harness="gemini", format=fmt, path=path), report)
    if fmt == "gemini-chat-json":
        _read_chat_json(path, sink, caps, report, limit)
    elif fmt == "gemini-stream-json":
        _read_stream_json(path, sink, caps, report, limit)
    else:
        _read_chat_jsonl(path, sink, caps, report, limit)
    return sink.finish()
