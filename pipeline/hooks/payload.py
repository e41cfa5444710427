"""The JSON a harness writes on a pre-compact hook's stdin, read into one ``HookInput``.

Shapes accepted (field names as documented by each harness; anything else in the object is ignored):

* Claude Code ``PreCompact`` (docs.claude.com "Hooks reference"): ``session_id``, ``transcript_path``,
  ``cwd``, ``hook_event_name``, ``trigger`` (``manual``/``auto``), ``custom_instructions``; inside a sub-agent
  also ``agent_id`` and ``agent_type`` (the common input fields), while ``transcript_path`` still names the
  *parent's* transcript (the sub-agent's is ``<session>/subagents/agent-<id>.jsonl`` beside it).
* Copilot CLI ``preCompact`` (docs.github.com "GitHub Copilot hooks reference", camelCase format):
  ``sessionId``, ``timestamp`` (epoch ms), ``cwd``, ``transcriptPath``, ``trigger``, ``customInstructions``;
  with the PascalCase ``PreCompact`` event name Copilot sends the snake_case names above plus ``timestamp``.
* the duck-tape opencode plugin (``pipeline.hooks.opencode_plugin``): ``harness: "opencode"``,
  ``sessionID``, ``snapshotPath``, ``cwd``.
* Gemini CLI ``PreCompress`` (gemini-cli ``docs/hooks/reference.md``, ``hookEventHandler.createBaseInput``):
  ``session_id``, ``transcript_path`` (``''`` when the session is not recorded), ``cwd``, ``hook_event_name``,
  ``timestamp`` (ISO-8601), ``trigger``; told apart from Copilot's PascalCase payload by the event name.
* Codex CLI ``PreCompact`` (codex-rs ``hooks/schema/generated/pre-compact.command.input.schema.json``):
  ``session_id``, ``turn_id``, ``transcript_path`` (null possible), ``cwd``, ``hook_event_name``, ``model``,
  ``trigger``; told apart by ``turn_id``.

Pure except ``read_stdin``.  Nothing here raises on bad input: problems become ``HookInput.problems``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import IO

import orjson

MAX_PAYLOAD_BYTES = 1024 * 1024
"""A hook payload is a few hundred bytes; more than 1 MiB is not read."""

STDIN_WAIT_SECONDS = 2.0
"""How long to wait for the harness to write (or close) stdin before going on without a payload."""

_SESSION_KEYS = ("session_id", "sessionId", "sessionID")
_PATH_KEYS = ("transcript_path", "transcriptPath", "snapshotPath", "snapshot_path")
HARNESSES = ("claude-code", "copilot", "opencode", "gemini", "codex")
GEMINI_EVENTS = frozenset({"PreCompress", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "SessionEnd",
                           "BeforeTool", "AfterTool", "BeforeToolSelection", "Notification"})
"""Event names only Gemini CLI sends (its ``SessionStart`` shares the name with Claude Code and Codex)."""


@dataclass(slots=True)
class HookInput:
    """What the hook was told.  ``harness``: claude-code | copilot | opencode | gemini | codex | None (unknown);
    ``transcript_path`` as given (may be empty or stale); ``trigger``: manual | auto | None;
    ``agent_id``: the sub-agent the hook fired in (Claude Code), None in the main session;
    ``problems``: one line per thing that could not be read (never fatal)."""

    harness: str | None = None
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    trigger: str | None = None
    event: str | None = None
    agent_id: str | None = None
    problems: list[str] = field(default_factory=list)


def _text(obj: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _harness(obj: dict, path: str | None) -> str | None:
    named = obj.get("harness")
    if named in HARNESSES:
        return named
    if "sessionID" in obj or "snapshotPath" in obj:
        return "opencode"
    norm = (path or "").replace("\\", "/")
    event = obj.get("hook_event_name")
    if event in GEMINI_EVENTS or "/.gemini/" in norm:
        return "gemini"
    if "turn_id" in obj or "/.codex/" in norm or norm.rsplit("/", 1)[-1].startswith("rollout-"):
        return "codex"
    if "/.copilot/" in norm or "/session-state/" in norm or "sessionId" in obj or "transcriptPath" in obj:
        return "copilot"
    if "/.claude/" in norm or "/projects/" in norm:
        return "claude-code"
    if "timestamp" in obj:  # Copilot's PascalCase payloads are snake_case but carry a timestamp; Claude Code's do not
        return "copilot"
    if "session_id" in obj or "transcript_path" in obj:
        return "claude-code"
    return None


def parse_payload(text: str) -> HookInput:
    """Read a hook payload (the whole stdin text) into a ``HookInput``.

    Empty text gives an empty ``HookInput`` (a manual run); text that is not one JSON object gives one
    problem line (``stdin is not a JSON object ...``) and no fields.
    """
    stripped = text.strip()
    if not stripped:
        return HookInput()
    try:
        obj = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        return HookInput(problems=[f"hook stdin is not JSON ({exc.msg} at character {exc.pos})"])
    if not isinstance(obj, dict):
        return HookInput(problems=[f"hook stdin is JSON but not an object (got {type(obj).__name__})"])
    path = _text(obj, _PATH_KEYS)
    trigger = obj.get("trigger")
    event = obj.get("hook_event_name") or obj.get("hookEventName")
    return HookInput(
        harness=_harness(obj, path),
        session_id=_text(obj, _SESSION_KEYS),
        transcript_path=path,
        cwd=_text(obj, ("cwd", "directory")),
        trigger=trigger if trigger in ("manual", "auto") else None,
        event=event if isinstance(event, str) else None,
        agent_id=_text(obj, ("agent_id", "agentId")),
    )


def read_stdin(stream: IO | None = None, *, wait: float = STDIN_WAIT_SECONDS, limit: int = MAX_PAYLOAD_BYTES) -> str:
    """The hook payload from ``stream`` (default ``sys.stdin``) as text; "" when there is none.

    A terminal is not read (a person ran the command).  A pipe or file is read until EOF or ``limit`` bytes,
    waiting at most ``wait`` seconds for each chunk, so a harness that leaves stdin open cannot hang the
    hook.  Invalid UTF-8 is replaced.  Never raises.
    """
    stream = sys.stdin if stream is None else stream
    if stream is None:
        return ""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        try:
            data = stream.read(limit)
        except (OSError, ValueError):
            return ""
        return data if isinstance(data, str) else data.decode("utf-8", "replace")
    try:
        if os.isatty(fd):
            return ""
        import select

        chunks: list[bytes] = []
        total = 0
        while total < limit:
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                break
            chunk = os.read(fd, min(65536, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except (OSError, ValueError):
        return ""
    return b"".join(chunks).decode("utf-8", "replace")
