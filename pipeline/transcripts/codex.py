"""OpenAI Codex CLI rollout reader (FORMATS.md §4).

One streaming pass over ``{timestamp, type, payload}`` lines.  Memory is bounded by two call-id maps
(tool name per call id, result event per call id for late ``patch_apply_end`` failures).

Rules (FORMATS.md §4, §6):

* user_prompt: only ``event_msg`` ``user_message.message`` (``response_item`` user messages also carry
  injected AGENTS.md / environment context; ``developer`` items are instructions).
* assistant_text: ``response_item`` ``message`` with ``role=="assistant"`` (not also the duplicated
  ``event_msg agent_message``); reasoning: ``response_item reasoning.summary[].text`` when not empty (not also
  ``event_msg agent_reasoning``).
* tool_call: ``function_call`` (``arguments`` is a JSON string) and ``custom_tool_call`` (``input`` raw
  string); ``update_plan`` -> todo_list from ``plan[{step, status}]`` (its ``Plan updated`` output is not
  repeated as a result).  ``local_shell_call`` / ``web_search_call`` items become tool calls too.
* tool_result: ``function_call_output`` / ``custom_tool_call_output`` (``output`` string, JSON-encoded
  ``{output, metadata.exit_code}``, or list of text parts).  No error flag exists: ``is_error`` comes from a
  non-zero exit code in the text (``"exit_code":N``, ``Exit code: N``, ``Process exited with code N``) or from
  ``event_msg patch_apply_end.success == false`` for the same call id.
* compaction: ``compacted.payload.message`` (``summary`` in some writers); when empty (newer writers keep the
  summary inside ``replacement_history``), the user message there that opens with Codex's handoff prefix
  ("Another language model started to solve this problem…", codex-rs ``templates/compact/summary_prefix.md``)
  gives the summary; an empty or useless one (``summaries.useless_summary``: an instant /compact, a remote
  compaction that keeps only encrypted items) gives a compaction event with no text.  ``event_msg
  context_compacted`` duplicates it.
* sub-agents: a sub-agent's own rollout has ``session_meta.payload.source`` = ``{"subagent": "review"}``, or
  ``{"subagent": {"thread_spawn": {"parent_thread_id", "agent_role", "agent_nickname"}}}`` for a spawned agent:
  recorded in ``meta.version`` as ``"0.77.0 (subagent: review)"`` / ``"(subagent: worker, parent <id>)"``.  In the parent rollout a review's
  findings (``event_msg exited_review_mode.review_output``) become a subagent_result with agent ``review``.
* assistant messages carry ``phase`` (``commentary`` mid-turn, ``final_answer`` at the turn's end; absent for older
  models): both are assistant text; ``task_started``/``task_complete`` only frame turns.
* meta: the first ``session_meta`` only (a resumed rollout repeats it; every id is noted) (id, cwd, git.branch/repository_url, cli_version, start timestamp);
  model from the first ``turn_context.payload.model``; ``turn_aborted`` gives no event (counted).
"""

from __future__ import annotations

import re

import orjson

from pipeline.transcripts.common import (
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
from pipeline.transcripts.model import Event, ReadReport, Transcript, TranscriptMeta
from pipeline.transcripts.records import iter_jsonl
from pipeline.transcripts.summaries import useless_summary
from pipeline.transcripts.targets import main_target

_EXIT_CODE = re.compile(
    r'"exit_code"\s*:\s*(-?\d+)|^Exit code: (-?\d+)|Process exited with code (-?\d+)', re.MULTILINE
)

#: ``event_msg`` payload types that carry nothing beyond what ``response_item`` lines already give.
_QUIET_EVENTS = frozenset(
    {
        "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "token_count", "task_started",
        "task_complete", "turn_started", "turn_complete", "context_compacted", "web_search_end", "item_completed",
        "item_started", "thread_settings_applied", "entered_review_mode", "plan_update", "mcp_startup_update",
        "mcp_startup_complete", "mcp_tool_call_end", "exec_command_end", "stream_error", "warning", "error",
        "thread_rolled_back", "sub_agent_activity", "thread_goal_updated", "user_message_images",
    }
)
_QUIET_ITEMS = frozenset({"ghost_snapshot", "compaction", "compaction_summary"})
_QUIET_RECORDS = frozenset({"world_state", "inter_agent_communication_metadata"})
_TODO_TOOLS = frozenset({"update_plan"})


def exit_code_error(output: str) -> bool:
    """True when a Codex tool output reports a non-zero exit code (FORMATS.md §4 "tool error").

    Recognizes the JSON ``"exit_code":N`` (0.5x), ``Exit code: N`` (0.7x) and ``Process exited with code N``
    (0.14x); the first match decides.  No exit code -> False (Codex has no other error flag).
    """
    match = _EXIT_CODE.search(output)
    if not match:
        return False
    code = next(g for g in match.groups() if g is not None)
    return int(code) != 0


def _output_text(output: object) -> str:
    """Text of a tool output: the ``output`` field of a JSON-encoded result, a list of text parts, or as is."""
    if isinstance(output, str):
        stripped = output.lstrip()
        if stripped.startswith("{") and '"output"' in output:
            try:
                decoded = orjson.loads(output)
            except orjson.JSONDecodeError:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                meta = decoded.get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                prefix = f"Exit code: {code}\n" if isinstance(code, int) else ""
                return prefix + decoded["output"]
        return output
    return text_of(output)


_SUMMARY_PREFIX = "Another language model started to solve this problem"


def _history_summary(history: object) -> str | None:
    """The compaction summary inside ``replacement_history``: the last user message opening with Codex's handoff
    prefix, without that framing paragraph (up to its first blank line or ``:`` line end).  None when absent."""
    if not isinstance(history, list):
        return None
    for item in reversed(history):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            text = text_of(item.get("content")).strip()
            if text.startswith(_SUMMARY_PREFIX):
                head, sep, rest = text.partition("\n")
                return rest.strip() if sep and rest.strip() else text
    return None


def _subagent_label(payload: dict) -> str | None:
    """``subagent: review`` for a review rollout, ``subagent: <role>, parent <id>`` for a spawned thread
    (``source.subagent.thread_spawn`` or a top-level ``parent_thread_id``); None for a main session."""
    source = payload.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    parent = payload.get("parent_thread_id")
    role = None
    if isinstance(sub, str) and sub:
        role = sub
    elif isinstance(sub, dict):
        spawn = sub.get("thread_spawn")
        if isinstance(spawn, dict):
            parent = spawn.get("parent_thread_id") or parent
            role = spawn.get("agent_role") or spawn.get("agent_nickname") or "thread_spawn"
        else:
            role = next((k for k in sub), None)
    if not role and not isinstance(parent, str):
        return None
    label = f"subagent: {role or 'spawned'}"
    return f"{label}, parent {parent}" if isinstance(parent, str) and parent else label


def _parse_args(raw: object) -> object:
    """``function_call.arguments``: a JSON string normally; returns the decoded value, or the raw string."""
    if isinstance(raw, str):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
    return raw


class _CodexState:
    """Streaming state: the sink plus call-id maps (tool name, result event)."""

    def __init__(self, sink: EventSink, caps: Caps, report: ReadReport) -> None:
        self.sink = sink
        self.caps = caps
        self.report = report
        self.meta = sink.meta
        self.call_names: dict[str, str] = {}
        self.results: dict[str, Event] = {}
        self.failed_patches: set[str] = set()
        self.seen_meta = False
        sink.settle = self.settle

    def settle(self) -> None:
        """Before a segment is cut (``EventSink``): forget the calls and results of the segment that ends (a user
        prompt follows; their outputs and patch results are in)."""
        self.call_names.clear()
        self.results.clear()

    def session_meta(self, payload: dict, ts: str | None) -> None:
        session_id = payload.get("id") or payload.get("session_id")
        self.sink.note_session(session_id)
        if self.seen_meta:  # repeated on every resume: the first one is the session's
            return
        self.seen_meta = True
        meta = self.meta
        if isinstance(payload.get("cwd"), str):
            meta.cwd = payload["cwd"]
        git = payload.get("git")
        if isinstance(git, dict):
            if isinstance(git.get("branch"), str):
                meta.git_branch = git["branch"]
            if isinstance(git.get("repository_url"), str):
                meta.repo = git["repository_url"]
        version = payload.get("cli_version")
        meta.version = version if isinstance(version, str) else None
        label = _subagent_label(payload)
        if label:
            meta.version = f"{meta.version} ({label})" if meta.version else f"({label})"
        meta.start_time = norm_iso(payload.get("timestamp")) or ts
        if isinstance(payload.get("model"), str):
            meta.model = meta.model or payload["model"]

    def response_item(self, item: dict, ts: str | None, line: int) -> None:
        itype = type_tag(item.get("type"))
        if itype == "message":
            if item.get("role") == "assistant":
                text = text_of(item.get("content"))
                if text.strip():
                    text = cap(text, self.caps.text, self.report)
                    self.sink.add("assistant_text", text=text, timestamp=ts, line=line)
            return  # user/developer items: injected context and instructions (FORMATS.md §4 "user prompt")
        if itype == "reasoning":
            summary = item.get("summary")
            text = "\n\n".join(
                s.get("text") for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
            ) if isinstance(summary, list) else ""
            if text.strip():
                self.sink.add("reasoning", text=cap(text, self.caps.text, self.report), timestamp=ts, line=line)
        elif itype == "function_call":
            self.call(item.get("name"), item.get("call_id"), _parse_args(item.get("arguments")), ts, line)
        elif itype == "custom_tool_call":
            self.call(item.get("name"), item.get("call_id"), item.get("input"), ts, line)
        elif itype == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            self.call("local_shell", item.get("call_id"), {"command": command}, ts, line)
        elif itype == "web_search_call":
            action = item.get("action")
            self.call("web_search", item.get("call_id") or item.get("id"), action, ts, line)
        elif itype in ("function_call_output", "custom_tool_call_output"):
            self.output(item.get("call_id"), item.get("output"), ts, line)
        elif itype not in _QUIET_ITEMS:
            self.report.unknown_types[f"response_item:{itype}"] += 1

    def call(self, name: object, call_id: object, args: object, ts: str | None, line: int) -> None:
        name = name if isinstance(name, str) else None
        call_id = call_id if isinstance(call_id, str) else None
        if call_id and name:
            self.call_names[call_id] = name
        target = main_target(name, args, limit=self.caps.target)
        if (name or "").lower() in _TODO_TOOLS and isinstance(args, dict):
            items = todo_items(args.get("plan"))
            self.sink.add(
                "todo_list", text=cap(todo_text(items), self.caps.tool_output, self.report), timestamp=ts,
                tool_name=name, target=f"{len(items)} todos", call_id=call_id, todos=items, line=line,
            )
            return
        self.sink.add(
            "tool_call", text=call_text(args, self.caps.tool_output, self.report), timestamp=ts, tool_name=name,
            target=target, call_id=call_id, line=line,
        )

    def output(self, call_id: object, output: object, ts: str | None, line: int) -> None:
        call_id = call_id if isinstance(call_id, str) else None
        name = self.call_names.get(call_id) if call_id else None
        text = _output_text(output)
        failed = exit_code_error(text) or (call_id in self.failed_patches)
        if (name or "").lower() in _TODO_TOOLS and not failed:
            return
        event = self.sink.add(
            "tool_result", text=cap(text, self.caps.tool_output, self.report), timestamp=ts, tool_name=name,
            call_id=call_id, is_error=failed, line=line,
        )
        if call_id:
            self.results[call_id] = event

    def event_msg(self, payload: dict, ts: str | None, line: int) -> None:
        ptype = type_tag(payload.get("type"))
        if ptype == "user_message":
            message = payload.get("message")
            if isinstance(message, str) and message.strip():
                self.sink.add("user_prompt", text=cap(message, self.caps.text, self.report), timestamp=ts, line=line)
        elif ptype == "patch_apply_end":
            call_id = payload.get("call_id")
            if payload.get("success") is False and isinstance(call_id, str):
                self.failed_patches.add(call_id)
                event = self.results.get(call_id)
                if event is not None:
                    event.is_error = True
        elif ptype == "turn_aborted":
            self.report.ignored["turn_aborted"] += 1
        elif ptype == "exited_review_mode":
            self.review_result(payload, ts, line)
        elif ptype not in _QUIET_EVENTS:
            self.report.unknown_types[f"event_msg:{ptype}"] += 1

    def review_result(self, payload: dict, ts: str | None, line: int) -> None:
        review = payload.get("review_output")
        if isinstance(review, dict):
            lines = []
            if isinstance(review.get("overall_explanation"), str):
                lines.append(review["overall_explanation"])
            for finding in review.get("findings") or []:
                if isinstance(finding, dict):
                    title, body = finding.get("title"), finding.get("body")
                    lines.append("- " + " — ".join(x for x in (title, body) if isinstance(x, str) and x))
            text = "\n".join(lines)
        else:
            text = text_of(payload.get("review"))
        if text.strip():
            self.sink.add(
                "subagent_result", text=cap(text, self.caps.subagent, self.report), timestamp=ts, agent="review",
                line=line,
            )

    def compacted(self, payload: dict, ts: str | None, line: int) -> None:
        text = payload.get("message") or payload.get("summary")
        if not isinstance(text, str) or not text.strip():
            text = _history_summary(payload.get("replacement_history")) or ""
        if useless_summary(text):
            # an instant /compact, a remote compaction (replacement_history keeps an encrypted item and a few
            # recent user messages, not necessarily the task) or a bare template: the event marks the compaction,
            # the state comes from the raw events
            self.report.ignored["useless_compaction_summary"] += 1
            text = ""
        self.sink.add("compaction", text=cap(text, self.caps.text, self.report), timestamp=ts, line=line)


def read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None = None) -> Transcript:
    """Read a Codex CLI rollout JSONL (``codex-rollout``) into a ``Transcript``.

    Streams line by line; bad lines are skipped and counted in ``report``; unknown record / item / event types
    are counted in ``report.unknown_types`` (``response_item:<type>``, ``event_msg:<type>``).  Timestamps are the
    line ``timestamp`` (ISO-8601 UTC); ``meta.end_time`` is the last one in the file.  Never raises for content.
    """
    sink = EventSink(TranscriptMeta(harness="codex", format=fmt, path=path), report)
    state = _CodexState(sink, caps, report)
    last_ts: str | None = None
    for line, rec in iter_jsonl(path, report, limit):
        rtype = type_tag(rec.get("type"))
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        ts = norm_iso(rec.get("timestamp"))
        last_ts = ts or last_ts
        if rtype == "response_item":
            state.response_item(payload, ts, line)
        elif rtype == "event_msg":
            state.event_msg(payload, ts, line)
        elif rtype == "turn_context":
            if sink.meta.model is None and isinstance(payload.get("model"), str):
                sink.meta.model = payload["model"]
            if sink.meta.cwd is None and isinstance(payload.get("cwd"), str):
                sink.meta.cwd = payload["cwd"]
        elif rtype == "session_meta":
            state.session_meta(payload, ts)
        elif rtype == "compacted":
            state.compacted(payload, ts, line)
        elif rtype not in _QUIET_RECORDS:
            report.unknown_types[str(rtype)] += 1
    transcript = sink.finish()
    if last_ts:
        transcript.meta.end_time = last_ts
    return transcript
