"""Condense a transcript for the model and split it into chunks that fit the token budget (issue 4, item 4).

Each event becomes one numbered line, ``[<index>] <timestamp> <label>: <text>``, where ``index`` is the event's
index in ``Transcript.events`` (what evidence must cite) and the text is the event's own text, so a quote the
model copies from a line is a verbatim substring of the cited event.  Condensing:

* tool calls and tool outputs are cut to ``tool_chars`` characters (``...[+N chars]`` marks the cut); prompts,
  assistant messages, reasoning, sub-agent results and compaction summaries to ``TEXT_CHARS``;
* a tool output identical to an earlier one is replaced by ``(same output as [k])``; empty events are skipped;
* line breaks inside an event are kept (quotes may span them: grounding compares whitespace-insensitively).

``chunk`` packs lines greedily, in order, into chunks of at most ``budget`` tokens (tiktoken estimate); a single
line over the budget is cut to fit.  Masking is not done here: ``pipeline.llm.call`` masks whole messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.llm.budget import count
from pipeline.transcripts.model import Transcript

TEXT_CHARS = 4000
LABELS = {
    "user_prompt": "user",
    "assistant_text": "assistant",
    "reasoning": "assistant reasoning",
    "tool_call": "tool call",
    "tool_result": "tool output",
    "compaction": "compaction summary (written by the harness's model)",
    "subagent_call": "sub-agent call",
    "subagent_result": "sub-agent result",
    "todo_list": "todo list",
}
TOOL_KINDS = frozenset({"tool_call", "tool_result", "subagent_call"})


@dataclass(frozen=True, slots=True)
class Line:
    """One condensed event: its ``index`` in the transcript, the rendered ``text`` and its token estimate."""

    index: int
    text: str
    tokens: int


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...[+{len(text) - limit} chars]"


def _label(event) -> str:
    label = LABELS.get(event.kind, event.kind)
    if event.kind in ("tool_call", "subagent_call", "todo_list") and event.tool_name:
        label = f"{label} {event.tool_name}"
    if event.kind == "tool_result":
        if event.tool_name:
            label = f"{label} of {event.tool_name}"
        if event.is_error:
            label = f"{label} (error)"
    return label


def condense(transcript: Transcript, *, tool_chars: int = 600) -> list[Line]:
    """The transcript's events as condensed ``Line``s, in order; see the module docstring."""
    lines: list[Line] = []
    seen_outputs: dict[str, int] = {}
    for event in transcript.events:
        text = (event.text or "").strip()
        if event.kind == "tool_call" and event.target and not text:
            text = event.target
        if not text:
            continue
        if event.kind in TOOL_KINDS:
            body = _cut(text, tool_chars)
            if event.kind == "tool_result":
                first = seen_outputs.get(text)
                if first is not None:
                    body = f"(same output as [{first}])"
                else:
                    seen_outputs[text] = event.index
        else:
            body = _cut(text, TEXT_CHARS)
        stamp = f" {event.timestamp}" if event.timestamp else ""
        rendered = f"[{event.index}]{stamp} {_label(event)}: {body}"
        lines.append(Line(event.index, rendered, count(rendered) + 1))
    return lines


def _fit(line: Line, budget: int) -> Line:
    """``line`` cut so that its estimate fits ``budget`` tokens: cut in proportion, then by a tenth until it fits."""
    marker = "…[cut to fit the token budget]"
    limit = int(len(line.text) * budget / max(line.tokens, 1))
    while True:
        text = line.text[: max(limit, 0)] + marker
        tokens = count(text) + 1
        if tokens <= budget or limit <= 0:
            return Line(line.index, text, tokens)
        limit = min(limit - 1, int(limit * 0.9))


def chunk(lines: list[Line], budget: int) -> list[list[Line]]:
    """Pack ``lines`` in order into chunks of at most ``budget`` tokens each (``budget`` >= 100)."""
    budget = max(budget, 100)
    chunks: list[list[Line]] = []
    current: list[Line] = []
    used = 0
    for line in lines:
        if line.tokens > budget:
            line = _fit(line, budget)
        if current and used + line.tokens > budget:
            chunks.append(current)
            current, used = [], 0
        current.append(line)
        used += line.tokens
    if current:
        chunks.append(current)
    return chunks


def text_of(lines: list[Line]) -> str:
    """The lines joined for a prompt."""
    return "\n".join(line.text for line in lines)
