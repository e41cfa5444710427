"""The redaction gate of every state-file and CONTEXT.md write (DESIGN.md "Redaction").

Here rather than in ``pipeline.recovery`` (which re-exports it) so that the pre-compact hook imports it without the
config module (tomllib).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.errors import RedactionRefused

if TYPE_CHECKING:
    from pipeline.redact.source import SourceMask

MASK = "<REDACTED>"


def section_of_line(text: str, line: int) -> str:
    """Name of the ``## `` section that holds 1-based ``line`` of a markdown file ("Header" above the first)."""
    section = "Header"
    for number, row in enumerate(text.splitlines(), 1):
        if number > line:
            break
        if row.startswith("## "):
            section = row[3:].strip()
    return section


def redaction_gate(text: str, *, mask: bool, path: str | None = None, source: "SourceMask | None" = None
                   ) -> tuple[str, list[str]]:
    """Scan ``text`` about to be written; DESIGN.md "Redaction".

    Returns ``(text, [])`` when clean.  With secrets: raises RedactionRefused (exit 3) carrying the report
    (``Redaction: detected <N> potential secret(s) in <section>.`` / ``Flagged: <type> at line <N>: <4 chars>...``)
    unless ``mask`` is set, in which case it returns the text with ``<REDACTED>`` in place and the report.

    ``source``: the masking of the transcript ``text`` was built from (``BuiltState.source``, issue 11: the
    source is masked first).  Its placeholders in ``text`` count as findings (typed and previewed from the
    source), and its values are masked wherever they occur in ``text``.
    """
    from pipeline.redact import apply, report_lines, scan

    findings = scan(text, deep=True, known=source.values if source else None)  # one deep scan: report and mask
    if source is not None:
        placed = source.locate(text)
        if placed:
            taken = {(f.start, f.end) for f in findings}
            findings = sorted([*findings, *(f for f in placed if (f.start, f.end) not in taken)],
                              key=lambda f: f.start)
    if not findings:
        return text, []
    by_section: dict[str, list] = {}
    for finding in findings:
        by_section.setdefault(section_of_line(text, finding.line), []).append(finding)
    report: list[str] = []
    for section, items in by_section.items():
        report.extend(report_lines(items, section))
    masked = apply(text, findings, MASK)
    if not mask:
        raise RedactionRefused(
            f"refusing to write: {len(findings)} potential secret(s) found; pass --mask to write {MASK} in their place",
            report,
            path=path,
        )
    return masked, report
