"""Distil a transcript of any size segment by segment, in bounded memory, and fold the parts into one state
(issue 23: every byte read once).

``distil_stream(path, …)`` reads the transcript as segments (``pipeline.transcripts.segments``), builds each one's
state with the rules engine exactly as a whole read would (``pipeline.engines.build_state``: mask, distil, screen,
weave, validate), rebases its evidence to whole-transcript event indexes and folds it onto the state so far
(``pipeline.state.fold``).  A segment's events are dropped once it is folded: memory holds one segment, the folded
state, the events its evidence cites and, per segment, the text around each masked secret (``redact.source.compact``).

It also serves a checkpoint that reads on where the last one stopped (``previous``, ``start_at``, ``seeds``:
``pipeline.state.cursor``) and a read under a time budget (``stop``: a callback that ends the read after a segment).

``Folded.finish()`` gives the final state and its text (``validate.rendered``: the file must parse back the same);
``Folded.source`` the masking of every segment for the redaction gate.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from pipeline.state.model import AgentState, Evidence
from pipeline.transcripts.model import Event, ReadReport, TranscriptMeta
from pipeline.transcripts.segments import Policy, Segment, StopStream, message_chars, stream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pipeline.redact.source import SourceMask


@dataclass(slots=True)
class Folded:
    """The running result of a segmented read.

    ``state``: the folded state (None before the first segment, or ``previous``); ``dropped``: entries dropped, one
    message each; ``cited``: whole-transcript event index -> the masked event an entry of ``state`` cites;
    ``masks``: each segment's compacted masking; ``segments``, ``events``, ``message_chars``: what was read (own
    events of the segments, message characters); ``meta``: the last segment's metadata; ``report``: the read's
    report; ``end_offset``/``end_line``: for an append-only JSONL file, where the read stopped (a line start: the
    next read starts there), else None; ``stopped``: the read was ended early (``stop``); ``offsets``: the format
    has resumable offsets; ``format``: the format read; ``carried``: the masked events the next segment (or the
    next checkpoint's first one) starts with (``segments._carried``), and ``carried_index`` their indexes;
    ``last_compaction``: the newest compaction event read (masked), for the restore's summary delta; ``seconds``:
    wall time of the read; ``head_time``: the time of the first segment's opening request; ``carry``: what the
    reader kept as of the last segment's end (``ReadReport.carry``), for a read that goes on from there.
    """

    state: AgentState | None = None
    dropped: list[str] = field(default_factory=list)
    cited: dict[int, Event] = field(default_factory=dict)
    masks: list = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    seen: set = field(default_factory=set)
    segments: int = 0
    events: int = 0
    message_chars: int = 0
    meta: TranscriptMeta | None = None
    report: ReadReport | None = None
    end_offset: int | None = None
    end_line: int | None = None
    stopped: bool = False
    offsets: bool = False
    format: str | None = None
    carried: list[Event] = field(default_factory=list)
    carried_index: list[int] = field(default_factory=list)
    last_compaction: Event | None = None
    seconds: float = 0.0
    head_time: str | None = None
    carry: dict = field(default_factory=dict)

    @property
    def source(self) -> "SourceMask":
        """The masking of every segment read, one ``SourceMask`` for the redaction gate."""
        from pipeline.redact.source import merge

        return merge(self.masks)

    def finish(self, extra_rederivation: list[str] = ()) -> tuple[AgentState, str]:
        """The final state (``extra_rederivation`` lines added after the transcript line) and its exact text.
        Raises ``ValidationFailed`` when the text does not parse back to the same state; ``ValueError`` when
        nothing was read."""
        from pipeline.stages.validate import rendered

        if self.state is None:
            raise ValueError("no segment was read")
        state = self.state
        if extra_rederivation:
            lines = list(state.rederivation)
            at = 1 if lines and lines[0].startswith("Read the transcript: ") else 0
            state = replace(state, rederivation=[*lines[:at], *extra_rederivation,
                                                 *(ln for ln in lines[at:] if ln not in extra_rederivation)])
        return rendered(state)


def _rebased(state: AgentState, number: Callable[[int], int]) -> AgentState:
    """``state`` with every evidence event index moved from the segment's numbering to the whole transcript's
    (``number``)."""
    def move(ev: Evidence | None) -> Evidence | None:
        return None if ev is None else Evidence(event_index=number(ev.event_index), quote=ev.quote)

    return replace(state, decisions=[replace(d, evidence=move(d.evidence)) for d in state.decisions],
                   facts=[replace(f, evidence=move(f.evidence)) for f in state.facts])


def _norm(text: str) -> str:
    return " ".join(text.split())


def _head(workflow: str | None) -> str:
    """The first line of the opening request of a workflow text (``state.fold``'s head), one-lined, or ""."""
    from pipeline.state.fold import _TASK

    for line in (workflow or "").splitlines():
        if _TASK.match(line) or line.startswith("From the compaction summary"):
            return ""
        if line.strip():
            return _norm(line)[:80]
    return ""


def _seconds(ts: str | None) -> str | None:
    """An ISO-8601 time as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (the workflow's task times), or None."""
    from datetime import timezone

    try:
        moment = datetime.fromisoformat(ts) if ts else None
    except ValueError:
        return None
    if moment is None:
        return None
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _head_of(seeds: int, events: list[Event], workflow: str | None) -> tuple[str | None, bool]:
    """``(time of the segment's opening request, whether it is the prompt carried from the segment before)``;
    ``seeds``: how many of ``events`` are carried over."""
    head = _head(workflow)
    if not head:
        return None, False
    n = seeds
    for i, e in enumerate(events):
        if e.kind == "user_prompt" and head in _norm(e.text):
            return _seconds(e.timestamp), i < n
    return None, False


SEGMENT_END = "duck-tape:segment-end"


def _segment_end(last: Event, index: int) -> Event:
    """The compaction that follows a segment, as the segment's last event: no text (the next segment reads it), a
    chain of its own.  A whole read sees the compaction after these events, and the rules engine reads a session
    by where it ends (``rules.branches``: the path from the last record decides which branch stands); a segment that
    ended on its last event would read the events off that path as rewound."""
    return Event(index, "compaction", "", last.timestamp, line=last.line, uuid=SEGMENT_END, session_id=last.session_id)


def _masked_event(event: Event, folded: Folded) -> Event:
    """``event`` with its text masked as the segment's was (the values found so far masked too)."""
    from pipeline.redact.source import mask_texts

    (text,), _ = mask_texts([event.text], known=folded.values, seen=folded.seen)
    return replace(event, text=text)


class Distiller:
    """The ``consume`` callback of ``segments.stream`` that builds and folds each segment (module docstring).

    ``action``, ``kind``, ``now``, ``trigger``, ``session_id``: as ``engines.build_state`` takes them; ``cwd``: the
    header's Cwd when the transcript names none; ``previous``: the state the segments fold onto (a checkpoint that
    reads on); ``stop(folded, segment)``: True ends the read after ``segment``; ``progress(folded, segment)``:
    called after each segment; ``prepare(transcript, last)``: returns the segment's transcript to distil (the
    batch adds sub-agent answers there).  ``base``, ``seed_index``: the whole-transcript index of the first event
    and of the carried events a read that goes on starts with.

    Whole-transcript event indexes are counted here, over the events distilled (so that events ``prepare`` adds
    count too): a segment's own events follow the ones before; its carried events keep the indexes they had.
    """

    def __init__(self, *, action: str, kind: str, now: datetime, trigger: str | None, session_id: str | None,
                 cwd: str | None = None, previous: AgentState | None = None,
                 stop: Callable[[Folded, Segment], bool] | None = None,
                 progress: Callable[[Folded, Segment], None] | None = None,
                 prepare: Callable | None = None, base: int = 0, seed_index: list[int] = ()) -> None:
        self.args = dict(action=action, kind=kind, now=now, trigger=trigger, session_id=session_id)
        self.cwd = cwd
        self.stop = stop
        self.progress = progress
        self.prepare = prepare
        self.base = base
        self.folded = Folded(state=previous)
        self.folded.carried_index = list(seed_index)

    def __call__(self, segment: Segment) -> None:
        from pipeline.engines import build_state
        from pipeline.redact.source import compact
        from pipeline.state.fold import fold
        from pipeline.transcripts.segments import _carried

        f = self.folded
        transcript = segment.transcript
        if self.cwd and not transcript.meta.cwd:
            transcript.meta.cwd = self.cwd
        if self.prepare is not None:
            transcript = self.prepare(transcript, segment.last)
        n = len(segment.seeds)
        seeds = list(f.carried_index[:n]) if len(f.carried_index) >= n else list(segment.seeds)
        base = self.base

        def number(i: int) -> int:
            return seeds[i] if i < n else base + i - n

        own = transcript.events[n:]
        if segment.before_compaction and own:
            transcript = replace(transcript, events=[*transcript.events, _segment_end(own[-1], len(transcript.events))])
        self.base += len(own)
        f.segments += 1
        f.events += len(own)
        f.message_chars += message_chars(own)
        summary = next((e for e in reversed(own) if e.kind == "compaction"), None)
        if f.state is not None and summary is not None:
            # a summary of what the fold holds already adds nothing but paraphrases of it (the same rule as the
            # rules engine's for a later summary in one read): the engine sees the compaction, not its text
            transcript = replace(transcript, events=[*transcript.events[:n], *(
                replace(e, text="") if e.kind == "compaction" else e for e in own)])
        built = build_state(transcript, config=None, known=f.values, seen=f.seen, **self.args)
        if built.source is not None:
            f.values = built.source.values
            f.masks.append(compact(built.source))
        masked = built.masked.events if built.masked is not None else transcript.events
        if summary is not None:
            f.last_compaction = _masked_event(summary, f)
        f.dropped.extend(built.dropped)
        state = _rebased(built.state, number)
        for entry in (*state.decisions, *state.facts):
            ev = entry.evidence
            if ev is not None and ev.event_index not in f.cited:
                g = ev.event_index
                local = seeds.index(g) if g in seeds else g - base + n
                f.cited[g] = replace(masked[local], index=g)
        if f.state is None:
            f.state = state
            f.head_time = _head_of(n, masked, state.approved_workflow)[0]
        else:
            head_time, head_seen = _head_of(n, masked, state.approved_workflow)
            f.state = fold(f.state, state, head_time=head_time, head_seen=head_seen)
        wanted = {e.evidence.event_index for e in (*f.state.decisions, *f.state.facts) if e.evidence is not None}
        f.cited = {i: e for i, e in f.cited.items() if i in wanted}
        carried = _carried(masked)
        f.carried = [masked[i] for i in carried]
        f.carried_index = [number(i) for i in carried]
        f.meta = transcript.meta
        f.report = transcript.report
        f.carry = dict(transcript.report.carry)
        f.end_offset, f.end_line = segment.end_offset, segment.end_line
        if self.progress is not None:
            self.progress(f, segment)
        if self.stop is not None and not segment.last and self.stop(f, segment):
            raise StopStream


def distil_stream(path: str, *, max_bytes: int, action: str, kind: str, now: datetime, trigger: str | None,
                  session_id: str | None = None, cwd: str | None = None, policy: Policy | None = None,
                  start_at: tuple[int, int] | None = None, seeds: list[Event] = (), base: int = 0,
                  seed_index: list[int] = (), previous: AgentState | None = None,
                  stop: Callable[[Folded, Segment], bool] | None = None,
                  progress: Callable[[Folded, Segment], None] | None = None, warn: bool = True,
                  session: str | None = None, end_at: int | None = None, prepare: Callable | None = None,
                  carry: dict | None = None) -> Folded:
    """Read ``path`` segment by segment with the rules engine and fold the parts (module docstring).

    ``start_at``: ``(byte offset, lines before it)`` to read on from (an append-only JSONL file; others are read
    whole), with ``seeds`` (the events the last read carried over, ``Folded.carried``; their whole-transcript indexes
    ``seed_index``) and ``base`` (the whole-transcript index of the first event read) and the ``previous`` state to
    fold onto, and ``carry``, what the reader kept where it stopped (``Folded.carry``); ``end_at``: a line start to
    end the read at.  ``stop``/``progress``/``prepare``: see ``Distiller``.  Raises ``InputError`` for unreadable input (as
    ``read_transcript``), ``ValidationFailed`` when a segment's state cannot be rendered.
    """
    started = time.perf_counter()
    distiller = Distiller(action=action, kind=kind, now=now, trigger=trigger, session_id=session_id, cwd=cwd,
                          previous=previous, stop=stop, progress=progress, prepare=prepare,
                          base=base if start_at else 0, seed_index=list(seed_index) if start_at else [])
    result = stream(path, distiller, max_bytes=max_bytes, policy=policy, start_at=start_at, warn=warn,
                    session=session, seeds=list(seeds) if start_at else [], base=base if start_at else 0,
                    seed_index=list(seed_index) if start_at else [], end_at=end_at, carry=carry)
    folded = distiller.folded
    folded.stopped = result.stopped
    folded.offsets = result.offsets
    folded.format = result.format
    folded.report = result.report
    folded.seconds = time.perf_counter() - started
    return folded
