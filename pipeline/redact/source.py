"""Mask the source first, render after (issue 11, part 2).

The stages rewrite what they quote: the Decision Log turns ``password: X`` into ``password - X``, ``clip`` cuts a
token after its prefix, the llm condenser cuts a tool output after ``user:password@``.  A scan of the rendered text
then misses what a scan of the source finds.  So every text that leaves the pipeline is built from a source that
was masked first: ``mask_texts`` masks a list of source texts together (one deep scan, and every value found
anywhere masked at each of its occurrences everywhere, ``known.py``); ``mask_transcript`` does it for a
``Transcript`` (event texts, tool-call targets, todo items).

The rendered state then holds the placeholder where a secret was.  ``SourceMask.locate(text)`` tells which
placeholders of a rendered text stand for a secret of the source (the redaction report, and the refusal without
``--mask``), and which were in the source already (a transcript that quotes an earlier masked state file): it
looks a placeholder's context up in the masked source — the text before it on its line, else the text after it.
A placeholder whose context is found nowhere counts as a masked secret (a refusal errs on the safe side).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

TYPE_CHECKING = False  # typing costs ~2.5 ms to import on the extract-raw hook path
from pipeline.redact import Finding, merged_findings
from pipeline.redact.known import known_candidates, secret_values
from pipeline.redact.rules import candidates

if TYPE_CHECKING:
    from pipeline.transcripts.model import Transcript

SEP = "\n\n"
_CONTEXTS = ((-24, "left"), (24, "right"), (-8, "left"), (8, "right"))
UNKNOWN = ("secret", "****")


@dataclass(slots=True)
class SourceMask:
    """What masking the source found: ``values`` (value -> type, for ``scan(known=...)`` of later texts), the
    masked source joined (``masked``), where a placeholder was put in it (``inserted``: offset -> (type,
    preview)), and whether the source held the placeholder before (``existing``)."""

    placeholder: str = "<REDACTED>"
    values: dict[str, str] = field(default_factory=dict)
    masked: str = ""
    inserted: dict[int, tuple[str, str]] = field(default_factory=dict)
    existing: bool = False

    @property
    def count(self) -> int:
        """How many placeholders masking the source put in."""
        return len(self.inserted)

    def kinds(self) -> list[str]:
        """The sorted types of the secrets masked in the source."""
        return sorted({kind for kind, _ in self.inserted.values()})

    def locate(self, text: str) -> list[Finding]:
        """A finding for each placeholder in ``text`` (a text rendered from the masked source) that stands for a
        secret masked in the source; see the module docstring.  Offsets and lines are ``text``'s."""
        ph = self.placeholder
        if not self.inserted or ph not in text:
            return []
        out: list[Finding] = []
        size = len(ph)
        line, pos, prev_end = 1, 0, 0
        at = text.find(ph)
        while at >= 0:
            origin = self._origin(text, at, prev_end)
            if origin is not None:
                line += text.count("\n", pos, at)
                pos = at
                kind, preview = origin
                out.append(Finding(kind, line, at, at + size, preview))
            prev_end = at + size
            at = text.find(ph, prev_end)
        return out

    def _origin(self, text: str, at: int, prev_end: int) -> tuple[str, str] | None:
        ph, size = self.placeholder, len(self.placeholder)
        start = max(text.rfind("\n", 0, at) + 1, prev_end)
        left = text[start:at]
        stops = [i for i in (text.find(ph, at + size), text.find("\n", at + size)) if i >= 0]
        right = text[at + size : min(stops) if stops else len(text)]
        for width, side in _CONTEXTS:
            context = left[width:] if side == "left" else right[:width]
            if len(context.strip()) < 3:
                continue
            needle = context + ph if side == "left" else ph + context
            found_existing = False
            k = self.masked.find(needle)
            tries = 0
            while k >= 0 and tries < 64:
                p = k + len(context) if side == "left" else k
                hit = self.inserted.get(p)
                if hit is not None:
                    return hit
                found_existing = True
                k = self.masked.find(needle, k + 1)
                tries += 1
            if found_existing:
                return None  # the same words around a placeholder the source held already
        return UNKNOWN


def _library_hits_of(joined: str, starts: list[int], uniq: list[str], picked: list[int],
                     project: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int, str]]:
    """The scanner library's candidates for the texts ``picked`` (indexes into ``uniq``, whose offsets in ``joined``
    are ``starts``), scanned as one text of their own and mapped back to ``joined`` offsets, minus those a
    ``project`` candidate overlaps (``pipeline.redact._library_hits``)."""
    from pipeline.redact import _library_hits, outside

    if len(picked) == len(uniq):
        return _library_hits(joined, project)
    if not picked:
        return []
    part = SEP.join(uniq[k] for k in picked)
    hits = _library_hits(part, [])
    if not hits:
        return []
    from bisect import bisect_right

    offsets, pos = [], 0
    for k in picked:
        offsets.append(pos)
        pos += len(uniq[k]) + len(SEP)
    mapped = []
    for start, end, priority, kind in hits:
        n = bisect_right(offsets, start) - 1
        k = picked[n]
        stop = min(end - offsets[n], len(uniq[k]))
        if stop > start - offsets[n]:
            mapped.append((starts[k] + start - offsets[n], starts[k] + stop, priority, kind))
    return outside(mapped, project)


SEEN_MAX = 200_000
"""Texts ``mask_texts`` remembers in ``seen`` at most (~10 MB); past that it forgets them and starts again."""


def text_key(text: str) -> int:
    """The key ``mask_texts`` remembers a scanned text by (``seen``): its hash (64 bits)."""
    return hash(text)


def mask_texts(texts: list[str], placeholder: str = "<REDACTED>", *, deep: bool = True,
               known: dict[str, str] | None = None, seen: set | None = None) -> tuple[list[str], SourceMask]:
    """``texts`` with every secret masked by ``placeholder``, and the ``SourceMask``; see the module docstring.

    One scan over all of them (``deep``: project rules and the scanner library), then every value found anywhere
    at each of its occurrences in any of them.  An unchanged text comes back as the same object.  A text that
    occurs several times (a file read twice, the same test output again) is scanned once and masked alike.

    ``known``: values found secret before (an earlier segment of the same transcript, ``SourceMask.values``):
    masked wherever they occur here too, and part of the result's ``values``.  ``seen``: keys (``text_key``) of the
    texts a deep scan of this transcript looked at before; the scanner library does not look at them again (what
    it found there is in ``known``), and the keys of the texts looked at now are added.
    """
    first: dict[str, int] = {}
    uniq: list[str] = []
    order: list[int] = []
    for text in texts:
        k = first.get(text)
        if k is None:
            k = first[text] = len(uniq)
            uniq.append(text)
        order.append(k)
    joined = SEP.join(uniq)
    starts, pos = [], 0
    for text in uniq:
        starts.append(pos)
        pos += len(text) + len(SEP)
    raw = candidates(joined)
    if deep:
        picked = list(range(len(uniq)))
        if seen is not None:
            picked = [k for k in picked if text_key(uniq[k]) not in seen]
            if len(seen) + len(picked) > SEEN_MAX:
                seen.clear()
            seen.update(text_key(uniq[k]) for k in picked)
        raw.extend(_library_hits_of(joined, starts, uniq, picked, raw))
    findings = merged_findings(joined, list(raw))
    values = dict(known or {})
    for value, kind in secret_values(joined, findings).items():
        values.setdefault(value, kind)
    if values:
        raw.extend(known_candidates(joined, values))
        findings = merged_findings(joined, raw)
    result = SourceMask(placeholder=placeholder, values=values)
    result.existing = any(placeholder in text for text in uniq)
    if not findings:
        result.masked = SEP.join(texts)
        return list(texts), result
    masked_u: list[str] = []
    placed: list[list[tuple[int, str, str]]] = []  # per unique text: (offset in its masked text, type, preview)
    fi = 0
    for k, text in enumerate(uniq):
        base = starts[k]
        end_t = base + len(text)
        while fi < len(findings) and findings[fi].end <= base:
            fi += 1  # a finding inside the separator only
        parts: list[str] = []
        here: list[tuple[int, str, str]] = []
        at, cur = base, 0
        j = fi
        while j < len(findings) and findings[j].start < end_t:
            f = findings[j]
            lo, hi = max(f.start, base), min(f.end, end_t)
            if hi > lo:
                piece = joined[at:lo]
                parts.append(piece)
                cur += len(piece)
                parts.append(placeholder)
                here.append((cur, f.type, joined[lo : lo + 4]))
                cur += len(placeholder)
                at = hi
            j += 1
        if parts:
            parts.append(joined[at:end_t])
            masked_u.append("".join(parts))
        else:
            masked_u.append(text)
        placed.append(here)
    out: list[str] = []
    offset = 0
    for text, k in zip(texts, order):
        masked = masked_u[k] if placed[k] else text
        out.append(masked)
        for rel, kind, preview in placed[k]:
            result.inserted[offset + rel] = (kind, preview)
        offset += len(masked) + len(SEP)
    result.masked = SEP.join(out)
    return out, result


CONTEXT = 40
"""Characters kept either side of a placeholder by ``SourceMask.compact`` (``locate`` reads up to 24)."""


def compact(mask: SourceMask) -> SourceMask:
    """``mask`` keeping of its masked source only the text around each placeholder (``CONTEXT`` characters either
    side, the placeholders it put in and those the source held), which is all ``locate`` reads: a long transcript
    read segment by segment keeps this much of each segment's masking (``merge``)."""
    ph = mask.placeholder
    text = mask.masked
    spans: list[list[int]] = []
    at = text.find(ph)
    while at >= 0:
        lo, hi = max(0, at - CONTEXT), min(len(text), at + len(ph) + CONTEXT)
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = hi
        else:
            spans.append([lo, hi])
        at = text.find(ph, at + len(ph))
    out = SourceMask(placeholder=ph, values=dict(mask.values), existing=mask.existing)
    pieces, pos = [], 0
    for lo, hi in spans:
        for offset, found in mask.inserted.items():
            if lo <= offset < hi:
                out.inserted[pos + offset - lo] = found
        pieces.append(text[lo:hi])
        pos += hi - lo + len(SEP)
    out.masked = SEP.join(pieces)
    return out


def merge(masks: list[SourceMask], placeholder: str = "<REDACTED>") -> SourceMask:
    """One ``SourceMask`` for the masks of a transcript's segments (each ``compact`` first): their values, their
    placeholders' contexts one after the other."""
    out = SourceMask(placeholder=placeholder)
    pieces, pos = [], 0
    for m in masks:
        out.values.update((v, k) for v, k in m.values.items() if v not in out.values)
        out.existing = out.existing or m.existing
        for offset, found in m.inserted.items():
            out.inserted[pos + offset] = found
        pieces.append(m.masked)
        pos += len(m.masked) + len(SEP)
    out.masked = SEP.join(pieces)
    return out


def mask_transcript(transcript: "Transcript", placeholder: str = "<REDACTED>", *, deep: bool = True,
                    known: dict[str, str] | None = None, seen: set | None = None) -> tuple["Transcript", SourceMask]:
    """A copy of ``transcript`` whose event texts, tool-call targets and todo items are masked (``mask_texts``
    over all of them at once, ``known`` and ``seen`` as there), and the ``SourceMask``.  The transcript itself is
    not changed."""
    texts: list[str] = []
    slots: list[tuple[int, str, int]] = []  # (event index, field, todo index)
    for n, event in enumerate(transcript.events):
        if event.text:
            texts.append(event.text)
            slots.append((n, "text", -1))
        if event.target:
            texts.append(event.target)
            slots.append((n, "target", -1))
        for t, todo in enumerate(event.todos or ()):
            if todo.content:
                texts.append(todo.content)
                slots.append((n, "todo", t))
    masked, result = mask_texts(texts, placeholder, deep=deep, known=known, seen=seen)
    if not result.inserted:
        return transcript, result
    events = list(transcript.events)
    changed: dict[int, dict] = {}
    for (n, name, t), before, after in zip(slots, texts, masked):
        if after is before:
            continue
        update = changed.setdefault(n, {})
        if name == "todo":
            todos = update.get("todos") or list(events[n].todos or ())
            todos[t] = replace(todos[t], content=after)
            update["todos"] = todos
        else:
            update[name] = after
    for n, update in changed.items():
        events[n] = replace(events[n], **update)
    return replace(transcript, events=events), result
