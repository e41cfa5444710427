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
from collections import deque
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


class Extractor:
    """The extract stage over a transcript read in parts (issue 23: segment by segment, ``extract_raw_text``):
    ``feed`` each part's events in order, then ``finish``.  Holds the listed items only (the last
    ``LAST_ASSISTANT`` assistant messages, the calls of the part being fed for naming failed results)."""

    def __init__(self, start_time: str | None = None) -> None:
        self.raw = RawMaterial()
        self.seen_decisions: set[str] = set()
        self.calls: dict[str, tuple[str, str]] = {}
        self.last_ts = start_time or ""
        self.assistant: deque[tuple[str, str]] = deque(maxlen=LAST_ASSISTANT)

    def feed(self, events) -> None:
        """Take the next events (``Event``s, in transcript order)."""
        raw = self.raw
        calls = self.calls
        if len(calls) > 1_000:
            calls.clear()  # results come right after their calls: only a part's own calls are needed to name them
        for event in events:
            ts = event.timestamp or self.last_ts
            self.last_ts = ts
            kind = event.kind
            if kind == "user_prompt":
                raw.prompts.append((ts, one_line(event.text)))
            elif kind == "assistant_text":
                self.assistant.append((ts, event.text))  # collapsed by finish, only the last ten
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
            for sentence in _decision_sentences(event.text):
                key = _norm_key(sentence)
                if key not in self.seen_decisions:
                    self.seen_decisions.add(key)
                    raw.decisions.append((ts, sentence))

    def finish(self, meta) -> RawMaterial:
        """The raw material, with the session metadata of ``meta`` (a ``TranscriptMeta``)."""
        raw = self.raw
        raw.assistant = [(ts, one_line(text)) for ts, text in self.assistant]
        raw.start = meta.start_time or "unknown"
        raw.cwd = meta.cwd or "unknown"
        raw.branch = meta.git_branch or "unknown"
        return raw


def run(transcript: Transcript) -> RawMaterial:
    """Build the raw material of ``transcript`` (no masking yet; see ``render``)."""
    extractor = Extractor(transcript.meta.start_time)
    extractor.feed(transcript.events)
    return extractor.finish(transcript.meta)


def _section(title: str, items: list[tuple[str, str]]) -> list[str]:
    lines = [title]
    if not items:
        lines.append("None")
    for number, (ts, text) in enumerate(items, 1):
        lines.append(f"{number}. {ts or 'unknown'}: {text}")
    return lines


MASK_CHUNK = 1_000_000  # characters of rendered lines masked at a time (the deep scan's library is faster on less)


def render(raw: RawMaterial, *, placeholder: str = "[REDACTED]") -> str:
    """Render raw material as markdown (DESIGN.md "Raw material"), secrets masked with ``placeholder``.

    Every line goes through the deep scan every output passes (``pipeline.redact.mask``), a run of lines of about
    ``MASK_CHUNK`` characters at a time: an item is one line, so no secret spans two runs."""
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
    if len(text) <= MASK_CHUNK:
        return mask(text, placeholder=placeholder, deep=True)[0]  # the same detector as every other output
    out: list[str] = []
    start = 0
    while start < len(text):
        end = text.find("\n", min(start + MASK_CHUNK, len(text) - 1))
        end = len(text) if end < 0 else end + 1
        out.append(mask(text[start:end], placeholder=placeholder, deep=True)[0])
        start = end
    return "".join(out)


def render_unavailable(reason: str) -> str:
    """The header and a one-line reason: what ``extract-raw`` prints when it cannot read the input."""
    return f"{HEADER}\n\nUnavailable: {one_line(reason, 500)}\n"


#: Segments of an extract: large (no rules engine runs on them), cut at user prompts (``transcripts.segments``).
EXTRACT_POLICY_KW = dict(prompts=1 << 30, message_chars=2_000_000, text_chars=4_000_000, events=20_000)
SPOOL_MEMORY = 1_000_000  # characters of a section kept in memory before it goes to a temporary file


class _Spool:
    """One section's items as ``render`` writes them (``N. <ts>: <text>`` lines), masked a run of lines at a time
    and kept in a temporary file past ``SPOOL_MEMORY``: an extract of any size holds a few runs in memory.
    ``append((ts, text))`` is all the ``Extractor`` needs of it."""

    def __init__(self, title: str, placeholder: str) -> None:
        from tempfile import SpooledTemporaryFile

        self.title = title
        self.placeholder = placeholder
        self.count = 0
        self.pending: list[str] = []
        self.size = 0
        self.file = SpooledTemporaryFile(max_size=SPOOL_MEMORY, mode="w+", encoding="utf-8", newline="")

    def append(self, item: tuple[str, str]) -> None:
        self.count += 1
        line = f"{self.count}. {item[0] or 'unknown'}: {item[1]}"
        self.pending.append(line)
        self.size += len(line) + 1
        if self.size >= MASK_CHUNK:
            self.flush()

    def flush(self) -> None:
        from pipeline.redact import mask

        if self.pending:
            self.file.write(mask("\n".join(self.pending) + "\n", placeholder=self.placeholder, deep=True)[0])
            self.pending, self.size = [], 0

    def close(self) -> None:
        self.file.close()


def write_raw(path: str, out, *, max_bytes: int | None = None) -> None:
    """Write what ``duck-tape extract-raw PATH`` prints to the text stream ``out``: the rendered raw material
    (``render``'s text, byte for byte), or the header and a one-line reason when the input cannot be read.  Never
    raises for the input (hooks call it); a failing ``out`` raises its ``OSError``.

    Every event is read (issue 23), segment by segment in bounded memory (``pipeline.transcripts.segments``), each
    segment masked before anything is cut (the values found in earlier segments masked in later ones too), and each
    section's lines spooled (``_Spool``), so memory stays bounded whatever the size; a bar on a terminal shows the
    progress of a long read (``pipeline.readprogress``).  ``max_bytes``: size cap in bytes; default
    ``DUCK_TAPE_MAX_TRANSCRIPT_BYTES``, else 1 GiB (``safety.DEFAULT_MAX_BYTES``).
    """
    placeholder = "[REDACTED]"
    spools = [_Spool("## User Prompts (chronological)", placeholder),
              _Spool("## Tool Calls (chronological)", placeholder),
              _Spool("## Potential Decisions (all matching, chronological, deduped)", placeholder),
              _Spool("## Failed Tool Results", placeholder)]
    try:
        try:
            raw = _read_raw(path, max_bytes, spools)
        except Exception as exc:  # noqa: BLE001 - hooks must never fail: report and exit 0
            from pipeline.errors import DuckTapeError

            out.write(render_unavailable(str(exc) if isinstance(exc, DuckTapeError) else
                                         f"{path}: could not read ({type(exc).__name__}: {exc})"))
            return
        prompts, calls, decisions, failures = spools
        from pipeline.redact import mask

        out.write(HEADER + "\n\n")
        for spool in (prompts, calls):
            _write_section(spool, out)
        assistant = "\n".join(_section(f"## Assistant Messages (last {LAST_ASSISTANT}, chronological)", raw.assistant))
        out.write(mask(assistant + "\n", placeholder=placeholder, deep=True)[0] + "\n")
        for spool in (decisions, failures):
            _write_section(spool, out)
        meta = "\n".join(["## Session Metadata", f"- Start: {raw.start}", f"- Cwd: {raw.cwd}", f"- Branch: {raw.branch}"])
        out.write(mask(meta + "\n", placeholder=placeholder, deep=True)[0])
    finally:
        for spool in spools:
            spool.close()


def _write_section(spool: _Spool, out) -> None:
    """A section then the blank line between sections (``render``'s layout)."""
    spool.flush()
    out.write(spool.title + "\n")
    if not spool.count:
        out.write("None\n\n")
        return
    import shutil

    spool.file.seek(0)
    shutil.copyfileobj(spool.file, out)  # its lines, each ending with a newline
    out.write("\n")


def _read_raw(path: str, max_bytes: int | None, spools: list) -> RawMaterial:
    from pipeline.readprogress import reading
    from pipeline.redact.library import warm_up
    from pipeline.redact.source import mask_transcript
    from pipeline.transcripts.safety import HOOK_MAX_BYTES, max_bytes_from_env
    from pipeline.transcripts.segments import Policy, stream

    warm_up()  # the secret scanner compiles its rules while this thread reads the transcript
    limit = max_bytes or max_bytes_from_env(HOOK_MAX_BYTES)
    extractor: Extractor | None = None
    known: dict[str, str] = {}
    seen: set = set()
    meta = [None]

    def consume(segment) -> None:
        nonlocal extractor
        # issue 11: mask the source first (every value found anywhere masked everywhere), then cut items to
        # ITEM_CAP and render: a cut right after "user:password@" or inside a token must not keep its secret
        masked, source = mask_transcript(segment.transcript, placeholder="[REDACTED]", known=known, seen=seen)
        known.update(source.values)
        if extractor is None:
            extractor = Extractor(segment.transcript.meta.start_time)
            extractor.raw.prompts, extractor.raw.tool_calls, extractor.raw.decisions, extractor.raw.failures = spools
        extractor.feed(masked.events[len(segment.seeds):])
        meta[0] = segment.transcript.meta
        update(segment.end_offset)

    with reading(path, "extract-raw") as update:
        stream(path, consume, max_bytes=limit, policy=Policy(**EXTRACT_POLICY_KW))
    return (extractor or Extractor()).finish(meta[0])


def extract_raw_text(path: str, *, max_bytes: int | None = None) -> str:
    """``write_raw`` into a string: what ``duck-tape extract-raw PATH`` prints.  Never raises (hooks call it)."""
    from io import StringIO

    out = StringIO()
    write_raw(path, out, max_bytes=max_bytes)
    return out.getvalue()
