"""``duck-tape verify`` (issue 17): what each compaction's summary kept of the entries extracted before it.

Thin: parses flags, reads the transcript, calls ``pipeline.verify.compare.verify`` and prints
``pipeline.verify.render``'s text or JSON.
"""

from __future__ import annotations

import click


class _Which(click.ParamType):
    """``--compaction N`` (1-based) or ``last``."""

    name = "N|last"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "last":
            return value
        if isinstance(value, str) and value.isdigit() and int(value) >= 1:
            return int(value)
        self.fail(f"{value!r} is not a compaction number (1, 2, …) or 'last'", param, ctx)


@click.command("verify", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("transcript", type=click.Path(dir_okay=False, path_type=str))
@click.option("--compaction", "which", type=_Which(), default=None,
              help="Check only this compaction (1 = the first in the file) or 'last'; default: every one.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Size cap in bytes (default: DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB).")
def verify(transcript: str, which: int | str | None, as_json: bool, max_bytes: int | None) -> None:
    """Show what each compaction in TRANSCRIPT kept and lost.

    For every compaction the rules engine extracts the entries of the events before it (Decision Log with
    status, facts, constraints, Remaining, the user's tasks); an entry is kept when one line of the harness's
    summary holds all its distinctive terms (identifiers, paths, numbers, names; a rejected alternative also a
    rejection word), else lost, shown with its evidence.  Each compaction is held to the events since the one
    before it; the total counts each entry once.  Reads only; exit 2 for a bad transcript or compaction number.
    """
    from pipeline.cli import _out
    from pipeline.commands.json_out import begin, emit
    from pipeline.errors import InputError
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env
    from pipeline.verify import render
    from pipeline.verify.compare import verify_path as run_verify

    if as_json:
        begin("verify")
    from pipeline.readprogress import reading

    only = "last" if which == "last" else which
    try:
        with reading(transcript, "verify") as update:
            result = run_verify(transcript, only=only, max_bytes=max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES),
                                progress=update)
    except ValueError as exc:
        raise InputError(str(exc), path=transcript) from exc
    if as_json:
        emit(render.as_json(result))
    else:
        _out(render.text(result), nl=False)


COMMANDS = [verify]
