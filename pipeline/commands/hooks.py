"""``duck-tape checkpoint`` (the pre-compact hook) and ``duck-tape init`` (install the hook), issue 6.

The plain shapes of ``checkpoint`` are run by ``pipeline.entry`` without click (start-up time); this click
command serves every other shape and ``--help``, and, like the hook, never exits non-zero.
"""

from __future__ import annotations

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "ignore_unknown_options": True, "allow_extra_args": True}


@click.command("checkpoint", context_settings=CONTEXT)
@click.option("--transcript", default=None, metavar="PATH",
              help="Transcript to checkpoint (default: the path in the hook's JSON on stdin).")
@click.option("--dir", "directory", default=None, metavar="DIR",
              help="State store to write into (default: .duck-tape in the current directory).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Transcript size cap in bytes (default: DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB); a bigger "
                   "transcript gives a marker-only write.")
@click.pass_context
def checkpoint(ctx: click.Context, transcript: str | None, directory: str | None, max_bytes: int | None) -> None:
    """Pre-compact hook: write DIR/<stamp>-auto.state.md and the marker DIR/.last-compact.

    Reads the hook's JSON on stdin (Claude Code transcript_path and session_id, Copilot CLI transcriptPath,
    the duck-tape opencode plugin's snapshotPath), distils the transcript with the rules engine, masks
    secrets with <REDACTED>, rotates the store to 10 state files and writes the marker with the transcript
    path.  When the path is empty or stale the transcript is looked up by session id in the harness's own
    folders.  It never fails the hook: any problem leaves a marker-only write, one line on stderr, exit 0.
    """
    from pipeline.hooks.checkpoint import PREFIX, hook_main

    if ctx.args:
        click.echo(f"{PREFIX} ignoring unexpected argument(s): {' '.join(ctx.args)}", err=True)
    hook_main(transcript, directory, max_bytes=max_bytes)


@click.command("init", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--harness", required=True,
              type=click.Choice(["claude-code", "copilot", "opencode", "gemini", "codex"]),
              help="Which agent harness to install the pre-compact hook for.")
@click.option("--write", is_flag=True, help="Install it (after showing the diff); without it, only print.")
@click.option("--project", is_flag=True,
              help="Claude Code: write the shared .claude/settings.json instead of the personal "
                   ".claude/settings.local.json.  (Copilot and opencode files always live in the project.)")
@click.option("--root", type=click.Path(file_okay=False, path_type=str), default=".", show_default=True,
              help="Project folder to install into (must exist; it is not created).")
@click.option("--command", "hook_command", default="duck-tape", show_default=True, metavar="CMD",
              help="How the hook calls duck-tape, as shell words (e.g. an absolute path when duck-tape is not on "
                   "the hook's PATH).  The path of an existing file is taken whole, spaces and all; otherwise "
                   "quote a path with spaces.")
@click.option("--restore", is_flag=True,
              help="claude-code: also add a SessionStart hook (matcher compact) running `duck-tape restore "
                   "--format claude-code`, which feeds the state back into the context right after a compaction.")
@click.option("--nudge", is_flag=True,
              help="claude-code: also add a Stop hook running `duck-tape nudge`, which tells you (not the model) when "
                   "the context first passes 75 % and 88 % of its window: a moment to checkpoint.")
@click.option("--user", is_flag=True,
              help="gemini, codex: install into your own settings (~/.gemini/settings.json, ~/.codex/hooks.json) "
                   "for every project, instead of the project's.")
@click.option("--yes", is_flag=True,
              help="copilot: also add the one-line `duck-tape resume` note to .github/copilot-instructions.md "
                   "without asking.")
def init(harness: str, write: bool, project: bool, root: str, hook_command: str, restore: bool, nudge: bool,
         user: bool, yes: bool) -> None:
    """Print (or with --write install) the hook configuration that calls `duck-tape checkpoint`.

    claude-code: a PreCompact hook merged into .claude/settings.local.json (or settings.json with
    --project), keeping every existing hook; copilot: .github/hooks/duck-tape.json (preCompact); opencode:
    .opencode/plugins/duck-tape.js, a plugin that writes the session snapshot and calls the checkpoint.
    --restore (claude-code) also adds a SessionStart hook with the matcher compact that runs
    `duck-tape restore --format claude-code` after every compaction, beside the PreCompact one.
    --nudge (claude-code) also adds a Stop hook running `duck-tape nudge` after each turn.
    gemini: .gemini/settings.json (PreCompress; a SessionStart restore only when the installed Gemini CLI
    starts a session after a compression); codex: .codex/hooks.json (PreCompact, and SessionStart with the
    compact source running `duck-tape restore --format codex`).  --user writes the user's own file instead.
    Idempotent: an installed hook is left as it is.  The diff is shown before writing, and a file that
    changes is backed up first (<file>.<UTC time>.bak).  Exit 2 for a --command the shell cannot split (an
    unbalanced quote) and for a --root that does not exist.
    """
    from pathlib import Path

    from pipeline.hooks.install import apply_plan, command_notes, parse_hook_command, plan_install

    command = parse_hook_command(hook_command, Path(root))
    plan = plan_install(harness, Path(root), project=project, command=command, restore=restore, nudge=nudge,
                        user=user)
    from pipeline.redact import safe  # the diff shows the harness's settings file, which may hold keys (issue 11)

    click.echo(f"# {plan.path}")
    click.echo(safe(plan.snippet), nl=not plan.snippet.endswith("\n"))
    if not plan.changed:
        click.echo(f"{plan.path}: the duck-tape hook is already installed; nothing to do.")
        for note in plan.notes:
            click.echo(f"note: {note}", err=True)
        return
    diff = plan.diff()
    click.echo(safe(diff), nl=not diff.endswith("\n"))
    for note in [*command_notes(command, Path(root), harness), *plan.notes]:
        click.echo(f"note: {note}", err=True)
    if not write:
        click.echo(f"Not written (dry run): pass --write to install into {plan.path}.")
        return
    backup = apply_plan(plan)
    if backup is not None:
        click.echo(f"Backed up the old file to {backup}")
    click.echo(f"Wrote {plan.path}")
    if harness == "copilot":
        _copilot_instructions(Path(root), yes)


def _copilot_instructions(root, yes: bool) -> None:
    """Say that Copilot restores nothing after a compaction and offer the ``duck-tape resume`` line."""
    from pipeline.hooks.install import apply_plan
    from pipeline.hooks.install_copilot import NOTE, plan_instructions

    click.echo(f"after a compaction: {NOTE}", err=True)
    plan = plan_instructions(root)
    if not plan.changed:
        click.echo(f"{plan.path} already tells the agent to run `duck-tape resume`.")
        return
    click.echo(plan.diff(), nl=False)
    import sys

    asked = not yes and sys.stdin is not None and sys.stdin.isatty()
    if not yes and not (asked and click.confirm(f"Add this line to {plan.path}?", default=False)):
        click.echo(f"Not added: put `duck-tape resume` in the agent's instructions yourself, or run init with --yes.")
        return
    apply_plan(plan)
    click.echo(f"Wrote {plan.path}")


COMMANDS = [checkpoint, init]
