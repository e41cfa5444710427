"""One small session in each harness's own transcript format, and the hook payloads that harness sends (issue 22).

``write_session(harness, folder, session_id=…, cwd=…, turns=…)`` writes a transcript of ``turns`` — ``("user",
text)``, ``("assistant", text)``, ``("tool", command, output)`` — in the on-disk shape of that harness
(FORMATS.md): a Claude Code JSONL, a Codex rollout, a Copilot CLI ``events.jsonl``, a Gemini CLI chat JSONL, an
opencode export.  ``precompact(...)`` and ``session_start(...)`` are the JSON each harness writes on its
pre-compact and ``SessionStart`` hooks' stdin (fields from each harness's hook reference; see
``pipeline.hooks.payload``).  Everything is invented; times are fixed, so two runs write the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

HARNESSES = ("claude-code", "codex", "copilot", "gemini", "opencode")
START = "2026-06-01T09:00:00"


def _ts(n: int, ms: bool = True) -> str:
    return f"{START}.{n:03d}Z" if ms else f"{START[:-2]}{n % 60:02d}Z"


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _claude_code(sid: str, cwd: str, turns: list[tuple]) -> tuple[str, str]:
    records, n = [], 0

    def rec(kind: str, **fields) -> None:
        nonlocal n
        n += 1
        records.append({"type": kind, "uuid": f"u-{sid[:8]}-{n:03d}", "sessionId": sid, "cwd": cwd,
                        "gitBranch": "main", "version": "2.1.20", "isSidechain": False, "userType": "external",
                        "timestamp": _ts(n), **fields})

    for turn in turns:
        if turn[0] == "user":
            rec("user", message={"role": "user", "content": turn[1]})
        elif turn[0] == "assistant":
            rec("assistant", message={"id": f"msg_{n:03d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "text", "text": turn[1]}]})
        else:
            call = f"toolu_{sid[:4]}{n:03d}"
            rec("assistant", message={"id": f"msg_{n:03d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                      "content": [{"type": "tool_use", "id": call, "name": "Bash",
                                                   "input": {"command": turn[1]}}]})
            rec("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                              "content": turn[2], "is_error": False}]})
    return f"{sid}.jsonl", _jsonl(records)


def _codex(sid: str, cwd: str, turns: list[tuple]) -> tuple[str, str]:
    records = [{"timestamp": _ts(0), "type": "session_meta",
                "payload": {"id": sid, "timestamp": _ts(0), "cwd": cwd, "originator": "codex_cli_rs",
                            "cli_version": "0.77.0", "source": "cli", "git": {"branch": "main"}}}]
    for n, turn in enumerate(turns, 1):
        ts = _ts(n)
        if turn[0] == "user":
            records.append({"timestamp": ts, "type": "event_msg",
                            "payload": {"type": "user_message", "message": turn[1], "images": []}})
        elif turn[0] == "assistant":
            records.append({"timestamp": ts, "type": "response_item",
                            "payload": {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": turn[1]}]}})
        else:
            call = f"call_{sid[:4]}{n:03d}"
            records.append({"timestamp": ts, "type": "response_item",
                            "payload": {"type": "function_call", "name": "shell", "call_id": call,
                                        "arguments": json.dumps({"command": ["bash", "-lc", turn[1]]})}})
            records.append({"timestamp": ts, "type": "response_item",
                            "payload": {"type": "function_call_output", "call_id": call,
                                        "output": json.dumps({"output": turn[2], "metadata": {"exit_code": 0}})}})
    return f"rollout-2026-06-01T09-00-00-{sid}.jsonl", _jsonl(records)


def _copilot(sid: str, cwd: str, turns: list[tuple]) -> tuple[str, str]:
    n = 0

    def ev(kind: str, data: dict) -> dict:
        nonlocal n
        n += 1
        return {"type": kind, "data": data, "id": f"e-{sid[:8]}-{n:03d}", "timestamp": _ts(n),
                "parentId": f"e-{sid[:8]}-{n - 1:03d}" if n > 1 else None}

    records = [ev("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                    "copilotVersion": "1.0.59", "startTime": _ts(0),
                                    "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}})]
    for turn in turns:
        if turn[0] == "user":
            records.append(ev("user.message", {"content": turn[1], "transformedContent": turn[1],
                                               "attachments": []}))
        elif turn[0] == "assistant":
            records.append(ev("assistant.message", {"messageId": f"m-{n}", "content": turn[1], "toolRequests": []}))
        else:
            call = f"toolu_{sid[:4]}{n:03d}"
            args = {"command": turn[1], "description": "Run it"}
            records.append(ev("assistant.message", {"messageId": f"m-{n}", "content": "", "toolRequests": [
                {"toolCallId": call, "name": "bash", "arguments": args, "type": "function"}]}))
            records.append(ev("tool.execution_start", {"toolCallId": call, "toolName": "bash", "arguments": args}))
            records.append(ev("tool.execution_complete", {"toolCallId": call, "success": True,
                                                          "result": {"content": turn[2]}}))
    return f"{sid}/events.jsonl", _jsonl(records)


def _gemini(sid: str, cwd: str, turns: list[tuple]) -> tuple[str, str]:
    records: list[dict] = [{"sessionId": sid, "projectHash": "0" * 64, "startTime": _ts(0), "lastUpdated": _ts(0),
                            "kind": "main"}]
    for n, turn in enumerate(turns, 1):
        ts = _ts(n)
        if turn[0] == "user":
            records.append({"id": f"g-{n}", "timestamp": ts, "type": "user", "content": [{"text": turn[1]}]})
        elif turn[0] == "assistant":
            records.append({"id": f"g-{n}", "timestamp": ts, "type": "gemini", "content": turn[1],
                            "model": "gemini-2.5-pro"})
        else:
            call = f"run_shell_command-{n}"
            records.append({"id": f"g-{n}", "timestamp": ts, "type": "gemini", "content": "", "model": "gemini-2.5-pro",
                            "toolCalls": [{"id": call, "name": "run_shell_command", "args": {"command": turn[1]},
                                           "result": [{"functionResponse": {"id": call, "name": "run_shell_command",
                                                                            "response": {"output": turn[2]}}}],
                                           "status": "success", "timestamp": ts}]})
    return f"chats/session-2026-06-01T09-00-{sid[:8]}.jsonl", _jsonl(records)


def _opencode(sid: str, cwd: str, turns: list[tuple]) -> tuple[str, str]:
    messages = []
    for n, turn in enumerate(turns, 1):
        created = 1780304400000 + n * 1000
        mid = f"msg_{sid[4:12]}{n:03d}"
        if turn[0] == "user":
            info = {"id": mid, "sessionID": sid, "role": "user", "time": {"created": created}}
            parts = [{"id": f"prt_{n}", "sessionID": sid, "messageID": mid, "type": "text", "text": turn[1]}]
        elif turn[0] == "assistant":
            info = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": created,
                                                                               "completed": created + 500},
                    "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "path": {"cwd": cwd, "root": cwd}}
            parts = [{"id": f"prt_{n}", "sessionID": sid, "messageID": mid, "type": "text", "text": turn[1]}]
        else:
            info = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": created,
                                                                               "completed": created + 500},
                    "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "path": {"cwd": cwd, "root": cwd}}
            parts = [{"id": f"prt_{n}", "sessionID": sid, "messageID": mid, "type": "tool", "tool": "bash",
                      "callID": f"call_{n}", "state": {"status": "completed", "input": {"command": turn[1]},
                                                       "output": turn[2], "title": turn[1],
                                                       "time": {"start": created, "end": created + 100}}}]
        messages.append({"info": info, "parts": parts})
    info = {"id": sid, "slug": "work", "projectID": "p" * 40, "directory": cwd, "title": "work", "version": "1.2.5",
            "time": {"created": 1780304400000, "updated": 1780304400000 + len(turns) * 1000}}
    return f"{sid}.json", json.dumps({"info": info, "messages": messages}, ensure_ascii=False)


_WRITERS = {"claude-code": _claude_code, "codex": _codex, "copilot": _copilot, "gemini": _gemini,
            "opencode": _opencode}


def session_id(harness: str, n: int) -> str:
    """A session id of the shape ``harness`` uses (a UUID; opencode ``ses_…``), distinct for each ``n``."""
    if harness == "opencode":
        return f"ses_{n:04d}aaaaBBBBccccDDDDeeeeFF"
    return f"{n:08x}-1d2c-4e5f-8a9b-{n:012x}"


def write_session(harness: str, folder: Path, *, session: str, cwd: str, turns: list[tuple]) -> Path:
    """Write ``turns`` as a session of ``harness`` under ``folder``; the transcript's path."""
    name, text = _WRITERS[harness](session, cwd, turns)
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def precompact(harness: str, *, session: str, transcript: Path, cwd: str) -> str:
    """The JSON ``harness`` writes on its pre-compact hook's stdin."""
    if harness == "claude-code":
        data = {"session_id": session, "transcript_path": str(transcript), "cwd": cwd,
                "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
    elif harness == "codex":
        data = {"session_id": session, "turn_id": "t1", "transcript_path": str(transcript), "cwd": cwd,
                "hook_event_name": "PreCompact", "model": "gpt-5-codex", "trigger": "auto"}
    elif harness == "copilot":
        data = {"sessionId": session, "timestamp": 1780304400000, "cwd": cwd, "transcriptPath": str(transcript),
                "trigger": "auto", "customInstructions": ""}
    elif harness == "gemini":
        data = {"session_id": session, "transcript_path": str(transcript), "cwd": cwd,
                "hook_event_name": "PreCompress", "timestamp": "2026-06-01T09:00:30Z", "trigger": "auto"}
    else:
        data = {"harness": "opencode", "sessionID": session, "snapshotPath": str(transcript), "cwd": cwd}
    return json.dumps(data)


def session_start(harness: str, *, session: str, transcript: Path, cwd: str) -> str:
    """The JSON ``harness`` writes on its ``SessionStart`` hook's stdin after a compaction (Copilot CLI runs none
    with a session id: its agents run ``duck-tape restore --session``, so "" here; opencode's plugin passes the
    checkpoint's payload to the restore)."""
    if harness in ("claude-code", "codex"):
        data: dict = {"session_id": session, "transcript_path": str(transcript), "cwd": cwd,
                      "hook_event_name": "SessionStart", "source": "compact"}
        if harness == "codex":
            data.update(model="gpt-5-codex", permission_mode="default")
    elif harness == "gemini":
        data = {"session_id": session, "transcript_path": str(transcript), "cwd": cwd,
                "hook_event_name": "SessionStart", "timestamp": "2026-06-01T09:01:00Z", "source": "resume"}
    elif harness == "opencode":
        return precompact(harness, session=session, transcript=transcript, cwd=cwd)
    else:
        return ""
    return json.dumps(data)
