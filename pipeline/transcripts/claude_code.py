"""Claude Code transcript reader: on-disk JSONL and the same records dumped as one JSON array
(FORMATS.md §1 "Claude Code session transcript", §6 "Cross-format pitfalls"; DESIGN.md "Transcript formats").

Streams records one at a time and keeps only: the call id -> (tool name, is sub-agent, agent label) map
of calls still waiting for their result, the assistant message whose text blocks are being joined, the
2.1.9x task list, and a compaction event waiting for its summary.  Rules, in short:

- ``user_prompt``: a ``user`` line that is not a tool result, not flagged (isMeta, isCompactSummary,
  isVisibleInTranscriptOnly, sidechain, task notification) and not harness text (``claude_code_text``).
- ``assistant_text``: text blocks of one API message (lines sharing ``message.id``) joined with a blank
  line into one event at the position of the first block; API-error / ``<synthetic>`` lines are skipped
  and counted in ``report.unknown_types["api-error"]``.
- ``compaction``: one event per compaction.  Its ``target`` is the ``compact_boundary`` trigger
  (``"auto"`` / ``"manual"``) when such a line preceded the summary (2.x), else None (1.0.x); ``text`` is
  the ``isCompactSummary`` summary ("" when the file ends before it).  The event sits at the boundary's
  position; its ``line``/``timestamp`` are the summary line's once the summary is read.
- Sidechain lines (sub-agent chatter inline in 1.0.x files) are skipped and counted in
  ``report.ignored["sidechain"]`` — except in a sub-agent's own file (its first conversational
  line is a sidechain line: 2.x ``agent-*.jsonl``), which is read as a conversation of its own whose
  first prompt is the task the parent agent gave.
- Metadata line types (``METADATA_TYPES``) and ``system`` subtypes other than ``compact_boundary`` /
  ``init`` are skipped silently; any other line type is counted under its name in
  ``report.unknown_types`` (never fatal).
"""

from __future__ import annotations

from pipeline.transcripts.claude_code_text import prompt_text, strip_agent_trailer
from pipeline.transcripts.common import (
    TODO_STATUS,
    Caps,
    EventSink,
    call_text,
    cap,
    norm_iso,
    text_of,
    todo_items,
    todo_text,
    type_tag,
)
from pipeline.transcripts.model import Event, ReadReport, TodoItem, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_json_items, iter_jsonl
from pipeline.transcripts.summaries import useless_summary
from pipeline.transcripts.targets import main_target

FORMATS = ("claude-code-jsonl", "claude-code-json-array")

#: Line types that carry no conversation (FORMATS.md §1.1 "Non-message line types"); ``result`` is the
#: last line of a ``-p --output-format stream-json`` capture (it repeats the final answer).
METADATA_TYPES = frozenset(
    {
        "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "permission-mode",
        "mode", "agent-setting", "agent-name", "ai-title", "custom-title", "last-prompt", "bridge-session",
        "result",
    }
)

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
CARRY_KEY = "claude-code-tasks"  # ReadReport.carry: the TaskCreate/TaskUpdate list where a read stops
SYNTHETIC_MODEL = "<synthetic>"
WEAK_BRANCHES = frozenset({"", "HEAD"})


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Claude Code transcript into a ``Transcript`` (harness ``claude-code``).

    ``fmt`` is ``claude-code-jsonl`` (one record per line; ``Event.line`` = 1-based line number) or
    ``claude-code-json-array`` (one JSON array, streamed with ijson; ``Event.line`` = 1-based element
    number).  Bad records are skipped and counted in ``report`` (see ``records.iter_jsonl``); fields are
    capped at ``caps`` (characters) and each cut counted in ``report.capped_fields``.
    Raises ValueError for another ``fmt`` (a dispatcher bug, not bad input).
    """
    if fmt not in FORMATS:
        raise ValueError(f"claude_code.read cannot read format {fmt!r}")
    meta = TranscriptMeta(harness="claude-code", format=fmt, path=path)
    reader = _Reader(meta, report, caps)
    if fmt == "claude-code-json-array":
        records = iter_json_items(path, "item", report, limit)
    else:
        records = iter_jsonl(path, report, limit)
    for number, record in records:
        reader.feed(number, record)
    return reader.finish()


class _Reader:
    """The streaming state of one read (see module docstring for what is kept)."""

    def __init__(self, meta: TranscriptMeta, report: ReadReport, caps: Caps) -> None:
        self.meta = meta
        self.report = report
        self.caps = caps
        self.sink = EventSink(meta, report)
        self.sink.settle = self._settle
        self.calls: dict[str, tuple[str, bool, str | None]] = {}
        self.tasks: list[TodoItem] = []
        self.next_task = 1
        self._take_carry(report.carry.get(CARRY_KEY))
        self.text_id: object = None  # message.id of the assistant message being joined
        self.text_event: Event | None = None
        self.text_parts: list[str] = []
        self.boundary: Event | None = None  # compaction event of a compact_boundary, awaiting its summary
        self.subagent_file: bool | None = None  # decided by the first user/assistant line
        self.last_session: object = None
        self.branch_final = False
        self.env_done = False  # cwd, version and a real branch are known: _note_env has nothing left to do
        self.links: dict[str, str | None] = {}  # record uuid -> parentUuid (logicalParentUuid at a boundary)
        # per-record context, set by feed()
        self.uuid: str | None = None
        self.line = 0
        self.timestamp: str | None = None
        self.session: str | None = None

    # -- records ------------------------------------------------------------------------------------------
    def feed(self, line: int, rec: dict) -> None:
        """Take one record (a dict) found at ``line``."""
        get = rec.get
        rtype = type_tag(get("type"))
        timestamp = norm_iso(get("timestamp"))
        if timestamp:
            meta = self.meta
            if meta.start_time is None:
                meta.start_time = timestamp
            meta.end_time = timestamp
        session = get("sessionId") or get("session_id")
        if session != self.last_session and isinstance(session, str):
            self.sink.note_session(session)
            self.last_session = session
        self.line, self.timestamp = line, timestamp
        self.session = session if isinstance(session, str) else None
        uuid = get("uuid")
        if isinstance(uuid, str) and get("isSidechain") is not True:
            parent = get("parentUuid") or get("logicalParentUuid")
            self.links[uuid] = parent if isinstance(parent, str) else None
            self.uuid = uuid
        else:
            self.uuid = None

        if rtype == "user" or rtype == "assistant":
            if not self.env_done:
                self._note_env(rec)
            sidechain = get("isSidechain") is True or bool(get("parent_tool_use_id"))
            if self.subagent_file is None:
                self.subagent_file = sidechain
            if sidechain and not self.subagent_file:
                self.report.ignored["sidechain"] += 1
                return
            message = get("message")
            if not isinstance(message, dict):
                self.report.unknown_types[f"{rtype} without message"] += 1
                return
            if rtype == "user":
                self._user(rec, message)
            else:
                self._assistant(rec, message)
        elif rtype == "system":
            subtype = rec.get("subtype")
            if subtype == "compact_boundary":
                self._compact_boundary(rec)
            elif subtype == "init":  # stream-json capture header
                self._note_env(rec)
                if self.meta.version is None and isinstance(rec.get("claude_code_version"), str):
                    self.meta.version = rec["claude_code_version"]
        elif rtype not in METADATA_TYPES:
            self.report.unknown_types[rtype if isinstance(rtype, str) else "(no type)"] += 1

    def finish(self) -> Transcript:
        """Close the pending assistant message and return the ``Transcript``."""
        self._flush_text()
        self._give_carry()
        transcript = self.sink.finish()
        self._link_events(transcript.events)
        return transcript

    def _take_carry(self, carried: object) -> None:
        """Start with the 2.1.9x task list an earlier read of this file ended with (``ReadReport.carry``)."""
        if not isinstance(carried, dict):
            return
        try:
            self.tasks = [TodoItem(content=str(c), status=str(s), id=str(i)) for i, c, s in carried.get("tasks", [])]
            self.next_task = int(carried.get("next", 1))
        except (TypeError, ValueError):
            self.tasks, self.next_task = [], 1

    def _give_carry(self) -> None:
        """Leave the task list in ``ReadReport.carry`` for a read that goes on from here."""
        if self.tasks or self.next_task > 1:
            self.report.carry[CARRY_KEY] = {"tasks": [[t.id, t.content, t.status] for t in self.tasks],
                                            "next": self.next_task}

    def _settle(self) -> None:
        """Before a segment is cut (``EventSink``): the pending assistant message is complete, the segment's events
        are linked, and the uuid links of records before the cut are dropped (memory stays bounded by a segment);
        a compaction still waiting for its summary gets a new event in the next segment."""
        self._flush_text()
        self._give_carry()
        self._link_events(self.sink.events)
        parent = self.links.get(self.uuid) if self.uuid else None
        self.links.clear()
        if self.uuid:
            self.links[self.uuid] = parent
        self.boundary = None

    def _link_events(self, events: list[Event]) -> None:
        """Set each event's ``parent_uuid`` to its nearest ancestor record that produced an event."""
        links = self.links
        if not links:
            return
        has_event = {e.uuid for e in events if e.uuid}
        memo: dict[str, str | None] = {}
        for e in events:
            if e.uuid is None:
                continue
            walked: list[str] = []
            p = links.get(e.uuid)
            while p is not None and p not in has_event and p in links and p not in memo and len(walked) < 100000:
                walked.append(p)
                p = links[p]
            if p is not None and p in memo:
                p = memo[p]
            for w in walked:
                memo[w] = p
            e.parent_uuid = p

    def _note_env(self, rec: dict) -> None:
        meta = self.meta
        if meta.cwd is None:
            cwd = rec.get("cwd")
            if isinstance(cwd, str) and cwd:
                meta.cwd = cwd
        if meta.version is None:
            version = rec.get("version")
            if isinstance(version, str) and version:
                meta.version = version
        if not self.branch_final:
            branch = rec.get("gitBranch")
            if isinstance(branch, str):
                if branch not in WEAK_BRANCHES:
                    meta.git_branch = branch
                    self.branch_final = True
                elif branch and meta.git_branch is None:
                    meta.git_branch = branch  # "HEAD": better than nothing, replaced by a real branch
        self.env_done = self.branch_final and meta.cwd is not None and meta.version is not None

    def _add(
        self,
        kind: str,
        text: str = "",
        tool_name: str | None = None,
        target: str | None = None,
        call_id: str | None = None,
        is_error: bool = False,
        todos: list[TodoItem] | None = None,
        agent: str | None = None,
    ) -> Event:
        event = self.sink.add(kind, text=text, timestamp=self.timestamp, tool_name=tool_name, target=target,
                              call_id=call_id, is_error=is_error, todos=todos, agent=agent, line=self.line,
                              session_id=self.session)
        event.uuid = self.uuid
        return event

    # -- user lines ---------------------------------------------------------------------------------------
    def _user(self, rec: dict, message: dict) -> None:
        content = message.get("content")
        if isinstance(content, list):
            is_result = False
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    is_result = True
                    self._tool_result(block)
            if is_result:
                return
        if rec.get("isCompactSummary") is True:
            self._compaction_summary(content)
            return
        if rec.get("isMeta") is True or rec.get("isVisibleInTranscriptOnly") is True or "toolUseResult" in rec:
            return
        origin = rec.get("origin")
        if isinstance(origin, dict) and origin.get("kind") == "task-notification":
            return
        text = prompt_text(content)
        if text:
            self._add("user_prompt", text=cap(text, self.caps.text, self.report))

    def _tool_result(self, block: dict) -> None:
        call_id = block.get("tool_use_id")
        call_id = call_id if isinstance(call_id, str) else None
        info = self.calls.pop(call_id, None) if call_id else None
        content = block.get("content")
        text = content if isinstance(content, str) else text_of(content)
        is_error = block.get("is_error") is True
        if info is not None and info[1]:
            text = cap(strip_agent_trailer(text), self.caps.subagent, self.report)
            self._add("subagent_result", text=text, tool_name=info[0], call_id=call_id, is_error=is_error,
                      agent=info[2])
        else:
            self._add("tool_result", text=cap(text, self.caps.tool_output, self.report),
                      tool_name=info[0] if info else None, call_id=call_id, is_error=is_error)

    # -- compaction ---------------------------------------------------------------------------------------
    def _compact_boundary(self, rec: dict) -> None:
        # the transcript writes compactMetadata; the stream-json / SDK message compact_metadata (newer CLIs add
        # post/pre tokens, duration, preserved segments: only the trigger is read)
        metadata = rec.get("compactMetadata")
        if not isinstance(metadata, dict):
            metadata = rec.get("compact_metadata")
        trigger = metadata.get("trigger") if isinstance(metadata, dict) else None
        self.boundary = self._add("compaction", target=trigger if isinstance(trigger, str) else None)

    def _compaction_summary(self, content: object) -> None:
        text = cap(text_of(content).strip(), self.caps.text, self.report)
        if text and useless_summary(text):  # a bare template or a preface without a summary: not content
            self.report.ignored["useless_compaction_summary"] += 1
            text = ""
        event = self.boundary
        self.boundary = None
        if event is not None and not event.text:
            event.text, event.line, event.timestamp = text, self.line, self.timestamp or event.timestamp
            return
        self._add("compaction", text=text)

    # -- assistant lines ----------------------------------------------------------------------------------
    def _assistant(self, rec: dict, message: dict) -> None:
        model = message.get("model")
        if rec.get("isApiErrorMessage") is True or model == SYNTHETIC_MODEL:
            self.report.unknown_types["api-error"] += 1
            return
        if self.meta.model is None and isinstance(model, str) and model:
            self.meta.model = model
        message_id = message.get("id")
        if message_id is None or message_id != self.text_id:
            self._flush_text()
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                self._text(block.get("text"), message_id)
            elif btype == "tool_use":
                self._tool_use(block)
            elif btype == "thinking":
                thinking = block.get("thinking")
                if isinstance(thinking, str) and thinking.strip():
                    self._add("reasoning", text=cap(thinking.strip(), self.caps.text, self.report))

    def _text(self, text: object, message_id: object) -> None:
        if not isinstance(text, str):
            return
        text = text.strip()
        if not text:
            return
        if self.text_event is not None:
            self.text_parts.append(text)
            return
        self.text_id = message_id
        self.text_event = self._add("assistant_text")
        self.text_parts = [text]

    def _flush_text(self) -> None:
        if self.text_event is not None:
            self.text_event.text = cap("\n\n".join(self.text_parts), self.caps.text, self.report)
        self.text_event, self.text_id, self.text_parts = None, None, []

    def _target(self, name: str, args: object) -> str:
        target = main_target(name, args, limit=self.caps.target)
        if len(target) == self.caps.target and target.endswith("…"):
            self.report.capped_fields += 1
        return target

    def _tool_use(self, block: dict) -> None:
        name = block.get("name")
        name = name if isinstance(name, str) and name else "unknown"
        call_id = block.get("id")
        call_id = call_id if isinstance(call_id, str) else None
        args = block.get("input")
        fields = args if isinstance(args, dict) else {}
        if name in SUBAGENT_TOOLS:
            agent_type, description = fields.get("subagent_type"), fields.get("description")
            agent = agent_type if isinstance(agent_type, str) and agent_type else None
            prompt = fields.get("prompt")
            prompt = cap(prompt, self.caps.subagent, self.report) if isinstance(prompt, str) else ""
            self._add("subagent_call", tool_name=name, target=self._target(name, args), call_id=call_id,
                      agent=agent, text=prompt)
            label = agent or (description if isinstance(description, str) and description else None)
            if call_id:
                self.calls[call_id] = (name, True, label)
            return
        if call_id:
            self.calls[call_id] = (name, False, None)
        if name == "TodoWrite":
            todos = todo_items(fields.get("todos"))
            self._todo_event(name, call_id, f"{len(todos)} todos", todos)
        elif name == "TaskCreate" or name == "TaskUpdate":
            self._task_change(name, fields)
            snapshot = [TodoItem(t.content, t.status, t.id) for t in self.tasks]  # later updates must not leak in
            self._todo_event(name, call_id, self._target(name, args), snapshot)
        else:
            text = call_text(args, self.caps.tool_output, self.report)
            self._add("tool_call", tool_name=name, target=self._target(name, args), call_id=call_id, text=text)

    def _todo_event(self, name: str, call_id: str | None, target: str, todos: list[TodoItem]) -> None:
        text = cap(todo_text(todos), self.caps.tool_output, self.report)
        self._add("todo_list", tool_name=name, target=target, call_id=call_id, todos=todos, text=text)

    def _task_change(self, name: str, fields: dict) -> None:
        """Apply a 2.1.9x ``TaskCreate`` / ``TaskUpdate`` to the running task list (FORMATS.md §1.2 "todo list").

        TaskCreate appends ``{id: next number, subject, pending}``; TaskUpdate sets the status (and the
        subject when given) of the task with that ``taskId``; status ``deleted`` removes it.  An update of a
        task this file never created is added when it names a subject, else ignored.
        """
        subject = fields.get("subject")
        subject = subject.strip() if isinstance(subject, str) else ""
        if name == "TaskCreate":
            self.tasks.append(TodoItem(content=subject or f"task {self.next_task}", status="pending",
                                       id=str(self.next_task)))
            self.next_task += 1
            return
        task_id = fields.get("taskId")
        if task_id is None:
            return
        task_id = str(task_id)
        status = fields.get("status")
        status = TODO_STATUS.get(status.lower()) if isinstance(status, str) else None
        for position, task in enumerate(self.tasks):
            if task.id == task_id:
                if status == "deleted":
                    del self.tasks[position]
                    return
                if status:
                    task.status = status
                if subject:
                    task.content = subject
                return
        if subject and status != "deleted":
            self.tasks.append(TodoItem(content=subject, status=status or "pending", id=task_id))
