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


def mask_texts(texts: list[str], placeholder: str = "<REDACTED>", *, deep: bool = True) -> tuple[list[str], SourceMask]:
    """``texts`` with every secret masked by ``placeholder``, and the ``SourceMask``; see the module docstring.

    One scan over all of them (``deep``: project rules and the scanner library), then every value found anywhere
    at each of its occurrences in any of them.  An unchanged text comes back as the same object.
    """
    joined = SEP.join(texts)
    raw = candidates(joined)
    if deep:
        from pipeline.redact import _library_hits

        raw.extend(_library_hits(joined, raw))
    findings = merged_findings(joined, list(raw))
    values = secret_values(joined, findings)
    if values:
        raw.extend(known_candidates(joined, values))
        findings = merged_findings(joined, raw)
    result = SourceMask(placeholder=placeholder, values=values)
    result.existing = placeholder in joined
    if not findings:
        result.masked = joined
        return list(texts), result
    out: list[str] = []
    fi, base, out_pos = 0, 0, 0
    for text in texts:
        end_t = base + len(text)
        parts: list[str] = []
        pos, cur = base, out_pos
        while fi < len(findings) and findings[fi].start < end_t:
            f = findings[fi]
            s, e = max(f.start, base), min(f.end, end_t)
            if e > s:
                piece = joined[pos:s]
                parts.append(piece)
                cur += len(piece)
                parts.append(placeholder)
                result.inserted[cur] = (f.type, joined[s : s + 4])
                cur += len(placeholder)
                pos = e
            if f.end > end_t:
                break  # it goes on into the next text
            fi += 1
        if parts:
            parts.append(joined[pos:end_t])
            masked = "".join(parts)
        else:
            masked = text
        out.append(masked)
        out_pos += len(masked) + len(SEP)
        base = end_t + len(SEP)
        while fi < len(findings) and findings[fi].end <= base:
            fi += 1  # a finding inside the separator only
    result.masked = SEP.join(out)
    return out, result


def mask_transcript(transcript: "Transcript", placeholder: str = "<REDACTED>", *, deep: bool = True
                    ) -> tuple["Transcript", SourceMask]:
    """A copy of ``transcript`` whose event texts, tool-call targets and todo items are masked (``mask_texts``
    over all of them at once), and the ``SourceMask``.  The transcript itself is not changed."""
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
    masked, result = mask_texts(texts, placeholder, deep=deep)
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
