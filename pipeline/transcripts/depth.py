"""Nesting-depth guard for whole-document JSON transcripts (DESIGN.md "Transcript formats": input safety).

Why: ijson keeps a prefix string per open level (``item.item.item…``), so its memory grows with the *square*
of the nesting depth (measured, ijson 3.6 yajl2_c: 2 MB at 1024 levels, 40 MB at 4096, 643 MB at 16384): a
crafted ~100 KB document nested 100,000 levels deep needs tens of gigabytes and the OOM killer ends the hook.
Harness-written transcripts nest a few levels deep (8 at most in ``../shared/corpus``, 9 in ``fixtures/``).

``MAX_DEPTH`` (1024 levels) is the limit orjson applies to every JSONL line (measured with orjson 3.13:
``loads`` parses 1024 levels and raises ``JSONDecodeError: depth limit exceeded`` at 1025; the limit was
added in orjson 3.9.15 for CVE-2024-27454).  The same number means a record is accepted at the same depth
whether it is a JSONL line (orjson) or an element of a JSON document (ijson), and ijson's prefixes stay
near 2 MB.  JSONL files are not scanned: orjson guards each line itself.

``GuardedReader`` wraps the binary file ijson reads and checks every chunk before handing it out:

* cheap bound (the usual case): the number of ``[``/``{`` bytes in a chunk bounds how much deeper it can
  go, whatever is inside strings.  Each time ijson yields an item the caller calls ``settled(depth)``: the
  item ended inside the last chunk read (ijson reads a chunk only once every item completed so far has been
  yielded), so the nesting is now at most ``depth`` plus that chunk's openers.  One ``bytes.translate``
  per chunk: 25–35 ms per 60 MB document (measured; 0 for JSONL).
* exact scan: when the bound would pass the limit (an item with more than ~1000 brackets in its strings, a
  crafted document), ``DepthScanner`` catches up from where it last stopped (reading those bytes again) and
  scans the chunk, tracking the real nesting outside strings; its depth becomes the new bound.  About
  1–2.5 ms per MB scanned (measured), each byte at most once.
"""

from __future__ import annotations

import re
from itertools import accumulate

from pipeline.errors import InputError

#: Deepest accepted nesting of arrays/objects, in levels (``[]`` is 1).  Source: orjson's ``loads`` limit.
MAX_DEPTH = 1024

#: Bytes per read that callers pass to ijson (``buf_size``; ijson's default is 64 KiB): small enough that the
#: cheap bound stays well below the limit on real transcripts (at most 551 on a 60 MB document built from the
#: corpus's Claude Code session, 835 with 64 KiB reads), large enough to cost ijson nothing measurable.
CHUNK_BYTES = 32 * 1024

_RESCAN_BYTES = 1024 * 1024

# DepthScanner's reduction (JSON strings can only hold the escapes \" \\ \/ \b \f \n \r \t \uXXXX):
# 1. keep quotes (as "a"), brackets (as "b" "f" "r" "t"), backslashes and the letters an escape can use (all
#    as "n"); drop every other byte.  Every backslash keeps the byte it escapes, so the pairing below is the
#    pairing of the original, and each backslash is followed by a letter Python's escapes know.
# 2. drop every escape pair, left to right (``_ESCAPE_PAIR``, one ``re.sub``): a backslash and the byte it
#    escapes.  The letters "a b f r t" left over are real quotes and brackets.
# 3. keep those (as '"' and brackets); drop adjacent quote pairs, then the strings left (those holding
#    brackets) by keeping every other piece between quotes.
_KEEP = {ord("\\"): ord("\\"), **{b: ord("n") for b in b"/bfnrtu"}, **dict(zip(b'"[]{}', b"abfrt"))}
_REDUCE = bytes(_KEEP.get(b, b) for b in range(256))
_REDUCE_DROP = bytes(b for b in range(256) if b not in _KEEP)
_ESCAPE_PAIR = re.compile(rb"\\.", re.DOTALL)
_RESTORE = bytes.maketrans(b"abfrt", b'"[]{}')
_NOT_RESTORED = bytes(b for b in range(256) if b not in b"abfrt")
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 / -1 as signed bytes
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_OPENER = bytes(b for b in range(256) if b not in b"[{")


class JsonTooDeep(InputError):
    """A JSON document nested deeper than ``MAX_DEPTH`` levels (exit 2, like any unreadable input)."""


class DepthScanner:
    """Exact nesting depth outside strings of a JSON byte stream, fed chunk by chunk in file order.

    ``feed(chunk)`` returns False once the nesting has gone past ``limit`` levels anywhere in the bytes fed
    so far (True while it has not); ``depth`` is the nesting after them, ``offset`` their count.  Exact for
    valid JSON.  On invalid JSON (a raw control byte or an unknown escape in a string) the count after the
    fault may be off, but a parser stops at the fault, so it never reads that far.
    """

    __slots__ = ("limit", "depth", "in_string", "carry", "offset", "exceeded")

    def __init__(self, limit: int = MAX_DEPTH) -> None:
        self.limit = limit
        self.depth = 0
        self.in_string = False  # the bytes fed so far end inside a string
        self.carry = b""  # a trailing backslash whose escaped byte starts the next chunk
        self.offset = 0
        self.exceeded = False

    def feed(self, chunk: bytes) -> bool:
        """Scan ``chunk`` (the bytes after those already fed); False when the limit has been passed."""
        self.offset += len(chunk)
        if self.exceeded:
            return False
        kept = self.carry + chunk.translate(_REDUCE, _REDUCE_DROP)
        run = len(kept) - len(kept.rstrip(b"\\"))
        self.carry = b"\\" if run % 2 else b""
        if run % 2:
            kept = kept[:-1]
        kept = _ESCAPE_PAIR.sub(b"", kept).translate(_RESTORE, _NOT_RESTORED)
        if self.in_string:
            end = kept.find(b'"')
            if end < 0:
                return True
            kept = kept[end + 1:]
            self.in_string = False
        # Dropping two adjacent quotes changes no bracket's inside/outside parity.  Then the pieces between
        # quotes alternate outside, inside, outside…; an even count of pieces ends inside a string.
        pieces = kept.replace(b'""', b"").split(b'"')
        self.in_string = len(pieces) % 2 == 0
        return self._count(b"".join(pieces[0::2]).translate(_SIGNS, _NOT_BRACKET))

    def _count(self, signs: bytes) -> bool:
        opened = signs.count(1)
        if self.depth + opened > self.limit:  # only then can some prefix of the chunk pass the limit
            if max(accumulate(memoryview(signs).cast("b"), initial=self.depth)) > self.limit:
                self.exceeded = True
                return False
        self.depth += 2 * opened - len(signs)
        return True


class GuardedReader:
    """Binary file wrapper for ijson: ``read`` raises ``JsonTooDeep`` (naming ``path``) instead of handing
    out a chunk in which the nesting could pass ``limit`` levels (module docstring: cheap bound, exact scan).

    Call ``settled(depth)`` each time ijson yields a value that ends at nesting ``depth`` (1 for the
    elements of a top-level array or the values of a top-level object, 2 for ``messages.item``).
    Only ``read`` is provided: it is all ijson uses of a file object.
    """

    def __init__(self, fh, path: str, limit: int = MAX_DEPTH) -> None:
        self._fh = fh
        self._path = path
        self._limit = limit
        self._bound = 0  # upper bound of the nesting after the bytes handed out
        self._last_openers = 0  # "[" and "{" bytes in the last chunk handed out
        self._offset = 0  # bytes handed out
        self._exact = DepthScanner(limit)  # exact state after the first ``_exact.offset`` bytes
        self.exact_bytes = 0  # bytes that went through the exact scan (for tests and measurements)

    def read(self, size: int = -1) -> bytes:
        """The next ``size`` bytes (all when negative).  Raises ``JsonTooDeep`` or the file's ``OSError``."""
        chunk = self._fh.read(size)
        openers = len(chunk.translate(None, _NOT_OPENER))
        if self._bound + openers <= self._limit:
            self._bound += openers
        else:  # the cheap bound is not enough: scan exactly up to the end of this chunk
            self._catch_up()
            self.exact_bytes += len(chunk)
            if not self._exact.feed(chunk):
                raise too_deep(self._path, self._limit, self._exact.offset)
            self._bound = self._exact.depth
        self._last_openers = openers
        self._offset += len(chunk)
        return chunk

    def settled(self, depth: int) -> None:
        """ijson just yielded a value that ended at nesting ``depth``: tighten the bound."""
        self._bound = min(self._bound, depth + self._last_openers)

    def _catch_up(self) -> None:
        """Feed the exact scanner the bytes handed out since it last ran (read again from the file), so each
        byte is scanned exactly at most once per read."""
        left = self._offset - self._exact.offset
        if left <= 0:
            return
        resume = self._fh.tell()
        self._fh.seek(self._exact.offset)
        while left > 0:
            block = self._fh.read(min(left, _RESCAN_BYTES))
            if not block:
                break
            self._exact.feed(block)
            self.exact_bytes += len(block)
            left -= len(block)
        self._fh.seek(resume)


def too_deep(path: str, limit: int, offset: int) -> JsonTooDeep:
    """The reader error for a refused document: the file, the limit, where, and what a transcript looks like."""
    return JsonTooDeep(
        f"JSON nested deeper than {limit} levels within its first {offset} bytes; refusing it "
        "(a transcript, e.g. a Claude Code JSON array or an opencode export, nests a few levels deep)",
        path=path,
    )
