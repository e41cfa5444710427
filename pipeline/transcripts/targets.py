"""Main target of a tool call, by tool name, for every harness (FORMATS.md tool-call rows of §1–§4).

One table for all harnesses: names are matched case-insensitively, so ``Read`` (Claude Code), ``view``
(Copilot) and ``read`` (opencode) share rules.  A tool that has a main argument never gets ``unknown``.
"""

from __future__ import annotations

import orjson

from pipeline.transcripts.common import json_text

# tool name (lower case) -> argument keys to try, in order
_KEYS: dict[str, tuple[str, ...]] = {
    # files
    "read": ("file_path", "filePath", "path"),
    "write": ("file_path", "filePath", "path"),
    "edit": ("file_path", "filePath", "path"),
    "multiedit": ("file_path", "filePath", "path"),
    "notebookedit": ("notebook_path", "file_path"),
    "notebookread": ("notebook_path",),
    "view": ("path", "file_path"),
    "create": ("path", "file_path"),
    "str_replace_editor": ("path",),
    "str_replace": ("path",),
    "insert": ("path",),
    "ls": ("path",),
    "list": ("path",),
    "view_image": ("path",),
    # shells
    "bash": ("command", "cmd"),
    "powershell": ("command",),
    "shell": ("command", "cmd"),
    "shell_command": ("command", "cmd"),
    "exec_command": ("cmd", "command"),
    "local_shell": ("command",),
    "bashoutput": ("bash_id", "shell_id"),
    "killshell": ("shell_id",),
    "write_bash": ("command", "input"),
    "read_bash": ("sessionId",),
    # search
    "grep": ("pattern", "query"),
    "rg": ("pattern",),
    "glob": ("pattern",),
    "search": ("query", "pattern"),
    "codebase_search": ("query",),
    # web
    "webfetch": ("url",),
    "web_fetch": ("url",),
    "fetch": ("url",),
    "websearch": ("query",),
    "web_search": ("query",),
    # agents, todos, misc
    "task": ("description", "name", "prompt"),
    "agent": ("description", "prompt"),
    "read_agent": ("agent_id", "agentId", "name"),
    "taskcreate": ("subject", "description"),
    "taskupdate": ("taskId",),
    "taskoutput": ("task_id", "bash_id"),
    "taskstop": ("task_id",),
    "skill": ("skill", "command", "name"),
    "exitplanmode": ("plan",),
    "askuserquestion": ("question", "questions"),
    "report_intent": ("intent",),
    "apply_patch": ("patchText", "patch", "input"),
    "update_plan": ("explanation",),
}

_GENERIC_KEYS = ("file_path", "filePath", "path", "command", "cmd", "pattern", "url", "query", "description", "name")
#: tool name (lower case) -> its keys, then the generic ones (built once, not per call)
_LOOKUP: dict[str, tuple[str, ...]] = {name: keys + _GENERIC_KEYS for name, keys in _KEYS.items()}


def _stringify(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            # argv form, e.g. ["bash", "-lc", "pytest -q"]: the script is the last element
            if len(value) >= 3 and value[0].endswith("sh") and value[1] in ("-c", "-lc"):
                return value[-1]
            return " ".join(value)
        if value and isinstance(value[0], dict):
            first = value[0]
            q = first.get("question") or first.get("header")
            if isinstance(q, str):
                return q
        return f"{len(value)} item(s)"
    if isinstance(value, (int, float, bool)):
        return str(value)
    return json_text(value)[:200]  # never raises, also for values orjson cannot write (too deep)


def _patch_target(patch: str) -> str | None:
    """First file named in an apply_patch text (``*** Update File: path`` / ``+++ b/path``)."""
    for line in patch.splitlines():
        for marker in ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/"):
            if line.startswith(marker):
                return line[len(marker):].strip()
    return None


def main_target(tool_name: str | None, args: object, *, limit: int = 300) -> str:
    """Return the main argument of a tool call as one line of at most ``limit`` characters.

    ``args`` may be a dict (usual), a JSON string (Copilot legacy, Codex ``arguments``) or a raw string
    (custom tools such as ``apply_patch``).  Falls back to well-known keys for unknown/MCP tools, then to
    ``unknown`` only when nothing at all is there.
    """
    name = (tool_name or "").lower()
    if isinstance(args, str):
        stripped = args.strip()
        if stripped.startswith("{"):
            try:
                args = orjson.loads(stripped)
            except orjson.JSONDecodeError:
                pass
        if isinstance(args, str):
            if name == "apply_patch" or "*** Begin Patch" in args:
                return _clip(_patch_target(args) or "patch", limit)
            return _clip(args, limit) if args.strip() else "unknown"
    if not isinstance(args, dict):
        return "unknown"
    if name in ("todowrite", "todo_write"):
        todos = args.get("todos")
        return f"{len(todos)} todos" if isinstance(todos, list) else "todos"
    if name == "update_plan" and isinstance(args.get("plan"), list):
        return f"{len(args['plan'])} plan steps"
    if name == "apply_patch":
        for key in ("patchText", "patch", "input"):
            if isinstance(args.get(key), str):
                return _clip(_patch_target(args[key]) or "patch", limit)
    if name == "taskupdate" and "taskId" in args:
        status = args.get("status")
        return _clip(f"task {args['taskId']}" + (f" -> {status}" if status else ""), limit)
    for key in _LOOKUP.get(name, _GENERIC_KEYS):
        text = _stringify(args.get(key))
        if text and text.strip():
            return _clip(text, limit)
    for value in args.values():  # MCP and unknown tools: first string argument
        if isinstance(value, str) and value.strip():
            return _clip(value, limit)
    for key, value in args.items():  # only non-string arguments, e.g. {"limit": 10}: "limit=10"
        text = _stringify(value)
        if text and text.strip():
            return _clip(f"{key}={text}", limit)
    return "unknown"


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
