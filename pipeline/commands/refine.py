"""``duck-tape refine``: refine a checkpoint's state with the model (the background job of issue 25, by hand too)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("refine", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=".duck-tape",
              show_default=True, help="State store holding the checkpoint.")
@click.option("--state", "state_name", default=None, metavar="FILE",
              help="The auto state file to refine (its name in the store) [default: the one the compaction "
                   "marker names].")
@click.option("--transcript", default=None, metavar="PATH",
              help="The session's transcript [default: the one the compaction marker names].")
@click.option("--model", default=None, metavar="MODEL",
              help="The model: agent:claude-code, agent:codex, agent:gemini, agent:opencode, agent:copilot, or a "
                   "litellm model string [default: DUCK_TAPE_MODEL, else the configured one].")
def refine(directory: Path, state_name: str | None, transcript: str | None, model: str | None) -> None:
    """Make a checkpoint's state again with the model and write it as <stamp>-recovered.state.md for the same
    session (restore and resume then prefer it).

    This is what the checkpoint hook starts in the background when refine = true (duck-tape init --refine).
    Every section the model cannot ground in the transcript falls back to the rules engine; nothing is written
    when no section came from the model, when a later checkpoint of the session exists, or when the session has
    a manual or recovered file as new.  Capped per session by agent_seconds and agent_tokens (and max_tokens).
    The tokens spent go to DIR/.llm-usage.jsonl, shown by `duck-tape status`.  Exit 1 when the model run failed.
    """
    from pipeline.errors import DuckTapeError, InputError
    from pipeline.refine.job import refine as run_refine

    if state_name is None:
        from pipeline.state.marker import read_marker

        marker = read_marker(directory)
        if marker is None or not marker.latest_state:
            raise InputError("no checkpoint to refine: the compaction marker names no state file (pass --state)",
                             path=str(directory / ".last-compact"))
        state_name = marker.latest_state
    config = None
    if model:
        from pipeline.engine_options import config_from_flags

        config = config_from_flags("llm", model, None, None)
    done = run_refine(directory, state_name, transcript=transcript, config=config)
    from pipeline.redact import safe

    for line in done.notes:
        click.echo(safe(f"duck-tape: refine: {line}"), err=True)
    if done.written is not None:
        click.echo(str(done.written))
    if done.outcome == "failed":
        raise DuckTapeError(f"the refinement of {state_name} failed (see the lines above)")


COMMANDS = [refine]
