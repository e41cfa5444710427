"""CONTEXT.md commands: ``merge``, ``migrate``, ``prune`` (DESIGN.md "CONTEXT.md (Tier 1)", "Approval", "Exit codes").

Every write is previewed as a unified diff, then approved (``--yes``, or a question on a terminal), then written
under the file's lock (``pipeline.context.safewrite``); ``--dry-run`` shows the preview and writes nothing.  The
changelog (or ``No changes to CONTEXT.md.``) is printed after the write.  ``run_merge`` is shared with
``duck-tape recover --merge``.  Imports stay inside the functions so ``duck-tape --help`` stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pipeline.state.model import AgentState

DEFAULT_CONTEXT = "CONTEXT.md"
_REDACTED = re.compile(r"- Redacted: (?P<section>.+) (?P<n>\d+) secret\(s\)")
"""A changelog's ``Redacted`` line (``pipeline.context.changelog``): ``merge --json`` reports its counts."""
DEFAULT_DIR = ".duck-tape"

_context_option = click.option(
    "--context", "context_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_CONTEXT,
    show_default=True, help="The CONTEXT.md file.")


def _err(line: str) -> None:
    _echo(line, err=True)


def _echo(text: str, *, nl: bool = True, err: bool = False) -> None:
    """Print ``text`` masked like every text a command prints (issue 11): the diff shows CONTEXT.md as it was,
    with whatever was written into it by hand."""
    from pipeline.redact import safe

    click.echo(safe(text), nl=nl, err=err)


def _plan_merge(context_path: Path, states: list[AgentState], *, dry_run: bool, mask: bool,
                names: list[str | None] | None):
    """``(tidied, outcome)``: the notes of what an interrupted write left and was removed (issue 11 part 7; not on
    a dry run), and the planned merge (``plan_merge``; a dry run plans with secrets masked)."""
    from pipeline.context.api import plan_merge

    tidied: list[str] = []
    if not dry_run:
        from pipeline.context.safewrite import tidy

        tidied = tidy(context_path)
    return tidied, plan_merge(context_path, states, mask=mask or dry_run, names=names)


def run_merge(context_path: Path, states: list[AgentState], *, yes: bool, dry_run: bool, mask: bool,
              names: list[str | None] | None = None) -> None:
    """Plan, preview (unified diff), approve and write a merge of ``states`` into ``context_path``; print the
    changelog.  A dry run previews with secrets masked and writes nothing.  ``names``: the state files' names
    for the Notes lines (``plan_merge``).  Raises what ``plan_merge`` raises, ``ApprovalDeclined`` (exit 4)."""
    from pipeline.approval import confirm_write
    from pipeline.context.api import apply_merge
    from pipeline.context.changelog import format_changelog, format_dry_run
    from pipeline.context.preview import unified_diff

    tidied, outcome = _plan_merge(context_path, states, dry_run=dry_run, mask=mask, names=names)
    for line in tidied:
        _err(f"duck-tape: {line}")
    for line in outcome.redaction:
        _err(line)
    if outcome.redaction and not mask:
        _err("duck-tape: preview masks secrets; writing needs --mask")
    if not outcome.changed:
        _echo(format_dry_run(outcome.changelog, outcome.skipped) if dry_run else format_changelog(outcome.changelog))
        return
    _echo(unified_diff(outcome.before, outcome.after, context_path.name), nl=False)
    if dry_run:
        _echo(format_dry_run(outcome.changelog, outcome.skipped))
        _err(f"duck-tape: dry run: nothing was written to {context_path}")
        return
    if outcome.skipped:
        _echo("Left out of CONTEXT.md:\n" + "\n".join(outcome.skipped))
    confirm_write(str(context_path), yes=yes)
    apply_merge(context_path, outcome)
    _echo(format_changelog(outcome.changelog))


def _never_asks(context_path: Path, yes: bool) -> None:
    from pipeline.errors import ApprovalDeclined

    if not yes:
        raise ApprovalDeclined(f"--json never asks, so nothing was written to {context_path}: pass --yes to write "
                               "or --dry-run to preview")


def merge_report(context_path: Path, states: list[AgentState], *, yes: bool, dry_run: bool, mask: bool,
                 names: list[str | None] | None = None, sources: list[str] | None = None) -> dict:
    """``run_merge`` for ``--json``: plan, write (``yes``, not ``dry_run``) and return the ``merge`` object of
    docs/json.md, printing nothing.  ``sources``: the merged state files' paths for the report.  Never asks:
    ApprovalDeclined (exit 4) for a change without ``yes`` or ``dry_run``; otherwise raises what ``run_merge``
    raises."""
    from pipeline.context.api import apply_merge
    from pipeline.context.preview import unified_diff

    tidied, outcome = _plan_merge(context_path, states, dry_run=dry_run, mask=mask, names=names)
    diff = unified_diff(outcome.before, outcome.after, context_path.name) if outcome.changed else ""
    written = False
    if outcome.changed and not dry_run:
        _never_asks(context_path, yes)
        apply_merge(context_path, outcome)
        written = outcome.changed
    from pipeline.context.model import SCHEMA

    changes = sorted(outcome.changes if outcome.changed else [],  # the changelog's order: schema sections
                     key=lambda c: SCHEMA.index(c.section) if c.section in SCHEMA else len(SCHEMA))
    redacted = {m["section"]: int(m["n"]) for line in outcome.changelog if (m := _REDACTED.fullmatch(line))}
    return {"command": "merge", "context": str(context_path), "state_files": list(sources or []),
            "dry_run": dry_run, "bootstrapped": outcome.before is None or not outcome.before.strip(),
            "changed": outcome.changed, "written": written, "changelog": list(outcome.changelog),
            "added": [{"section": c.section, "key": c.key} for c in changes if c.kind == "Added"],
            "superseded": [{"section": c.section, "key": c.key, "old": c.old, "new": c.new}
                           for c in changes if c.kind == "Superseded"],
            "dropped": [{"section": c.section, "key": c.key, "reason": c.reason}
                        for c in changes if c.kind == "Dropped"],
            "kept": [{"section": section, "key": key, "reason": "already in CONTEXT.md with the same text"}
                     for section, key in outcome.kept],
            "skipped": [{"source": item.source, "text": item.text, "reason": item.reason} for item in outcome.left_out],
            "redacted": redacted, "diff": diff, "notes": tidied, "redaction": list(outcome.redaction)}


def _commit(context_path: Path, before: str, after: str, replan: Callable[[str | None], str | None], *, yes: bool,
            dry_run: bool, lines: list[str]) -> None:
    """Preview ``before`` -> ``after``, approve, write under the lock (``replan`` if the file changed), print ``lines``."""
    from pipeline.approval import confirm_write
    from pipeline.context.changelog import format_changelog
    from pipeline.context.preview import unified_diff
    from pipeline.context.safewrite import update

    _echo(unified_diff(before, after, context_path.name), nl=False)
    if dry_run:
        _echo(format_changelog(lines))
        _err(f"duck-tape: dry run: nothing was written to {context_path}")
        return
    confirm_write(str(context_path), yes=yes)
    update(context_path, before, after, replan)
    _echo(format_changelog(lines))


def _commit_fields(context_path: Path, before: str, after: str | None,
                   replan: Callable[[str | None], str | None], *, yes: bool, dry_run: bool) -> dict:
    """``_commit`` for ``--json``: write ``after`` (None or equal to ``before``: nothing to write) unless
    ``dry_run``; return ``{"dry_run", "changed", "written", "diff"}``.  ApprovalDeclined without ``yes``."""
    from pipeline.context.preview import unified_diff
    from pipeline.context.safewrite import update

    changed = after is not None and after != before
    written = False
    if changed and not dry_run:
        _never_asks(context_path, yes)
        written = update(context_path, before, after, replan) is not None
    return {"dry_run": dry_run, "changed": changed, "written": written,
            "diff": unified_diff(before, after, context_path.name) if changed else ""}


def _require(context_path: Path) -> str:
    from pipeline.context.safewrite import read_context
    from pipeline.errors import InputError

    text = read_context(context_path)
    if text is None:
        raise InputError("does not exist (duck-tape merge bootstraps a new CONTEXT.md)", path=str(context_path))
    return text


_json_option = click.option("--json", "as_json", is_flag=True,
                            help="Print one JSON object instead of the diff and the changelog; never asks: pass "
                                 "--yes to write or --dry-run.")


@click.command("merge")
@click.argument("state_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@_context_option
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="State store to take the newest state file from when STATE_FILE is not given.")
@click.option("--session", "session", default=None, metavar="ID", envvar="DUCK_TAPE_SESSION",
              help="Without STATE_FILE: take this session's state file.  [env: DUCK_TAPE_SESSION]")
@click.option("--yes", is_flag=True, help="Approve the write without asking (needed when not on a terminal).")
@click.option("--dry-run", is_flag=True, help="Print the diff and the changelog; write nothing.")
@click.option("--mask", is_flag=True, help="Write <REDACTED> in place of detected secrets instead of refusing.")
@_json_option
def merge(state_file: Path | None, context_path: Path, directory: Path, session: str | None, yes: bool,
          dry_run: bool, mask: bool, as_json: bool) -> None:
    """Merge a state file into CONTEXT.md: what will still hold next session, each under a stable key.

    Lasting decisions go to Decisions, your rules to Conventions, terms the session defined to Glossary,
    unfinished work to Deferred-Debt (marked resolved when a later state shows it done), unanswered questions
    to Open-Questions, durable facts (environment traps, ports, root causes) to a dated Notes block.  Approvals
    of one step ("commit these changes"), the task list and one-off failures are left out: the preview lists
    each with its reason.  STATE_FILE defaults to the best state file in DIR (manual > recovered > auto) of
    the session --session names, or of the one session DIR holds: with several sessions' files there it names
    them and asks you to pick (exit 2).  Only files duck-tape wrote in this folder count, never a sub-agent's.
    A missing CONTEXT.md is bootstrapped; one missing schema sections is refused (run `duck-tape migrate`).
    Prints a unified diff, asks for approval, writes under a lock, then prints the changelog.  Exit 3 when the
    result would hold a secret (unless --mask), 4 when not approved.  --json prints what was added,
    superseded, dropped, kept and left out instead.
    """
    from pipeline.errors import InputError
    from pipeline.state.owner import pick_for_merge
    from pipeline.state.parse import parse

    if as_json:
        from pipeline.commands.json_out import begin

        begin("merge")
    if state_file is None:
        best, owned = pick_for_merge(directory, session)
        named = owned.named()
        if named and not as_json:
            _err(f"duck-tape: merge: {named}")
        if best is None:
            whose = f" of session {session}" if session else ""
            left = owned.excluded()
            raise InputError(f"no state file{whose} in {directory}" + (f" (not using {left})" if left else "")
                             + ": pass STATE_FILE or --dir")
        state_file = best.info.path
        if not as_json:
            _err(f"duck-tape: merging {state_file}")
    try:
        text = state_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the state file: {exc}", path=str(state_file)) from None
    states = [parse(text, path=str(state_file))]
    if as_json:
        from pipeline.commands.json_out import emit

        emit(merge_report(context_path, states, yes=yes, dry_run=dry_run, mask=mask, sources=[str(state_file)]))
        return
    run_merge(context_path, states, yes=yes, dry_run=dry_run, mask=mask)


@click.command("migrate")
@_context_option
@click.option("--yes", is_flag=True, help="Approve the write without asking.")
@click.option("--dry-run", is_flag=True, help="Print the report and the diff; write nothing.")
@_json_option
def migrate(context_path: Path, yes: bool, dry_run: bool, as_json: bool) -> None:
    """Move freeform CONTEXT.md content into the schema sections.

    Classifies each paragraph and list item above the schema (Goals, Decisions, Conventions, Glossary,
    Deferred-Debt, Open-Questions, Notes) by cue phrases and headings, flags low-confidence placements, leaves
    unmatched blocks above the schema, adds missing section headers and the TOC, and reports every block's
    destination.  Secrets refuse the write (exit 3).  --json prints the placements and the changelog instead.
    """
    from datetime import datetime, timezone

    from pipeline.context.changelog import format_changelog
    from pipeline.context.gate import gate
    from pipeline.context.migrate import plan_migrate

    if as_json:
        from pipeline.commands.json_out import begin

        begin("migrate")
    before = _require(context_path)
    now = datetime.now(timezone.utc)
    outcome = plan_migrate(before, path=str(context_path), now=now)

    def replan(current: str | None) -> str | None:
        if current is None:
            return None
        fresh = plan_migrate(current, path=str(context_path), now=now)
        gate(fresh.after, mask_secrets=False, path=str(context_path))
        return fresh.after if fresh.changed else None

    if as_json:
        from pipeline.commands.json_out import emit

        if outcome.changed:
            gate(outcome.after, mask_secrets=False, path=str(context_path))
        fields = _commit_fields(context_path, before, outcome.after, replan, yes=yes, dry_run=dry_run)
        emit({"command": "migrate", "context": str(context_path), **fields, "report": list(outcome.report),
              "placements": outcome.placements, "added_sections": outcome.added_sections,
              "toc_regenerated": outcome.toc_regenerated, "changelog": list(outcome.changelog)})
        return
    _echo("Migration:")
    for line in outcome.report:
        _echo(line)
    if not outcome.changed:
        _echo(format_changelog(outcome.changelog))
        return
    gate(outcome.after, mask_secrets=False, path=str(context_path))
    _commit(context_path, before, outcome.after, replan, yes=yes, dry_run=dry_run, lines=outcome.changelog)


@click.command("prune")
@_context_option
@click.option("--list", "list_only", is_flag=True, help="List the Notes blocks (the default without --drop).")
@click.option("--drop", "drops", multiple=True, metavar="TIMESTAMP",
              help="Remove the Notes block(s) headed 'YYYY-MM-DD HH:MM'; repeat for more.")
@click.option("--yes", is_flag=True, help="Approve the write without asking.")
@click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")
@_json_option
def prune(context_path: Path, list_only: bool, drops: tuple[str, ...], yes: bool, dry_run: bool,
          as_json: bool) -> None:
    """List Notes blocks, or remove chosen ones (nothing else is touched).  --json prints the list (or what was
    dropped) as one JSON object."""
    from pipeline.context.prune import list_notes, normalize_stamp, plan_prune

    if as_json:
        from pipeline.commands.json_out import begin, emit

        begin("prune")
    before = _require(context_path)
    if list_only or not drops:
        notes = list_notes(before, path=str(context_path))
        if as_json:
            emit({"command": "prune", "context": str(context_path), "action": "list",
                  "notes": [{"stamp": n.stamp, "lines": n.lines, "first": n.first} for n in notes]})
            return
        for note in notes:
            _echo(f"{note.stamp}  ({note.lines} line{'s' if note.lines != 1 else ''})  {note.first}")
        if not notes:
            _echo("No Notes blocks.")
        return
    after, lines = plan_prune(before, list(drops), path=str(context_path))

    def replan(current: str | None) -> str | None:
        return None if current is None else plan_prune(current, list(drops), path=str(context_path))[0]

    if as_json:
        fields = _commit_fields(context_path, before, after, replan, yes=yes, dry_run=dry_run)
        emit({"command": "prune", "context": str(context_path), "action": "drop", **fields,
              "dropped": list(dict.fromkeys(normalize_stamp(value) for value in drops)),
              "changelog": list(lines)})
        return
    _commit(context_path, before, after, replan, yes=yes, dry_run=dry_run, lines=lines)


COMMANDS = [merge, migrate, prune]
