"""``duck-tape restore`` (issue 7): the post-compaction handoff, plain or as the Claude Code SessionStart hook JSON.

The plain shapes are run by ``pipeline.entry`` without click (start-up time); this click command serves
``--help`` and every other shape, validates the budget and format (exit 2 on bad usage), and runs the same
function, which never fails at run time.
"""

from __future__ import annotations

import click


@click.command("restore", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", default=None, metavar="DIR",
              help="State store holding .last-compact and the state files (default: .duck-tape here).")
@click.option("--budget", type=click.IntRange(1000, 9500), default=6000, show_default=True, metavar="BYTES",
              help="Most bytes to print, everything on stdout included (1000-9500).")
@click.option("--format", "fmt", type=click.Choice(["plain", "claude-code", "gemini", "codex"]), default="plain",
              show_default=True,
              help="claude-code, codex, gemini: wrap the text as SessionStart hook JSON "
                   "(hookSpecificOutput.additionalContext); gemini prints {} when there is nothing to restore.")
@click.option("--no-reconcile", is_flag=True, help="Skip the read-only check of the workspace (git log, files).")
def restore(directory: str | None, budget: int, fmt: str, no_reconcile: bool) -> None:
    """Print a compact handoff of the best state file, to feed the next session after a compaction.

    Picks the state file as `duck-tape resume` does (manual > recovered > auto) and prints, within BYTES:
    the approved workflow, Current, Remaining, the decisions (REJECTED ones with their reasons) and the
    user's constraints first, then what changed in the workspace since the file was written (commits,
    Remaining items that look done, files that no longer exist), then facts, Done and Re-derivation while
    they fit, and names what it left out.  No LLM.  Never fails: with no marker, no state file or a corrupt
    one it prints nothing (one line on stderr) and exits 0.
    """
    from pipeline.restore.run import restore_main

    restore_main(directory, budget, fmt, reconcile=not no_reconcile)


COMMANDS = [restore]
