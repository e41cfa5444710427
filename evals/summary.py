"""The ``summary`` engine (issue 17 §3): what the harness itself kept, scored on the same probes as duck-tape.

The transcript's last compaction summary (``pipeline.verify.summary``: Claude Code ``isCompactSummary``, Codex
``compacted``, Copilot ``session.compaction_complete``, opencode's summary message, Gemini's
``<state_snapshot>``) is scored *as if it were the state file*.  A summary has no sections, so every section sees
all of it: the Approved Workflow and Current are the whole text (one entry each, as in a state file), every other
section has one entry per summary line (``summary.units``), and each line is a Decision Log entry, REJECTED when
it or its heading uses a rejection word, else APPROVED.  That is generous to the summary (any line may answer any
section), so where the row falls short of ``rules`` the summary really did not say it.  A transcript with no
compaction, or whose compactions hold no summary text, scores as an empty file: the harness kept nothing to read.
Secrets are masked the way the rules engine's input is (``pipeline.redact.source``).
"""

from __future__ import annotations

from datetime import datetime

from evals.engines import EngineOutput
from evals.sections import Decision, Views


def summary_text(transcript) -> str | None:
    """The text of the last compaction of ``transcript`` that holds a summary, or None."""
    from pipeline.verify.summary import missing_reason

    found = [e.text for e in transcript.events
             if e.kind == "compaction" and missing_reason(e.text, transcript.meta.harness) is None]
    return found[-1].strip() if found else None


def views(text: str) -> Views:
    """``text`` (a summary) cut into the views of every section (module docstring)."""
    from pipeline.verify.summary import units

    cut = units(text)
    lines = [u.text for u in cut]
    decisions = [Decision("REJECTED" if u.rejects else "APPROVED", u.text,
                          f"{'REJECTED' if u.rejects else 'APPROVED'}: {u.text}") for u in cut]
    whole = [text] if text.strip() else []
    entries = {
        "workflow": whole, "current": whole, "done": list(lines), "remaining": list(lines), "facts": list(lines),
        "rederivation": list(lines), "file": whole,
        "decisions": [d.line for d in decisions],
        "approved": [d.line for d in decisions if d.status == "APPROVED"],
        "rejected": [d.line for d in decisions if d.status == "REJECTED"],
    }
    return Views(entries=entries, decisions=decisions)


def run(path: str, now: datetime) -> EngineOutput:
    """Read ``path`` and return its last summary with its views (empty text and views when there is none)."""
    from pipeline.redact.source import mask_transcript
    from pipeline.transcripts import read_transcript

    transcript, _ = mask_transcript(read_transcript(path, warn=False))
    text = summary_text(transcript) or ""
    return EngineOutput(text, None, transcript, views=views(text))


def comparison(scores) -> list[str]:
    """Report lines for a run with the ``summary`` engine: how many cases held no summary, and every other
    engine's recall on just the cases that did (the like-for-like comparison), then each engine together with the
    summary (a probe either holds: what the next session has when the harness keeps its summary and the state is
    handed back, issue 21 §4).  ``[]`` without that engine."""
    by_name = {s.engine: s for s in scores}
    summary = by_name.get("summary")
    if summary is None or not summary.cases:
        return []
    held = {c.case for c in summary.cases if c.state_bytes}
    out = [f"summary: {len(summary.cases) - len(held)} of {len(summary.cases)} case(s) hold no compaction summary "
           "(scored as an empty file)."]
    if held:
        cells = []
        passed: dict[str, set[tuple[str, str]]] = {}
        total = 0
        for s in scores:
            chosen = [r for c in s.cases if c.case in held for r in c.results if not r.probe.negative]
            cells.append(f"{s.engine} {sum(r.passed for r in chosen)}/{len(chosen)}")
            passed[s.engine] = {(r.case, r.probe.id) for r in chosen if r.passed}
            total = len(chosen)
        for engine in (e for e in passed if e not in ("summary", "baseline")):
            both = passed[engine] | passed["summary"]
            cells.append(f"{engine} + summary {len(both)}/{total}")
        out.append(f"On the {len(held)} case(s) with a summary: " + ", ".join(cells) + ".")
    return out
