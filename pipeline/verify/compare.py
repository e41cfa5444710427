"""Each compaction of a transcript against the entries extracted from the events before it.

For compaction *k* (the k-th ``compaction`` event) the rules engine runs on the events before it (exactly as
``recover`` would have, had the file ended there) and its entries are judged against summary *k*:

* decisions, facts, constraints and tasks count in the compaction whose window holds their evidence event:
  the events since the previous compaction (since the start of the file for the first).  So each summary is
  held to what happened since its predecessor, and the total sums every entry once;
* Remaining is forward-looking: each compaction is held to the list as it stood right before it.

A compaction whose record holds no summary (``summary.missing_reason``) is listed with the reason and counts in
no total.  Pure apart from reading nothing: ``verify`` takes a ``Transcript``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from pipeline.transcripts.model import Transcript
from pipeline.verify import summary as summaries
from pipeline.verify.entries import KINDS, Entry, from_state, tasks

#: A fixed creation time: the state built for each prefix is never written, only compared.
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass(slots=True)
class Verdict:
    """One entry judged: ``kept`` when ``unit`` (the summary line that carries it) was found."""

    entry: Entry
    kept: bool
    unit: str | None = None


def tally(verdicts: list[Verdict]) -> dict[str, tuple[int, int]]:
    """``{kind: (kept, total)}`` for every kind of ``KINDS`` (zeros included), over ``verdicts``."""
    out = {k: [0, 0] for k in KINDS}
    for v in verdicts:
        out[v.entry.kind][1] += 1
        out[v.entry.kind][0] += v.kept
    return {k: (a, b) for k, (a, b) in out.items()}


@dataclass(slots=True)
class Check:
    """One compaction checked.

    ``number``: 1-based among the transcript's compactions; ``event``/``line``/``timestamp``/``trigger``: the
    compaction event (trigger ``auto``/``manual`` when the harness says); ``since``: index of the previous
    compaction event (None: the window starts at the file's start); ``missing``: why there is no summary to
    compare (None when there is one); ``repeats``: the number of an earlier compaction whose summary text is the
    same (a resumed session re-logging it); ``summary_chars``: its length; ``verdicts``: one per entry.
    """

    number: int
    event: int
    line: int
    timestamp: str | None
    trigger: str | None
    since: int | None
    missing: str | None = None
    repeats: int | None = None
    summary_chars: int = 0
    events_before: int = 0
    verdicts: list[Verdict] = field(default_factory=list)

    def counts(self) -> dict[str, tuple[int, int]]:
        """``{kind: (kept, total)}`` (``tally``)."""
        return tally(self.verdicts)

    @property
    def kept(self) -> int:
        return sum(v.kept for v in self.verdicts)

    @property
    def lost(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.kept]


@dataclass(slots=True)
class Verification:
    """A transcript's compactions checked: ``checks`` in file order (all of them, or the one asked for)."""

    path: str
    harness: str
    compactions: int
    checks: list[Check] = field(default_factory=list)

    @property
    def compared(self) -> list[Check]:
        """The checks that had a summary to compare with."""
        return [c for c in self.checks if c.missing is None]

    def totals(self) -> dict[str, tuple[int, int]]:
        """``{kind: (kept, total)}`` summed over ``compared`` (each windowed entry counted once)."""
        return tally([v for c in self.compared for v in c.verdicts])


def counts_record(v: Verification) -> dict:
    """The plain-data counts of ``v`` for a batch record: ``{"compactions": N, "compared": M, "missing": K,
    "counts": {kind: [kept, total]}}`` (``compared``: compactions with a summary and events before them)."""
    compared = [c for c in v.compared if c.events_before]
    return {"compactions": v.compactions, "compared": len(compared),
            "missing": sum(c.missing is not None for c in v.checks),
            "counts": {k: [a, b] for k, (a, b) in v.totals().items()}}


def judge(entries: list[Entry], text: str) -> list[Verdict]:
    """Each of ``entries`` judged against the summary ``text`` (``summary.carrier``)."""
    cut = summaries.units(text)
    out = []
    for e in entries:
        unit = summaries.carrier(e.terms, e.status, cut)
        out.append(Verdict(e, unit is not None, unit.text if unit is not None else None))
    return out


def entries_before(transcript: Transcript, index: int, since: int | None) -> list[Entry]:
    """The entries the rules engine extracts from the events before ``index`` whose source event is after
    ``since`` (every one when None), plus the Remaining list as it stood there.

    Raises ``pipeline.errors.ValidationFailed`` only when the state could not be rendered (never for content).
    """
    from pipeline.engines import build_state

    prefix = replace(transcript, events=transcript.events[:index])
    built = build_state(prefix, now=NOW, action="verify", trigger="verify, engine: rules")
    found = from_state(built.state, prefix) + tasks(prefix)
    low = -1 if since is None else since
    return [e for e in found if e.event is None or low < e.event < index]


def verify(transcript: Transcript, *, only: int | None = None) -> Verification:
    """Check the compactions of ``transcript`` (or only the ``only``-th, 1-based) against their summaries.

    Raises ``ValueError`` when ``only`` is out of range (the CLI words it as a usage error).
    """
    from pipeline.redact.source import mask_transcript

    transcript, _ = mask_transcript(transcript)
    events = [e for e in transcript.events if e.kind == "compaction"]
    result = Verification(transcript.meta.path, transcript.meta.harness, len(events))
    if only is not None and not 1 <= only <= len(events):
        raise ValueError(f"compaction {only} does not exist: the transcript has {len(events)}")
    seen: dict[str, int] = {}
    for n, ev in enumerate(events, start=1):
        since = events[n - 2].index if n > 1 else None
        text = ev.text.strip()
        missing = summaries.missing_reason(text, transcript.meta.harness)
        repeats = seen.get(text) if missing is None else None
        if missing is None:
            seen.setdefault(text, n)
        if only is not None and n != only:
            continue
        check = Check(n, ev.index, ev.line, ev.timestamp, ev.target, since, missing, repeats,
                      len(text) if missing is None else 0, ev.index - (since + 1 if since is not None else 0))
        if missing is None and check.events_before > 0:
            check.verdicts = judge(entries_before(transcript, ev.index, since), text)
        result.checks.append(check)
    return result


def verify_path(path: str, *, only: int | str | None = None, max_bytes: int,
                progress: "Callable[[int | None], None] | None" = None) -> Verification:
    """``verify`` of the transcript at ``path``, read segment by segment in bounded memory (issue 23): a segment
    ends at every compaction (``pipeline.transcripts.segments`` with ``compaction_share`` 0), so the entries of the events since the previous
    compaction are extracted a segment at a time (each as ``entries_before`` extracts them, the segment its own
    prefix), judged against the summary of the compaction that follows, and dropped.

    ``only``: the 1-based number of the compaction to check, or ``"last"`` (every compaction is read, the last
    one's check kept).  Raises ``ValueError`` when ``only`` is out of range (the CLI words it as a usage error),
    ``InputError`` for an unreadable transcript.  ``progress(bytes read or None)`` after each segment.
    """
    from pipeline.engines import build_state
    from pipeline.transcripts.segments import DEFAULT_POLICY, stream

    known: dict[str, str] = {}
    seen: set = set()
    n = 0  # compactions met so far
    since: int | None = None  # whole-transcript index of the last compaction
    base = 0
    carried: list[int] = []
    pending: list[Entry] = []  # entries of the events since the last compaction (decisions, facts, tasks)
    remaining: list[Entry] = []  # Remaining as it stands
    have: set[tuple[str, str]] = set()
    summaries_seen: dict[str, int] = {}
    checks: list[Check] = []
    meta = [None]

    def consume(segment) -> None:
        nonlocal n, since, base, carried, pending, remaining, have
        seeds = len(segment.seeds)
        seeded = list(carried[:seeds]) if len(carried) >= seeds else list(segment.seeds)
        first = base

        def number(i: int) -> int:
            return seeded[i] if i < seeds else first + i - seeds

        own = len(segment.transcript.events) - seeds
        base += own
        meta[0] = segment.transcript.meta
        built = build_state(segment.transcript, now=NOW, action="verify", trigger="verify, engine: rules",
                            known=known, seen=seen)
        known.update(built.source.values if built.source is not None else {})
        events = built.masked.events
        for i in range(seeds, len(events)):
            ev = events[i]
            if ev.kind != "compaction":
                continue
            n += 1
            g = number(i)
            text = ev.text.strip()
            missing = summaries.missing_reason(text, segment.transcript.meta.harness)
            repeats = summaries_seen.get(text) if missing is None else None
            if missing is None:
                summaries_seen.setdefault(text, n)
            if only is None or only == "last" or only == n:
                check = Check(n, g, ev.line, ev.timestamp, ev.target, since, missing, repeats,
                              len(text) if missing is None else 0, g - (since + 1 if since is not None else 0))
                if missing is None and check.events_before > 0:
                    check.verdicts = judge([*pending, *remaining], text)
                if only == "last":
                    checks[:] = [check]
                else:
                    checks.append(check)
            since = g
            pending, remaining, have = [], [], set()
        if only in (None, "last") or n + 1 == only:  # the entries of the window of the compaction asked for
            found = from_state(built.state, built.masked) + tasks(built.masked)
            low = -1 if since is None else since
            fresh = []
            for e in found:
                if e.event is not None:
                    e.event = number(e.event)
                    if not low < e.event or e.event in seeded:
                        continue
                if e.kind == "remaining":
                    fresh.append(e)
                    continue
                k = (e.kind, e.text)
                if k not in have:
                    have.add(k)
                    pending.append(e)
            remaining = fresh or remaining
        carried = [number(i) for i in _carried_of(events)]
        if progress is not None:
            progress(segment.end_offset)

    stream(path, consume, max_bytes=max_bytes, policy=replace(DEFAULT_POLICY, compaction_share=0.0))
    result = Verification(path, meta[0].harness if meta[0] is not None else "unknown", n, checks)
    if only not in (None, "last") and not 1 <= only <= n:
        raise ValueError(f"compaction {only} does not exist: the transcript has {n}")
    return result


def _carried_of(events):
    from pipeline.transcripts.segments import _carried

    return _carried(events)
