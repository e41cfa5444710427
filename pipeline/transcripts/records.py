"""Streaming record access for transcript files (DESIGN.md "Transcript formats": stream, never load whole).

JSONL files are read line by line in binary; JSON documents (a Claude Code array dump, opencode exports)
are streamed element by element with ijson.  Nothing here is fatal: a bad record is skipped and its
1-based line (or element) number recorded in the ``ReadReport``.  The one exception is a JSON document
nested deeper than ``depth.MAX_DEPTH`` levels: it is refused whole (``JsonTooDeep``, an ``InputError``)
before ijson reaches the deep part, because ijson's memory grows with the square of the depth.  A JSONL
line that deep is refused by orjson itself and skipped like any bad line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import orjson

from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.source import open_transcript

#: Read buffer in bytes.  Transcript lines run to several kB (tool results), and with the default
#: 8 kB buffer most lines straddle a refill: 64 kB reads a 5 MB JSONL file's lines in ~1.3 ms, not ~3.
READ_BUFFER = 64 * 1024


#: The longest JSONL line parsed (issue 22 item 6: memory bounded whatever one line holds).  Parsing a line holds
#: its bytes and the parsed object at once (about 3x the line at the peak: a 300 MB line took 0.94 GB), so a line
#: over the cap is read through in 1 MiB pieces, never held whole, and skipped: its number and size go to
#: ``ReadReport.long_lines`` and the read's warning.  Real lines are far below it (a pasted screenshot is a few MB).
#: ``DUCK_TAPE_LINE_CAP`` (bytes) sets another.
LINE_CAP = 16 * 1024 * 1024
LINE_CAP_ENV = "DUCK_TAPE_LINE_CAP"
_DRAIN = 1 << 20


def line_cap() -> int:
    """``LINE_CAP`` or ``$DUCK_TAPE_LINE_CAP`` (bytes; a value that is not a positive whole number counts as unset)."""
    raw = os.environ.get(LINE_CAP_ENV, "").strip().replace("_", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else LINE_CAP


def _drain_line(fh, size: int) -> int:
    """Read ``fh`` to the end of the current line in ``_DRAIN`` pieces (nothing kept); ``size`` plus the bytes read."""
    while True:
        piece = fh.readline(_DRAIN)
        size += len(piece)
        if not piece or piece.endswith(b"\n"):
            return size


def iter_jsonl(path: str, report: ReadReport, limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for each JSON object line of a JSONL file (line numbers 1-based).

    Blank lines are ignored.  A line that is not valid JSON (a torn last line, garbage) or not an object
    is skipped and its number appended to ``report.skipped_lines``.  A line orjson refuses but a tolerant
    parse reads (``repair_line``: invalid UTF-8 bytes replaced by U+FFFD, a byte order mark in front, a number
    beyond the range of a double) is kept; its number goes to ``report.repaired_lines``.
    Reads in binary, so a single multi-megabyte line costs only that line's memory, and a line over ``line_cap()``
    bytes costs nothing (it is read through and named in ``report.long_lines``); every line up to ``limit`` bytes
    (the size seen when the read started, ``source.open_transcript``), after a leading BOM.

    Positions (issue 23, incremental reads and segments): ``report.start_at`` = ``(byte offset, lines before it)``
    starts the read at that line start (offsets count after a BOM, as ``open_transcript`` does) and numbers lines on
    from there; ``report.end_at`` (a line start) ends it before the line that starts there.  While a record is
    yielded ``report.line_start`` is the byte offset of its line; when the file is read to its end
    ``report.covered`` is the offset after the last line that is complete (a last line without its newline that does
    not parse is being written: not covered) and ``report.lines`` the lines up to there.
    """
    start, number = report.start_at or (0, 0)
    stop = report.end_at
    last, parsed = b"\n", True  # the last line read, and whether it made a record (a torn last line does not)
    with open_transcript(path, limit, buffer_size=READ_BUFFER) as fh:
        if start:
            fh.seek(start)
        pos = start
        readline = fh.readline
        cap = line_cap() + 1
        while stop is None or pos < stop:  # ``for raw in fh`` would hold a line of any length whole
            raw = readline(cap)
            if not raw:
                break
            number += 1
            report.line_start = pos
            if len(raw) == cap and raw[-1] != 10:  # longer than the cap: read through, named, never held
                del raw
                size = _drain_line(fh, cap)
                report.long_lines.append((number, size))
                pos += size
                last, parsed = b"\n", True
                continue
            pos += len(raw)
            record = _record(number, raw, report)
            last, parsed = raw, record is not None
            if record is not None:
                yield number, record
        if last.endswith(b"\n") or parsed or last.isspace():
            report.covered, report.lines = pos, number
        else:  # a torn last line: read again next time
            report.covered, report.lines = pos - len(last), number - 1


def _record(number: int, raw: bytes, report: ReadReport) -> dict | None:
    """The JSON object of line ``number`` (``iter_jsonl``'s rules), or None for a blank, bad or non-object line
    (counted in ``report``)."""
    if raw.isspace():  # a line is never b"": at least its b"\n", or the last line's bytes
        return None
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        record = repair_line(raw)
        if record is None:
            report.skipped_lines.append(number)
            return None
        report.repaired_lines.append(number)
    if not isinstance(record, dict):
        report.skipped_lines.append(number)
        return None
    report.records += 1
    return record


def parse_line(raw: bytes) -> object:
    """The JSON value of one JSONL line, or None when it is not JSON: orjson first, ``repair_line`` when it
    refuses the line."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return repair_line(raw)


#: Longest run of digits read as an ``int`` (CPython refuses longer ones: ``sys.get_int_max_str_digits``).
_INT_DIGITS = 4300


def _number(text: str) -> int | float:
    if len(text) <= _INT_DIGITS:
        return int(text)
    return float(text)  # +-inf: the value cannot be kept, its record can


def repair_line(raw: bytes) -> dict | None:
    """Parse a line orjson refused, when its only faults are ones a reader can live with; else None.

    Tolerated: invalid UTF-8 (decoded with U+FFFD replacements), a UTF-8 byte order mark in front (a file
    concatenated from two), and numbers out of the range of a double (``1e400``, a 400-digit integer: orjson
    refuses them, ``json`` reads them as ``inf`` or a Python ``int``).  Only called after orjson failed, so a
    well-formed line never pays for it.  Nesting beyond ``depth.MAX_DEPTH`` stays refused.
    """
    text = raw.decode("utf-8", "replace").lstrip().lstrip("\ufeff")
    if not text.startswith("{"):
        return None
    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if "depth" in exc.msg:
            return None  # orjson's nesting limit (also the JSON documents' limit): refused, not repaired
        import json

        try:
            record = json.loads(text, parse_int=_number)
        except (ValueError, RecursionError):
            return None
    return record if isinstance(record, dict) else None


def iter_json_items(path: str, prefix: str, report: ReadReport, limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(element_number, object)`` for each object under ``prefix`` of a JSON document (1-based).

    ``prefix`` is an ijson prefix: ``"item"`` for a top-level array, ``"messages.item"`` for the
    ``messages`` array of an object.  A document cut short (truncated file) or with invalid bytes stops the
    stream; the element number where it stopped goes to ``report.skipped_lines``.  Non-object elements are
    skipped and counted the same way.  Raises ``JsonTooDeep`` (an ``InputError`` naming the file) for a
    document nested deeper than ``depth.MAX_DEPTH`` levels, before ijson reads the deep part.  Reads at most
    ``limit`` bytes, after a leading BOM (``source.open_transcript``).
    """
    import ijson  # deferred: only JSON-document formats need it

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    number = 0
    settle = prefix.count(".") + 1  # nesting at which each yielded element ends
    with open_transcript(path, limit) as fh:
        guarded = GuardedReader(fh, path)
        try:
            for number, item in enumerate(ijson.items(guarded, prefix, use_float=True, buf_size=CHUNK_BYTES), 1):
                guarded.settled(settle)
                if not isinstance(item, dict):
                    report.skipped_lines.append(number)
                    continue
                report.records += 1
                yield number, item
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            report.skipped_lines.append(number + 1)


_SCALAR_EVENTS = frozenset({"string", "number", "boolean"})


def iter_object_items(path: str, prefix: str, keys: tuple[str, ...], found: dict, report: ReadReport,
                      limit: int | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(element_number, object)`` for each object under ``prefix`` (``"timeline.item"``) of a JSON
    object document, as ``iter_json_items`` does, and put into ``found`` the top-level scalar values (string,
    number, boolean) of ``keys`` wherever they stand: before, between or after the items.

    One pass over ijson's events, so a key written after a large array (Copilot's ``selectedModel`` comes after
    ``timeline``) costs no second read; only the items under ``prefix`` are built, other arrays are passed over
    unbuilt.  Damage (a truncated file, invalid bytes) stops the stream: the element number where it stopped
    goes to ``report.skipped_lines``, non-object elements are skipped and counted the same way.  Raises
    ``JsonTooDeep`` for a document nested deeper than ``depth.MAX_DEPTH`` levels.  Reads at most ``limit``
    bytes, after a leading BOM.
    """
    import ijson
    from ijson.common import ObjectBuilder

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    number = 0
    builder = None
    with open_transcript(path, limit) as fh:
        guarded = GuardedReader(fh, path)
        try:
            for at, event, value in ijson.parse(guarded, use_float=True, buf_size=CHUNK_BYTES):
                if builder is not None:
                    builder.event(event, value)
                    if at == prefix and (event == "end_map" or event == "end_array"):
                        number += 1
                        guarded.settled(prefix.count(".") + 1)
                        item, builder = builder.value, None
                        if isinstance(item, dict):
                            report.records += 1
                            yield number, item
                        else:
                            report.skipped_lines.append(number)
                    continue
                if at == prefix:
                    if event == "start_map" or event == "start_array":
                        builder = ObjectBuilder()
                        builder.event(event, value)
                    else:
                        number += 1  # a scalar element
                        report.skipped_lines.append(number)
                elif event in _SCALAR_EVENTS and at in keys:
                    found[at] = value
                elif (event == "end_map" or event == "end_array") and at.count(".") <= 1:
                    guarded.settled(at.count(".") + 1 if at else 0)  # the end of an element of another array
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            report.skipped_lines.append(number + 1)


def read_json_object_head(path: str, keys: tuple[str, ...], limit: int | None = None) -> dict:
    """Return the scalar/object values of the given top-level ``keys`` of a JSON object document.

    Streams with ijson and stops before large arrays are built, so reading ``info`` of a huge
    ``opencode export`` costs only that object.  Missing keys are absent from the result; a broken document
    gives what was read before the break.  Raises ``JsonTooDeep`` for a document nested deeper than
    ``depth.MAX_DEPTH`` levels in the part read.  Reads at most ``limit`` bytes, after a leading BOM.
    """
    import ijson

    from pipeline.transcripts.depth import CHUNK_BYTES, GuardedReader

    found: dict = {}
    with open_transcript(path, limit) as fh:
        guarded = GuardedReader(fh, path)
        try:
            for key, value in ijson.kvitems(guarded, "", use_float=True, buf_size=CHUNK_BYTES):
                guarded.settled(1)
                if key in keys:
                    found[key] = value
                    if len(found) == len(keys):
                        break
        except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
            pass
    return found
