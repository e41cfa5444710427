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


def guarded_state(state: AgentState, context_lines: list[str] | None
                  ) -> tuple[AgentState, list[str] | None, list[str]]:
    """``(state, context_lines, dropped)``: ``state`` and the CONTEXT.md decision lines without the entries that give
    an AI agent orders (``pipeline.restore.guard``, issue 22 item 4: text from a tool, a sub-agent or a summary is
    evidence, never an instruction), and those entries as ``"<section>: <text>"``.  What a resume reports."""
    from dataclasses import replace

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
    decisions = [d for d in state.decisions if not addresses_agent(f"{d.what} - {d.reasoning}")]
    dropped += [f"Decision Log: {d.what}" for d in state.decisions if d not in decisions]
    facts = [f for f in state.facts if not addresses_agent(f.text)]
    dropped += [f"Established Facts: {f.text}" for f in state.facts if f not in facts]
    if context_lines is not None:
        context_lines, out = guard_lines(context_lines)
        dropped += [f"CONTEXT.md: {line}" for line in out]
    if not dropped:
        return state, context_lines, dropped
    guarded = replace(state, position=replace(pos, current=current, done=done, remaining=remaining),
                      decisions=decisions, facts=facts)
    return guarded, context_lines, dropped


REPORT_BUDGET = 3000
"""Bytes (UTF-8) the step-7 report may take: an agent reads it into its context; the state file holds the rest."""

ITEM_CHARS = 200
"""Characters of one listed item in the report (longer ones end with "…")."""


def _clip(text: str, limit: int = ITEM_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


@dataclass(slots=True)
class _Part:
    """One list of the report: its ``title`` line, ``items`` in the order shown, ``total`` entries in the state,
    and ``rank``: over budget, the list with the most items less its rank loses one (so lower ranks shrink first)."""

    title: str
    items: list[str]
    total: int
    rank: int
    newest_last: bool = False  # the items are the newest of the state's, oldest first (Done)

    def lines(self) -> list[str]:
        left = self.total - len(self.items)
        more = [f"  (+{left} {'earlier' if self.newest_last else 'more'} in the state file)"] if left > 0 else []
        if not self.items:
            return [self.title, *(more or ["  None"])]
        return [self.title, *more, *self.items] if self.newest_last else [self.title, *self.items, *more]

    def drop_one(self) -> None:
        """Leave out the least useful item: the oldest of a newest-last list, else the last one."""
        self.items.pop(0 if self.newest_last else -1)


def _decision_lines(state: AgentState, limit: int) -> list[str]:
    """The newest ``limit`` Decision Log entries, newest first: ``STATUS: what - reasoning``."""
    picked = state.decisions[-limit:][::-1]
    return [f"  {_clip(f'{d.status}: {d.what}' + (f' - {d.reasoning}' if d.reasoning else ''))}" for d in picked]


def _fact_lines(state: AgentState, limit: int) -> list[str]:
    """The first ``limit`` Established Facts in the state file's order (the engines write the user's constraints
    first, the order a state read back from its file keeps)."""
    return [f"  - {_clip(f.text)}" for f in state.facts[:limit]]


def report(state: AgentState, marker: Marker | None, context_lines: list[str] | None, context_path: str, *,
           state_path: str | None = None, budget: int = REPORT_BUDGET) -> str:
    """Step 7, for the agent that runs ``resume``: compaction time, where the full state file is, Current, what
    remains, the last steps done, the newest decisions (REJECTED ones included: what not to retry), the first
    facts (the user's constraints lead), and the CONTEXT.md decisions relevant to the work (``relevant_decisions``).
    No entry that gives an AI agent orders (``guarded_state``); a last line counts those left out, never quoting them.

    At most ``budget`` bytes (issue 24, item 3: the state file plus a summary repeating it was 8.6–9.4 KB): each
    item is clipped to ``ITEM_CHARS`` and the longest lists are shortened, done steps and facts sooner than
    decisions and remaining work, each saying how many more entries the state file holds.  ``marker`` None: there was no compaction marker (``Compaction: none
    recorded``); ``state_path``: the file the report is made from (None: not written anywhere).
    """
    from pipeline.restore.guard import dropped_note

    state, context_lines, dropped = guarded_state(state, context_lines)
    note = dropped_note("Note:", dropped)
    pos = state.position
    when = marker.time if marker is not None else "none recorded (no compaction marker)"
    head = [f"Compaction: {when}"]
    if state_path:
        head.append(f"Full state: {state_path}")
    head.append(f"Current: {_clip(pos.current or 'None', 2 * ITEM_CHARS)}")
    parts = [
        _Part("Remaining:", [f"  - {_clip(i)}" for i in pos.remaining[:8]], len(pos.remaining), rank=3),
        _Part("Done:", [f"  - {_clip(i)}" for i in pos.done[-3:]], len(pos.done), rank=0, newest_last=True),
        _Part("Decisions (newest first):", _decision_lines(state, 6), len(state.decisions), rank=2),
        _Part("Facts:", _fact_lines(state, 6), len(state.facts), rank=1),
    ]
    if context_lines is None:
        tail = [f"CONTEXT.md: not found at {context_path}"]
    else:
        picked = relevant_decisions(state, context_lines, limit=5)
        parts.append(_Part(f"Relevant decisions from {context_path}:", [f"  {_clip(line)}" for line in picked],
                           len(picked), rank=1))
        tail = []
    if note:
        tail.append(note)

    def render() -> str:
        return "\n".join(head + [line for part in parts for line in part.lines()] + tail)

    text = render()
    while len(text.encode("utf-8")) > budget:
        shrinkable = [p for p in parts if p.items]
        if not shrinkable:
            break
        max(shrinkable, key=lambda p: (len(p.items) - p.rank, -p.rank)).drop_one()  # the longest, weighed by rank
        text = render()
    return text
