"""opencode's SQLite storage (``opencode.db``, opencode ≥ 1.2), read-only, into the ``opencode export`` shape.

Tables (opencode ``packages/opencode/src/session/session.sql.ts``, drizzle; migrations under ``migration/``):

* ``session``: ``id``, ``parent_id``, ``directory``, ``title``, ``version``, ``time_created``/``time_updated``
  (epoch ms) …; a ``session_v2`` table of the same columns is read too where a build has one.
* 1.2 messages: ``message`` (``id``, ``session_id``, ``time_created``, ``data`` = the message info without
  ``id``/``sessionID``) and ``part`` (``id``, ``message_id``, ``session_id``, ``data`` = the part without its ids):
  together the ``[{info, parts}]`` array the export reader knows (FORMATS.md §3).
* newer messages: ``session_message`` (``id``, ``session_id``, ``type``, ``seq``, ``time_created``, ``data``), one
  row per ``user`` / ``assistant`` / ``compaction`` / ``shell`` / ``synthetic`` / ``agent-switched`` /
  ``model-switched`` message (opencode ``packages/core/src/session-message.ts``): converted here into the same
  ``{info, parts}`` shape (assistant ``content[]`` of ``text`` / ``reasoning`` / ``tool`` with ``state``; a
  ``compaction`` becomes the summary message; a ``shell`` run becomes a ``bash`` tool call).
* A session may exist in either set only (or be listed in ``session`` with no messages); when both hold
  messages, the set with the later message wins.  Tool names are mapped to the 1.2 names (``RENAMES``).

Opened with ``mode=ro`` (never a write, never a lock taken for writing); when that fails (a WAL database whose
``-shm`` cannot be created here, a lock) it is opened ``immutable=1``, which reads the main file as it is.  A file
that cannot be read raises InputError naming it, the reason and ``opencode export <session id>`` as the way out.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import orjson

from pipeline.errors import InputError

MAGIC = b"SQLite format 3\x00"
SESSION_TABLES = ("session", "session_v2")
RENAMES = {"todo_write": "todowrite", "write_todos": "todowrite", "shell": "bash", "subagent": "task"}
"""Tool names of newer opencode builds -> the names the opencode reader knows (``task``, ``todowrite``…)."""
EXPORT_HINT = ("export the session with `opencode export <session id> > session.json` and recover that file "
               "(`opencode session list` names the ids)")


def is_sqlite(path: str) -> bool:
    """True when the file at ``path`` starts with the SQLite header.  Never raises."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session of the database: ``id``, ``title``, ``directory``, ``parent_id``, ``version``, times in epoch
    ms (None when unknown) and ``sources``: which message tables hold its messages (``message``, ``session_message``)."""

    id: str
    title: str | None = None
    directory: str | None = None
    parent_id: str | None = None
    version: str | None = None
    created: int | None = None
    updated: int | None = None
    sources: tuple[str, ...] = ()


def _fail(path: str, reason: object) -> InputError:
    return InputError(f"cannot read this opencode database ({' '.join(str(reason).split())}); {EXPORT_HINT}", path=path)


def connect(path: str) -> sqlite3.Connection:
    """A read-only connection to the database at ``path`` (``mode=ro``, else ``immutable=1``), ``query_only`` on.
    Raises InputError (named, with the reason and the export hint) when neither opens it as a database."""
    uri = Path(path).resolve().as_uri()
    last: Exception | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            con = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=1.0)
            con.execute("PRAGMA query_only = ON")
            con.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
            return con
        except sqlite3.Error as exc:
            last = exc
    raise _fail(path, last)


def _tables(con: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: {r[1] for r in con.execute(f'PRAGMA table_info("{n}")')} for n in names}


def _json(text: object) -> dict:
    if isinstance(text, (bytes, str)):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def list_sessions(path: str) -> list[SessionRow]:
    """Every session of the database at ``path``, newest first: those in ``session``/``session_v2`` and those
    that only have messages.  Raises InputError for a file that is not a readable opencode database."""
    con = connect(path)
    try:
        tables = _tables(con)
        if not ({"message", "session_message"} & set(tables)):
            raise _fail(path, "no message or session_message table: not an opencode database")
        rows: dict[str, SessionRow] = {}
        for table in SESSION_TABLES:
            if table not in tables:
                continue
            cols = tables[table]
            pick = [c for c in ("id", "title", "directory", "parent_id", "version", "time_created", "time_updated")
                    if c in cols]
            for values in con.execute(f'SELECT {", ".join(pick)} FROM "{table}"'):
                rec = dict(zip(pick, values))
                if isinstance(rec.get("id"), str) and rec["id"] not in rows:
                    rows[rec["id"]] = SessionRow(rec["id"], rec.get("title"), rec.get("directory"), rec.get("parent_id"),
                                                 rec.get("version"), rec.get("time_created"), rec.get("time_updated"))
        sources: dict[str, list[str]] = {}
        for table in ("message", "session_message"):
            if table in tables and "session_id" in tables[table]:
                for sid, last in con.execute(f'SELECT session_id, MAX(time_created) FROM "{table}" GROUP BY session_id'):
                    sources.setdefault(sid, []).append(table)
                    if sid not in rows:
                        rows[sid] = SessionRow(sid, updated=last)
        out = [SessionRow(r.id, r.title, r.directory, r.parent_id, r.version, r.created, r.updated,
                          tuple(sources.get(r.id, ()))) for r in rows.values()]
    except sqlite3.Error as exc:
        raise _fail(path, exc) from None
    finally:
        con.close()
    return sorted(out, key=lambda r: (r.updated or r.created or 0, r.id), reverse=True)


def _v1_messages(con: sqlite3.Connection, sid: str) -> list[dict]:
    parts: dict[str, list[dict]] = {}
    for pid, mid, data in con.execute("SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id", (sid,)):
        part = {**_json(data), "id": pid, "messageID": mid, "sessionID": sid}
        if part.get("type") == "tool" and isinstance(part.get("tool"), str):
            part["tool"] = RENAMES.get(part["tool"], part["tool"])
        parts.setdefault(mid, []).append(part)
    return [{"info": {**_json(data), "id": mid, "sessionID": sid}, "parts": parts.get(mid, [])}
            for mid, data in con.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))]


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _tool_part(item: dict, created: object) -> dict:
    state = item.get("state") if isinstance(item.get("state"), dict) else {}
    status = state.get("status")
    times = item.get("time") if isinstance(item.get("time"), dict) else {}
    out: dict = {"status": status, "input": state.get("input") if isinstance(state.get("input"), dict) else {},
                 "time": {"start": times.get("created", created), "end": times.get("completed")}}
    if status == "completed":
        out["output"] = _content_text(state.get("content"))
    elif status == "error":
        error = state.get("error")
        out["error"] = (error.get("message") if isinstance(error, dict) else error) or _content_text(state.get("content"))
    name = item.get("name") if isinstance(item.get("name"), str) else "tool"
    return {"type": "tool", "tool": RENAMES.get(name, name), "callID": item.get("id"), "state": out}


def _v2_message(kind: str, data: dict, mid: str, sid: str, created: object) -> dict | None:
    """One ``session_message`` row as ``{info, parts}`` (None for switches, which give no event)."""
    when = (data.get("time") or {}).get("created", created) if isinstance(data.get("time"), dict) else created
    info: dict = {"id": mid, "sessionID": sid, "time": {"created": when}}
    if kind in ("user", "synthetic"):
        text = data.get("text")
        parts = [{"type": "text", "text": text, **({"synthetic": True} if kind == "synthetic" else {})}] \
            if isinstance(text, str) else []
        return {"info": {**info, "role": "user"}, "parts": parts}
    if kind == "compaction":
        summary = data.get("summary")
        return {"info": {**info, "role": "assistant", "summary": True},
                "parts": [{"type": "text", "text": summary}] if isinstance(summary, str) else []}
    if kind == "shell":
        tool = {"type": "tool", "tool": "bash", "callID": data.get("callID"), "state": {
            "status": "completed", "input": {"command": data.get("command")}, "output": data.get("output") or "",
            "time": {"start": when}}}
        return {"info": {**info, "role": "assistant"}, "parts": [tool]}
    if kind == "assistant":
        model = data.get("model") if isinstance(data.get("model"), dict) else {}
        info.update(role="assistant", agent=data.get("agent"), modelID=model.get("id"), providerID=model.get("providerID"))
        if isinstance(data.get("error"), dict):
            info["error"] = data["error"]
        parts = []
        for item in data.get("content") or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "text" and isinstance(item.get("text"), str) and not item.get("ignored"):
                parts.append({"type": "text", "text": item["text"], **({"synthetic": True} if item.get("synthetic") else {})})
            elif item.get("type") == "reasoning" and isinstance(item.get("text"), str):
                parts.append({"type": "reasoning", "text": item["text"]})
            elif item.get("type") == "tool":
                parts.append(_tool_part(item, when))
        return {"info": info, "parts": parts}
    return None


def _v2_messages(con: sqlite3.Connection, sid: str, cols: set[str]) -> list[dict]:
    order = "seq, id" if "seq" in cols else "time_created, id"
    out = []
    for mid, kind, data, created in con.execute(
            f"SELECT id, type, data, time_created FROM session_message WHERE session_id = ? ORDER BY {order}", (sid,)):
        message = _v2_message(str(kind), _json(data), mid, sid, created)
        if message is not None:
            out.append(message)
    return out


def export_session(path: str, session_id: str) -> dict:
    """The session ``session_id`` of the database at ``path`` as an ``opencode export`` document
    ``{"info": {id, directory, title, version, time}, "messages": [{info, parts}]}``.  Raises InputError for an
    unreadable database or a session id it does not hold (naming the ids it does, newest first)."""
    sessions = {s.id: s for s in list_sessions(path)}
    row = sessions.get(session_id)
    if row is None:
        known = ", ".join(list(sessions)[:10]) or "none"
        raise InputError(f"no session {session_id!r} in this opencode database (sessions, newest first: {known})",
                         path=path)
    for _, document in export_sessions(path, [row]):
        return document
    raise AssertionError("export_sessions yields one document per row")


def export_sessions(path: str, rows: list[SessionRow]):
    """Each of ``rows`` (``list_sessions``'s) as ``(row, export document)``, read over one connection: the whole
    database costs one session listing and one indexed query per table and session (issue 22 item 6: a batch
    exporting each session with its own listing was quadratic in the sessions).  A generator; raises InputError for
    an unreadable database."""
    con = connect(path)
    try:
        try:
            tables = _tables(con)
        except sqlite3.Error as exc:
            raise _fail(path, exc) from None
        for row in rows:
            try:
                v1 = _v1_messages(con, row.id) if {"message", "part"} <= set(tables) else []
                v2 = _v2_messages(con, row.id, tables["session_message"]) if "session_message" in tables else []
            except sqlite3.Error as exc:
                raise _fail(path, exc) from None
            yield row, _document(row, v1, v2)
    finally:
        con.close()


def _document(row: SessionRow, v1: list[dict], v2: list[dict]) -> dict:
    """The export document of ``row`` from its messages of the 1.2 tables (``v1``) and of ``session_message``
    (``v2``): when both hold messages, the set with the later message wins."""
    if v1 and v2:
        def last(messages: list[dict]) -> int:
            return max((m["info"].get("time") or {}).get("created") or 0 for m in messages)
        messages = v2 if last(v2) >= last(v1) else v1
    else:
        messages = v1 or v2
    info = {"id": row.id, "title": row.title, "directory": row.directory, "version": row.version,
            "parentID": row.parent_id, "time": {"created": row.created, "updated": row.updated}}
    return {"info": {k: v for k, v in info.items() if v is not None}, "messages": messages}


def top_level(sessions: list[SessionRow]) -> list[SessionRow]:
    """The conversations among ``sessions`` (order kept): those without a parent, or whose parent the database no
    longer holds.  A session with a parent is a sub-agent's (opencode's ``task`` tool makes one per call)."""
    ids = {s.id for s in sessions}
    return [s for s in sessions if not s.parent_id or s.parent_id not in ids]


def descendants(sessions: list[SessionRow], root: str) -> list[SessionRow]:
    """The sub-agent sessions under ``root`` (children, their children …), oldest first."""
    children: dict[str, list[SessionRow]] = {}
    for s in sessions:
        if s.parent_id:
            children.setdefault(s.parent_id, []).append(s)
    out, todo, seen = [], [root], {root}
    while todo:
        for child in children.get(todo.pop(), []):
            if child.id not in seen:
                seen.add(child.id)
                out.append(child)
                todo.append(child.id)
    return sorted(out, key=lambda r: (r.created or r.updated or 0, r.id))


def pick_session(path: str, session_id: str | None) -> str:
    """``session_id``, or when None the database's one top-level session (``top_level``; its sub-agent sessions
    are not conversations of their own, issue 24 item 9).  Raises InputError when the database holds several
    top-level sessions (naming the newest ten, to pass with ``--session``) or none."""
    if session_id:
        return session_id
    sessions = top_level(list_sessions(path))
    if len(sessions) == 1:
        return sessions[0].id
    if not sessions:
        raise InputError("this opencode database holds no session", path=path)
    shown = ", ".join(f"{s.id} ({s.title})" if s.title else s.id for s in sessions[:10])
    raise InputError(f"this opencode database holds {len(sessions)} top-level sessions; pass --session ID (newest "
                     f"first: {shown})", path=path)
