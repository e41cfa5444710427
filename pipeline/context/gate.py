"""Redaction gate for CONTEXT.md writes (DESIGN.md "Redaction").

Two steps, both with the deep scan used for every file write (``pipeline.redact.scan(deep=True)``):

* ``masker`` (``--mask`` only) is handed to ``translate``, which masks the state texts before they are reduced,
  keyed and compared with the file: a masked value merged again equals what is already written (no change the
  second time), no secret reaches a key, and each changed entry knows how many secrets it had
  (``- Redacted: <Section> <N> secret(s)`` in the changelog);
* ``gate`` scans the whole text about to be written, through ``pipeline.recovery.redaction_gate``: without
  ``--mask`` any finding refuses the write (``RedactionRefused``, exit 3, with the report
  ``Redaction: detected <N> potential secret(s) in <section>.`` / ``Flagged: <type> at line <N>: <4 chars>...``);
  with ``--mask`` what is left (secrets already in the file) is masked too and counted per section.
"""

from __future__ import annotations

from pipeline.recovery import MASK, redaction_gate, section_of_line
from pipeline.redact import mask, scan


def masker(text: str) -> tuple[str, int]:
    """``text`` with every deep-scan finding replaced by ``<REDACTED>``, and the number replaced (a ``Masker``)."""
    masked, findings = mask(text, placeholder=MASK, deep=True)
    return masked, len(findings)


def gate(text: str, *, mask_secrets: bool, path: str) -> tuple[str, dict[str, int], list[str]]:
    """Scan ``text`` before it is written to ``path``.

    Returns ``(text, masked_per_section, report_lines)``: unchanged text and empty results when clean; the masked
    text, counts per ``##`` section ("Header" above the first) and the report when ``mask_secrets``.  Raises
    ``RedactionRefused`` (exit 3) carrying the report when secrets are found and ``mask_secrets`` is False.
    """
    written, report = redaction_gate(text, mask=mask_secrets, path=path)
    if not report:
        return text, {}, []
    counts: dict[str, int] = {}
    for finding in scan(text, deep=True):
        section = section_of_line(text, finding.line)
        counts[section] = counts.get(section, 0) + 1
    return written, counts, report
