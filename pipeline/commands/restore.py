"""``duck-tape restore`` (issue 7): the post-compaction handoff, plain or as the Claude Code SessionStart hook JSON.

The plain shapes are run by ``pipeline.entry`` without click (start-up time); this click command serves
``--help`` and every other shape, validates the budget and format (exit 2 on bad usage), and runs the same
function, which never fails at run time.
"""

from __future__ import annotations

import click

DEFAULT_STORE = ".duck-tape"


@click.command("restore", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", default=None, metavar="DIR",
              help="State store holding .last-compact and the state files (default: .duck-tape here).")
@click.option("--budget", type=click.IntRange(1000, 9500), default=6000, show_default=True, metavar="BYTES",
              help="Most bytes to print, everything on stdout included (1000-9500).")
@click.option("--format", "fmt", type=click.Choice(["plain", "claude-code", "gemini", "codex"]), default="plain",
              show_default=True,
              help="claude-code, codex, gemini: wrap the text as SessionStart hook JSON "
                   "(hookSpecificOutput.additionalContext); gemini prints {} when there is nothing to restore.")
@click.option("--session", "session", default=None, metavar="ID",
              help="Restore this session's compaction.  Default: the session the harness's SessionStart JSON on "
                   "stdin names (session_id, sessionID), else the newest compaction in DIR.")
@click.option("--no-reconcile", is_flag=True, help="Skip the read-only check of the workspace (git log, files).")
@click.option("--json", "as_json", is_flag=True,
              help="Plain format only: print one JSON object (the handoff text, the state file used, the parts "
                   "included and left out, the bytes used of the budget) instead of the handoff.")
def restore(directory: str | None, budget: int, fmt: str, session: str | None, no_reconcile: bool,
            as_json: bool) -> None:
    """Print a compact handoff of the best state file, to feed the next session after a compaction.

    As a SessionStart hook it reads the harness's JSON on stdin and hands over that session's own state only:
    never another session's, and only state files duck-tape wrote in this folder (a file planted, copied or
    of another folder is named on stderr and left out).
    Picks the state file as `duck-tape resume` does (manual > recovered > auto) and prints, within BYTES:
    the approved workflow, Current, Remaining, the decisions (REJECTED ones with their reasons) and the
    user's constraints first, then what changed in the workspace since the file was written (commits,
    Remaining items that look done, files that no longer exist), then facts, Done and Re-derivation while
    they fit, and names what it left out.  No LLM.  Never fails: with no marker, no state file or a corrupt
    one it prints nothing (one line on stderr) and exits 0; with --json then an object whose "restored" is false
    and whose "reason" says why.
    """
    if as_json:
        from pipeline.commands.json_out import begin, emit

        begin("restore")
        if fmt != "plain":
            raise click.UsageError(f"--json prints the plain handoff only; --format {fmt} prints the hook JSON itself")
        emit(restore_report(directory or DEFAULT_STORE, budget, reconcile=not no_reconcile, session=session))
        return
    from pipeline.restore.run import restore_main

    restore_main(directory, budget, fmt, reconcile=not no_reconcile, session=session)


def restore_report(directory: str, budget: int, *, reconcile: bool, session: str | None = None) -> dict:
    """The ``restore --json`` object (docs/json.md) for the store ``directory``.  Never raises for what the hook
    never fails on (no marker, no fresh state, an unreadable or corrupt file): ``"restored": false`` and the
    ``"reason"``, as the hook's stderr line words it."""
    from pipeline.restore.run import PREFIX, _one_line, plan_restore, starting_session

    report: dict = {"command": "restore", "store": directory, "restored": False, "reason": None, "notes": [],
                    "state": None, "kind": None, "created": None, "compaction": None, "handoff": None,
                    "bytes": 0, "budget": budget, "complete": None, "parts": [], "footer": None,
                    "compared_with_summary": False, "reconciliation": None}
    try:
        done = plan_restore(directory, budget=budget, fmt="plain", reconcile=reconcile,
                            starting=starting_session(None, session))
    except Exception as exc:  # noqa: BLE001 - as the hook: one reason, never a traceback
        report["reason"] = f"{PREFIX} nothing restored: {_one_line(exc)}"
        return report
    report["compaction"] = done.compaction
    if not done.output:
        report["reason"] = done.note
        return report
    handoff = done.handoff
    report["notes"] = done.note.splitlines() if done.note else []
    report.update(restored=True, state=done.state, kind=done.kind, created=done.created,
                  handoff=done.output.decode("utf-8", "replace"), bytes=len(done.output),
                  complete=not any(p["left_out"] or p["shortened"] for p in handoff.parts), parts=handoff.parts,
                  footer=handoff.left_out[0] if handoff.left_out else None,
                  compared_with_summary=done.compared, reconciliation=done.drift)
    return report


COMMANDS = [restore]
