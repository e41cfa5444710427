"""The Claude Code ``Stop`` hook group that runs ``duck-tape nudge`` (issue 17 §4), for ``init --nudge``.

Claude Code runs ``Stop`` hooks when the main agent finishes responding ("Hooks reference": no matcher for this
event; stdin carries ``transcript_path``).  The nudge prints ``{"systemMessage": …}``, which Claude Code shows to
the user and does not add to the model's context.
"""

from __future__ import annotations

import re

NUDGE_TIMEOUT_SECONDS = 5
OURS_NUDGE = re.compile(r"(?:^|[\s/\\\"'])duck-tape(?:\.exe)?[\"']?\s+nudge\b")
"""A hook command that runs ``duck-tape nudge``."""


def claude_nudge_command(shell: str = "duck-tape") -> str:
    """The ``Stop`` command (``shell``: how the hook calls duck-tape): thresholds kept in the project's store."""
    return f'{shell} nudge --dir "${{CLAUDE_PROJECT_DIR:-.}}/.duck-tape"'


def claude_nudge_group(shell: str = "duck-tape") -> dict:
    """One ``Stop`` group (no matcher: Stop has none) running the nudge."""
    return {"hooks": [{"type": "command", "command": claude_nudge_command(shell), "timeout": NUDGE_TIMEOUT_SECONDS}]}
