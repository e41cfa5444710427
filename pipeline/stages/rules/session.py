"""Session facts read from tool output when the transcript's metadata lacks them (DESIGN.md "Agent State file":
the header's ``Repo/Branch``; Re-derivation: "assume no conversation history").

* **branch** — the git branch the session worked on, as git itself printed it: the latest ``On branch X``
  (``git status``) or ``Switched to (a new) branch 'X'`` (``git checkout``/``git switch``) at the start of a
  line of a successful tool result, or the branch ``git init`` says it named (``hint: Using 'master' as the
  name for the initial branch``);
* **resume lines** — a sub-agent session a later call can resume (the reader puts its id in the
  ``subagent_result``'s ``target``, e.g. opencode's ``task_id: ses_…``): ``Resume the <agent> sub-agent:
  task_id <id>``, newest last, at most ``MAX_RESUME``.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.scan import Scan

MAX_RESUME = 3

_BRANCH = lazy_re(
    r"^(?:On branch (\S+)|Switched to (?:a new )?branch '([^'\s]+)')|"
    r"\bhint: Using '([^'\s]+)' as the name for the initial branch", re.MULTILINE,
)


def branch(s: Scan) -> str | None:
    """The branch the latest git output in a tool result names, or None."""
    for i in reversed(s.results):
        ev = s.events[i]
        if ev.is_error or "branch" not in ev.text:
            continue
        m = _BRANCH.search(ev.text)
        if m:
            return next(g for g in m.groups() if g)
    return None


def resume_lines(s: Scan) -> list[str]:
    """``Resume the <agent> sub-agent: task_id <id>`` for each resumable sub-agent session, newest last."""
    out: dict[str, None] = {}
    for i in s.subagent_results:
        ev = s.events[i]
        if ev.target and not ev.is_error:
            line = f"Resume the {ev.agent or 'task'} sub-agent: task_id {ev.target}"
            out.pop(line, None)
            out[line] = None
    return list(out)[-MAX_RESUME:]
