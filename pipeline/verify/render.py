"""The verify report as text (for people) and as a JSON-ready dict (``--json``)."""

from __future__ import annotations

from pipeline.verify.compare import Check, Verification
from pipeline.verify.entries import KINDS
from pipeline.verify.summary import WHERE

LABELS = {"approved": "approved", "rejected": "rejected", "fact": "facts", "constraint": "constraints",
          "remaining": "remaining", "task": "tasks"}


def percent(kept: int, total: int) -> str:
    """``"61 %"``, or ``"–"`` when there is nothing to count."""
    return f"{round(100 * kept / total)} %" if total else "–"


def counts_line(counts: dict[str, tuple[int, int]]) -> str:
    """``kept 5/12 (42 %): approved 1/1, rejected 0/1, facts 2/6 …`` (kinds with no entry left out)."""
    kept = sum(a for a, _ in counts.values())
    total = sum(b for _, b in counts.values())
    kinds = ", ".join(f"{LABELS[k]} {counts[k][0]}/{counts[k][1]}" for k in KINDS if counts[k][1])
    return f"kept {kept}/{total} ({percent(kept, total)})" + (f": {kinds}" if kinds else "")


def _where(c: Check) -> str:
    bits = [f"line {c.line}" if c.line else f"event {c.event}"]
    if c.timestamp:
        bits.append(c.timestamp)
    if c.trigger:
        bits.append(c.trigger)
    return ", ".join(bits)


def _check(c: Check, total: int) -> list[str]:
    head = f"Compaction {c.number} of {total} ({_where(c)})"
    if c.missing:
        return [f"{head}: no summary to compare with: {c.missing}"]
    if c.events_before == 0:
        where = "the file starts with this summary" if c.since is None else f"it follows compaction {c.number - 1} directly"
        return [f"{head}: no events before it to check ({where})"]
    window = "since the start of the file" if c.since is None else f"since compaction {c.number - 1}"
    out = [f"{head}: {c.events_before} events {window}; {counts_line(c.counts())}"]
    if c.repeats:
        out.append(f"  its summary is the same text as compaction {c.repeats}'s (re-logged by a resumed session)")
    for v in c.lost:
        e = v.entry
        where = f"line {e.line}" if e.line else (f"event {e.event}" if e.event is not None else "Remaining")
        terms = ", ".join(e.terms) if e.terms else "no distinctive term"
        out.append(f"  LOST {e.kind}: {_one(e.text)}")
        out.append(f"       looked for: {terms}; evidence ({where}): \"{e.quote}\"")
    return out


def _one(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def text(v: Verification) -> str:
    """The report: a header, one block per compaction (counts, then each lost entry with its evidence) and the
    total since the first compaction.  Ends with a newline."""
    if not v.compactions:
        where = WHERE.get(v.harness)
        why = (f"this {v.harness} transcript holds no compaction ({where} would hold the summary)" if where
               else f"a {v.harness} transcript keeps no compaction summary")
        return f"duck-tape verify: {v.path}: {why}; nothing to verify.\n"
    out = [f"duck-tape verify: {v.path} ({v.harness}, {v.compactions} compaction(s); summary: "
           f"{WHERE.get(v.harness, 'none kept')})"]
    for c in v.checks:
        out.extend(_check(c, v.compactions))
    compared = [c for c in v.compared if c.events_before]
    if len(v.checks) > 1:
        if compared:
            out.append(f"Total since the first compaction ({len(compared)} compared): {counts_line(v.totals())}")
        else:
            out.append("Total: no compaction had a summary and events before it to compare with")
    return "\n".join(out) + "\n"


def as_json(v: Verification) -> dict:
    """The report as plain data: per compaction its counts and every verdict, plus the totals."""
    def check(c: Check) -> dict:
        return {
            "number": c.number, "event": c.event, "line": c.line, "timestamp": c.timestamp, "trigger": c.trigger,
            "since_event": c.since, "events_before": c.events_before, "missing_summary": c.missing,
            "repeats": c.repeats, "summary_chars": c.summary_chars,
            "counts": {k: {"kept": a, "total": b} for k, (a, b) in c.counts().items()},
            "entries": [
                {"kind": x.entry.kind, "kept": x.kept, "text": x.entry.text, "terms": x.entry.terms,
                 "status": x.entry.status, "event": x.entry.event, "line": x.entry.line, "quote": x.entry.quote,
                 "summary_line": x.unit}
                for x in c.verdicts
            ],
        }

    return {
        "path": v.path, "harness": v.harness, "compactions": v.compactions,
        "summary_kept_in": WHERE.get(v.harness),
        "checks": [check(c) for c in v.checks],
        "totals": {k: {"kept": a, "total": b} for k, (a, b) in v.totals().items()},
    }
