"""The last compaction summary of a transcript file, read without reading the transcript (issue 17, item 2).

``restore`` runs as a hook with a 10 s timeout on transcripts of tens of MB; distilling one again only to learn
what its last summary says would cost seconds.  ``last_summary_in_file`` maps the file and searches it backwards
for the record types that hold a compaction (FORMATS.md; the same records the readers turn into ``compaction``
events), parses only the one line it lands on and takes its summary as the reader does:

* Claude Code: the ``isCompactSummary`` user line (``message.content``); a ``compact_boundary`` after it means the
  file ended before the harness wrote the newest summary (no summary);
* Codex: ``compacted`` (``payload.message``/``summary``, else the summary inside ``replacement_history``);
* Copilot CLI: ``session.compaction_complete`` (``data.summaryContent``); a later ``session.truncation`` keeps none.

A summary the readers call useless (``transcripts.summaries.useless_summary``) is no summary.  Other harnesses
(opencode's JSON export or database, Gemini CLI's chat files) and any unreadable file give None: the caller then
restores as it did before.  Never raises.
"""

from __future__ import annotations

import mmap
import os

from pipeline.verify.delta import LastSummary

MAX_TRIES = 64
"""Needle hits examined per record type before giving up (a hit may sit inside a tool output, not a record)."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""A record line longer than this is not parsed."""
WINDOW_BYTES = 1024 * 1024
"""The file is searched backwards a window at a time (doubling), so a summary near the end costs one small search."""

#: (needle, harness) for the records that end a compaction; ``boundary`` ones mean "a compaction, no summary yet".
_NEEDLES: tuple[tuple[bytes, str], ...] = (
    (b'"isCompactSummary"', "claude-code"),
    (b'"compact_boundary"', "claude-code/boundary"),
    (b'"compacted"', "codex"),
    (b'"session.compaction_complete"', "copilot"),
    (b'"session.truncation"', "copilot/boundary"),
)


def _line_at(data: mmap.mmap, pos: int) -> tuple[int, bytes]:
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    end = len(data) if end < 0 else end
    return start, data[start:end] if end - start <= MAX_LINE_BYTES else b""


def _summary_of(rec: dict, kind: str) -> str | None:
    """The summary text of a record of ``kind``; "" for a compaction record without one; None when ``rec`` is not
    such a record (the needle sat in some other text)."""
    from pipeline.transcripts.common import text_of

    rtype = rec.get("type")
    if kind == "claude-code":
        message = rec.get("message")
        if rec.get("isCompactSummary") is not True or not isinstance(message, dict):
            return None
        return text_of(message.get("content")).strip()
    if kind == "claude-code/boundary":
        return "" if rtype == "system" and rec.get("subtype") == "compact_boundary" else None
    if kind == "codex":
        payload = rec.get("payload")
        if rtype != "compacted" or not isinstance(payload, dict):
            return None
        text = payload.get("message") or payload.get("summary")
        if not isinstance(text, str) or not text.strip():
            from pipeline.transcripts.codex import _history_summary

            text = _history_summary(payload.get("replacement_history")) or ""
        return text.strip()
    data = rec.get("data")
    if kind == "copilot":
        if rtype != "session.compaction_complete":
            return None
        summary = data.get("summaryContent") if isinstance(data, dict) else None
        return summary.strip() if isinstance(summary, str) else ""
    return "" if rtype == "session.truncation" else None


def _last_record(data: mmap.mmap, needle: bytes, kind: str, low: int, high: int) -> tuple[int, dict, str] | None:
    """``(offset, record, summary)`` of the last line holding a ``kind`` record whose needle starts in
    ``low..high``, or None."""
    import orjson

    end = high
    for _ in range(MAX_TRIES):
        pos = data.rfind(needle, low, end)
        if pos < 0:
            return None
        start, line = _line_at(data, pos)
        end = start
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            text = _summary_of(rec, kind)
            if text is not None:
                return start, rec, text
        if start == 0:
            return None
    return None


def _search(data: mmap.mmap) -> tuple[tuple[int, dict, str], str] | None:
    """The last compaction record of any kind in ``data``, searching backwards a window at a time."""
    high, window = len(data), WINDOW_BYTES
    while high > 0:
        low = max(0, high - window)
        overlap = max(len(n) for n, _ in _NEEDLES)
        found = [(hit, kind) for needle, kind in _NEEDLES
                 if (hit := _last_record(data, needle, kind, low, min(len(data), high + overlap))) is not None]
        if found:
            return max(found, key=lambda f: f[0][0])
        high, window = low, window * 2
    return None


def last_summary_in_file(path: str | None) -> LastSummary | None:
    """The last compaction summary of the JSONL transcript at ``path`` (module docstring), None when the last
    compaction record holds none, the file has no compaction, or it cannot be read."""
    if not path:
        return None
    try:
        with open(path, "rb") as handle:
            if not os.fstat(handle.fileno()).st_size:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                found = _search(data)
                if found is None:
                    return None
                (_, rec, text), kind = found
    except (OSError, ValueError):
        return None
    if kind.endswith("/boundary") or not text:
        return None
    from pipeline.transcripts.summaries import useless_summary

    if useless_summary(text):
        return None
    stamp = rec.get("timestamp")
    return LastSummary(text, stamp if isinstance(stamp, str) else None, harness=kind)
