"""The reference engine: a re-implementation of today's keyword-only auto-checkpoint (issue 3 "Engines").

What the auto-checkpoint (the bash+jq extractor behind the pre-compact hook, FORMATS.md §7) writes into the
state file, rule for rule:

* **Approved Workflow** = the first user record whose content is a *string* (Claude Code: any ``user`` line with
  string content, so list-form prompts are missed and compaction summaries, command wrappers and interruption
  markers count; Copilot: ``user.message.data.content`` as stored; opencode: the first user text part);
* **Current** = the last assistant text;
* **Done** = every tool call, ``<name> on <target>`` with target ``file_path // command // filePath // path`` or
  ``unknown`` (Copilot arguments read as an object or a JSON string);
* **Decision Log** = every line of assistant text or user prompt matching
  ``APPROVED|DECIDED|CHOSE|DECISION|we will use|going with|let's go with`` (any case), in file order, not
  deduplicated, ``REJECTED`` when the line says so and ``APPROVED`` otherwise;
* **Established Facts** = a placeholder; **Re-derivation** = the transcript path.

Records are read as the script reads them: every line, sub-agent (sidechain, ``parentToolCallId``) lines
included, a line that is not JSON skipped.  One kindness: formats are recognised by content (the script's
first-line heuristic would call most real Claude Code files and every ``opencode export`` unknown and score
zero), so the table measures the extraction rules, not the detector.  No redaction is applied: the script
applies none to the state file.

Evidence (for decision precision): the first event of our reader's ``Transcript`` whose text holds the line;
a line no event holds (sub-agent chatter, a summary) has none and counts as ungrounded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from evals.engines import EngineOutput

DECISION_LINE = re.compile(r"APPROVED|DECIDED|CHOSE|DECISION|we will use|going with|let'?s go with", re.IGNORECASE)
FACTS_PLACEHOLDER = "Facts are not extracted by the auto-checkpoint; re-read the transcript."
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Raw:
    """What the script pulls out of the records: ``(timestamp, text)`` items in file order."""

    prompts: list[tuple[str | None, str]] = field(default_factory=list)
    assistant: list[tuple[str | None, str]] = field(default_factory=list)
    tools: list[tuple[str | None, str]] = field(default_factory=list)


def _load(path: str) -> list[dict]:
    """Every JSON object of the file: one per line, or the elements of a JSON array / the ``messages`` of an
    ``opencode export`` object.  Lines that are not JSON objects are skipped."""
    with open(path, "rb") as fh:
        data = fh.read()
    head = data.lstrip()[:1]
    if head in (b"[", b"{"):
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        if isinstance(doc, list):
            return [r for r in doc if isinstance(r, dict)]
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            return [r for r in doc["messages"] if isinstance(r, dict)]
    out = []
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _target(args: object) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return "unknown"
    if not isinstance(args, dict):
        return "unknown"
    for key in ("file_path", "command", "filePath", "path"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown"


def _ts_ms(value: object) -> str | None:
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def extract(records: list[dict]) -> Raw:
    """The script's raw material from ``records`` (module rules)."""
    raw = Raw()
    for r in records:
        ts = r.get("timestamp") if isinstance(r.get("timestamp"), str) else None
        msg = r.get("message")
        data = r.get("data") if isinstance(r.get("data"), dict) else {}
        if isinstance(msg, dict) and r.get("type") in ("user", "assistant"):  # Claude Code
            content = msg.get("content")
            if r["type"] == "user":
                if isinstance(content, str):
                    raw.prompts.append((ts, content))
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    raw.assistant.append((ts, block["text"]))
                elif block.get("type") == "tool_use":
                    raw.tools.append((ts, f"{block.get('name')} on {_target(block.get('input'))}"))
        elif r.get("type") == "user.message":  # Copilot
            content = data.get("content")
            raw.prompts.append((ts, content if isinstance(content, str) else ""))
        elif r.get("type") == "assistant.message":
            if isinstance(data.get("content"), str) and data["content"].strip():
                raw.assistant.append((ts, data["content"]))
            for req in data.get("toolRequests") or []:
                if isinstance(req, dict):
                    raw.tools.append((ts, f"{req.get('name')} on {_target(req.get('arguments'))}"))
        elif isinstance(r.get("info"), dict) and isinstance(r.get("parts"), list):  # opencode
            info = r["info"]
            when = _ts_ms((info.get("time") or {}).get("created"))
            for part in r["parts"]:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text" and isinstance(part.get("text"), str):
                    (raw.prompts if info.get("role") == "user" else raw.assistant).append((when, part["text"]))
                elif part.get("type") == "tool":
                    state = part.get("state") if isinstance(part.get("state"), dict) else {}
                    raw.tools.append((when, f"{part.get('tool')} on {_target(state.get('input'))}"))
        elif r.get("role") in ("user", "assistant") and isinstance(r.get("content"), str):  # generic
            (raw.prompts if r["role"] == "user" else raw.assistant).append((ts, r["content"]))
    return raw


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def checkpoint(path: str, *, now: datetime) -> EngineOutput:
    """The auto-checkpoint's state file for the transcript at ``path`` (module rules), with ``now`` (UTC) as its
    creation time.  Raises ``pipeline.errors.InputError`` when our reader cannot read the file either."""
    from pipeline.stages.rules.text import norm_ts
    from pipeline.state.model import AgentState, Decision, Evidence, Fact, Position
    from pipeline.state.render import render
    from pipeline.transcripts import read_transcript

    transcript = read_transcript(path, warn=False)
    raw = extract(_load(path))
    created = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    event_texts = [_squash(ev.text) for ev in transcript.events]
    decisions = []
    for ts, text in sorted(raw.prompts + raw.assistant, key=lambda p: p[0] or ""):
        for line in text.splitlines():
            if not DECISION_LINE.search(line) or not line.strip():
                continue
            status = "REJECTED" if "REJECTED" in line else "APPROVED"
            quote = line.strip()[:300]
            key = _squash(quote)
            index = next((i for i, t in enumerate(event_texts) if key in t), None)
            decisions.append(Decision(
                timestamp=norm_ts(ts) or created, status=status, what=line.strip(), reasoning="matched a decision keyword",
                evidence=Evidence(event_index=index, quote=quote) if index is not None else None, origin="baseline"))
    last = raw.assistant[-1][1] if raw.assistant else None
    meta = transcript.meta
    state = AgentState(
        stamp=now.astimezone(timezone.utc).strftime("%Y-%m-%d-%H%M"), kind="auto", cwd=meta.cwd or "unknown",
        repo=meta.repo or "unknown", branch=meta.git_branch or "unknown", trigger="eval, engine: baseline",
        created=created,
        approved_workflow=raw.prompts[0][1] if raw.prompts else None,
        position=Position(current=last, done=[t for _, t in raw.tools]),
        decisions=decisions,
        facts=[Fact(text=FACTS_PLACEHOLDER)],
        rederivation=[f"Read the transcript: {path}"],
    )
    return EngineOutput(render(state), state, transcript)
