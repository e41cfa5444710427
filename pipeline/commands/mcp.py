"""``duck-tape mcp``: run the stdio MCP server (``pipeline.serve.mcp``).  The SDK is imported only here, inside
the command: no other command and no hook path loads it."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.errors import InputError


@click.command("mcp", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=".duck-tape",
              show_default=True, help="State store the tools read (and recover writes into).")
@click.option("--context", "context_path", type=click.Path(dir_okay=False, path_type=Path), default="CONTEXT.md",
              show_default=True, help="CONTEXT.md whose Decisions the decisions tool searches (read only).")
def mcp(directory: Path, context_path: Path) -> None:
    """Serve this workspace's duck-tape state as an MCP server on stdin/stdout.

    Tools: state (the state file resume would use, as text and JSON), decisions (search the Decision Log entries
    of the state files and CONTEXT.md decisions by words, newest first), recover (recover a state file from a
    transcript path; a dry run unless approve is true), and for the agent to recover the state itself when you ask
    it (the duck-tape resume command): raw_material (the compacted session, masked, paged newest first) and
    save_state (checks every quote, names what it rejects, writes <stamp>-recovered.state.md).  Every output
    passes the redaction mask.  Add it to a harness, e.g. `claude mcp add duck-tape -- duck-tape mcp`.
    """
    try:
        from pipeline.serve.mcp import run
    except ImportError as exc:  # every install has the SDK; a damaged or hand-trimmed one may not
        from pipeline.extras import install_line

        raise InputError(f"the MCP server needs the 'mcp' package, which this installation lacks ({exc}); "
                         f"reinstall duck-tape: {install_line(None)}") from None
    run(directory, context_path)


COMMANDS = [mcp]
