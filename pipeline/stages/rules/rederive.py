"""Re-derivation: what to read and run to rebuild what the state file does not spell out (DESIGN.md "Agent
State file": "commands to run, files to read … assume no conversation history").

Lines, in this order:
* ``Read the transcript: <meta.path>``;
* ``Read: <path>`` for each file the session edited or wrote (deduplicated, most recently touched last, the
  newest ``MAX_FILES``), paths relative to the session's cwd when under it;
* ``Run: <command>`` for each test / lint / build / run command the session ran through a shell tool
  (deduplicated by whitespace-normalized text, most recent last, the newest ``MAX_COMMANDS``).  A long compound
  command is reduced to its matching part.
"""

from __future__ import annotations

from pipeline.stages.rules import tools
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip

MAX_FILES = 15
MAX_COMMANDS = 10
COMMAND_LIMIT = 200  # characters
WHOLE_COMMAND_LIMIT = 120  # a compound command up to this long (and <= 3 parts) is kept whole


def build(s: Scan) -> list[str]:
    """The Re-derivation lines for the transcript behind ``s``."""
    files: dict[str, None] = {}
    commands: dict[str, None] = {}
    for i in s.calls:
        ev = s.events[i]
        for p in tools.edit_paths(ev):
            rp = tools.relative(p, s.meta.cwd)
            files.pop(rp, None)
            files[rp] = None
        cmd = tools.command_of(ev)
        if not cmd:
            continue
        found = tools.command_kind(cmd)
        if not found:
            continue
        _, segment = found
        whole = len(cmd) <= WHOLE_COMMAND_LIMIT and len(tools.segments(cmd)) <= 3
        shown = cmd if whole else segment
        shown = clip(shown, COMMAND_LIMIT)
        commands.pop(shown, None)
        commands[shown] = None
    out = [f"Read the transcript: {s.meta.path}"] if s.meta.path else []
    out += [f"Read: {p}" for p in list(files)[-MAX_FILES:]]
    out += [f"Run: {c}" for c in list(commands)[-MAX_COMMANDS:]]
    return out
