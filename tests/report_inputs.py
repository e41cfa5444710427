"""Transcript shapes from public bug reports (issue 14, item 6), written by us as small deterministic fixtures.

Each builder writes one file into a folder and returns its path.  The shapes follow the reports and the harnesses'
own docs/sources as of writing (the reports are named in each docstring); every word, id and path is invented.
"""

from __future__ import annotations

import json
from pathlib import Path

CC_SESSION = "7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
COPILOT_SESSION = "5c4b3a29-1807-4f6e-9d5c-4b3a29180706"
CWD = "/home/dev/ledger-cli"

TASK = "Add a CSV export to the ledger report command; stream the rows so a big ledger fits in memory."
DECISION = "We're going with csv.writer over a row generator because it streams and needs no new dependency."
REJECTION = "no, don't add pandas for this"


def _ts(n: int) -> str:
    return f"2026-05-04T09:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def _spaced(records: list[dict]) -> str:
    """JSON Lines the way a writer with default separators writes them: ``"type": "system"`` (spaces)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


# --- Claude Code ----------------------------------------------------------------------------------------------


def _cc(n: int, rtype: str, message: dict | None = None, parent: str | None = None, **extra) -> dict:
    rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CWD, "sessionId": CC_SESSION,
           "version": "2.1.205", "gitBranch": "feat/csv-export", "type": rtype, "uuid": f"u-{n:04d}",
           "timestamp": _ts(n)}
    if message is not None:
        rec["message"] = message
    rec.update(extra)
    return rec


def _cc_text(n: int, text: str) -> dict:
    return _cc(n, "assistant", {"id": f"msg_{n:04d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                "content": [{"type": "text", "text": text}]}, parent=f"u-{n - 1:04d}")


def claude_code_spaced_boundary(folder: Path) -> Path:
    """Claude Code 2.1.2xx transcript with spaced JSON and a ``compact_boundary`` carrying the newer
    ``compactMetadata`` fields (postTokens, durationMs, preservedSegment, preservedMessages, messagesSummarized,
    userContext) — rust-code-agent-sdks #188 / claude-code #87602 list them."""
    records = [
        _cc(1, "user", {"role": "user", "content": TASK}),
        _cc_text(2, DECISION),
        _cc(3, "user", {"role": "user", "content": REJECTION}, parent="u-0002"),
        _cc_text(4, "Understood: the export stays on the standard library."),
        {"parentUuid": None, "logicalParentUuid": "u-0004", "isSidechain": False, "type": "system",
         "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False, "level": "info",
         "compactMetadata": {"trigger": "auto", "preTokens": 167400, "postTokens": 9120, "durationMs": 41230,
                             "cumulativeDroppedTokens": 158280, "messagesSummarized": 212, "precomputed": False,
                             "userContext": "", "preservedSegment": {"headUuid": "u-0003", "anchorUuid": "u-0004",
                                                                     "tailUuid": "u-0004"},
                             "preservedMessages": {"anchorUuid": "u-0004", "uuids": ["u-0003", "u-0004"]}},
         "uuid": "u-0005", "timestamp": _ts(5), "sessionId": CC_SESSION, "cwd": CWD, "version": "2.1.205"},
        _cc(6, "user", {"role": "user", "content": "This session is being continued from a previous conversation "
                                                   "that ran out of context. Summary: the CSV export streams rows "
                                                   "with csv.writer; pandas was ruled out by the user."},
            parent="u-0005", isCompactSummary=True, isVisibleInTranscriptOnly=True),
        _cc_text(7, "Next I'll add the --output flag and a test with a 100k-row ledger."),
    ]
    path = folder / f"{CC_SESSION}.jsonl"
    path.write_text(_spaced(records), encoding="utf-8")
    return path


def claude_code_stream_json(folder: Path) -> Path:
    """A ``claude -p --output-format stream-json`` capture: ``system/init`` first, then messages with
    ``session_id``, and a top-level ``subtype: "compact_boundary"`` line whose metadata is the SDK's snake_case
    ``compact_metadata`` (trigger, pre_tokens, post_tokens, duration_ms, preserved_messages…)."""
    sid = CC_SESSION
    records = [
        {"type": "system", "subtype": "init", "cwd": CWD, "session_id": sid, "tools": ["Read", "Edit", "Bash"],
         "model": "claude-sonnet-4-5", "claude_code_version": "2.1.233", "permissionMode": "default"},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": TASK}]},
         "parent_tool_use_id": None, "session_id": sid, "uuid": "s-1"},
        {"type": "assistant", "message": {"id": "msg_s2", "role": "assistant", "model": "claude-sonnet-4-5",
                                          "content": [{"type": "text", "text": DECISION}]},
         "parent_tool_use_id": None, "session_id": sid, "uuid": "s-2"},
        {"type": "system", "subtype": "compact_boundary", "session_id": sid, "uuid": "s-3",
         "compact_metadata": {"trigger": "manual", "pre_tokens": 61895, "post_tokens": 5706,
                              "cumulative_dropped_tokens": 113485, "duration_ms": 54116, "messages_summarized": 40,
                              "preserved_messages": {"anchor_uuid": "s-2", "uuids": ["s-2"]}},
         "logical_parent_uuid": "s-2"},
        {"type": "assistant", "message": {"id": "msg_s4", "role": "assistant", "model": "claude-sonnet-4-5",
                                          "content": [{"type": "text", "text": "Adding the --output flag now."}]},
         "parent_tool_use_id": None, "session_id": sid, "uuid": "s-4"},
    ]
    path = folder / "stream.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    return path


SUBAGENT_ID = "a3f9c2e1b7d4a6058"
SUBAGENT_TASK = "Find every caller of LedgerReport.rows() and list the files."


def claude_code_with_subagent(projects: Path) -> tuple[Path, Path]:
    """A 2.1.x project folder: ``<session>.jsonl`` (the parent) and ``<session>/subagents/agent-<id>.jsonl``,
    the layout FORMATS.md §1 records; returns ``(parent, sub-agent file)``."""
    folder = projects / "-home-dev-ledger-cli"
    folder.mkdir(parents=True, exist_ok=True)
    parent = claude_code_spaced_boundary(folder)
    sub_dir = folder / CC_SESSION / "subagents"
    sub_dir.mkdir(parents=True)
    sub = [
        dict(_cc(1, "user", {"role": "user", "content": SUBAGENT_TASK}), isSidechain=True, agentId=SUBAGENT_ID),
        dict(_cc_text(2, "Found 3 callers: src/report.py, src/cli.py, tests/test_report.py."), isSidechain=True,
             agentId=SUBAGENT_ID),
    ]
    path = sub_dir / f"agent-{SUBAGENT_ID}.jsonl"
    path.write_text(_spaced(sub), encoding="utf-8")
    return parent, path


# --- Copilot CLI ----------------------------------------------------------------------------------------------


class _Copilot:
    """Writes a Copilot CLI 1.0 ``events.jsonl`` envelope by envelope (``type, data, id, timestamp, parentId``)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def add(self, etype: str, data: dict) -> None:
        self.n += 1
        rec = {"type": etype, "data": data, "id": f"e{self.n:06d}", "timestamp": _ts(self.n),
               "parentId": f"e{self.n - 1:06d}" if self.n > 1 else None}
        # as the CLI writes it: UTF-8 as is, so U+2028/U+2029 stay raw inside strings (copilot-cli #2012, #2490)
        self.lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")

    def start(self) -> None:
        self.add("session.start", {"sessionId": COPILOT_SESSION, "version": 1, "producer": "copilot-agent",
                                   "copilotVersion": "1.0.16", "startTime": _ts(1),
                                   "context": {"cwd": CWD, "gitRoot": CWD, "branch": "feat/csv-export"}})

    def user(self, text: str) -> None:
        self.add("user.message", {"content": text, "transformedContent": text, "attachments": []})

    def say(self, text: str, tools: list[dict] | None = None) -> None:
        self.add("assistant.message", {"messageId": f"m{self.n}", "content": text, "toolRequests": tools or []})

    def tool(self, call: str, name: str, args: dict, result: str) -> None:
        self.say("", [{"toolCallId": call, "name": name, "arguments": args, "type": "function"}])
        self.add("tool.execution_start", {"toolCallId": call, "toolName": name, "arguments": args})
        self.add("tool.execution_complete", {"toolCallId": call, "success": True, "result": {"content": result}})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(self.lines), encoding="utf-8")
        return path


SEPARATOR_PROMPT = "Keep the header row exactly as the old report:\u2028Date,Account,Amount\u2029then the rows."


def copilot_line_separators(folder: Path) -> Path:
    """Raw U+2028 and U+2029 inside JSON strings of a user prompt and a tool result (copilot-cli #2012): valid
    JSON, one record per ``\\n``; a reader splitting on Unicode line breaks tears the record in two."""
    c = _Copilot()
    c.start()
    c.user(SEPARATOR_PROMPT)
    c.tool("t1", "view", {"path": "src/report.py"}, "class LedgerReport:\u2028    def rows(self): ...")
    c.say(DECISION)
    return c.write(folder / COPILOT_SESSION / "events.jsonl")


def copilot_many_segments(folder: Path, target_bytes: int) -> Path:
    """A long-lived session (copilot-cli #2209/#2490: 18-20 MB, start + 9 resumes): the task and a decision in the
    first segment, then resume/shutdown segments of heavy tool use until ``target_bytes``."""
    c = _Copilot()
    c.start()
    c.user(TASK)
    c.say(DECISION)
    c.user(REJECTION)
    body = "\n".join(f"{i:5d}  def row_{i}(entry): return entry.amount" for i in range(120))
    segment = 0
    size = 0
    while size < target_bytes:
        if c.n % 400 == 0:
            segment += 1
            c.add("session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": segment})
            c.add("session.resume", {"resumeTime": _ts(c.n), "eventCount": c.n,
                                     "context": {"cwd": CWD, "branch": "feat/csv-export"}})
            c.user(f"continue with part {segment} of the export")
        c.tool(f"t{c.n}", "view", {"path": f"src/part_{c.n % 7}.py"}, body)
        size = sum(len(line) for line in c.lines[-3:]) + size
    c.say("Next I'll wire the --output flag into the report command.")
    return c.write(folder / COPILOT_SESSION / "events.jsonl")


def copilot_two_compactions(folder: Path) -> Path:
    """Two ``session.compaction_start``/``compaction_complete`` cycles; the decision is made before the first and
    neither summary repeats it."""
    c = _Copilot()
    c.start()
    c.user(TASK)
    c.say(DECISION)
    c.user(REJECTION)
    for cycle in (1, 2):
        c.tool(f"r{cycle}", "view", {"path": "src/report.py"}, "class LedgerReport: ...")
        c.add("session.compaction_start", {"systemTokens": 9000, "conversationTokens": 120000})
        c.add("session.compaction_complete", {
            "success": True, "preCompactionTokens": 129000, "checkpointNumber": cycle,
            "checkpointPath": f"/home/dev/.copilot/session-state/{COPILOT_SESSION}/checkpoints/00{cycle}.md",
            "summaryContent": f"<overview>Work on the ledger report continues (checkpoint {cycle}); the row "
                              "loop was profiled.</overview>"})
        c.user(f"carry on after checkpoint {cycle}")
    c.say("Next I'll add the --output flag.")
    return c.write(folder / COPILOT_SESSION / "events.jsonl")


# --- useless compaction summaries ----------------------------------------------------------------------------


def codex_empty_compactions(folder: Path) -> Path:
    """A Codex rollout with an instant ``/compact`` (``compacted`` with ``message: ""`` and no history) and a
    remote compaction whose ``replacement_history`` holds only an encrypted item and the last user message, not
    the task."""
    def line(n: int, rtype: str, payload: dict) -> dict:
        return {"timestamp": _ts(n), "type": rtype, "payload": payload}

    def user(text: str) -> dict:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}

    records = [
        line(0, "session_meta", {"id": "019c-ledger", "timestamp": _ts(0), "cwd": CWD, "originator": "codex_cli_rs",
                                 "cli_version": "0.98.0", "source": "cli", "git": {"branch": "feat/csv-export"}}),
        line(1, "response_item", user(TASK)),
        line(2, "event_msg", {"type": "user_message", "message": TASK}),
        line(3, "response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": DECISION}]}),
        line(4, "compacted", {"message": ""}),  # /compact that returned at once
        line(4, "event_msg", {"type": "context_compacted"}),
        line(5, "event_msg", {"type": "user_message", "message": "keep going"}),
        line(5, "response_item", user("keep going")),
        line(6, "compacted", {"message": "", "replacement_history": [
            {"type": "compaction", "encrypted_content": "gAAAAB" + "x" * 40}, user("keep going")]}),
        line(6, "event_msg", {"type": "context_compacted"}),
        line(7, "response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "Adding the --output flag."}]}),
    ]
    path = folder / "rollout-2026-05-04T09-00-00-019c-ledger.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


OPENCODE_TEMPLATE = ("## Goal\n- (none)\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Completed\n"
                     "- (none)\n### In Progress\n- (none)\n### Blocked\n- (none)\n\n## Key Decisions\n- (none)\n\n"
                     "## Next Steps\n- (none)\n\n## Critical Context\n- (none)\n\n## Relevant Files\n- (none)")


def opencode_bare_template(folder: Path) -> Path:
    """An opencode export whose compaction summary is the summary template with every section "(none)"."""
    t0 = 1777885200000
    info = {"id": "ses_ledger01", "slug": "quiet-heron", "directory": CWD, "title": "CSV export", "version": "1.18.16",
            "time": {"created": t0, "updated": t0 + 60_000}}

    def msg(n: int, role: str, text: str | None, **extra) -> dict:
        base = {"id": f"msg_{n}", "sessionID": "ses_ledger01", "role": role, "time": {"created": t0 + n * 1000}}
        if role == "assistant":
            base.update({"modelID": "deepseek-flash", "providerID": "deepseek", "mode": "build", "agent": "build",
                         "path": {"cwd": CWD, "root": CWD}, "parentID": "msg_1"})
        base.update(extra)
        parts = [{"id": f"prt_{n}", "type": "text", "text": text}] if text is not None else []
        return {"info": base, "parts": parts}

    messages = [
        msg(1, "user", TASK),
        msg(2, "assistant", DECISION),
        {"info": {"id": "msg_3", "sessionID": "ses_ledger01", "role": "user", "time": {"created": t0 + 3000}},
         "parts": [{"id": "prt_c", "type": "compaction", "auto": False}]},
        msg(4, "assistant", OPENCODE_TEMPLATE, agent="compaction", mode="compaction", summary=True),
        msg(5, "user", "continue"),
    ]
    path = folder / "export.json"
    path.write_text(json.dumps({"info": info, "messages": messages}, indent=2), encoding="utf-8")
    return path
