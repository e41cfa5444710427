"""``duck-tape restore``: the post-compaction hook process (issue 7, item 1).

Reads the marker ``<store>/.last-compact`` and the best state file *of the session the marker names, of this
compaction* (issue 14, ``pipeline.state.owner``; among those DESIGN.md "Resume" step 4 precedence, manual >
recovered > auto; when only an auto checkpoint is fresh, that auto file is used — no LLM).  When the session has no
such file (the checkpoint was skipped or failed) the marker's transcript is distilled with the rules engine and
written as the compaction's auto file (``pipeline.restore.fresh``), so a second restore hands over the same state;
a file of another session or an earlier compaction is never handed over.  The state is reconciled with the
workspace (the store's parent folder) and printed as the budgeted handoff, plain or as the Claude Code
``SessionStart`` hook JSON.

The delta (issue 17, item 2): when the compaction's own summary can be found — in the transcript the restore just
distilled, else read cheaply from the end of the marker's transcript (``pipeline.verify.tail``) — the handoff puts
the entries that summary lost first and leaves out the ones it kept (``pipeline.verify.delta``,
``pipeline.restore.parts``).  No compaction in the transcript, a harness that keeps no summary, a summary older
than the marker (opencode's in-compaction restore runs before the summary exists), an unreadable transcript or any
error there: the handoff of before, byte for byte.

It never fails the hook: no marker, no fresh state, an unreadable or corrupt marker or state file, any error —
nothing on stdout, one line on stderr (plus a note when it distilled), exit 0.  Speed (issue 7: under 0.15 s wall with ten state files, process
start included): reached through the fast lane of ``pipeline.entry`` (no click), the state file is read by the
pydantic-free ``pipeline.state.sections`` reader, and the only child process is one ``git log``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import IO

DEFAULT_STORE = ".duck-tape"
PREFIX = "duck-tape: restore:"
MAX_STATE_BYTES = 1024 * 1024
"""A state file is a few kB; a bigger file is not read (reported as unreadable)."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


@dataclass(slots=True)
class Restored:
    """What a restore found and fitted: ``output`` (the bytes to print, empty when there is nothing to restore),
    ``note`` (the stderr note or None), and when restored the ``handoff`` (``pipeline.restore.handoff.Handoff``),
    the state file shown (``state``, ``"<store>/(not written)"`` for a distilled state it could not write), its
    ``kind`` and ``created`` time, the marker's ``compaction`` time, ``drift`` (the reconciliation lines; None when
    not asked) and ``compared`` (whether the compaction's own summary was found and compared with)."""

    output: bytes
    note: str | None
    handoff: object | None = None
    state: str | None = None
    kind: str | None = None
    created: str | None = None
    compaction: str | None = None
    drift: list[str] | None = None
    compared: bool = False


@dataclass(slots=True)
class Starting:
    """What the harness said about the session that starts (its ``SessionStart`` payload, or ``--session``):
    ``session_id``, ``cwd``, ``transcript`` (each None when not said)."""

    session_id: str | None = None
    cwd: str | None = None
    transcript: str | None = None
    problems: tuple[str, ...] = ()  # the payload could not be read (``hooks.payload.parse_payload``'s lines)


def starting_session(stdin: IO | None = None, session: str | None = None) -> Starting:
    """The ``Starting`` of this restore: the payload on ``stdin`` (JSON; nothing read from a terminal, see
    ``hooks.payload.read_stdin``) and ``session`` (``--session``, which wins over the payload's id).  Never raises."""
    from pipeline.hooks.payload import parse_payload, read_stdin

    hook = parse_payload(read_stdin(stdin))
    return Starting(session or hook.session_id, hook.cwd, hook.transcript_path, tuple(hook.problems))


def render_restore(directory: str, *, budget: int, fmt: str, reconcile: bool = True,
                   starting: Starting | None = None) -> tuple[bytes, str | None]:
    """``(output, note)``: the bytes to print (empty when there is nothing to restore) and a stderr note.
    ``starting``: the session the harness starts (``starting_session``); None: the store's newest compaction.

    Raises ``InputError`` for a corrupt marker or state file, ``OSError`` for unreadable ones, ``ValueError``
    for a bad budget or format; ``restore_main`` turns them into one stderr line.
    """
    done = plan_restore(directory, budget=budget, fmt=fmt, reconcile=reconcile, starting=starting)
    return done.output, done.note


def plan_restore(directory: str, *, budget: int, fmt: str, reconcile: bool = True,
                 starting: Starting | None = None) -> Restored:
    """The restore of ``render_restore`` with what it used (``Restored``); raises what ``render_restore`` raises."""
    from pipeline.redact.library import warm_up

    warm_up()  # the handoff passes the deep mask (issue 11); the scanner compiles its rules while this reads
    from pipeline.errors import InputError
    from pipeline.redact import safe
    from pipeline.restore.handoff import build_handoff
    from pipeline.restore.fresh import NoFreshState, fresh_state
    from pipeline.restore.which import choose_marker
    from pipeline.state.sections import read_sections

    starting = starting or Starting()
    chosen = choose_marker(directory, starting.session_id)
    marker = chosen.marker
    if marker is None:
        return Restored(b"", f"{PREFIX} {chosen.why}; nothing to restore")
    try:
        fresh = fresh_state(directory, marker, prefix=PREFIX, cwd=starting.cwd,
                            transcript=starting.transcript if starting.session_id == marker.session_id else None)
    except NoFreshState as exc:
        return Restored(b"", f"{PREFIX} {exc}; nothing restored", compaction=marker.time)
    note = "\n".join(fresh.notes) if fresh.notes else None
    if fresh.path is not None:
        path = fresh.path
        with open(path, "rb") as handle:
            data = handle.read(MAX_STATE_BYTES + 1)
        if len(data) > MAX_STATE_BYTES:
            raise InputError(f"state file is over {MAX_STATE_BYTES} bytes; not restoring it", path=str(path))
    else:  # distilled but not writable: hand over the text itself
        path = os.path.join(directory, "(not written)")
        data = (fresh.text or "").encode("utf-8")
    # issue 11: the handoff goes into the agent's context, i.e. to the model: the state file (a manual one is
    # written by the agent, unmasked) and the reconciliation (commit subjects, file names) are masked before the
    # handoff is fitted to its budget, and the fitted text once more
    doc = read_sections(safe(data.decode("utf-8", "replace")), path=str(path))
    from pipeline.restore.guard import dropped_note, guard_sections

    doc, dropped = guard_sections(doc)  # issue 22: no line that gives an AI agent orders reaches the next agent
    guarded = dropped_note(PREFIX, dropped)
    if guarded:
        note = f"{note}\n{guarded}" if note else guarded
    drift = None
    if reconcile:
        from pipeline.restore.reconcile import reconcile as run_reconcile

        drift = [safe(line) for line in run_reconcile(doc, os.path.dirname(os.path.abspath(directory)))]
    delta = summary_delta(doc, marker, fresh.transcript)
    handoff = build_handoff(doc, source=str(path), budget=budget, fmt=fmt, drift=drift, compaction=marker.time,
                            delta=delta)
    output = handoff.output
    text = output.decode("utf-8", "replace")
    masked = safe(text)
    return Restored(output if masked is text else masked.encode("utf-8"), note, handoff, str(path), doc.kind,
                    doc.created, marker.time, drift, delta is not None)


def summary_delta(doc: object, marker: object, transcript: object | None = None) -> object | None:
    """The ``pipeline.verify.delta.Delta`` of ``doc`` against the summary of the compaction ``marker`` records:
    from ``transcript`` (a ``Transcript`` already read) when given, else from the end of the marker's transcript
    file.  None when there is no such summary or anything goes wrong (the restore then behaves as before)."""
    try:
        from pipeline.verify.delta import last_summary, of_this_compaction, split

        since = marker.time  # type: ignore[attr-defined]
        if transcript is not None:
            summary = last_summary(transcript, since=since)
        else:
            from pipeline.verify.tail import last_summary_in_file

            summary = of_this_compaction(last_summary_in_file(marker.transcript), since)  # type: ignore[attr-defined]
        return split(doc, summary) if summary is not None else None
    except Exception:  # noqa: BLE001 - the delta is a refinement; never a reason to restore nothing
        return None


def restore_main(directory: str | None = None, budget: int | None = None, fmt: str = "plain", *,
                 reconcile: bool = True, session: str | None = None, stdin: IO | None = None,
                 stdout: IO | None = None, stderr: IO | None = None) -> int:
    """Run the restore as a hook process: print the handoff (or nothing) and always return 0.

    ``directory``: the store (default ``.duck-tape``); ``budget``: bytes (default ``DEFAULT_BUDGET``); ``fmt``:
    one of ``handoff.FORMATS``; ``session``: the session to restore (``--session``), else the one the harness's
    payload on ``stdin`` names, else the store's newest compaction.  stdout gets the handoff bytes only; stderr one
    line per problem or note (masked).  With ``gemini`` stdout is always one JSON object (``{}`` when there is
    nothing to restore): Gemini CLI parses a hook's stdout as JSON and, when it is empty, reads stderr in its place.
    """
    from pipeline.restore.handoff import DEFAULT_BUDGET

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    note = None
    output = b""
    try:
        starting = starting_session(stdin, session)
        if starting.problems and starting.session_id is None:
            # the harness said which session starts, but not readably: the newest compaction may be another
            # session's, and a wrong handoff misleads more than none
            note = (f"{PREFIX} nothing restored: {'; '.join(starting.problems)}, so the session that starts is "
                    "unknown; run `duck-tape restore --session <id>` to choose one")
        else:
            output, note = render_restore(directory or DEFAULT_STORE, budget=budget or DEFAULT_BUDGET, fmt=fmt,
                                          reconcile=reconcile, starting=starting)
        if output:
            sink = getattr(out, "buffer", None)
            if sink is not None:
                out.flush()
                sink.write(output)
            else:
                out.write(output.decode("utf-8"))
    except (Exception, KeyboardInterrupt) as exc:  # the hook must never fail
        output = b""
        note = f"{PREFIX} nothing restored: {_one_line(exc)}"
    try:
        if fmt == "gemini" and not output:
            out.write("{}\n")
        if note:
            from pipeline.redact import safe

            err.write(safe(note) + "\n")
        out.flush()
        err.flush()
    except (OSError, ValueError):
        pass
    return 0
