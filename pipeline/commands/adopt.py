"""``duck-tape adopt``: let restore and resume use a state file duck-tape did not write (issue 22, item 1).

``restore`` and ``resume`` hand over only state files this store wrote (``pipeline.state.trust``), so a file dropped
into ``.duck-tape/`` — planted by another program, copied from another project — never reaches the next agent.  A
state file a person (or an agent, asked to) wrote by hand there, a manual ``<stamp>.state.md``, is such a file too:
``adopt`` is how its author vouches for it.  It must read as a state file (DESIGN.md format) and name this folder
as its ``Cwd``; then, after approval, the store records it as its own.
"""

from __future__ import annotations

from pathlib import Path

import click

DEFAULT_DIR = ".duck-tape"


@click.command("adopt", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("state_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="The state store the files are in.")
@click.option("--yes", is_flag=True, help="Approve without asking (needed when not on a terminal).")
def adopt(state_files: tuple[Path, ...], directory: Path, yes: bool) -> None:
    """Let restore and resume use STATE_FILES, state files you wrote yourself in DIR.

    restore and resume hand the next agent only state files duck-tape wrote in this folder; any other file in
    DIR (planted, copied from another project, written by hand) is named and left out.  Adopt a manual state
    file you wrote: it must be in DIR, read as a state file, and name this folder (or one inside it) as its
    Cwd.  Asks before recording it (--yes: no asking).  Exit 2 for a file that is not one of those.
    """
    from pipeline.approval import confirm_write
    from pipeline.errors import InputError
    from pipeline.state.owner import in_workspace, workspace_roots
    from pipeline.state.sections import read_sections
    from pipeline.state.store import STATE_RE
    from pipeline.state.trust import MAX_STATE_BYTES, owned, sign_file

    store = directory
    for path in state_files:
        if path.is_symlink() or not path.is_file():
            raise InputError("not a regular file (a symlink is never adopted)", path=str(path))
        if path.resolve().parent != store.resolve():
            raise InputError(f"not in the state store {store}: move it there first (or pass --dir)", path=str(path))
        if STATE_RE.fullmatch(path.name) is None:
            raise InputError("not a state file name (expected <YYYY-MM-DD-HHMM>[-auto|-recovered].state.md)",
                             path=str(path))
        data = path.read_bytes()
        if len(data) > MAX_STATE_BYTES:
            raise InputError(f"over {MAX_STATE_BYTES} bytes: not a state file", path=str(path))
        doc = read_sections(data.decode("utf-8", "replace"), path=str(path))
        if not in_workspace(doc.cwd, workspace_roots(store)):
            raise InputError(f"its Cwd is {doc.cwd}, not this folder ({Path.cwd()}) or one inside it: restore would "
                             "never hand it over here", path=str(path))
        if owned(store, path, data):
            click.echo(f"{path}: written by duck-tape already")
            continue
        confirm_write(f"{path} as a state file restore and resume may hand to the next agent", yes=yes)
        if not sign_file(store, path):
            from pipeline.state.trust import key_path

            raise InputError(f"could not record it: no key ({key_path()} and the store cannot be written)",
                             path=str(path))
        click.echo(f"Adopted {path}")


COMMANDS = [adopt]
