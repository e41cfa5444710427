"""CONTEXT.md commands: ``merge``, ``migrate``, ``prune`` (DESIGN.md "CONTEXT.md (Tier 1)", "Approval", "Exit codes").

Every write is previewed as a unified diff, then approved (``--yes``, or a question on a terminal), then written
under the file's lock (``pipeline.context.safewrite``); ``--dry-run`` shows the preview and writes nothing.  The
changelog (or ``No changes to CONTEXT.md.``) is printed after the write.  ``run_merge`` is shared with
``duck-tape recover --merge``.  Imports stay inside the functions so ``duck-tape --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pipeline.state.model import AgentState

DEFAULT_CONTEXT = "CONTEXT.md"
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


def run_merge(context_path: Path, states: list[AgentState], *, yes: bool, dry_run: bool, mask: bool,
              names: list[str | None] | None = None) -> None:
    """Plan, preview (unified diff), approve and write a merge of ``states`` into ``context_path``; print the
    changelog.  A dry run previews with secrets masked and writes nothing.  ``names``: the state files' names
    for the Notes lines (``plan_merge``).  Raises what ``plan_merge`` raises, ``ApprovalDeclined`` (exit 4)."""
    from pipeline.approval import confirm_write
    from pipeline.context.api import apply_merge, plan_merge
    from pipeline.context.changelog import format_changelog
    from pipeline.context.preview import unified_diff

    if not dry_run:  # issue 11 part 7: what an interrupted write left (temp file, stale backup) goes, named
        from pipeline.context.safewrite import tidy

        for line in tidy(context_path):
            _err(f"duck-tape: {line}")
    outcome = plan_merge(context_path, states, mask=mask or dry_run, names=names)
    for line in outcome.redaction:
        _err(line)
    if outcome.redaction and not mask:
        _err("duck-tape: preview masks secrets; writing needs --mask")
    if not outcome.changed:
        _echo(format_changelog(outcome.changelog))
        return
    _echo(unified_diff(outcome.before, outcome.after, context_path.name), nl=False)
    if dry_run:
        _echo(format_changelog(outcome.changelog))
        _err(f"duck-tape: dry run: nothing was written to {context_path}")
        return
    confirm_write(str(context_path), yes=yes)
    apply_merge(context_path, outcome)
    _echo(format_changelog(outcome.changelog))


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


def _require(context_path: Path) -> str:
    from pipeline.context.safewrite import read_context
    from pipeline.errors import InputError

    text = read_context(context_path)
    if text is None:
        raise InputError("does not exist (duck-tape merge bootstraps a new CONTEXT.md)", path=str(context_path))
    return text


@click.command("merge")
@click.argument("state_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@_context_option
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="State store to take the newest state file from when STATE_FILE is not given.")
@click.option("--yes", is_flag=True, help="Approve the write without asking (needed when not on a terminal).")
@click.option("--dry-run", is_flag=True, help="Print the diff and the changelog; write nothing.")
@click.option("--mask", is_flag=True, help="Write <REDACTED> in place of detected secrets instead of refusing.")
def merge(state_file: Path | None, context_path: Path, directory: Path, yes: bool, dry_run: bool, mask: bool) -> None:
    """Merge a state file into CONTEXT.md: decisions, open questions and terms, each under a stable key.

    STATE_FILE defaults to the state file to resume from in DIR (manual > recovered > auto).  A missing
    CONTEXT.md is bootstrapped; one missing schema sections is refused (run `duck-tape migrate`).  Prints a
    unified diff, asks for approval, writes under a lock, then prints the changelog.  Exit 3 when the result
    would hold a secret (unless --mask), 4 when not approved.
    """
    from pipeline.errors import InputError
    from pipeline.state.parse import parse
    from pipeline.state.store import pick_best

    if state_file is None:
        best = pick_best(directory)
        if best is None:
            raise InputError(f"no state file in {directory}: pass STATE_FILE or --dir")
        state_file = best.info.path
        _err(f"duck-tape: merging {state_file}")
    try:
        text = state_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the state file: {exc}", path=str(state_file)) from None
    run_merge(context_path, [parse(text, path=str(state_file))], yes=yes, dry_run=dry_run, mask=mask)


@click.command("migrate")
@_context_option
@click.option("--yes", is_flag=True, help="Approve the write without asking.")
@click.option("--dry-run", is_flag=True, help="Print the report and the diff; write nothing.")
def migrate(context_path: Path, yes: bool, dry_run: bool) -> None:
    """Move freeform CONTEXT.md content into the schema sections.

    Classifies each paragraph and list item above the schema (Goals, Decisions, Conventions, Glossary,
    Deferred-Debt, Open-Questions, Notes) by cue phrases and headings, flags low-confidence placements, leaves
    unmatched blocks above the schema, adds missing section headers and the TOC, and reports every block's
    destination.  Secrets refuse the write (exit 3).
    """
    from datetime import datetime, timezone

    from pipeline.context.changelog import format_changelog
    from pipeline.context.gate import gate
    from pipeline.context.migrate import plan_migrate

    before = _require(context_path)
    now = datetime.now(timezone.utc)
    outcome = plan_migrate(before, path=str(context_path), now=now)
    _echo("Migration:")
    for line in outcome.report:
        _echo(line)
    if not outcome.changed:
        _echo(format_changelog(outcome.changelog))
        return
    gate(outcome.after, mask_secrets=False, path=str(context_path))

    def replan(current: str | None) -> str | None:
        if current is None:
            return None
        fresh = plan_migrate(current, path=str(context_path), now=now)
        gate(fresh.after, mask_secrets=False, path=str(context_path))
        return fresh.after if fresh.changed else None

    _commit(context_path, before, outcome.after, replan, yes=yes, dry_run=dry_run, lines=outcome.changelog)


@click.command("prune")
@_context_option
@click.option("--list", "list_only", is_flag=True, help="List the Notes blocks (the default without --drop).")
@click.option("--drop", "drops", multiple=True, metavar="TIMESTAMP",
              help="Remove the Notes block(s) headed 'YYYY-MM-DD HH:MM'; repeat for more.")
@click.option("--yes", is_flag=True, help="Approve the write without asking.")
@click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")
def prune(context_path: Path, list_only: bool, drops: tuple[str, ...], yes: bool, dry_run: bool) -> None:
    """List Notes blocks, or remove chosen ones (nothing else is touched)."""
    from pipeline.context.prune import list_notes, plan_prune

    before = _require(context_path)
    if list_only or not drops:
        notes = list_notes(before, path=str(context_path))
        for note in notes:
            _echo(f"{note.stamp}  ({note.lines} line{'s' if note.lines != 1 else ''})  {note.first}")
        if not notes:
            _echo("No Notes blocks.")
        return
    after, lines = plan_prune(before, list(drops), path=str(context_path))

    def replan(current: str | None) -> str | None:
        return None if current is None else plan_prune(current, list(drops), path=str(context_path))[0]

    _commit(context_path, before, after, replan, yes=yes, dry_run=dry_run, lines=lines)


COMMANDS = [merge, migrate, prune]
