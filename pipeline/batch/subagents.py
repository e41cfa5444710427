"""Claude Code sub-agent files: recognise them, find their parent session, and make their result count.

Layouts (FORMATS.md §1 "Location", "sub-agent (Task/Agent)"):

* 2.1.x: ``<project>/<session id>/subagents/agent-<17 hex>.jsonl`` plus ``agent-<id>.meta.json``
  (``{"agentType", "description"}``); the parent is ``<project>/<session id>.jsonl``;
* 2.0.x: ``<project>/agent-<8 hex>.jsonl``; its lines carry the *parent's* ``sessionId``, so the parent is
  ``<project>/<sessionId>.jsonl``.  2.0.x also writes tiny "Warmup" agent files that are not tasks.

A sub-agent file is never a session of its own.  Its result normally reaches the parent as the Task/Agent
tool result; when the parent has no such result (a background agent reports through a
``<task-notification>`` line, which is not a prompt, or the parent stopped first), ``link`` adds the
sub-agent's final answer to the parent transcript as a ``subagent_result`` event, so the rules engine's
sub-agent findings count it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import orjson

from pipeline.batch.discover import AGENT_FILE, is_agent_file  # noqa: F401 (the name rule lives with discovery)

if TYPE_CHECKING:  # discovery (``inspect``) runs without the transcript modules; ``link`` imports them
    from pipeline.transcripts.model import Event, Transcript

HEAD_LINES = 20
WARMUP = "Warmup"
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class SubagentFile:
    """A sub-agent transcript: its ``parent`` session file (may not exist), its ``agent_id``, whether it is a
    warm-up file, and the ``agent_type``/``description`` of its ``.meta.json`` (2.1.x) when present."""

    path: str
    parent: str | None
    agent_id: str | None = None
    warmup: bool = False
    agent_type: str | None = None
    description: str | None = None


def _head(path: str) -> list[dict]:
    records: list[dict] = []
    from pipeline.errors import InputError
    from pipeline.transcripts.source import open_transcript

    try:
        with open_transcript(path) as handle:  # a FIFO is refused, never waited on; read up to its size at open
            for n, line in enumerate(handle):
                if n >= HEAD_LINES:
                    break
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(record, dict):
                    records.append(record)
    except (OSError, InputError):
        return []
    return records


def _meta(path: str) -> dict:
    meta_path = path[: -len(".jsonl")] + ".meta.json"
    from pipeline.errors import InputError
    from pipeline.transcripts.source import open_transcript

    try:
        with open_transcript(meta_path) as handle:
            data = orjson.loads(handle.read(64 * 1024))
    except (OSError, InputError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _first_user_text(records: list[dict]) -> str | None:
    for record in records:
        if record.get("type") != "user":
            continue
        content = (record.get("message") or {}).get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
        return None
    return None


def inspect(path: str) -> SubagentFile:
    """Describe the sub-agent file at ``path`` (reads its first ``HEAD_LINES`` lines and its ``.meta.json``).

    The parent is found from the folder layout (2.1.x) or from the ``sessionId`` of its lines (2.0.x); None
    when neither gives one.  Never raises (an unreadable file gives no parent and no agent id).
    """
    records = _head(path)
    folder = os.path.dirname(path)
    parent = None
    if os.path.basename(folder) == "subagents":
        session_dir = os.path.dirname(folder)
        parent = os.path.join(os.path.dirname(session_dir), os.path.basename(session_dir) + ".jsonl")
    else:
        session = next((r.get("sessionId") for r in records if isinstance(r.get("sessionId"), str)), None)
        if session and "/" not in session and "\\" not in session:
            parent = os.path.join(folder, session + ".jsonl")
    agent_id = next((r.get("agentId") for r in records if isinstance(r.get("agentId"), str)), None)
    first = _first_user_text(records)
    meta = _meta(path)
    return SubagentFile(
        path=path,
        parent=parent,
        agent_id=agent_id,
        warmup=first is not None and first.strip() == WARMUP,
        agent_type=meta.get("agentType") if isinstance(meta.get("agentType"), str) else None,
        description=meta.get("description") if isinstance(meta.get("description"), str) else None,
    )


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def final_answer(sub: Transcript) -> Event | None:
    """The sub-agent's last non-empty assistant message (its answer to the parent), or None."""
    for event in reversed(sub.events):
        if event.kind == "assistant_text" and event.text.strip():
            return event
    return None


def already_counted(parent: Transcript, answer: str) -> bool:
    """True when a ``subagent_result`` of ``parent`` already holds the answer (its first 200 characters,
    whitespace-insensitive)."""
    probe = _squash(answer)[:200]
    return bool(probe) and any(e.kind == "subagent_result" and probe in _squash(e.text) for e in parent.events)


def _matching_call(parent: Transcript, info: SubagentFile) -> Event | None:
    calls = [e for e in parent.events if e.kind == "subagent_call"]
    if info.description:
        named = [e for e in calls if (e.target or "").strip() == info.description.strip()]
        if named:
            return named[-1]
    if info.agent_type:
        typed = [e for e in calls if e.agent == info.agent_type]
        if typed:
            return typed[-1]
    return None


def link(parent: Transcript, subs: list[tuple[SubagentFile, Transcript]]) -> tuple[Transcript, int]:
    """Add each sub-agent's final answer that ``parent`` lacks as a ``subagent_result`` event.

    The event goes at its chronological place (by the sub-agent's last timestamp; at the end when it has
    none), takes the call id, tool name and agent of the parent's matching Task/Agent call (same description
    as the ``.meta.json``, else the same agent type), and every event's ``index`` is renumbered.  Returns the
    (possibly new) transcript and the number of answers added; the events of ``parent`` are not modified.
    """
    from pipeline.transcripts.common import DEFAULT_CAPS, cap
    from pipeline.transcripts.model import Event, Transcript

    added: list[Event] = []
    for info, sub in subs:
        answer = final_answer(sub)
        if answer is None or already_counted(parent, answer.text):
            continue
        call = _matching_call(parent, info)
        added.append(Event(
            index=0,
            kind="subagent_result",
            text=cap(answer.text, DEFAULT_CAPS.subagent, parent.report),
            timestamp=sub.meta.end_time or answer.timestamp,
            tool_name=call.tool_name if call else "Agent",
            call_id=call.call_id if call else None,
            agent=info.agent_type or (call.agent if call else None),
            line=answer.line,
            session_id=parent.meta.session_id,
        ))
    if not added:
        return parent, 0
    events = [replace(e) for e in parent.events]
    for event in added:
        at = len(events)
        if event.timestamp:
            at = next((i for i, e in enumerate(events) if e.timestamp and e.timestamp > event.timestamp), len(events))
        events.insert(at, event)
    for n, event in enumerate(events):
        event.index = n
    return Transcript(meta=parent.meta, events=events, report=parent.report), len(added)
