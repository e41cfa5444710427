"""The preview of a CONTEXT.md write: a unified diff (DESIGN.md "Approval": every write is previewed first)."""

from __future__ import annotations

import difflib

from pipeline.context.parse import raw_lines


def unified_diff(before: str | None, after: str, name: str = "CONTEXT.md") -> str:
    """``diff -u`` of ``before`` (None: the file does not exist yet, shown as ``/dev/null``) and ``after``.

    Headers ``--- a/<name>`` / ``+++ b/<name>``, three lines of context; a last line without a newline is marked
    ``\\ No newline at end of file`` as git does.  Empty when the texts are equal.
    """
    old = raw_lines(before or "")
    new = raw_lines(after)
    out = []
    for line in difflib.unified_diff(old, new, "/dev/null" if before is None else f"a/{name}", f"b/{name}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
