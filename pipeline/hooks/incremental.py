"""What a checkpoint reads of its transcript: only what is new, and never more than its time allows on a first look
(issue 23, items 1 and 3).

``read_for_checkpoint`` decides, from the session's record in the store (``pipeline.state.cursor``):

* **read on** — the record matches the file (same file, its read part unchanged, same engine): the lines appended
  since are read (``segmented.distil_stream`` from the record's end, starting with the events it carried) and folded
  onto the state the record holds.  When an earlier first look left a gap, the rest of the time budget reads on into
  the gap too, and once the gap is read the two parts become one;
* **first look** — no record (or one that does not match: the reason is a note): the transcript is read from its
  start.  With a time budget (``budget`` seconds, ``DUCK_TAPE_HOOK_BUDGET``, default ``DEFAULT_BUDGET``; 0: none)
  and an append-only JSONL file, the read from the start stops after the segment that passes ``HEAD_SHARE`` of the
  budget; the rest of the time reads the end of the file (as much as the speed measured so far allows, with a
  ``TAIL_MARGIN``), so the state holds the session's start and its newest work; the lines in between are named (a
  note for stderr and a Re-derivation line with the ``duck-tape recover`` command that reads them), and the next
  checkpoint reads on into them.

Nothing is skipped without being named; formats that are rewritten whole (JSON documents, Gemini CLI's chat
JSONL) are always read whole.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field, replace
from datetime import datetime

from pipeline.state.cursor import Cursor, Part

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pipeline.redact.source import SourceMask
    from pipeline.segmented import Folded
    from pipeline.state.model import AgentState
    from pipeline.transcripts.model import Event, TranscriptMeta

BUDGET_ENV = "DUCK_TAPE_HOOK_BUDGET"
DEFAULT_BUDGET = 5.0
"""Seconds a hook's first look at a session may spend reading it (``DUCK_TAPE_HOOK_BUDGET``; 0: no limit)."""
HEAD_SHARE = 0.7
TAIL_MARGIN = 0.8
MIN_TAIL_BYTES = 1_000_000
"""A first look reads at least this much of the end, whatever its budget says: the newest work is the point."""
PREFIX = "duck-tape: checkpoint:"
_SEED_FIELDS = ("kind", "text", "timestamp", "line", "agent", "session_id")


def budget_from_env() -> tuple[float | None, str | None]:
    """``(seconds or None for no limit, a note when the variable is set badly)`` from ``DUCK_TAPE_HOOK_BUDGET``."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_BUDGET, None
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_BUDGET, f"{PREFIX} {BUDGET_ENV}={raw!r} is not a number of seconds; using {DEFAULT_BUDGET:g}"
    if value != value or value < 0:
        return DEFAULT_BUDGET, f"{PREFIX} {BUDGET_ENV}={raw!r} is not a number of seconds; using {DEFAULT_BUDGET:g}"
    return (value or None), None


@dataclass(slots=True)
class Reading:
    """What a checkpoint read: the session's own ``state`` (before carry-forward) and its ``text``, the ``source``
    masking for the redaction gate, ``notes`` for stderr, ``dropped`` entries, the ``meta`` of the newest part read,
    the ``last_compaction`` event read (None: none in what was read), the record to save once the state file is
    written (``cursor``; None for a format that is not read on), the ``gap`` left (``(first line, last line,
    bytes)`` or None), and the reader's ``warning`` (skipped records) or None."""

    state: "AgentState"
    text: str
    source: "SourceMask"
    notes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    meta: "TranscriptMeta | None" = None
    last_compaction: "Event | None" = None
    cursor: Cursor | None = None
    gap: tuple[int, int, int] | None = None
    warning: str | None = None


def _seeds(part: Part) -> tuple[list, list[int]]:
    from pipeline.transcripts.model import Event

    events, index = [], []
    for n, c in enumerate(part.carried):
        try:
            events.append(Event(n, str(c["kind"]), str(c.get("text") or ""), c.get("timestamp"), line=int(c.get("line")
                                or 0), agent=c.get("agent"), session_id=c.get("session_id")))
            index.append(int(c.get("index", 0)))
        except (KeyError, TypeError, ValueError):
            return [], []
    return events, index


def _carried(folded: "Folded") -> list[dict]:
    return [{**{k: getattr(e, k) for k in _SEED_FIELDS}, "index": i} for e, i in zip(folded.carried, folded.carried_index)]


def _masked_text(state: "AgentState", source: "SourceMask") -> str:
    """The state's file text as the state file would hold it (every secret masked): what a record keeps."""
    from pipeline.redact.gate import redaction_gate
    from pipeline.stages.validate import rendered

    return redaction_gate(rendered(state)[1], mask=True, source=source)[0]


def _parsed(text: str) -> "AgentState":
    from pipeline.state.parse import parse

    return parse(text, path="<checkpoint record>")


def _lines_before(path: str, start: int, end: int) -> int:
    """Newlines in bytes ``[start, end)`` of ``path`` (offsets after a BOM)."""
    from pipeline.transcripts.source import open_transcript

    count = 0
    with open_transcript(path, end) as handle:
        handle.seek(start)
        left = end - start
        while left > 0:
            chunk = handle.read(min(1 << 20, left))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count


def _line_start_after(path: str, offset: int) -> int:
    """The offset of the first line start at or after ``offset``."""
    from pipeline.transcripts.source import open_transcript

    if offset <= 0:
        return 0
    with open_transcript(path) as handle:
        handle.seek(offset - 1)
        if handle.read(1) == b"\n":
            return offset
        handle.readline()
        return handle.tell()


class _Run:
    """One checkpoint's reading (``read_for_checkpoint``)."""

    def __init__(self, path: str, *, now: datetime, trigger: str, session_id: str | None, cwd: str | None,
                 max_bytes: int, budget: float | None) -> None:
        self.path = path
        self.args = dict(max_bytes=max_bytes, action="checkpoint", kind="auto", now=now, trigger=trigger,
                         session_id=session_id, cwd=cwd, warn=False)
        self.budget = budget
        self.started = time.perf_counter()
        self.deadline = self.started + budget if budget else None
        self.notes: list[str] = []
        self.dropped: list[str] = []
        self.masks: list = []
        self.meta = None
        self.last_compaction = None
        self.warnings: list[str] = []

    def read(self, **kwargs) -> "Folded":
        from pipeline.segmented import distil_stream

        folded = distil_stream(self.path, **self.args, **kwargs)
        self.dropped.extend(folded.dropped)
        self.masks.extend(folded.masks)
        if folded.meta is not None:
            self.meta = folded.meta
        if folded.last_compaction is not None:
            self.last_compaction = folded.last_compaction
        if folded.report is not None:
            warning = folded.report.warning(self.path)
            if warning:
                self.warnings.append(warning)
        return folded

    def past(self, share: float = 1.0) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.started + share * (self.budget or 0)

    def source(self, previous: list[str] = ()) -> "SourceMask":
        from pipeline.redact.source import SourceMask, merge

        prior = [SourceMask(masked=text, existing="<REDACTED>" in text) for text in previous]
        return merge([*prior, *self.masks])


def _part(folded: "Folded", state_text: str, *, start: int = 0, start_line: int = 0, events: int = 0,
          head_time: str | None = None) -> Part:
    return Part(end=folded.end_offset or 0, lines=folded.end_line or 0, state=state_text, start=start,
                start_line=start_line, events=events, head_time=head_time, carried=_carried(folded),
                reader=dict(folded.carry))


def _new_cursor(path: str, folded: "Folded", parts: list[Part], session_id: str | None) -> Cursor | None:
    from pipeline.state.cursor import engine_version, fingerprint, transcript_key

    if not folded.offsets or folded.format is None:
        return None
    try:
        inode, device, size, head, end = fingerprint(path, parts[-1].end)
    except OSError:
        return None
    return Cursor(transcript=transcript_key(path), format=folded.format, engine=engine_version(), inode=inode,
                  device=device, size=size, head_hash=head, end_hash=end, parts=parts, session_id=session_id)


def _gap_line(path: str, first: int, last: int, nbytes: int) -> str:
    return (f"Read the middle of the transcript too (lines {first:,}-{last:,}, {nbytes / 1e6:.1f} MB): the checkpoint's "
            f"time budget ran out before it; `duck-tape recover {shlex.quote(path)}` reads it (the next checkpoint "
            "reads on into it)")


def read_for_checkpoint(path: str, *, store: str | os.PathLike[str] | None, now: datetime, trigger: str,
                        session_id: str | None, cwd: str | None, max_bytes: int,
                        budget: float | None = DEFAULT_BUDGET) -> Reading:
    """Read what this checkpoint of the transcript at ``path`` needs (module docstring) and return the session's
    state.  ``store``: where the records are (None: no record, the whole transcript, no budget); ``budget``:
    seconds for a first look (None: no limit).  Raises what ``segmented.distil_stream`` raises (``InputError``,
    ``ValidationFailed``)."""
    from pipeline.state import cursor as cursors
    from pipeline.state.fold import fold

    run = _Run(path, now=now, trigger=trigger, session_id=session_id, cwd=cwd, max_bytes=max_bytes,
               budget=budget if store is not None else None)
    record = cursors.load(store, path) if store is not None else None
    why = cursors.matches(record, path, cursors.engine_version()) if record is not None else None
    if record is not None and why is None:
        return _read_on(run, record)
    if record is not None:
        run.notes.append(f"{PREFIX} reading the whole transcript again: {why}")
    return _first_look(run)


def _first_look(run: _Run) -> Reading:
    from pipeline.state.fold import fold

    stop = None
    if run.deadline is not None:
        def stop(folded, segment) -> bool:
            return segment.end_offset is not None and run.past(HEAD_SHARE)
    head = run.read(stop=stop)
    state = head.state
    parts = [_part(head, "", events=head.events)] if head.offsets else []
    gap = None
    if head.stopped:
        size = os.path.getsize(run.path)
        spent = time.perf_counter() - run.started
        rate = (head.end_offset or 0) / spent if spent > 0 else 0.0
        left = max(0.0, (run.deadline or 0) - time.perf_counter())
        tail_bytes = max(MIN_TAIL_BYTES, int(rate * left * TAIL_MARGIN))
        start = _line_start_after(run.path, max(head.end_offset or 0, size - tail_bytes))
        carried = [*head.carried]
        if start <= (head.end_offset or 0):  # the rest fits after all: read on without a gap
            more = run.read(start_at=(head.end_offset, head.end_line), seeds=carried,
                            seed_index=head.carried_index, base=head.events, previous=state, carry=head.carry)
            state = more.state
            parts = [_part(more, "", events=head.events + more.events)]
        else:
            start_line = (head.end_line or 0) + _lines_before(run.path, head.end_offset or 0, start)
            tail = run.read(start_at=(start, start_line))
            gap = (head.end_line + 1, start_line, start - head.end_offset)
            parts.append(_part(tail, "", start=start, start_line=start_line, head_time=tail.head_time))
            head_state, tail_state = state, tail.state
            state = fold(head_state, tail_state, head_time=tail.head_time)
            source = run.source()
            parts[0].state = _masked_text(head_state, source)
            parts[1].state = _masked_text(tail_state, source)
            run.notes.append(f"{PREFIX} read lines 1-{gap[0] - 1:,} and {gap[1] + 1:,}-{tail.end_line:,} of "
                             f"{run.path} within the {run.budget:g} s budget for a first look ({BUDGET_ENV}); lines "
                             f"{gap[0]:,}-{gap[1]:,} ({gap[2] / 1e6:.1f} MB) are not read yet: the next checkpoint "
                             f"reads on into them, or run: duck-tape recover {shlex.quote(run.path)}")
            return _reading(run, state, _new_cursor(run.path, tail, parts, run.args["session_id"]), gap)
    if parts:
        parts[0].state = _masked_text(state, run.source())
    return _reading(run, state, _new_cursor(run.path, head, parts, run.args["session_id"]) if parts else None, gap)


def _read_on(run: _Run, record: Cursor) -> Reading:
    from pipeline.state.fold import fold

    head = record.parts[0]
    tail = record.parts[1] if len(record.parts) > 1 else None
    texts = [p.state for p in record.parts]
    head_state = _parsed(head.state)
    tail_state = _parsed(tail.state) if tail is not None else None
    last = tail or head
    previous = tail_state if tail_state is not None else head_state
    size = os.path.getsize(run.path)
    folded = None
    if size > last.end:
        seeds, index = _seeds(last)
        folded = run.read(start_at=(last.end, last.lines), seeds=seeds, seed_index=index,
                          base=last.events if tail is None else 0, previous=previous, carry=last.reader)
        if folded.end_offset is not None and folded.end_offset >= last.end:
            new_lines = (folded.end_line or last.lines) - last.lines
            run.notes.append(f"{PREFIX} read on from line {last.lines + 1:,}: {new_lines:,} new line(s) "
                             f"({(folded.end_offset - last.end) / 1e6:.1f} MB)")
            last.end, last.lines = folded.end_offset, folded.end_line or last.lines
            last.carried = _carried(folded) or last.carried
            last.reader = dict(folded.carry)
            if tail is None:
                last.events += folded.events
            previous = folded.state
    if tail is not None:
        tail_state = previous
    else:
        head_state = previous
    gap = None
    if tail is not None and not run.past():
        stop = None
        if run.deadline is not None:
            def stop(f, segment) -> bool:
                return run.past()
        seeds, index = _seeds(head)
        more = run.read(start_at=(head.end, head.lines), end_at=tail.start, seeds=seeds, seed_index=index,
                        base=head.events, previous=head_state, stop=stop, carry=head.reader)
        if more.end_offset is not None and more.end_offset > head.end:
            head.end, head.lines = more.end_offset, more.end_line or head.lines
            head.events += more.events
            head.carried = _carried(more) or head.carried
            head.reader = dict(more.carry)
            head_state = more.state
        if head.end >= tail.start:  # the gap is read: one part again
            head_state = fold(head_state, tail_state, head_time=tail.head_time)
            head.end, head.lines, head.carried, head.reader = tail.end, tail.lines, tail.carried, tail.reader
            record.parts = [head]
            tail = tail_state = None
            run.notes.append(f"{PREFIX} read the rest of the middle of {run.path}: the whole transcript is read")
    if tail is not None:
        gap = (head.lines + 1, tail.start_line, tail.start - head.end)
        run.notes.append(f"{PREFIX} lines {gap[0]:,}-{gap[1]:,} ({gap[2] / 1e6:.1f} MB) of {run.path} are not read "
                         f"yet: the next checkpoint reads on into them, or run: duck-tape recover "
                         f"{shlex.quote(run.path)}")
        state = fold(head_state, tail_state, head_time=tail.head_time)
    else:
        state = head_state
    source = run.source(texts)
    head.state = _masked_text(head_state, source)
    if tail is not None:
        tail.state = _masked_text(tail_state, source)
    state = replace(state, stamp=_stamp(run), created=_created(run), kind="auto", trigger=run.args["trigger"],
                    session_id=run.args["session_id"] or state.session_id)
    cursor = replace(record, parts=record.parts)
    try:
        from pipeline.state.cursor import engine_version, fingerprint

        cursor.inode, cursor.device, cursor.size, cursor.head_hash, cursor.end_hash = fingerprint(run.path, cursor.end)
        cursor.engine = engine_version()
    except OSError:
        cursor = None
    reading = _reading(run, state, cursor, gap, previous=texts)
    return reading


def _stamp(run: _Run) -> str:
    from pipeline.state.store import make_stamp

    return make_stamp(run.args["now"])


def _created(run: _Run) -> str:
    from datetime import timezone

    return run.args["now"].astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reading(run: _Run, state: "AgentState", cursor: Cursor | None, gap: tuple[int, int, int] | None,
             previous: list[str] = ()) -> Reading:
    from pipeline.stages.validate import rendered

    if gap is not None:
        line = _gap_line(run.path, *gap)
        lines = list(state.rederivation)
        at = 1 if lines and lines[0].startswith("Read the transcript: ") else 0
        state = replace(state, rederivation=[*lines[:at], line, *(ln for ln in lines[at:] if not
                                                                  ln.startswith("Read the middle of the transcript"))])
    state, text = rendered(state)
    return Reading(state=state, text=text, source=run.source(previous), notes=run.notes, dropped=run.dropped,
                   meta=run.meta, last_compaction=run.last_compaction, cursor=cursor, gap=gap,
                   warning="; ".join(run.warnings) or None)
