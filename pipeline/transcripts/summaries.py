"""Compaction summaries that say nothing (issue 14, item 6): detected so that no stage treats them as content.

A harness's compaction summary is normally the model's paraphrase of the history.  Public bug reports show three
kinds that carry nothing, each of which a reader would otherwise hand on as a compaction event with text:

* **empty** ones: a Codex ``/compact`` that returns at once with ``message: ""`` (remote compaction keeps only an
  encrypted item and a few recent user messages in ``replacement_history``, which may well not hold the task),
  a Copilot ``session.compaction_complete`` without ``summaryContent``, an opencode "Compaction produced no
  summary";
* **bare templates**: the section headings of a summary prompt with every section a placeholder — opencode's
  ``## Goal`` / ``- (none)`` … ``## Next Steps`` / ``- (none)`` — or a preface with nothing after it (a summary
  prefix ending in ``summary:`` and no summary);
* text of our own reader that only describes the compaction (``compacted (no summary text; …)``).

``useless_summary`` says which (or None for a real summary).  Readers keep the compaction event (its position
still matters) with empty text and count the case in ``ReadReport.ignored["useless_compaction_summary"]``; the
state then comes from the raw events around it.
"""

from __future__ import annotations

import re

#: A line that is only a placeholder: "(none)", "none", "n/a", "-", "tbd", "[...]", "nothing yet", "no summary".
_PLACEHOLDER = re.compile(
    r"[-*•\s]*(?:\(?\s*(?:none|n/?a|nil|null|tbd|todo|empty|nothing(?:\s+yet)?|not\s+applicable|no\s+summary|"
    r"unknown)\s*\)?|\[[^\]]*\]|[-–—.…]+)?\s*[.;:]?\s*",
    re.IGNORECASE,
)
#: A heading or label line of a summary template: "## Goal", "### Completed", "**Next Steps:**", "Goal:", "Goal -".
_HEADING = re.compile(r"\s*(?:#{1,6}\s+.*|\*\*[^*]{1,60}\*\*\s*:?|[A-Z][\w &/'-]{0,40}\s*[:\-–—])\s*")
#: "Goal - (none)": a label and a placeholder on one line.
_LABELLED_PLACEHOLDER = re.compile(r"\s*(?:#{1,6}\s+)?[\w &/'*-]{1,40}?\s*[:\-–—]\s*(?P<rest>.*)")
#: A preface that announces a summary and ends before it (Codex-style "…here is the summary…:" with nothing after).
_PREFACE_ONLY = re.compile(r"(?is).{0,600}\b(?:summary|summarized)\b[^\n]{0,200}:\s*")
_OWN_NOTE = re.compile(r"compacted \(no summary text; \d+ history items kept\)")


def useless_summary(text: str | None) -> str | None:
    """Why the compaction summary ``text`` carries no content — ``"empty"``, ``"template"`` (headings and
    placeholders only), ``"preface"`` (an announcement of a summary with none after it) — or None when it says
    something.  Pure; never raises."""
    if text is None or not text.strip():
        return "empty"
    body = text.strip()
    if _OWN_NOTE.fullmatch(body):
        return "empty"
    lines = [line for line in body.splitlines() if line.strip()]
    if all(_empty_line(line) for line in lines):
        return "template"
    if len(body) <= 800 and _PREFACE_ONLY.fullmatch(body) and len(lines) <= 3:
        return "preface"
    return None


def _empty_line(line: str) -> bool:
    """True when the line is a heading, a placeholder, or a label followed by a placeholder."""
    if _PLACEHOLDER.fullmatch(line) or _HEADING.fullmatch(line):
        return True
    labelled = _LABELLED_PLACEHOLDER.fullmatch(line)
    return bool(labelled and _PLACEHOLDER.fullmatch(labelled["rest"]))
