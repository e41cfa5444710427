"""``duck-tape nudge`` (issue 17 §4): the after-each-turn context nudge.  Its plain shapes run in
``pipeline.entry``'s fast lane (no click); this command serves ``--help`` and rejects bad usage (exit 2)."""

from __future__ import annotations

import click


@click.command("nudge", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--transcript", default=None, metavar="PATH",
              help="Transcript to measure (default: the transcript_path of the hook payload on stdin).")
@click.option("--dir", "directory", default=None, metavar="DIR",
              help="Store that keeps which thresholds fired (default: $CLAUDE_PROJECT_DIR/.duck-tape, else the "
                   "payload's cwd, else ./.duck-tape).")
@click.option("--format", "fmt", type=click.Choice(["claude-code", "plain"]), default="claude-code",
              show_default=True, help="claude-code: {\"systemMessage\": …} hook JSON, shown to the user; plain: the line.")
def nudge(transcript: str | None, directory: str | None, fmt: str) -> None:
    """Print one line when the session's context first passes 75 % and again at 88 % of its window.

    The size is the transcript's last usage record (input + cache read + cache creation tokens), read from the
    file's tail; the window comes from DUCK_TAPE_CONTEXT_LIMIT or the model id (200k assumed, and said so,
    otherwise).  Each threshold fires once per session.  Never runs anything, never adds to the model's context,
    never fails: exit 0, silent when there is nothing to say.  Installed by `init --harness claude-code --nudge`.
    """
    from pipeline.hooks.nudge import hook_main

    hook_main(transcript, directory, fmt)


COMMANDS = [nudge]
