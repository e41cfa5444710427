"""Hand-built Claude Code session files (JSONL, the on-disk shape of FORMATS.md §1) for the restore tests.

``CC`` appends records the way Claude Code 2.x writes them — ``user`` lines with a string content, ``assistant``
lines with text and ``tool_use`` blocks, tool results as ``user`` lines holding ``tool_result`` blocks, a
``system``/``compact_boundary`` line followed by the ``isCompactSummary`` user line — each ``step`` seconds after
the previous one, and ``write(path)`` saves them.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path


class CC:
    """Records of one Claude Code session; ``t`` is the time the next record gets."""

    def __init__(self, session: str, *, cwd: str = "/home/dev/shop", start: str = "2026-09-01T10:00:00",
                 step: int = 5, branch: str = "feature/rate-limit") -> None:
        self.session, self.cwd, self.branch = session, cwd, branch
        self.t = datetime.fromisoformat(start).replace(tzinfo=timezone.utc)
        self.step = timedelta(seconds=step)
        self.records: list[dict] = []
        self._n = 0

    def _rec(self, kind: str, **fields) -> dict:
        self._n += 1
        rec = {"type": kind, "uuid": f"u-{self.session[:8]}-{self._n:04d}", "sessionId": self.session,
               "cwd": self.cwd, "gitBranch": self.branch, "version": "2.1.20", "isSidechain": False,
               "userType": "external", "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), **fields}
        self.t += self.step
        self.records.append(rec)
        return rec

    def user(self, text: str) -> None:
        self._rec("user", message={"role": "user", "content": text})

    def asst(self, text: str) -> None:
        self._rec("assistant", message={"id": f"msg_{self._n:04d}", "role": "assistant", "model": "claude-opus-4-5",
                                        "content": [{"type": "text", "text": text}]})

    def tool(self, name: str, args: dict, output: str, *, error: bool = False) -> None:
        call = f"toolu_{self._n:04d}"
        self._rec("assistant", message={"id": f"msg_{self._n:04d}", "role": "assistant", "model": "claude-opus-4-5",
                                        "content": [{"type": "tool_use", "id": call, "name": name, "input": args}]})
        self._rec("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": error}]})

    def bash(self, command: str, output: str, *, error: bool = False) -> None:
        self.tool("Bash", {"command": command}, output, error=error)

    def edit(self, path: str) -> None:
        self.tool("Edit", {"file_path": path, "old_string": "a", "new_string": "b"},
                  f"The file {path} has been updated.")

    def todos(self, *items: tuple[str, str]) -> None:
        todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
        self.tool("TodoWrite", {"todos": todos}, "Todos have been modified successfully.")

    def compact(self, summary: str | None, *, trigger: str = "auto") -> None:
        """A compaction: the boundary line, then (unless ``summary`` is None: the file ends first) its summary."""
        self._rec("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False,
                  compactMetadata={"trigger": trigger, "preTokens": 167342})
        if summary is not None:
            self._rec("user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={
                "role": "user", "content": "This session is being continued from a previous conversation that ran out "
                                           "of context. The conversation is summarized below:\n" + summary})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def rate_limit_session(session: str, **kw) -> CC:
    """The checkout rate-limit work before its compaction: a token bucket in Redis approved, a fixed window
    counter rejected, Redis on port 6380, a constraint, one pending task."""
    cc = CC(session, **kw)
    cc.user("Add rate limiting to POST /api/checkout (ticket SHOP-1234). Never push to main directly.")
    cc.asst("Should the limiter be a fixed window counter or a token bucket in Redis?")
    cc.user("no fixed window counter. use a token bucket in Redis.")
    cc.asst("Going with a token bucket in Redis: it survives restarts.")
    cc.bash("redis-cli ping", "Could not connect to Redis at 127.0.0.1:6379: Connection refused", error=True)
    cc.bash("redis-cli -p 6380 ping", "PONG")
    cc.asst("Found it: redis-server in this container listens on port 6380, not 6379.")
    cc.edit("/home/dev/shop/src/shop/ratelimit.py")
    cc.todos(("Write TokenBucket in src/shop/ratelimit.py", "completed"), ("Add refund rate-limit tests", "pending"))
    return cc


#: A summary that keeps the decisions and the pending task and drops the port fact and the constraint.
SUMMARY = ("Summary:\n1. The user asked for rate limiting on POST /api/checkout (SHOP-1234).\n"
           "2. Decisions: a token bucket in Redis was chosen.\n"
           "3. Rejected: a fixed window counter (the user said no).\n"
           "4. Pending Tasks:\n- Add refund rate-limit tests\n")
