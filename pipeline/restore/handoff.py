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

The footer is there only when something was left out or shortened.  ``--format claude-code`` prints
``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": <the text>}}`` (Claude Code hooks
reference, ``SessionStart``: JSON on stdout with ``hookSpecificOutput.additionalContext`` is added to the context;
the harness caps that string at 10,000 characters, above ``MAX_BUDGET`` bytes).  ``--format codex`` and ``--format
gemini`` print the same envelope: Codex reads ``hookSpecificOutput.additionalContext`` of a ``SessionStart`` hook
(``hookEventName`` required; codex-rs ``session-start.command.output.schema.json``), Gemini CLI the same field
(gemini-cli ``docs/hooks/reference.md``, ``SessionStart``).  The budget counts every byte
printed on stdout — the JSON envelope, escapes and the final newline included — and is met to the byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from pipeline.restore.fit import Picked, Sizer, pick, shorten
from pipeline.restore.parts import DISPLAY, GATES, PRIORITY, build_parts
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


@dataclass(slots=True)
class Handoff:
    """A fitted handoff: ``text`` (the context to add), ``output`` (the bytes to print: ``text`` itself or the hook
    JSON, ending with a newline; ``len(output) <= budget``), ``left_out`` (footer entries, empty when complete)."""

    text: str
    output: bytes
    left_out: list[str]


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


def _fit(parts: dict, room: int, sizer: Sizer) -> dict[str, Picked]:
    """Pick the parts in priority order from ``room`` bytes; after an incomplete gate part, the rest is left out."""
    picked: dict[str, Picked] = {}
    closed = False
    for key in PRIORITY:
        if key not in parts:
            continue
        if closed:
            picked[key] = Picked(parts[key], left_out=len(parts[key].items), complete=False)
            continue
        got = pick(parts[key], max(room, 0), sizer)
        if key == "workflow":
            _close_fences(got, sizer)
        picked[key] = got
        room -= got.cost
        closed = key in GATES and not got.complete
    return picked


def _footer(picked: dict[str, Picked], budget: int) -> str | None:
    left, cut = [], []
    for key in DISPLAY:
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
        return None
    text = f"Left out to fit {budget} bytes (read the state file for them): " + (", ".join(left) or "nothing")
    return text + (f"; shortened: {', '.join(cut)}" if cut else "") + "."


def build_handoff(doc: StateSections, *, source: str, budget: int = DEFAULT_BUDGET, fmt: str = "plain",
                  drift: list[str] | None = None, compaction: str | None = None) -> Handoff:
    """The handoff for ``doc`` fitted to ``budget`` bytes of output (layout and rules: module docstring).

    ``source``: the state file's path as shown; ``fmt``: one of ``FORMATS``; ``drift``: the
    reconciliation lines (None: no such section); ``compaction``: the marker's ISO-8601 time.  Pure.
    Raises ``ValueError`` for a budget outside ``MIN_BUDGET``..``MAX_BUDGET`` or an unknown format.
    """
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise ValueError(f"budget {budget} bytes is outside {MIN_BUDGET}..{MAX_BUDGET}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    sizer = Sizer(json=fmt in HOOK_FORMATS)
    header = _header(doc, source, compaction, sizer)
    fixed = _envelope(fmt) + sum(sizer.line(line) for line in header)
    parts = build_parts(doc, drift, budget=budget, sizer=sizer)
    reserve = 0
    for _ in range(12):  # the footer's size depends on what is left out: shrink the room until both fit
        picked = _fit(parts, budget - fixed - reserve, sizer)
        footer = _footer(picked, budget)
        footer_cost = sizer.line("") + sizer.line(footer) if footer else 0
        if fixed + sum(p.cost for p in picked.values()) + footer_cost <= budget:
            break
        reserve = max(reserve + 16, footer_cost)
    lines = list(header)
    for key in DISPLAY:
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
    return Handoff(text, output, left)
