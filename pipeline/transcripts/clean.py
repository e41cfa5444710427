"""What the read stage cleans in every event, whatever the harness (issue 22, items 4 and 5).

* **Invisible characters** (``strip_invisible``): Unicode TAG characters (U+E0000-U+E007F, "ASCII smuggling": a
  whole sentence no one sees on screen), zero-width characters (U+200B-U+200D, U+2060, U+FEFF, U+180E) and the
  bidi controls (U+200E/U+200F, U+061C, U+202A-U+202E, U+2066-U+2069) are removed from event texts, tool-call
  targets and todo items as they are read.  A state file, a handoff or a raw-material listing then shows what a
  person saw on screen, and no stage (rules, llm, extract-raw) is handed an instruction that was hidden from the
  user.  How many were removed goes to ``ReadReport.invisible`` (per event: ``Event.hidden``), so a screen that
  wants to know that a marker had been spelled with hidden characters still can.
* **Timestamps** (``clean_timestamp``): a record's time that is not a real ISO-8601 moment (month 13, hour 25,
  year 0000, "yesterday") is dropped from its event (``Event.timestamp`` None) and its line counted in
  ``ReadReport.bad_timestamps``: one bad field never costs the session its state file.

Hook path: standard library only; ASCII text (most of a transcript) costs one ``str.isascii`` call.
"""

from __future__ import annotations

from datetime import datetime

from pipeline.isotime import ISO_RE

#: Code points removed from event text (module docstring).  Kept out on purpose: the zero-width joiner's
#: neighbours (variation selectors, U+FE0F), which emoji need, and ordinary spaces.
INVISIBLE: tuple[int, ...] = (
    0x061C, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    *range(0xE0000, 0xE0080),
)
_TABLE = dict.fromkeys(INVISIBLE)
_SET = frozenset(chr(cp) for cp in INVISIBLE)


def strip_invisible(text: str) -> tuple[str, int]:
    """``(text without the INVISIBLE characters, how many were removed)``; ``text`` itself (same object) and 0 when
    it holds none.  Never adds or removes a newline."""
    if text.isascii() or _SET.isdisjoint(text):
        return text, 0
    cleaned = text.translate(_TABLE)
    return cleaned, len(text) - len(cleaned)


def clean_timestamp(value: str | None) -> str | None:
    """``value`` when it is a real ISO-8601 date-time (``2026-09-01T10:00:00.000Z``, an offset, a date alone);
    a parseable variant that is not in the written form (``2026-09-01 10:00:00``) rewritten with ``T``; None when
    it names no real moment (month 13, hour 25, year 0000, text).  ``None`` stays None."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except (ValueError, TypeError):
        return None
    if ISO_RE.fullmatch(value):
        return value
    text = moment.isoformat()
    return text if ISO_RE.fullmatch(text) else None
