"""Fitting text to a byte budget: the cost of a piece of output, shortening, and picking a part's items.

Costs are in **bytes of the final output**: UTF-8 bytes for plain text; for the Claude Code hook JSON, the bytes
the text takes inside a JSON string as ``orjson`` writes it (``"`` ``\\`` and control characters escaped,
everything else raw UTF-8).  JSON string escaping works character by character, so the cost of a text is the
sum of the costs of its pieces: a handoff's size is the envelope plus the sum of its lines, which is what lets
the selection below respect a budget to the byte without rendering the whole output for every choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

ELLIPSIS = "…"
MIN_KEEP_CHARS = 12
"""A shortened item keeps at least this many characters of its text, or it is left out instead."""


class Sizer:
    """Output cost of text, in bytes: ``Sizer(json=False)`` UTF-8 bytes; ``Sizer(json=True)`` bytes inside a JSON string."""

    __slots__ = ("json",)

    def __init__(self, *, json: bool) -> None:
        self.json = json

    def cost(self, text: str) -> int:
        """Bytes ``text`` takes in the output (no quotes counted for JSON)."""
        if self.json:
            return len(orjson.dumps(text)) - 2
        return len(text.encode("utf-8"))

    def line(self, text: str) -> int:
        """Bytes of ``text`` followed by a line break."""
        return self.cost(text) + (2 if self.json else 1)


def shorten(text: str, limit: int, sizer: Sizer) -> str | None:
    """``text`` cut so that it ends with ``…`` and costs at most ``limit`` bytes; ``text`` itself when it fits.

    Cuts at a character boundary, at the last space when one is within the last quarter of what is kept.
    None when fewer than ``MIN_KEEP_CHARS`` characters would be left (the item is better left out).
    """
    if sizer.cost(text) <= limit:
        return text
    room = limit - sizer.cost(ELLIPSIS)
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits in ``room``
        mid = (low + high + 1) // 2
        if sizer.cost(text[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    keep = text[:low].rstrip()
    space = keep.rfind(" ")
    if space >= max(MIN_KEEP_CHARS, len(keep) * 3 // 4):
        keep = keep[:space].rstrip()
    if len(keep) < MIN_KEEP_CHARS:
        return None
    return keep + ELLIPSIS


@dataclass(slots=True)
class Part:
    """One section of the handoff.

    ``name``: how the footer names it; ``heading``: its ``## …`` line; ``items``: its lines in display order.
    ``cut``: the first item that does not fit may be shortened to the room left (required parts).
    ``order``: ``"head"`` takes items in order and stops at the first that does not fit, ``"tail"`` likewise from
    the last item backwards (newest first), ``"any"`` skips an item that does not fit and tries the next.
    ``cap``: most bytes the part may take, heading included (None: only the budget limits it).
    ``pre_cut``: indices of items already shortened before fitting (too long for any handoff); when taken they
    count as shortened in the footer.
    """

    name: str
    heading: str
    items: list[str]
    cut: bool = False
    order: str = "head"
    cap: int | None = None
    pre_cut: frozenset[int] = frozenset()


@dataclass(slots=True)
class Picked:
    """What was taken of a part: ``lines`` in display order (some maybe shortened), ``cost`` in bytes (blank line
    and heading included), ``left_out`` items not taken, ``shortened`` items taken only in part (``pre_cut`` ones
    included); ``complete`` when every item was taken and none had to be shortened to fit the room."""

    part: Part
    lines: list[str] = field(default_factory=list)
    cost: int = 0
    left_out: int = 0
    shortened: int = 0
    complete: bool = True


def section_overhead(part: Part, sizer: Sizer) -> int:
    """Bytes a section costs before its items: the blank line before it and its heading line."""
    return sizer.line("") + sizer.line(part.heading)


def pick(part: Part, room: int, sizer: Sizer) -> Picked:
    """Take as much of ``part`` as fits in ``room`` bytes (and its ``cap``), following its ``order`` and ``cut``.

    Nothing is taken (cost 0) when not even one item fits: a section never appears without items.
    """
    limit = min(room, part.cap) if part.cap is not None else room
    overhead = section_overhead(part, sizer)
    indices = list(range(len(part.items)))
    if part.order == "tail":
        indices.reverse()
    chosen: dict[int, str] = {}
    used = 0
    cut_now: set[int] = set()
    for i in indices:
        item = part.items[i]
        extra = sizer.line(item) + (0 if chosen else overhead)
        if used + extra <= limit:
            chosen[i] = item
            used += extra
            continue
        if part.cut:
            start = 0 if chosen else overhead
            short = shorten(item, limit - used - start - sizer.line(""), sizer)
            if short is not None:
                chosen[i] = short
                used += start + sizer.line(short)
                cut_now.add(i)
        if part.order != "any":
            break
    lines = [chosen[i] for i in sorted(chosen)]
    shortened = len(cut_now | (part.pre_cut & chosen.keys()))
    left_out = len(part.items) - len(lines)
    return Picked(part, lines, used, left_out, shortened, complete=not left_out and not cut_now)
