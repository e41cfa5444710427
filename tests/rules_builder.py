"""A small builder of hand-made ``Transcript``s for the rules-engine tests (tests/test_rules_*.py).

Events get consecutive indexes and timestamps (Claude Code style ``…T10:00:00.000Z``, ``step`` seconds apart),
tool calls get ids that their results refer to, so the sessions look like what the readers produce.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.transcripts.model import Event, TodoItem, Transcript, TranscriptMeta

CWD = "/home/dev/shop"
PATH = "/home/dev/.claude/projects/-home-dev-shop/7b1e2c3d.jsonl"


class B:
    """Append events with ``user``, ``asst``, ``bash``, ``edit``… and get the ``Transcript`` with ``build()``."""

    def __init__(
        self,
        start: str = "2026-09-01T10:00:00",
        step: int = 5,
        *,
        cwd: str | None = CWD,
        path: str = PATH,
        branch: str | None = "feature/rate-limit",
        timestamps: bool = True,
    ) -> None:
        self.events: list[Event] = []
        self.t = datetime.fromisoformat(start).replace(tzinfo=timezone.utc)
        self.step = timedelta(seconds=step)
        self.timestamps = timestamps
        self.meta = TranscriptMeta(
            harness="claude-code", format="claude-code-jsonl", path=path, session_id="7b1e2c3d",
            cwd=cwd, git_branch=branch, start_time=start + "Z" if timestamps else None,
        )
        self._n = 0

    def _ts(self) -> str | None:
        if not self.timestamps:
            return None
        ts = self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        self.t += self.step
        return ts

    def add(self, kind: str, text: str = "", **kw) -> int:
        """Append one event of ``kind``; returns its index."""
        ts = kw.pop("timestamp", "auto")
        ev = Event(index=len(self.events), kind=kind, text=text, timestamp=self._ts() if ts == "auto" else ts, **kw)
        self.events.append(ev)
        return ev.index

    def user(self, text: str, **kw) -> int:
        return self.add("user_prompt", text, **kw)

    def asst(self, text: str, **kw) -> int:
        return self.add("assistant_text", text, **kw)

    def think(self, text: str) -> int:
        return self.add("reasoning", text)

    def compaction(self, text: str) -> int:
        return self.add("compaction", text)

    def call(self, tool: str, target: str, text: str | None = None) -> int:
        self._n += 1
        return self.add(
            "tool_call", text if text is not None else target, tool_name=tool, target=target, call_id=f"toolu_{self._n:04d}"
        )

    def result(self, text: str, *, error: bool = False, tool: str | None = None) -> int:
        call = next(e for e in reversed(self.events) if e.kind == "tool_call")
        return self.add("tool_result", text, tool_name=tool or call.tool_name, call_id=call.call_id, is_error=error)

    def bash(self, command: str, output: str = "", *, error: bool = False) -> tuple[int, int]:
        c = self.call("Bash", command, f"command: {command}")
        return c, self.result(output, error=error)

    def edit(self, path: str, *, tool: str = "Edit", error: bool = False) -> tuple[int, int]:
        c = self.call(tool, path, f"file_path: {path}")
        out = "<tool_use_error>File has not been read yet.</tool_use_error>" if error else f"The file {path} has been updated."
        return c, self.result(out, error=error)

    def read(self, path: str, content: str = "1\timport os\n") -> tuple[int, int]:
        c = self.call("Read", path, f"file_path: {path}")
        return c, self.result(content)

    def todos(self, *items: tuple[str, str]) -> int:
        todos = [TodoItem(content=c, status=st, id=str(n + 1)) for n, (c, st) in enumerate(items)]
        self._n += 1
        return self.add(
            "todo_list", "\n".join(f"[{st}] {c}" for c, st in items), tool_name="TodoWrite",
            target=f"{len(items)} todos", call_id=f"toolu_{self._n:04d}", todos=todos,
        )

    def subagent(self, description: str, answer: str, agent: str = "Explore") -> tuple[int, int]:
        self._n += 1
        cid = f"toolu_{self._n:04d}"
        c = self.add("subagent_call", f"Investigate: {description}", tool_name="Task", target=description, call_id=cid, agent=agent)
        r = self.add("subagent_result", answer, tool_name="Task", call_id=cid, agent=agent)
        return c, r

    def build(self) -> Transcript:
        if self.timestamps and self.events:
            self.meta.end_time = self.events[-1].timestamp
        return Transcript(meta=self.meta, events=list(self.events))


def evidence_ok(transcript: Transcript, entries) -> list[str]:
    """Problems with the evidence of ``entries`` (decisions or facts): missing, out of range, quote not a
    verbatim substring of the cited event's text, or longer than 300 characters."""
    problems = []
    for e in entries:
        ev = e.evidence
        label = getattr(e, "what", None) or getattr(e, "text", "")
        if ev is None:
            problems.append(f"no evidence: {label!r}")
            continue
        if not 0 <= ev.event_index < len(transcript.events):
            problems.append(f"bad index {ev.event_index}: {label!r}")
            continue
        if not ev.quote or ev.quote not in transcript.events[ev.event_index].text:
            problems.append(f"quote not in event {ev.event_index}: {ev.quote!r}")
        if len(ev.quote) > 300:
            problems.append(f"quote over 300 chars: {label!r}")
    return problems
