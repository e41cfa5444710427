"""The stdio MCP server of ``duck-tape mcp``, built with the official ``mcp`` Python SDK (2.x: ``MCPServer``).

Five tools, each answering with a text block (what a model reads) and the same answer as structured JSON
(``structuredContent``): ``state``, ``decisions``, ``recover`` (``pipeline.serve.tools``), and the agent as the
model, ``raw_material`` and ``save_state`` (``pipeline.serve.agent_state``, issue 25).  Every string passes the
redaction mask (``tools.masked``) before it is sent.  A duck-tape error (bad path, unknown format, secrets in a
write without ``mask``) comes back as a tool error naming the problem, never as a crash of the server.

Importing this module imports ``mcp`` (and its HTTP stack); only the ``mcp`` command does, lazily.  Protocol
messages use stdout; logs and notes go to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from pipeline import __version__
from pipeline.errors import DuckTapeError, RedactionRefused
from pipeline.serve import agent_state, tools
from pipeline.serve.agent_state import AgentStateIn

INSTRUCTIONS = (
    "duck-tape keeps what a coding agent loses at context compaction. After a compaction (or at the start of a "
    "session that continues earlier work) call `state` for the workspace's current Agent State (approved workflow, "
    "position, decisions, facts). Search past decisions with `decisions` before re-deciding something. `recover` "
    "distils a state file from a session transcript; it only writes with approve: true. Only when the user asks "
    "you to recover the state yourself (the duck-tape resume command): read the session with `raw_material` "
    "(page 1 is the most recent) and hand your state to `save_state`, every decision and fact with the event index "
    "and a verbatim quote."
)


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=tools.masked(text))],
                          structured_content=tools.masked(data))


def _fail(exc: Exception) -> ToolError:
    lines = list(exc.report) if isinstance(exc, RedactionRefused) else []
    return ToolError(tools.masked("\n".join([*lines, f"duck-tape: error: {exc}"])))


def _state_text(found: dict[str, Any]) -> str:
    head = "\n".join(found["messages"])
    if found["path"] is None:
        return head or "No state file in this workspace."
    return "\n".join(filter(None, [f"State file ({found['kind']}): {found['path']}", head, "", found["text"]]))


def _decisions_text(found: dict[str, Any]) -> str:
    if not found["decisions"]:
        return f"No decisions match {found['query']!r}." if found["query"] else "No decisions recorded."
    lines = [f"{len(found['decisions'])} of {found['total']} decision(s), newest first:"]
    for d in found["decisions"]:
        if d["source"] == "state":
            lines.append(f"- {d['when']} {d['status']}: {d['what']} - {d['reasoning']} ({Path(d['file']).name})")
        else:
            when = f" (date: {d['when']})" if d["when"] else ""
            lines.append(f"- CONTEXT.md {d['key'] or ''}: {d['text']}{when}".replace(" :", ":"))
    return "\n".join(lines + [f"note: {n}" for n in found["notes"]])


def build_server(directory: Path, context: Path) -> MCPServer:
    """The server, its tools reading the store ``directory`` and the CONTEXT.md at ``context`` (paths as given:
    relative ones resolve against the server's working directory, the workspace the harness starts it in, and the
    answers name absolute paths)."""
    directory, context = directory.absolute(), context.absolute()  # answers name files the client can open
    server = MCPServer("duck-tape", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="state", annotations=read_only)
    def state() -> CallToolResult:
        """The Agent State file of this workspace that `duck-tape resume` would use (the compacted session's own
        file: manual > recovered > auto), as markdown and as JSON. Read-only."""
        try:
            found = tools.best_state(directory)
        except (DuckTapeError, OSError) as exc:
            raise _fail(exc) from None
        return _result(_state_text(found), found)

    @server.tool(name="decisions", annotations=read_only)
    def decisions(query: str = "", limit: int = tools.DEFAULT_LIMIT) -> CallToolResult:
        """Search decisions by words (all must appear, any case; empty: every decision): the Decision Log entries
        (APPROVED/REJECTED with reasoning) of this workspace's state files and the Decisions of CONTEXT.md, newest
        first, at most `limit`."""
        try:
            found = tools.find_decisions(directory, context, query, limit=max(1, limit))
        except (DuckTapeError, OSError) as exc:
            raise _fail(exc) from None
        return _result(_decisions_text(found), found)

    @server.tool(name="recover", annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    def recover(path: str, approve: bool = False, mask: bool = False, session: str | None = None) -> CallToolResult:
        """Recover an Agent State file from a session transcript at `path` (Claude Code, Copilot CLI, opencode
        export or opencode.db with `session`, Codex, Gemini CLI). A dry run that only shows the state unless
        `approve` is true; then it is written into the state store as <stamp>-recovered.state.md. A state holding
        potential secrets is refused unless `mask` is true (they are then written as <REDACTED>)."""
        try:
            found = tools.recover_state(path, directory, approve=approve, mask=mask, session=session)
        except (DuckTapeError, OSError) as exc:
            raise _fail(exc) from None
        tail = f"Wrote {found['written']}" if found["written"] else "Dry run: nothing was written."
        return _result("\n".join([found["text"].rstrip("\n"), "", *found["notes"], tail]), found)

    @server.tool(name="raw_material", annotations=read_only)
    def raw_material(page: int = 1, budget: int = agent_state.DEFAULT_BUDGET, path: str | None = None,
                     session: str | None = None) -> CallToolResult:
        """The session that compacted, for you to recover its state yourself: masked transcript lines
        `[<event index>] <time> <who>: <text>`, paged to `budget` tokens, newest first (page 1 = the most recent
        events), with what the rules engine found marked `<- rules:`. `path` (and `session` for an opencode
        database) reads another transcript. Read-only; call it only when the user asked for this recovery."""
        try:
            found = agent_state.raw_material(directory, path=path, session=session, page=page, budget=budget)
        except (DuckTapeError, OSError) as exc:
            raise _fail(exc) from None
        tail = (f"\n\nMore: page {found['next_page']} of {found['pages']} holds earlier events."
                if found["next_page"] else "")
        return _result(found["text"] + tail, found)

    @server.tool(name="save_state", annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    def save_state(state: AgentStateIn, path: str | None = None, session: str | None = None) -> CallToolResult:
        """Write your Agent State for the session that compacted as <stamp>-recovered.state.md (resume and restore
        then use it). Every decision and fact needs evidence: event_index (the number in brackets of a
        raw_material line) and quote (text copied exactly from that line). An entry whose quote is not in the
        cited event, or that rests on pasted or tool text, is rejected and named; the others are kept. A section
        you leave empty is filled by the rules engine. Secrets are masked."""
        try:
            found = agent_state.save_state(directory, state, path=path, session=session)
        except (DuckTapeError, OSError, ValueError) as exc:
            raise _fail(exc) from None
        return _result(_saved_text(found), found)

    return server


def _saved_text(found: dict[str, Any]) -> str:
    lines = [f"Wrote {found['written']}" if found["written"] else "Nothing was written."]
    kept = found["kept"]
    lines.append(f"Kept {kept['decisions']} decision(s) and {kept['facts']} fact(s) of yours.")
    if found["rejected"]:
        lines.append(f"Rejected {len(found['rejected'])} entr{'y' if len(found['rejected']) == 1 else 'ies'}:")
        lines += [f"- {r['section']}: {r['entry']} ({r['why']})" for r in found["rejected"]]
    if found["rules_filled"]:
        lines.append(f"Filled by the rules engine: {', '.join(found['rules_filled'])}.")
    lines += [f"note: {n}" for n in found["notes"]]
    return "\n".join(lines)


def run(directory: Path, context: Path) -> None:
    """Serve over stdio until the client closes stdin."""
    build_server(directory, context).run("stdio")


__all__ = ["build_server", "run"]
