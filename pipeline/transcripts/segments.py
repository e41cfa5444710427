"""A transcript of any size as a stream of segments, each small enough to distil in bounded memory (issue 23).

``stream(path, consume)`` reads the transcript once, front to back, with the reader of its format, and hands
``consume`` one ``Segment`` at a time; the events of a segment are dropped once ``consume`` returns, so memory holds
one segment (plus the reader's own small maps), whatever the file's size.  ``consume`` may raise ``StopStream`` to
end the read after a segment (the time budget of a hook's first look, ``pipeline.segmented``).

Where a segment ends (``Segmenter.due``; the events are cut only right before a user prompt or a compaction, so a
turn is never split and a byte offset is a line start):

* when it is **full** (``Policy``): ``message_chars`` characters of messages (prompts, main-thread answers, sub-agent
  results, summaries: the text the sentence rules read, and what their time grows with), ``text_chars`` characters
  of all event text, ``events`` events, ``bytes`` bytes of a JSONL file, or (when set) ``prompts`` different user
  prompts once it holds ``min_events`` events;
* at a **compaction** (the harness's own boundary: the context started again there) once the segment is
  ``compaction_share`` full by any of those measures: a cut that has to come soon comes where the session itself
  turned.

A session under those sizes is read as one segment: the rules engine sees it whole, as a single read would (on the
development sets every cut made below them cost probes: a reply read apart from the question it answers, a
Remaining item apart from the work that left it open).

A segment cut before a user prompt starts with copies of the last user prompt of the segment before and of the last
main-thread answer after it (``Segment.seeds``): the new prompt may answer that answer ("yes, do that"), and the
rules engine reads a prompt after the session's first request as the answer, correction or task it is; the copied
prompt stands as the request the new segment continues.  Entries the seeds yield in both segments are the same
entries, which the fold dedupes (``pipeline.state.fold``).

Event indexes: each segment's events are numbered from 0.  ``Segment.global_index(i)`` is event ``i``'s index in
the whole transcript as a single read would number it (a seed keeps its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pipeline.transcripts.model import Event, ReadReport, Transcript, TranscriptMeta

#: Formats read line by line from a file that only grows: a byte offset is a resumable position (JSON documents
#: are rewritten whole; Gemini CLI's chat JSONL rewrites earlier messages by later records).
APPEND_ONLY_FORMATS = frozenset({"claude-code-jsonl", "codex-rollout", "copilot-events", "generic-jsonl"})
_MESSAGE_KINDS = frozenset({"user_prompt", "compaction", "subagent_result"})


@dataclass(frozen=True, slots=True)
class Policy:
    """When a segment is full (module docstring); ``bytes`` None: no byte limit."""

    prompts: int | None = None
    min_events: int = 300
    message_chars: int = 1_000_000
    text_chars: int = 4_000_000
    events: int = 6_000
    bytes: int | None = None
    compaction_share: float = 0.25


DEFAULT_POLICY = Policy()


@dataclass(slots=True)
class Segment:
    """One segment of a transcript.

    ``transcript``: its events (indexes from 0) with a copy of the metadata known when it ended; ``number``: 1-based;
    ``base``: the whole-transcript index of its first own event; ``seeds``: the whole-transcript indexes of the
    events carried over from the segment before, which come first (module docstring); ``end_offset``/``end_line``: for a JSONL file, the byte offset and line count where
    it ends (the start of the line after it; resuming there reads the rest), else None; ``last``: no segment
    follows (the file was read to its end); ``before_compaction``: a compaction follows it.
    """

    transcript: Transcript
    number: int
    base: int
    seeds: tuple[int, ...] = ()
    end_offset: int | None = None
    end_line: int | None = None
    last: bool = False
    before_compaction: bool = False

    def global_index(self, index: int) -> int:
        """The whole-transcript index of event ``index`` of this segment."""
        n = len(self.seeds)
        return self.seeds[index] if index < n else self.base + index - n

    @property
    def own_events(self) -> int:
        """How many events are the segment's own (the seeds are the segment's before)."""
        return len(self.transcript.events) - len(self.seeds)


class StopStream(Exception):
    """Raised by a ``consume`` callback to end the read after the segment it was given."""


def message_chars(events: list[Event]) -> int:
    """Characters of message text in ``events`` (prompts, main-thread answers, summaries, sub-agent results)."""
    return sum(len(e.text) for e in events
               if e.kind in _MESSAGE_KINDS or (e.kind == "assistant_text" and e.agent is None))


class Segmenter:
    """Cuts a read into segments (see the module docstring); set as ``ReadReport.segmenter`` for the read.

    ``emit`` gets each finished segment but the last (the reader returns that one); ``report`` is the read's
    report (its ``line_start`` gives byte offsets of JSONL reads).
    """

    def __init__(self, emit: Callable[[Segment], None], report: ReadReport, policy: Policy = DEFAULT_POLICY, *,
                 base: int = 0, seeds: list[Event] = (), seed_index: list[int] = ()) -> None:
        self.emit = emit
        self.report = report
        self.policy = policy
        self.number = 0
        self.base = base
        self.seeds: tuple[int, ...] = tuple(seed_index) if seeds else ()
        #: the events the first segment starts with (a read that goes on where an earlier one stopped), taken once
        #: by the read's ``EventSink``
        self.initial: list[Event] = [replace(e, index=n) for n, e in enumerate(seeds)]
        self.start_offset = report.start_at[0] if report.start_at else 0
        self.kind = "user_prompt"
        self._reset()

    @property
    def offsets(self) -> bool:
        """Whether the read has resumable byte offsets (an append-only JSONL format, ``APPEND_ONLY_FORMATS``)."""
        return self.report.format in APPEND_ONLY_FORMATS

    def take_initial(self) -> list[Event]:
        """The events the read's sink starts with (once; later sinks of the read start empty)."""
        initial, self.initial = self.initial, []
        return initial

    def _reset(self) -> None:
        self.checked = len(self.seeds)
        self.prompts = 0
        self.said: set[str] = set()
        self.messages = 0
        self.text = 0

    def due(self, events: list[Event], kind: str, line: int) -> bool:
        """Whether the segment ``events`` ends before the ``kind`` event of ``line`` that is being added."""
        own = len(events) - len(self.seeds)
        if own <= 0 or (line and events[-1].line == line):
            return False  # nothing of its own yet, or the new event's line made events already: no line start here
        for e in events[self.checked:-1]:  # the last one may still be filling (a Claude Code answer being joined)
            size = len(e.text)
            self.text += size
            if e.kind == "user_prompt":
                said = " ".join(e.text.split()).lower()
                if said not in self.said:
                    self.said.add(said)
                    self.prompts += 1
                self.messages += size
            elif e.kind in _MESSAGE_KINDS or (e.kind == "assistant_text" and e.agent is None):
                self.messages += size
        self.checked = max(self.checked, len(events) - 1)
        self.kind = kind
        p = self.policy
        share = p.compaction_share if kind == "compaction" else 1.0
        if (p.prompts is not None and self.prompts >= p.prompts * share and own >= p.min_events * share) \
                or self.messages >= p.message_chars * share or self.text >= p.text_chars * share or own >= p.events * share:
            return True
        return bool(p.bytes and self.offsets and self.report.line_start - self.start_offset >= p.bytes * share)

    def cut(self, events: list[Event], meta: TranscriptMeta, line: int) -> list[Event]:
        """Hand ``events`` on as a segment (``emit``); return the events the next one starts with."""
        self.number += 1
        end = self.report.line_start if self.offsets else None
        from pipeline.transcripts.common import clean_transcript

        segment = Segment(clean_transcript(Transcript(meta=replace(meta, session_ids=list(meta.session_ids)),
                                                      events=events, report=self.report)),
                          self.number, self.base, self.seeds, end, line - 1 if self.offsets else None,
                          before_compaction=self.kind == "compaction")
        self.base += segment.own_events
        self.start_offset = end or 0
        carried = _carried(events) if self.kind == "user_prompt" else []  # a compaction starts the context again
        self.seeds = tuple(segment.global_index(i) for i in carried)
        self._reset()  # the seeds count in the segment they came from
        self.emit(segment)
        return [replace(events[i], index=n) for n, i in enumerate(carried)]

    def last(self, transcript: Transcript) -> Segment:
        """The final segment: ``transcript`` as the reader returned it (the events since the last cut)."""
        self.number += 1
        end = self.report.covered if self.offsets else None
        lines = self.report.lines if self.offsets else None
        return Segment(transcript, self.number, self.base, self.seeds, end, lines, last=True)


def _carried(events: list[Event]) -> list[int]:
    """Indexes of the events a segment cut before a user prompt carries over (module docstring): the last user
    prompt and the last main-thread answer after it, since the last compaction, in order."""
    answer = prompt = None
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e.kind == "compaction":
            break
        if e.kind == "user_prompt":
            prompt = i
            break
        if answer is None and e.kind == "assistant_text" and e.agent is None and e.text.strip():
            answer = i
    return [i for i in (prompt, answer) if i is not None]



@dataclass(slots=True)
class Streamed:
    """How a ``stream`` ended: ``segments`` handed to ``consume``; ``stopped``: ``consume`` raised ``StopStream``;
    ``report``: the read's report; ``format``: the format read; ``offsets``: whether the segments have resumable
    byte offsets (``APPEND_ONLY_FORMATS``)."""

    segments: int
    stopped: bool
    report: ReadReport
    format: str | None
    offsets: bool


def stream(path: str, consume: Callable[[Segment], None], *, max_bytes: int, policy: Policy | None = None,
           start_at: tuple[int, int] | None = None, trusted_root: str | None = None, session: str | None = None,
           warn: bool = True, base: int = 0, seeds: list[Event] = (), seed_index: list[int] = (),
           end_at: int | None = None, carry: dict | None = None) -> Streamed:
    """Read ``path`` (``pipeline.transcripts.read_transcript``: the same checks, errors and formats) and hand each
    ``Segment`` to ``consume`` in order, the last one with ``last`` set.  ``start_at``: ``(byte offset, lines
    before it)`` of an append-only JSONL file to start at (a line start; ignored for other formats, which are read
    whole).  ``consume`` raising ``StopStream`` ends the read: the result says ``stopped`` and no last segment is
    handed on.  ``base``, ``seeds``, ``seed_index``: for a read that goes on from ``start_at``, the whole-transcript
    index of its first event, the events it starts with (the last read's ``_carried`` events) and their indexes.
    ``carry``: the reader's state where that read stopped (``ReadReport.carry``; each segment's report holds it as of
    the segment's end).  Raises what ``read_transcript`` raises (``InputError``) and what ``consume`` raises.
    """
    from pipeline.transcripts import read_transcript

    report = ReadReport(start_at=start_at, end_at=end_at, carry=dict(carry or {}) if start_at else {})
    count = [0]

    def emit(segment: Segment) -> None:
        count[0] += 1
        consume(segment)

    segmenter = Segmenter(emit, report, policy or DEFAULT_POLICY, base=base, seeds=seeds, seed_index=seed_index)
    report.segmenter = segmenter
    try:
        transcript = read_transcript(path, max_bytes=max_bytes, trusted_root=trusted_root, warn=warn, session=session,
                                     report=report)
    except StopStream:
        return Streamed(count[0], True, report, report.format, segmenter.offsets)
    report.segmenter = None
    last = segmenter.last(transcript)
    try:
        emit(last)
    except StopStream:
        return Streamed(count[0], True, report, report.format, segmenter.offsets)
    return Streamed(count[0], False, report, report.format, segmenter.offsets)
