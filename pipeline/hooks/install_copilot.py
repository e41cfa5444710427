"""Copilot CLI after a compaction: no hook adds context, so the agent's instructions point to ``duck-tape resume``.

GitHub Copilot CLI hooks reference (docs.github.com): ``preCompact`` runs before a compaction (the checkpoint,
``pipeline.hooks.install``); what a ``sessionStart`` command hook prints is not added to the context
(github/copilot-cli#2142), and a ``sessionStart`` *prompt* hook fires only for new interactive sessions, never after
a compaction.  So ``init --harness copilot`` says so and offers one line in ``.github/copilot-instructions.md`` (the
repository's custom instructions, read on every request; with ``--user`` ``~/.copilot/copilot-instructions.md``)
telling the agent to run ``duck-tape resume`` when its context was compacted.  Pure planning: the line is added only with the user's approval.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.hooks.install import InstallPlan

NOTE = ("Copilot CLI does not add a hook's output to the context after a compaction (sessionStart output is "
        "ignored), so nothing restores the saved state automatically")
LINE = ("- After your context was compacted (or when resuming work), run `duck-tape resume` and continue from the "
        "state it prints.")
MARK = "duck-tape resume"


def instructions_path(root: Path, *, user: bool = False, env=None) -> Path:
    """``<root>/.github/copilot-instructions.md``; with ``user`` the personal instructions for every repository,
    ``copilot-instructions.md`` in Copilot's folder (``$COPILOT_HOME``, default ``~/.copilot``; docs.github.com
    "CLI configuration directory"), read from ``env`` (default ``os.environ``)."""
    if user:
        from pipeline.hooks.detect import harness

        return harness("copilot").user_dir(os.environ if env is None else env) / "copilot-instructions.md"
    return root / ".github" / "copilot-instructions.md"


def plan_instructions(root: Path, *, user: bool = False, env=None) -> InstallPlan:
    """The instructions file (``instructions_path``) with ``LINE`` appended (a new file holds only the line);
    unchanged when the file already mentions ``duck-tape resume``.  Raises OSError when the file exists but
    cannot be read."""
    path = instructions_path(root, user=user, env=env)
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if old is not None and MARK in old:
        new = old
    elif old:
        new = old + ("" if old.endswith("\n") else "\n") + ("\n" if not old.endswith("\n\n") else "") + LINE + "\n"
    else:
        new = LINE + "\n"
    return InstallPlan("copilot", path, old, new, LINE + "\n")
