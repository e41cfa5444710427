"""The restore handoff: a compact text of the state file that fits a byte budget, plain or as hook JSON (issue 7).

Layout (one ``"\\n"`` after every line)::

    # duck-tape: session state restored after compaction
    From <state file> (<kind> state file, created <ISO-8601>[; compaction at <ISO-8601>]) | Cwd: <path> | Repo/Branch: <repo>@<branch>
    Resume from Current; check the workspace before redoing anything listed below.

    ## Approved Workflow            (sections in this order, each only when something of it fits;
    …                                see pipeline.restore.parts for the order they are fitted in)
    ## Current
    ## Remaining (next first)
    ## Decisions (REJECTED ones: do not retry them)
    ## Constraints (the user's rules)
    ## Since the state file (read-only check of the workspace)
    ## Established Facts
    ## Done (oldest first)
    ## Re-derivation
    ## Suggested Skills

    Left out to fit <budget> bytes (read the state file for them): <Part> (<n> of <total>), …; shortened: <Part> (<n>), …

The footer is there only when something was left out or shortened.  With the compaction's own summary to compare
with (``delta``, issue 17 item 2) the entries it lost come first, under ``## Lost by the compaction summary …``
(``pipeline.restore.parts``: the delta), the entries it kept are left out, and the footer — then always there —
ends with ``Already in the compaction summary, so left out: <n> entries (<kind> <n>, …): <names>.`` (at most
``KEPT_NAMED`` named, each shortened to ``KEPT_NAME_BYTES``).  ``--format claude-code`` prints
``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": <the text>}}`` (Claude Code hooks
reference, ``SessionStart``: JSON on stdout with ``hookSpecificOutput.additionalContext`` is added to the context;
the harness caps that string at 10,000 characters, above ``MAX_BUDGET`` bytes).  ``--format codex`` and ``--format
gemini`` print the same envelope: Codex reads ``hookSpecificOutput.additionalContext`` of a ``SessionStart`` hook
(``hookEventName`` required; codex-rs ``session-start.command.output.schema.json``), Gemini CLI the same field
(gemini-cli ``docs/hooks/reference.md``, ``SessionStart``).  The budget counts every byte
printed on stdout — the JSON envelope, escapes and the final newline included — and is met to the byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from pipeline.restore.fit import Picked, Sizer, pick, shorten
from pipeline.restore.parts import (
    DELTA_DISPLAY,
    DELTA_GATES,
    DELTA_OPEN,
    DELTA_PRIORITY,
    DISPLAY,
    GATES,
    PRIORITY,
    build_parts,
)
from pipeline.state.sections import StateSections

DEFAULT_BUDGET = 6000
MAX_BUDGET = 9500
MIN_BUDGET = 1000
"""Budget bounds in bytes (issue 7: default 6,000, at most 9,500; below 1,000 the header and footer leave no room)."""
FORMATS = ("plain", "claude-code", "gemini", "codex")
HOOK_FORMATS = frozenset({"claude-code", "gemini", "codex"})
"""Formats printed as the ``SessionStart`` hook JSON: the three harnesses read the same envelope."""
TITLE = "# duck-tape: session state restored after compaction"
GUIDE = "Resume from Current; check the workspace before redoing anything listed below."
HEADER_VALUE_CAP = 200
"""Bytes a header value (state file path, Cwd, repo@branch) may take."""
_FENCE = "```"
KEPT_NAMED = 6
"""Kept entries the footer names (the rest are counted)."""
KEPT_NAME_BYTES = 48
"""Bytes each named kept entry may take in the footer."""
KEPT_NAMES_SHARE = 0.08
"""Most of the budget the names of the kept entries may take together (the count is always there)."""
KEPT_KINDS = (("approved", "approved"), ("rejected", "rejected"), ("fact", "facts"), ("remaining", "remaining"))


@dataclass(slots=True)
class Handoff:
    """A fitted handoff: ``text`` (the context to add), ``output`` (the bytes to print: ``text`` itself or the hook
    JSON, ending with a newline; ``len(output) <= budget``), ``left_out`` (footer entries, empty when complete).
    ``parts`` (added, default empty): one record per section fitted, in display order, ``{"part": <key of
    pipeline.restore.parts>, "name", "items": <n>, "included": <n>, "left_out": <n>, "shortened": <n>}`` (items
    are lines for the workflow); ``restore --json`` reports them."""

    text: str
    output: bytes
    left_out: list[str]
    parts: list[dict] = field(default_factory=list)


def hook_json(text: str) -> bytes:
    """The Claude Code ``SessionStart`` hook output adding ``text`` to the context, with a final newline."""
    return orjson.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}) + b"\n"


def _envelope(fmt: str) -> int:
    return len(hook_json("")) if fmt in HOOK_FORMATS else 0


def _output(text: str, fmt: str) -> bytes:
    return hook_json(text) if fmt in HOOK_FORMATS else text.encode("utf-8")


def _header(doc: StateSections, source: str, compaction: str | None, sizer: Sizer) -> list[str]:
    def cap(value: str) -> str:
        return shorten(value, HEADER_VALUE_CAP, sizer) or value[:HEADER_VALUE_CAP // 4]

    when = f"created {doc.created}" + (f"; compaction at {compaction}" if compaction else "")
    line = (f"From {cap(source)} ({doc.kind} state file, {when}) | Cwd: {cap(doc.cwd)} | "
            f"Repo/Branch: {cap(f'{doc.repo}@{doc.branch}')}")
    return [TITLE, line, GUIDE]


def _close_fences(picked: Picked, sizer: Sizer) -> None:
    """Drop the workflow lines from an unclosed code fence on (when the workflow was cut inside a fence)."""
    fences = [n for n, line in enumerate(picked.lines) if line.lstrip().startswith(_FENCE)]
    if len(fences) % 2 == 0:
        return
    dropped = picked.lines[fences[-1]:]
    picked.lines = picked.lines[:fences[-1]]
    picked.cost -= sum(sizer.line(line) for line in dropped)
    picked.left_out += len(dropped)
    picked.shortened = max(picked.shortened, 1)
    if not picked.lines:  # the section went away with its heading and blank line
        picked.cost, picked.shortened = 0, 0


def _fit(parts: dict, room: int, sizer: Sizer, *, priority: tuple[str, ...] = PRIORITY,
         gates: frozenset[str] = GATES, still_open: frozenset[str] = frozenset()) -> dict[str, Picked]:
    """Pick the parts in ``priority`` order from ``room`` bytes; after an incomplete gate part, the rest (but the
    ``still_open`` parts) is left out."""
    picked: dict[str, Picked] = {}
    closed = False
    for key in priority:
        if key not in parts:
            continue
        if closed and key not in still_open:
            picked[key] = Picked(parts[key], left_out=len(parts[key].items), complete=False)
            continue
        got = pick(parts[key], max(room, 0), sizer)
        if key == "workflow":
            _close_fences(got, sizer)
        picked[key] = got
        room -= got.cost
        closed = closed or (key in gates and not got.complete)
    return picked


def _kept_names(delta: object, sizer: Sizer, budget: int) -> str:
    """``Already in the compaction summary, so left out: …`` for ``delta`` (module docstring); the names take at
    most ``KEPT_NAMES_SHARE`` of ``budget``."""
    kept = list(delta.kept)  # type: ignore[attr-defined]
    total = len(kept) + len(delta.lost)  # type: ignore[attr-defined]
    if not kept:
        return f"The compaction summary kept none of the {total} entries checked: all of them are above."
    kinds = ", ".join(f"{label} {n}" for kind, label in KEPT_KINDS if (n := sum(e.kind == kind for e in kept)))
    names: list[str] = []
    room = int(budget * KEPT_NAMES_SHARE)
    for e in kept[:KEPT_NAMED]:
        text = e.text.split(": ", 1)[1].split(" - ", 1)[0] if e.status else e.text
        name = f'"{shorten(text, KEPT_NAME_BYTES, sizer) or text[:KEPT_NAME_BYTES // 4]}"'
        if sizer.cost(name) + 2 > room:
            break
        room -= sizer.cost(name) + 2
        names.append(name)
    more = len(kept) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if names and more else "")
    noun = "entry" if len(kept) == 1 else "entries"
    return f"Already in the compaction summary, so left out: {len(kept)} {noun} ({kinds})" + (f": {listed}." if names else ".")


def _footer(picked: dict[str, Picked], budget: int, kept: str | None = None,
            display: tuple[str, ...] = DISPLAY) -> str | None:
    left, cut = [], []
    for key in display:
        got = picked.get(key)
        if got is None:
            continue
        total = len(got.part.items)
        if got.left_out:
            unit = " lines" if key == "workflow" else ""
            count = f"all {total}" if got.left_out == total else f"{got.left_out} of {total}"
            left.append(f"{got.part.name} ({count}{unit})")
        if got.shortened:
            cut.append(f"{got.part.name} ({got.shortened})")
    if not left and not cut:
        return kept
    text = f"Left out to fit {budget} bytes (read the state file for them): " + (", ".join(left) or "nothing")
    text += (f"; shortened: {', '.join(cut)}" if cut else "") + "."
    return f"{text} {kept}" if kept else text


def build_handoff(doc: StateSections, *, source: str, budget: int = DEFAULT_BUDGET, fmt: str = "plain",
                  drift: list[str] | None = None, compaction: str | None = None, delta: object | None = None) -> Handoff:
    """The handoff for ``doc`` fitted to ``budget`` bytes of output (layout and rules: module docstring).

    ``source``: the state file's path as shown; ``fmt``: one of ``FORMATS``; ``drift``: the
    reconciliation lines (None: no such section); ``compaction``: the marker's ISO-8601 time; ``delta``: a
    ``pipeline.verify.delta.Delta`` of ``doc`` against the compaction's own summary (None: none to compare with,
    the handoff of issue 7 byte for byte).  Pure.
    Raises ``ValueError`` for a budget outside ``MIN_BUDGET``..``MAX_BUDGET`` or an unknown format.
    """
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise ValueError(f"budget {budget} bytes is outside {MIN_BUDGET}..{MAX_BUDGET}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    sizer = Sizer(json=fmt in HOOK_FORMATS)
    header = _header(doc, source, compaction, sizer)
    fixed = _envelope(fmt) + sum(sizer.line(line) for line in header)
    judged = None
    kept = None
    options: dict = {}
    display = DISPLAY
    if delta is not None:
        judged = {e.extra["ref"]: True for e in delta.kept}  # type: ignore[attr-defined]
        judged.update({e.extra["ref"]: False for e in delta.lost})  # type: ignore[attr-defined]
        kept = _kept_names(delta, sizer, budget)
        options = {"priority": DELTA_PRIORITY, "gates": DELTA_GATES, "still_open": DELTA_OPEN}
        display = DELTA_DISPLAY
    parts = build_parts(doc, drift, budget=budget, sizer=sizer, judged=judged)
    reserve = 0
    for _ in range(12):  # the footer's size depends on what is left out: shrink the room until both fit
        picked = _fit(parts, budget - fixed - reserve, sizer, **options)
        footer = _footer(picked, budget, kept, display)
        footer_cost = sizer.line("") + sizer.line(footer) if footer else 0
        if fixed + sum(p.cost for p in picked.values()) + footer_cost <= budget:
            break
        reserve = max(reserve + 16, footer_cost)
    lines = list(header)
    for key in display:
        got = picked.get(key)
        if got is not None and got.lines:
            lines += ["", got.part.heading, *got.lines]
    if footer:
        lines += ["", footer]
    text = "\n".join(lines) + "\n"
    output = _output(text, fmt)
    if len(output) > budget:  # only with pathological header values; the contract holds regardless
        text = (shorten(text.rstrip("\n"), budget - _envelope(fmt) - sizer.line(""), sizer) or "") + "\n"
        output = _output(text, fmt)
    left = [] if footer is None else [footer]
    fitted = [{"part": key, "name": got.part.name, "items": len(got.part.items),
               "included": len(got.part.items) - got.left_out, "left_out": got.left_out, "shortened": got.shortened}
              for key in display if (got := picked.get(key)) is not None]
    return Handoff(text, output, left, fitted)
