"""Resume after compaction (DESIGN.md "Resume", steps 1–7).

``plan(dir)`` does the read-only steps 1–4 and 6 and returns what to report; the CLI performs step 5
(recover, preview, approval, write) and prints the step-7 report.  Nothing here writes.

Issue 14: step 4 picks only among the state files of the session the marker names, of this compaction
(``pipeline.state.owner``): a file of another session or of an earlier compaction is never resumed from.  With no
marker (step 1), the newest state file of this workspace is reported, saying that there was no compaction marker
(a ``duck-tape recover`` followed by ``resume``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pipeline.errors import InputError
from pipeline.state.marker import Marker, read_marker
from pipeline.state.model import AgentState
from pipeline.state.parse import parse
from pipeline.state.owner import pick_for_marker
from pipeline.state.store import StateFileInfo

_WORD = re.compile(r"[a-z][a-z0-9_\-/.]{3,}")
_STOP = frozenset(
    "this that with from have will what when then they them their there into about also only just more some "
    "than very make made need needs should would could being been were does done after before using used".split()
)


@dataclass(slots=True)
class ResumePlan:
    """What ``resume`` found.  ``messages``: lines to print in order; ``state``/``state_path``: the chosen
    state file when usable as is; ``recover_from``: the marker's transcript when a recovery is needed."""

    messages: list[str] = field(default_factory=list)
    marker: Marker | None = None
    state: AgentState | None = None
    state_path: Path | None = None
    recover_from: str | None = None
    session_id: str | None = None
    stop: bool = False


def _moment(value: str, what: str) -> datetime:
    """ISO-8601 ``value`` as an aware UTC datetime (naive = UTC; ``Z`` accepted); InputError (exit 2) otherwise."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{what} must be an ISO-8601 time such as 2026-03-10T09:00:00Z, got {value!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def plan(directory: Path, *, session_start: str | None = None, session: str | None = None) -> ResumePlan:
    """Steps 1–4 of DESIGN.md "Resume" on the store ``directory`` (read-only).  ``session``: resume that session's
    compaction (``pipeline.restore.which``: its own marker record), else the store's newest one.  Only state files
    this store wrote for this workspace are used (``pipeline.state.owner``); the others are named in ``messages``.

    Raises InputError (exit 2) when the marker or the chosen state file is malformed, naming the file.
    """
    from pipeline.restore.which import choose_marker

    result = ResumePlan()
    from pipeline.restore.which import symlinked_store

    refused = symlinked_store(directory)
    if refused:
        result.messages.append(f"Nothing to resume: {refused}.")
        result.stop = True
        return result
    if not session and read_marker(directory) is None:
        newest, skipped = newest_for_workspace(directory)
        if skipped:
            result.messages.append(f"Not using {skipped.removeprefix('ignored ')}.")
        if newest is None:
            result.messages.append(f"No compaction marker found ({directory / '.last-compact'}); nothing to resume.")
            result.stop = True
            return result
        result.state_path = newest.path
        result.state = parse(newest.path.read_text(encoding="utf-8"), path=str(newest.path))
        result.messages.append(
            f"No compaction marker found ({directory / '.last-compact'}); reporting the newest state file of this "
            f"workspace, {newest.kind} {newest.path.name}.")
        return result
    chosen = choose_marker(directory, session)
    if chosen.marker is None:
        result.messages.append(f"Nothing to resume: {chosen.why}.")
        result.stop = True
        return result
    marker = chosen.marker
    result.marker = marker
    if session_start and _moment(marker.time, "the marker's time") < _moment(session_start, "--session-start"):
        result.messages.append(
            f"The compaction marker ({marker.time}) is older than this session's start ({session_start}); "
            "continuing: the checkpoint is the handoff."
        )
    choice, owned = pick_for_marker(directory, marker)
    left = owned.excluded()
    if left:
        who = f"session {owned.session_id}" if owned.session_id else "this compaction"
        result.messages.append(f"Not using {left}: only state files of {who} are resumed from.")
    named = owned.named()
    if named:
        result.messages.append(f"Note: {named}.")
    if choice is not None and choice.use_as_is:
        result.state_path = choice.info.path
        result.state = parse(choice.info.path.read_text(encoding="utf-8"), path=str(choice.info.path))
        result.messages.append(f"Using {choice.info.kind} state file {choice.info.path.name} as is.")
        return result
    if not marker.transcript:
        result.messages.append("Compaction occurred but no transcript path in marker; cannot recover.")
        if choice is not None:
            result.state_path = choice.info.path
            result.state = parse(choice.info.path.read_text(encoding="utf-8"), path=str(choice.info.path))
            result.messages.append(f"Falling back to the {choice.info.kind} state file {choice.info.path.name}.")
        else:
            result.stop = True
        return result
    result.recover_from = marker.transcript
    result.session_id = owned.session_id
    why = f"only an auto checkpoint ({choice.info.path.name})" if choice is not None else "no state file of this compaction"
    result.messages.append(f"Found {why}; recovering from the transcript {marker.transcript}.")
    return result


def newest_for_workspace(directory: Path) -> tuple[StateFileInfo | None, str | None]:
    """``(newest, skipped)``: the newest state file of ``directory`` (ranked as ``list_states`` ranks them) that
    this store wrote for this workspace (``pipeline.state.owner.trusted_states``), None when there is none; and
    one line naming the files left out (not written by this store, or of another folder), None when none was."""
    from pipeline.state.owner import name_skipped, trusted_states

    usable, untrusted, elsewhere = trusted_states(directory)
    return (usable[-1].info if usable else None), name_skipped(untrusted, elsewhere)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def context_decisions(context_text: str, *, path: str | None = None) -> list[str]:
    """The first line of each entry of the ``## Decisions`` section of a CONTEXT.md text (DESIGN.md "CONTEXT.md"),
    read with the CONTEXT.md parser (``pipeline.context.parse``): entries under ``###`` subsections count, lines in
    fenced code and bootstrap scaffold lines do not.  Raises InputError naming ``path`` for a duplicated section.
    """
    from pipeline.context.parse import items, parse

    section = parse(context_text, path=path).get("Decisions")
    if section is None:
        return []
    return [section.body[item.start].strip() for item in items(section) if item.kind in ("entry", "bullet")]


def relevant_decisions(state: AgentState, decisions: list[str], *, limit: int = 8) -> list[str]:
    """CONTEXT.md decision lines sharing words with the state's workflow, position and decisions.

    Ranked by the number of shared words (ties keep file order); all of them (up to ``limit``) when the
    state has no words to match on.
    """
    focus = " ".join(
        [state.approved_workflow or "", state.position.current or "", *state.position.remaining]
        + [d.what for d in state.decisions]
    )
    wanted = _words(focus)
    if not wanted:
        return decisions[:limit]
    scored = [(len(wanted & _words(line)), n, line) for n, line in enumerate(decisions)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [line for _, _, line in ranked[:limit]]


def guarded_position(state: AgentState, context_lines: list[str] | None
                     ) -> tuple[str | None, list[str], list[str], list[str] | None, list[str]]:
    """``(current, done, remaining, decisions, dropped)``: what a resume reports of ``state`` and of the CONTEXT.md
    decision lines (``relevant_decisions``; None without CONTEXT.md), without the lines that give an AI agent orders
    (``pipeline.restore.guard``, issue 22 item 4), and those lines."""
    from pipeline.restore.guard import addresses_agent, guard_lines

    pos = state.position
    dropped: list[str] = []
    current = pos.current
    if current and addresses_agent(current):
        dropped.append(f"Current: {current}")
        current = None
    done, out = guard_lines(list(pos.done))
    dropped += [f"Done: {line}" for line in out]
    remaining, out = guard_lines(list(pos.remaining))
    dropped += [f"Remaining: {line}" for line in out]
    decisions = None
    if context_lines is not None:
        decisions, out = guard_lines(relevant_decisions(state, context_lines))
        dropped += [f"CONTEXT.md: {line}" for line in out]
    return current, done, remaining, decisions, dropped


def report(state: AgentState, marker: Marker | None, context_lines: list[str] | None, context_path: str) -> str:
    """Step 7: compaction time, Current/Done/Remaining, and the relevant CONTEXT.md decisions (no line that gives an
    AI agent orders: ``guarded_position``).  ``marker`` None: there was no compaction marker (``Compaction: none
    recorded``)."""
    from pipeline.restore.guard import dropped_note

    current, done, remaining, decisions, dropped = guarded_position(state, context_lines)
    when = marker.time if marker is not None else "none recorded (no compaction marker)"
    out = [f"Compaction: {when}", f"Current: {current or 'None'}", "Done:"]
    out += [f"  - {item}" for item in done] or ["  None"]
    out.append("Remaining:")
    out += [f"  - {item}" for item in remaining] or ["  None"]
    if decisions is None:
        out.append(f"CONTEXT.md: not found at {context_path}")
    else:
        out.append(f"Relevant decisions from {context_path}:")
        out += [f"  {line}" for line in decisions] or ["  None"]
    note = dropped_note("Note:", dropped)
    if note:
        out.append(note)
    return "\n".join(out)
