"""GitHub Copilot CLI reader: ``events.jsonl`` (1.0.x) and the legacy flat session file (FORMATS.md §2).

One streaming pass over the JSONL envelope ``{type, data, id, timestamp, parentId}``.  Memory is bounded by
the call-id maps (tool name per call, the call ids to drop); events go straight to the ``EventSink``.

Rules (FORMATS.md §2, §6, §7):

* user_prompt: ``user.message.data.content`` (never ``transformedContent``); the legacy
  ``\\n\\n<current_datetime>…</current_datetime>`` suffix is stripped; ``null``/blank content gives no event.
* assistant_text: ``assistant.message.data.content`` when not blank; reasoning: ``data.reasoningText``.
  Messages carrying ``parentToolCallId`` belong to a sub-agent: dropped (with their tool calls and results)
  and counted in ``report.ignored["subagent_message"]``.
* tool_call: ``assistant.message.data.toolRequests[]`` only (``tool.execution_start`` mirrors them);
  ``arguments`` is an object or, for ``type:"custom"`` tools, a raw string.  ``task`` -> subagent_call
  (target = description/name, agent = ``agent_type``, text = prompt).  ``report_intent`` is a status label,
  not work: dropped with its result, counted in ``report.ignored["report_intent"]``.
* tool_result: ``tool.execution_complete``; ``success:false`` -> ``is_error`` with ``error.message`` as text,
  else ``result.content``.  The ``task`` call's result is a subagent_result (agent from the call or from
  ``subagent.started``/``subagent.completed`` ``agentName``).
* compaction: ``session.compaction_complete.data.summaryContent``.  Legacy ``session.truncation`` has no
  summary: it becomes a compaction event whose text is ``truncation: N messages removed (token limit T)``.
* ``abort`` gives no event (counted in ``report.ignored["abort"]``).
* meta: ``session.start`` (sessionId, startTime, copilotVersion, context.cwd/branch/repository), else
  ``session.resume.data.context`` / ``hook.start.data.input.cwd``; legacy cwd and version from the
  ``system.message`` lines ``* Current working directory: …`` and ``Version number: …``; model from the first
  of ``session.model_change.newModel``, ``selectedModel``, ``assistant.message.model``,
  ``session.shutdown.currentModel``.
"""

from __future__ import annotations

import re

from pipeline.transcripts.common import Caps, EventSink, call_text, cap, norm_iso, text_of, type_tag
from pipeline.transcripts.model import Event, ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_jsonl
from pipeline.transcripts.summaries import useless_summary
from pipeline.transcripts.targets import main_target

#: Envelope types seen in real files that carry nothing for the event stream (FORMATS.md §2 list).
_QUIET_TYPES = frozenset(
    {
        "session.mode_changed", "session.info", "session.warning", "session.compaction_start",
        "session.task_complete", "system.notification", "assistant.turn_start", "assistant.turn_end", "hook.end",
        "permission.requested", "permission.completed", "subagent.failed", "skill.invoked", "session.plan_changed",
        "session.context_changed",
    }
)

_DATETIME_SUFFIX = re.compile(r"\s*<current_datetime>[^<]*</current_datetime>\s*\Z")
_LEGACY_CWD = re.compile(r"^\* Current working directory: (.+?)\s*$", re.MULTILINE)
_LEGACY_VERSION = re.compile(r"^Version number: (\S+)", re.MULTILINE)

_SUBAGENT_TOOLS = frozenset({"task"})
HARNESS_TOOL = "copilot-cli"  # the tool_name of an error the CLI itself reports (``session.error``)
_NOISE_TOOLS = frozenset({"report_intent"})


def clean_prompt(content: object) -> str:
    """The typed prompt of a ``user.message``: legacy ``<current_datetime>…</current_datetime>`` suffix removed.

    Returns ``""`` for ``null``/non-string content (FORMATS.md §2 "user prompt", §7 fixture note).
    """
    if not isinstance(content, str):
        return ""
    return _DATETIME_SUFFIX.sub("", content)


class _CopilotState:
    """Streaming state: the sink plus the call-id maps needed to pair calls with results."""

    def __init__(self, sink: EventSink, caps: Caps, report: ReadReport) -> None:
        self.sink = sink
        self.caps = caps
        self.report = report
        self.meta = sink.meta
        self.call_names: dict[str, str] = {}  # call id -> tool name (main thread calls)
        self.call_agents: dict[str, str] = {}  # task call id -> agent type/name
        self.dropped_calls: set[str] = set()  # report_intent and sub-agent-internal call ids
        self.subagent_results: dict[str, Event] = {}  # task call id -> its subagent_result Event
        sink.settle = self.subagent_results.clear  # before a segment is cut: its events are done (``EventSink``)

    # --- meta -------------------------------------------------------------------------------------------
    def set_model(self, model: object) -> None:
        if self.meta.model is None and isinstance(model, str) and model:
            self.meta.model = model

    def set_context(self, context: object) -> None:
        if not isinstance(context, dict):
            return
        for attr, key in (("cwd", "cwd"), ("git_branch", "branch"), ("repo", "repository")):
            value = context.get(key)
            if getattr(self.meta, attr) is None and isinstance(value, str) and value:
                setattr(self.meta, attr, value)

    def session_start(self, data: dict) -> None:
        self.sink.note_session(data.get("sessionId"))
        version = data.get("copilotVersion")
        if isinstance(version, str) and version and version != "unknown" and self.meta.version is None:
            self.meta.version = version
        if self.meta.start_time is None:
            self.meta.start_time = norm_iso(data.get("startTime"))
        self.set_context(data.get("context"))
        self.set_model(data.get("selectedModel"))

    def system_message(self, data: dict) -> None:
        content = data.get("content")
        if not isinstance(content, str):
            return
        if self.meta.cwd is None:
            match = _LEGACY_CWD.search(content)
            if match:
                self.meta.cwd = match.group(1)
        if self.meta.version is None:
            match = _LEGACY_VERSION.search(content)
            if match:
                self.meta.version = match.group(1)

    # --- events -----------------------------------------------------------------------------------------
    def user_message(self, data: dict, ts: str | None, line: int) -> None:
        prompt = clean_prompt(data.get("content"))
        if prompt.strip():
            self.sink.add("user_prompt", text=cap(prompt, self.caps.text, self.report), timestamp=ts, line=line)

    def assistant_message(self, data: dict, ts: str | None, line: int) -> None:
        requests = data.get("toolRequests")
        requests = requests if isinstance(requests, list) else []
        if data.get("parentToolCallId"):
            self.report.ignored["subagent_message"] += 1
            for req in requests:
                if isinstance(req, dict) and isinstance(req.get("toolCallId"), str):
                    self.dropped_calls.add(req["toolCallId"])
            return
        self.set_model(data.get("model"))
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning.strip():
            self.sink.add("reasoning", text=cap(reasoning, self.caps.text, self.report), timestamp=ts, line=line)
        content = data.get("content")
        if isinstance(content, str) and content.strip():
            self.sink.add("assistant_text", text=cap(content, self.caps.text, self.report), timestamp=ts, line=line)
        for req in requests:
            if isinstance(req, dict):
                self.tool_request(req, ts, line)

    def tool_request(self, req: dict, ts: str | None, line: int) -> None:
        name = req.get("name") if isinstance(req.get("name"), str) else None
        call_id = req.get("toolCallId") if isinstance(req.get("toolCallId"), str) else None
        args = req.get("arguments")
        lname = (name or "").lower()
        if lname in _NOISE_TOOLS:
            self.report.ignored[lname] += 1
            if call_id:
                self.dropped_calls.add(call_id)
            return
        if call_id and name:
            self.call_names[call_id] = name
        target = main_target(name, args, limit=self.caps.target)
        if lname in _SUBAGENT_TOOLS:
            agent = None
            prompt = ""
            if isinstance(args, dict):
                agent = args.get("agent_type") if isinstance(args.get("agent_type"), str) else None
                prompt = args.get("prompt") if isinstance(args.get("prompt"), str) else ""
            if call_id and agent:
                self.call_agents[call_id] = agent
            self.sink.add(
                "subagent_call", text=cap(prompt, self.caps.subagent, self.report), timestamp=ts, tool_name=name,
                target=target, call_id=call_id, agent=agent, line=line,
            )
            return
        self.sink.add(
            "tool_call", text=call_text(args, self.caps.tool_output, self.report), timestamp=ts, tool_name=name,
            target=target, call_id=call_id, line=line,
        )

    def execution_complete(self, data: dict, ts: str | None, line: int) -> None:
        call_id = data.get("toolCallId") if isinstance(data.get("toolCallId"), str) else None
        if call_id in self.dropped_calls:
            return
        if data.get("parentToolCallId"):
            self.report.ignored["subagent_tool_result"] += 1
            return
        name = self.call_names.get(call_id) if call_id else None
        failed = data.get("success") is False
        if failed:
            error = data.get("error")
            text = error.get("message") if isinstance(error, dict) else error
            text = text if isinstance(text, str) else "tool call failed"
        else:
            result = data.get("result")
            text = text_of(result.get("content")) if isinstance(result, dict) else text_of(result)
        if (name or "").lower() in _SUBAGENT_TOOLS:
            event = self.sink.add(
                "subagent_result", text=cap(text, self.caps.subagent, self.report), timestamp=ts, tool_name=name,
                call_id=call_id, is_error=failed, agent=self.call_agents.get(call_id), line=line,
            )
            if call_id:
                self.subagent_results[call_id] = event
            return
        self.sink.add(
            "tool_result", text=cap(text, self.caps.tool_output, self.report), timestamp=ts, tool_name=name,
            call_id=call_id, is_error=failed, line=line,
        )

    def session_error(self, data: dict, ts: str | None, line: int) -> None:
        """``session.error`` (``{errorType, message}``): the CLI's own failure (MCP servers that do not start, a
        model list it cannot load) — a failed ``tool_result`` of the harness itself (``HARNESS_TOOL``, no call)."""
        message = data.get("message")
        if not isinstance(message, str) or not message.strip():
            return
        kind = data.get("errorType")
        text = f"{kind} error: {message}" if isinstance(kind, str) and kind else message
        self.sink.add("tool_result", text=cap(text, self.caps.tool_output, self.report), timestamp=ts,
                      tool_name=HARNESS_TOOL, is_error=True, line=line)

    def execution_start(self, data: dict) -> None:
        """``tool.execution_start`` mirrors a tool request: only used for the tool name of a call not seen."""
        call_id = data.get("toolCallId")
        name = data.get("toolName")
        if isinstance(call_id, str) and isinstance(name, str) and not data.get("parentToolCallId"):
            if call_id not in self.dropped_calls:
                self.call_names.setdefault(call_id, name)

    def subagent_info(self, data: dict) -> None:
        """``subagent.started``/``subagent.completed``: fill the sub-agent's name where the call had none."""
        call_id = data.get("toolCallId")
        agent = data.get("agentName") or data.get("agentDisplayName")
        if not isinstance(call_id, str) or not isinstance(agent, str) or not agent:
            return
        self.call_agents.setdefault(call_id, agent)
        event = self.subagent_results.get(call_id)
        if event is not None and event.agent is None:
            event.agent = agent

    def compaction(self, data: dict, ts: str | None, line: int) -> None:
        summary = data.get("summaryContent")
        if isinstance(summary, str) and summary.strip() and useless_summary(summary):
            self.report.ignored["useless_compaction_summary"] += 1
        elif isinstance(summary, str) and summary.strip():
            self.sink.add("compaction", text=cap(summary, self.caps.text, self.report), timestamp=ts, line=line)
        else:
            self.report.ignored["compaction_without_summary"] += 1

    def truncation(self, data: dict, ts: str | None, line: int) -> None:
        removed = data.get("messagesRemovedDuringTruncation")
        limit = data.get("tokenLimit")
        text = f"truncation: {removed if removed is not None else '?'} messages removed"
        if limit is not None:
            text += f" (token limit {limit})"
        self.sink.add("compaction", text=text, timestamp=ts, line=line)


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Copilot CLI session file (``copilot-events`` or ``copilot-legacy``) into a ``Transcript``.

    Streams line by line; bad lines are skipped and counted in ``report`` (never raises for content).
    Envelope types not in FORMATS.md §2 are counted in ``report.unknown_types``.  Timestamps are the envelope
    ``timestamp`` (ISO-8601 UTC).  ``meta.end_time`` is the last envelope timestamp of the file.
    """
    sink = EventSink(TranscriptMeta(harness="copilot", format=fmt, path=path), report)
    state = _CopilotState(sink, caps, report)
    last_ts: str | None = None
    for line, rec in iter_jsonl(path, report, limit):
        rtype = type_tag(rec.get("type"))
        data = rec.get("data")
        if not isinstance(data, dict):
            data = {}
        ts = norm_iso(rec.get("timestamp"))
        last_ts = ts or last_ts
        if rtype == "user.message":
            state.user_message(data, ts, line)
        elif rtype == "assistant.message":
            state.assistant_message(data, ts, line)
        elif rtype == "tool.execution_complete":
            state.execution_complete(data, ts, line)
        elif rtype == "session.compaction_complete":
            state.compaction(data, ts, line)
        elif rtype == "session.truncation":
            state.truncation(data, ts, line)
        elif rtype in ("subagent.started", "subagent.completed"):
            state.subagent_info(data)
        elif rtype == "session.start":
            state.session_start(data)
        elif rtype == "session.resume":
            state.set_context(data.get("context"))
            state.set_model(data.get("selectedModel"))
        elif rtype == "session.model_change":
            state.set_model(data.get("newModel"))
        elif rtype == "system.message":
            state.system_message(data)
        elif rtype == "hook.start":
            inp = data.get("input")
            if isinstance(inp, dict) and state.meta.cwd is None and isinstance(inp.get("cwd"), str):
                state.meta.cwd = inp["cwd"]
        elif rtype == "tool.execution_start":
            state.execution_start(data)
        elif rtype == "session.shutdown":
            state.set_model(data.get("currentModel"))
        elif rtype == "session.error":
            state.session_error(data, ts, line)
        elif rtype == "abort":
            report.ignored["abort"] += 1
        elif rtype in _QUIET_TYPES:
            pass
        else:
            report.unknown_types[str(rtype)] += 1
    transcript = sink.finish()
    if last_ts:
        transcript.meta.end_time = last_ts
    return transcript
