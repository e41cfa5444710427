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

    Reads the hook's JSON on stdin: Claude Code PreCompact (transcript_path, session_id), Copilot CLI preCompact
    (transcriptPath, sessionId), Codex CLI PreCompact (transcript_path, session_id, turn_id; a null path is
    found by id), Gemini CLI PreCompress (transcript_path, session_id; it gets one JSON object on stdout) and the
    duck-tape opencode plugin's (snapshotPath, sessionID).  It distils the transcript with the rules engine, masks
    secrets with <REDACTED>, rotates the store to 10 state files and writes the marker with the transcript
    path.  When the path is empty or stale the transcript is looked up by session id in the harness's own
    folders.  Each session also gets its own marker record (DIR/.markers/) that `duck-tape restore` reads at
    its SessionStart; a second session writing in the same minute gets its own state file name.  It never
    fails the hook: any problem leaves a marker-only write, one line on stderr, exit 0.

    Only what is new is read: DIR/.reach/ remembers how far the last checkpoint of the transcript read and the
    state it made, and the lines appended since are folded into it.  A first look at a session reads it within
    DUCK_TAPE_HOOK_BUDGET seconds (default 5; 0: no limit): its start and its end, and the lines in between are
    named on stderr and in Re-derivation with the `duck-tape recover` command that reads them.
    """
    from pipeline.hooks.checkpoint import PREFIX, hook_main

    if ctx.args:
        click.echo(f"{PREFIX} ignoring unexpected argument(s): {' '.join(ctx.args)}", err=True)
    hook_main(transcript, directory, max_bytes=max_bytes)


def _harness_names() -> list[str]:
    from pipeline.hooks.detect import HARNESSES

    return [h.name for h in HARNESSES]


@click.command("init", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--harness", "harnesses", multiple=True, type=click.Choice(_harness_names()), metavar="NAME",
              help="Harness to set up (repeatable): " + ", ".join(_harness_names()) + ".  Default: every harness "
                   "in use here (its folder in the project or in your home folder).")
@click.option("--yes", "--write", "yes", is_flag=True,
              help="Install without asking (Copilot CLI: also add the `duck-tape resume` line to its instructions).")
@click.option("--dry-run", is_flag=True, help="Only show what would change; write nothing and ask nothing.")
@click.option("--user", is_flag=True,
              help="Install into your user-level settings (every project) instead of this project's.")
@click.option("--project", is_flag=True,
              help="Claude Code: write the shared .claude/settings.json (committed with the project) instead of "
                   "the personal .claude/settings.local.json.")
@click.option("--restore/--no-restore", default=None,
              help="Also install the hook that hands the saved state back to the agent right after a compaction.  "
                   "Default: on where the harness can add text to the new context (Claude Code, Codex, Gemini CLI "
                   "when it runs a hook after compressing), off elsewhere.")
@click.option("--nudge", is_flag=True,
              help="Claude Code: also add a Stop hook running `duck-tape nudge`, which tells you (not the model) when "
                   "the context first passes 75 % and 88 % of its window: a moment to checkpoint.")
@click.option("--root", type=click.Path(file_okay=False, path_type=str), default=".", show_default=True,
              help="Project folder to install into (must exist; it is not created).")
@click.option("--command", "hook_command", default=None, metavar="CMD",
              help="How the hook calls duck-tape, as shell words.  Default: duck-tape when it is on PATH, else "
                   "the full path of this duck-tape.  The path of an existing file is taken whole, spaces and all.")
@click.option("--prompt/--no-prompt", default=True,
              help="Also add the resume prompt as each harness's own command (Claude Code /duck-tape-resume, Codex "
                   "$duck-tape-resume, Gemini CLI /duck-tape:resume, opencode and Copilot CLI /duck-tape-resume): "
                   "when you run it, the agent recovers the state itself through the duck-tape MCP tools.  "
                   "[default: on]")
@click.option("--refine/--no-refine", default=None,
              help="After each checkpoint, refine its state in the background with your agent's CLI (or the "
                   "configured model) and write <stamp>-recovered.state.md, which restore and resume then prefer.  "
                   "It spends that model's tokens (capped per session).  [default: off; asked on a terminal]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (what was found, planned, written).")
def init(harnesses: tuple[str, ...], yes: bool, dry_run: bool, user: bool, project: bool, restore: bool | None,
         nudge: bool, root: str, hook_command: str | None, prompt: bool, refine: bool | None, as_json: bool) -> None:
    """Set duck-tape up for your agent harnesses: a hook that saves the session's state before every compaction
    and, where the harness allows it, one that hands it back right after.

    \b
    Claude Code  .claude/settings.local.json (PreCompact, and SessionStart after a compaction);
                 --project: .claude/settings.json; --user: ~/.claude/settings.json
    Copilot CLI  .github/hooks/duck-tape.json (preCompact); --user: ~/.copilot/hooks/duck-tape.json
    opencode     .opencode/plugins/duck-tape.js; --user: ~/.config/opencode/plugins/duck-tape.js
    Gemini CLI   .gemini/settings.json (PreCompress); --user: ~/.gemini/settings.json
    Codex CLI    .codex/hooks.json (PreCompact, and SessionStart after a compaction); --user: ~/.codex/hooks.json

    Without --harness it sets up every harness in use here.  It shows each change as a diff, then asks (on a
    terminal), installs (--yes) or stops there (--dry-run, or no terminal).  Copilot CLI cannot be handed the
    state back, so init offers a line in its instructions telling the agent to run `duck-tape resume`.
    Each harness also gets the resume prompt as its own command (--no-prompt: not), and on a terminal init asks
    whether to refine every checkpoint in the background with your agent's CLI (--refine/--no-refine: decided).
    Existing settings and hooks are kept; a changed file is backed up first (<file>.<UTC time>.bak); running it
    again changes nothing.  A personal settings file inside a git work tree is added to the repository's
    info/exclude.  Exit 2 for an unknown --root, a --command the shell cannot split, or no harness found.
    """
    from pipeline.commands.hooks_init import run_init

    run_init(harnesses, root=root, yes=yes, dry_run=dry_run, user=user, project=project, restore=restore,
             hook_command=hook_command, as_json=as_json, nudge=nudge, prompt=prompt, refine=refine)


COMMANDS = [checkpoint, init]
