"""Extract stage: ``Transcript`` -> raw material markdown (DESIGN.md "Raw material").

A drop-in for the bash+jq extractor the agent skill calls today, with its known defects fixed: a
multi-line message stays one item, identical decisions are listed once, only real prompts are listed
(the read stage already excludes tool results, meta lines, compaction summaries and sub-agent prompts).

Output, sections in this order, items numbered ``N. <ISO-8601>: <text>``::

    # Transcript Raw Material
    ## User Prompts (chronological)
    ## Tool Calls (chronological)            (``<name> on <target>``)
    ## Assistant Messages (last 10, chronological)
    ## Potential Decisions (all matching, chronological, deduped)
    ## Failed Tool Results
    ## Session Metadata                      (``- Start:``, ``- Cwd:``, ``- Branch:``)

Pure: no I/O, no pydantic (this runs on the hook path).  Masking: ``extract_raw_text`` masks the transcript
before anything is cut (``pipeline.redact.source``: project rules and the scanner library, every value found
anywhere masked everywhere), and ``render`` passes the rendered text through the same deep scan, both with the
``[REDACTED]`` placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.transcripts.model import CALL_KINDS, Transcript

HEADER = "# Transcript Raw Material"
ITEM_CAP = 2_000  # characters per listed item
LAST_ASSISTANT = 10

#: Sentences that look like a decision: explicit markers and the common implicit phrasings, matched
#: case-insensitively (``has_decision_cue``).
DECISION_CUES_SOURCE = r"""\b(?:
    approved|rejected|decided|decision|chose|chosen|
    (?:we(?:'re|\s+are)|i(?:'m|\s+am))\s+going\s+with|going\s+with|let'?s\s+go\s+with|
    we\s+will\s+use|we'll\s+use|i'll\s+use|let'?s\s+use|settled\s+on|switch(?:ing|ed)\s+to|
    decided\s+(?:to|on|against)|opt(?:ing|ed)\s+for|chose\s+\S+\s+over|ruled\s+out|
    (?:didn'?t|did\s+not|won'?t|doesn'?t)\s+work\s+because|instead\s+of|rather\s+than
)\b"""
#: The cues over lower-cased ASCII text: the same matches as ``re.IGNORECASE`` there, 2-3x faster in
#: ``re`` (no case folding per character).
_ASCII_CUES = re.compile(DECISION_CUES_SOURCE, re.VERBOSE)
_unicode_cues: re.Pattern[str] | None = None  # with re.IGNORECASE, compiled for the first non-ASCII text
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(\[])|\n+")


def has_decision_cue(text: str) -> bool:
    """True when ``text`` holds a decision cue (``DECISION_CUES_SOURCE``, any letter case)."""
    global _unicode_cues
    if text.isascii():
        return _ASCII_CUES.search(text.lower()) is not None
    if _unicode_cues is None:  # Unicode case folding (e.g. "ſ" ~ "s") needs the real thing
        _unicode_cues = re.compile(DECISION_CUES_SOURCE, re.IGNORECASE | re.VERBOSE)
    return _unicode_cues.search(text) is not None


def one_line(text: str, limit: int = ITEM_CAP) -> str:
    """Collapse all whitespace (newlines included) to single spaces and cut at ``limit`` characters."""
    if len(text) > 4 * limit:
        text = text[: 4 * limit]  # no need to collapse what will be cut anyway
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(slots=True)
class RawMaterial:
    """The extract stage's output: lists of ``(timestamp, text)`` items per section plus session metadata."""

    prompts: list[tuple[str, str]] = field(default_factory=list)
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    assistant: list[tuple[str, str]] = field(default_factory=list)
    decisions: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    start: str = "unknown"
    cwd: str = "unknown"
    branch: str = "unknown"


def _decision_sentences(text: str) -> list[str]:
    if not has_decision_cue(text):
        return []
    out = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip(" -*>#\t")
        if len(sentence) >= 8 and has_decision_cue(sentence):
            out.append(one_line(sentence, 400))
    return out


def _norm_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def run(transcript: Transcript) -> RawMaterial:
    """Build the raw material of ``transcript`` (no masking yet; see ``render``)."""
    raw = RawMaterial()
    seen_decisions: set[str] = set()
    calls: dict[str, tuple[str, str]] = {}
    last_ts = transcript.meta.start_time or ""
    for event in transcript.events:
        ts = event.timestamp or last_ts
        last_ts = ts
        kind = event.kind
        if kind == "user_prompt":
            raw.prompts.append((ts, one_line(event.text)))
            sources = [event.text]
        elif kind == "assistant_text":
            raw.assistant.append((ts, event.text))  # collapsed below, only the last ten
            sources = [event.text]
        elif kind in CALL_KINDS:
            name = event.tool_name or "tool"
            target = event.target or "unknown"
            raw.tool_calls.append((ts, f"{name} on {one_line(target, 300)}"))
            if event.call_id:
                calls[event.call_id] = (name, target)
            continue
        elif kind in ("tool_result", "subagent_result") and event.is_error:
            name, target = calls.get(event.call_id or "", (event.tool_name or "tool", event.target or "unknown"))
            first = one_line(event.text, 300) or "(no output)"
            raw.failures.append((ts, f"{name} on {one_line(target, 200)}: {first}"))
            continue
        else:
            continue
        for text in sources:
            for sentence in _decision_sentences(text):
                key = _norm_key(sentence)
                if key not in seen_decisions:
                    seen_decisions.add(key)
                    raw.decisions.append((ts, sentence))
    raw.assistant = [(ts, one_line(text)) for ts, text in raw.assistant[-LAST_ASSISTANT:]]
    meta = transcript.meta
    raw.start = meta.start_time or "unknown"
    raw.cwd = meta.cwd or "unknown"
    raw.branch = meta.git_branch or "unknown"
    return raw


def _section(title: str, items: list[tuple[str, str]]) -> list[str]:
    lines = [title]
    if not items:
        lines.append("None")
    for number, (ts, text) in enumerate(items, 1):
        lines.append(f"{number}. {ts or 'unknown'}: {text}")
    return lines


def render(raw: RawMaterial, *, placeholder: str = "[REDACTED]") -> str:
    """Render raw material as markdown (DESIGN.md "Raw material"), secrets masked with ``placeholder``."""
    from pipeline.redact import mask

    blocks = [
        [HEADER],
        _section("## User Prompts (chronological)", raw.prompts),
        _section("## Tool Calls (chronological)", raw.tool_calls),
        _section(f"## Assistant Messages (last {LAST_ASSISTANT}, chronological)", raw.assistant),
        _section("## Potential Decisions (all matching, chronological, deduped)", raw.decisions),
        _section("## Failed Tool Results", raw.failures),
        ["## Session Metadata", f"- Start: {raw.start}", f"- Cwd: {raw.cwd}", f"- Branch: {raw.branch}"],
    ]
    text = "\n\n".join("\n".join(block) for block in blocks) + "\n"
    masked, _ = mask(text, placeholder=placeholder, deep=True)  # the same detector as every other output
    return masked


def render_unavailable(reason: str) -> str:
    """The header and a one-line reason: what ``extract-raw`` prints when it cannot read the input."""
    return f"{HEADER}\n\nUnavailable: {one_line(reason, 500)}\n"


def extract_raw_text(path: str, *, max_bytes: int | None = None) -> str:
    """What ``duck-tape extract-raw PATH`` prints: the rendered raw material, or the header and a one-line
    reason when the input cannot be read.  Never raises (hooks call it).

    ``max_bytes``: size cap in bytes; default ``DUCK_TAPE_MAX_TRANSCRIPT_BYTES``, else 1 GiB (``safety.DEFAULT_MAX_BYTES``).
    """
    try:
        from pipeline.errors import DuckTapeError
        from pipeline.transcripts import read_transcript
        from pipeline.transcripts.safety import HOOK_MAX_BYTES, max_bytes_from_env

        from pipeline.redact.library import warm_up
        from pipeline.redact.source import mask_transcript

        warm_up()  # the secret scanner compiles its rules while this thread reads the transcript
        limit = max_bytes or max_bytes_from_env(HOOK_MAX_BYTES)
        # issue 11: mask the source first (every value found anywhere masked everywhere), then cut items to
        # ITEM_CAP and render: a cut right after "user:password@" or inside a token must not keep its secret
        transcript, _ = mask_transcript(read_transcript(path, max_bytes=limit), placeholder="[REDACTED]")
        return render(run(transcript))
    except DuckTapeError as exc:
        return render_unavailable(str(exc))
    except Exception as exc:  # hooks must never fail: report and exit 0
        return render_unavailable(f"{path}: could not read ({type(exc).__name__}: {exc})")
