"""What the last compaction's summary kept of a state file and what it lost (issue 17, item 2: restore the delta).

After a compaction the new context holds the harness's summary.  ``restore`` spends its budget on the state file's
entries that summary does not carry.  The entries are the state file's own — Decision Log lines (kind ``approved``
/ ``rejected``), Established Facts (``fact``) and Remaining items (``remaining``), each with its distinctive terms
(``terms.distinctive``) — judged against the summary with verify's matcher (``compare.judge``: every term in one
line of the summary, a REJECTED entry also a rejection word there).  Current, the Approved Workflow, Done,
Re-derivation and Suggested Skills are not judged: restore always hands them over as before.

Only the summary *of the compaction the state is restored for* counts: the last compaction event of the
transcript, and only when it holds a summary (``summary.missing_reason``) written at or after ``since`` (the
marker's time: the checkpoint runs before the harness writes its summary).  An earlier compaction's summary is not
what the new context holds; with no summary of this compaction there is no delta (None) and restore behaves as
before.  Pure; never raises for odd input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from pipeline.verify.entries import Entry
from pipeline.verify.terms import distinctive


@dataclass(frozen=True, slots=True)
class LastSummary:
    """The summary of the last compaction: its ``text``, ``timestamp`` (ISO-8601 as the transcript wrote it, None
    when it has none), 1-based ``line`` in the transcript file (0 unknown) and the ``harness`` that wrote it."""

    text: str
    timestamp: str | None = None
    line: int = 0
    harness: str = ""


@dataclass(slots=True)
class Delta:
    """The state's entries split by ``summary``: ``kept`` (the summary carries them) and ``lost``, each in state
    file order (decisions, facts, Remaining).  Each ``Entry.extra["ref"]`` is ``(section, index)`` with section
    ``decisions`` | ``facts`` | ``remaining`` and the index into that list of the state."""

    summary: LastSummary
    kept: list[Entry] = field(default_factory=list)
    lost: list[Entry] = field(default_factory=list)

    def refs(self, kept: bool) -> set[tuple[str, int]]:
        """The ``(section, index)`` refs of the kept (or lost) entries."""
        return {e.extra["ref"] for e in (self.kept if kept else self.lost)}


def state_entries(state: object) -> list[Entry]:
    """The judged entries of a ``StateSections`` or an ``AgentState`` (Position items under ``state.position``):
    decisions as ``STATUS: what - reasoning`` with the terms of *what* (the option itself), facts, Remaining."""
    pos = getattr(state, "position", None) or state
    out: list[Entry] = []
    for n, d in enumerate(getattr(state, "decisions", [])):
        text = f"{d.status}: {d.what}" + (f" - {d.reasoning}" if d.reasoning else "")
        out.append(Entry("approved" if d.status == "APPROVED" else "rejected", text,
                         distinctive(d.what) or distinctive(text), d.status, extra={"ref": ("decisions", n)}))
    for n, fact in enumerate(getattr(state, "facts", [])):
        text = fact if isinstance(fact, str) else fact.text
        out.append(Entry("fact", text, distinctive(text), extra={"ref": ("facts", n)}))
    for n, item in enumerate(getattr(pos, "remaining", [])):
        out.append(Entry("remaining", item, distinctive(item), extra={"ref": ("remaining", n)}))
    return out


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def of_this_compaction(summary: LastSummary | None, since: str | None) -> LastSummary | None:
    """``summary`` when it holds a summary (``missing_reason``) written at or after ``since`` (any time when
    ``since`` is None); None otherwise (no time on it counts as not this compaction's when ``since`` is given)."""
    from pipeline.verify.summary import missing_reason

    if summary is None or missing_reason(summary.text, summary.harness) is not None:
        return None
    if since is not None:
        floor, when = _moment(since), _moment(summary.timestamp)
        if floor is None or when is None or when < floor:
            return None
    return summary


def last_summary(transcript: object, *, since: str | None = None) -> LastSummary | None:
    """The summary of the last ``compaction`` event of a ``Transcript`` when it is this compaction's
    (``of_this_compaction``), else None."""
    events = getattr(transcript, "events", None) or []
    last = next((e for e in reversed(events) if e.kind == "compaction"), None)
    if last is None:
        return None
    harness = transcript.meta.harness  # type: ignore[attr-defined]
    return of_this_compaction(LastSummary(last.text.strip(), last.timestamp, last.line, harness), since)


def split(state: object, summary: LastSummary) -> Delta:
    """``state``'s entries (``state_entries``) judged against ``summary`` (``compare.judge``)."""
    from pipeline.verify.compare import judge

    delta = Delta(summary)
    for verdict in judge(state_entries(state), summary.text):
        (delta.kept if verdict.kept else delta.lost).append(verdict.entry)
    return delta


def last_compaction_delta(transcript: object, state: object, *, since: str | None = None) -> Delta | None:
    """Lost and kept entries of ``state`` for the last compaction of ``transcript`` (a ``Transcript``), None when
    that compaction has no summary of its own at or after ``since`` (module docstring)."""
    summary = last_summary(transcript, since=since)
    return split(state, summary) if summary is not None else None
