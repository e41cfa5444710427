"""``duck-tape nudge``: after each turn, one line when the context first passes 75 % and again at 88 % (issue 17 §4).

Installed by ``duck-tape init --harness claude-code --nudge`` as a Claude Code ``Stop`` hook (runs when the main
agent finishes its answer; stdin: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``,
``stop_hook_active``).  What it prints goes where the user sees it and the model does not: Claude Code reads a
hook's JSON stdout on exit 0 and shows its ``systemMessage`` to the user ("Hooks reference", common JSON
fields); ``suppressOutput`` keeps the raw stdout out of the transcript view.  It never returns
``decision: block`` (that would make Claude go on, with the reason as its next instruction) nor any
``additionalContext``, and it runs nothing.

Context size: the last main-thread ``usage`` record of the transcript (an assistant line's ``message.usage``):
``input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` — what the model was sent on that call.
Only the file's tail is read (``TAIL_BYTES``, growing to ``MAX_TAIL_BYTES`` while no usage record is found), so a
50 MB transcript costs what a small one does.  Sub-agent (sidechain) and ``<synthetic>`` lines are skipped.

Window: ``DUCK_TAPE_CONTEXT_LIMIT`` (tokens; ``200k``/``1m`` also accepted), else the model id (``WINDOWS``; a
``[1m]``/``-1m`` suffix is the 1M-token variant), else 200k *assumed*; a context larger than the window it was
given proves the larger one (1M, assumed).  An assumed window is named in the line ("assumed 200k").

Once per session per threshold: the fired thresholds are kept in ``<store>/.nudge.json`` (``{"sessions":
{session id: [75, 88]}}``, the newest ``KEEP_SESSIONS``); a session first seen above 88 % gets the 88 % line only.
Never fails the harness: every problem is silence and exit 0.
"""

from __future__ import annotations

import os
import sys

THRESHOLDS = (75, 88)
TAIL_BYTES = 256 * 1024
MAX_TAIL_BYTES = 8 * 1024 * 1024
KEEP_SESSIONS = 50
STATE_NAME = ".nudge.json"
DEFAULT_LIMIT = 200_000

#: Model id prefix -> context window in tokens (checked in order; the first match wins).
WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-opus-4", 200_000), ("claude-sonnet-4", 200_000), ("claude-haiku-4", 200_000),
    ("claude-3", 200_000), ("claude-", 200_000),
    ("gemini-2", 1_048_576), ("gemini-1.5", 1_048_576),
    ("gpt-5", 400_000), ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000),
)
_ONE_M = ("[1m]", "-1m")


def _tokens_text(n: int) -> str:
    """``152k``, ``1m``, ``1.5m``, ``850``."""
    if n >= 1_000_000:
        m = n / 1_000_000
        return f"{m:.1f}".rstrip("0").rstrip(".") + "m"
    return f"{round(n / 1000)}k" if n >= 1000 else str(n)


def parse_limit(value: str | None) -> int | None:
    """``DUCK_TAPE_CONTEXT_LIMIT``'s value as tokens (``200000``, ``200k``, ``1m``); None when unset or bad."""
    if not value:
        return None
    text = value.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if text.endswith("k"):
        text, scale = text[:-1], 1000
    elif text.endswith("m"):
        text, scale = text[:-1], 1_000_000
    try:
        n = int(float(text) * scale)
    except ValueError:
        return None
    return n if n > 0 else None


def window(model: str | None, tokens: int, env: dict | None = None) -> tuple[int, bool]:
    """``(window in tokens, assumed)`` for ``model`` (see the module docstring); ``env`` defaults to os.environ."""
    limit = parse_limit((os.environ if env is None else env).get("DUCK_TAPE_CONTEXT_LIMIT"))
    if limit:
        return limit, False
    name = (model or "").lower()
    if name and any(name.endswith(s) for s in _ONE_M):
        return 1_000_000, False
    found = next((w for prefix, w in WINDOWS if name.startswith(prefix)), None) if name else None
    if found is not None and tokens <= found:
        return found, False
    if tokens > (found or DEFAULT_LIMIT):
        return 1_000_000, True  # more than the window allows: it can only be the 1M variant
    return DEFAULT_LIMIT, True


def _usage_of(line: bytes):
    """``(tokens, model)`` of one transcript line holding a main-thread usage record, else None."""
    import orjson

    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(rec, dict) or rec.get("isSidechain") is True:
        return None
    message = rec.get("message")
    if not isinstance(message, dict):
        return None
    usage = message.get("usage")
    model = message.get("model")
    if not isinstance(usage, dict) or model == "<synthetic>":
        return None
    total = 0
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and value > 0:
            total += value
    if total <= 0:
        return None
    return total, model if isinstance(model, str) else None


def last_usage(path: str) -> tuple[int, str | None] | None:
    """``(context tokens, model id)`` from the last usage record in the tail of the transcript at ``path``, or
    None (no such record, unreadable file).  Reads at most ``MAX_TAIL_BYTES``."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            want = TAIL_BYTES
            while True:
                start = max(0, size - want)
                fh.seek(start)
                blob = fh.read(size - start)
                lines = blob.split(b"\n")
                if start > 0:
                    lines = lines[1:]  # the first piece may be the end of a longer line
                for line in reversed(lines):
                    if b'"usage"' in line:
                        found = _usage_of(line)
                        if found is not None:
                            return found
                if start == 0 or want >= MAX_TAIL_BYTES:
                    return None
                want *= 4
    except OSError:
        return None


def line_for(threshold: int, tokens: int, limit: int, assumed: bool) -> str:
    """The nudge line, e.g. ``Context 76 % (152k/200k): a good moment to checkpoint, before compaction does it
    under pressure.``"""
    pct = int(100 * tokens / limit)
    size = f"{_tokens_text(tokens)}/{_tokens_text(limit)}" + (f", assumed {_tokens_text(limit)}" if assumed else "")
    if threshold >= THRESHOLDS[-1]:
        return f"Context {pct} % ({size}): checkpoint now, before compaction does it under pressure."
    return f"Context {pct} % ({size}): a good moment to checkpoint, before compaction does it under pressure."


def due(tokens: int, limit: int, fired: list[int]) -> int | None:
    """The highest threshold ``tokens`` of ``limit`` has reached that has not fired yet, else None."""
    pct = 100 * tokens / limit
    reached = [t for t in THRESHOLDS if pct >= t]
    if not reached or reached[-1] in fired:
        return None
    return reached[-1]


def _load_state(path: str) -> dict:
    import orjson

    try:
        with open(path, "rb") as fh:
            data = orjson.loads(fh.read(1024 * 1024))
    except (OSError, orjson.JSONDecodeError):
        return {"sessions": {}}
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return {"sessions": sessions if isinstance(sessions, dict) else {}}


def _save_state(path: str, state: dict) -> None:
    import orjson

    sessions = state["sessions"]
    if len(sessions) > KEEP_SESSIONS:
        state["sessions"] = dict(list(sessions.items())[-KEEP_SESSIONS:])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(orjson.dumps(state))
    os.replace(tmp, path)


def nudge(transcript: str, session: str, store: str, env: dict | None = None) -> str | None:
    """The line to show for ``transcript`` now (recording the threshold as fired in ``store``), or None.

    Raises OSError only from writing the state file (the hook entry swallows it)."""
    found = last_usage(transcript)
    if found is None:
        return None
    tokens, model = found
    limit, assumed = window(model, tokens, env)
    path = os.path.join(store, STATE_NAME)
    state = _load_state(path)
    fired = state["sessions"].get(session)
    fired = [t for t in fired if isinstance(t, int)] if isinstance(fired, list) else []
    threshold = due(tokens, limit, fired)
    if threshold is None:
        return None
    state["sessions"].pop(session, None)  # re-inserted last: the newest sessions are the ones kept
    state["sessions"][session] = sorted({*fired, *(t for t in THRESHOLDS if t <= threshold)})
    _save_state(path, state)
    return line_for(threshold, tokens, limit, assumed)


def hook_main(transcript: str | None, directory: str | None, fmt: str = "claude-code",
              stdin=None) -> int:
    """The hook: read the Stop payload from stdin (when no ``transcript`` is given), print the line (as
    ``{"systemMessage": …}`` for ``fmt`` claude-code, else plain), exit 0 whatever happens."""
    try:
        session = None
        cwd = None
        if transcript is None:
            from pipeline.hooks.payload import parse_payload, read_stdin

            payload = parse_payload(read_stdin(stdin))
            transcript, session, cwd = payload.transcript_path, payload.session_id, payload.cwd
        if not transcript:
            return 0
        if not session:
            session = os.path.splitext(os.path.basename(transcript))[0] or "session"
        store = directory or os.path.join(os.environ.get("CLAUDE_PROJECT_DIR") or cwd or ".", ".duck-tape")
        text = nudge(transcript, session, store)
        if text is None:
            return 0
        if fmt == "claude-code":
            import orjson

            out = orjson.dumps({"systemMessage": text, "suppressOutput": True}).decode() + "\n"
        else:
            out = text + "\n"
        sys.stdout.write(out)
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 — a hook never fails its harness
        return 0
    return 0
