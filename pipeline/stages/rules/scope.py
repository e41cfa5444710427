"""What a commit left out on purpose (issue 21 §2: "left X out of the commit"), read from git's own output.

Shape: a ``git status`` result lists the changed files (long format ``modified: / deleted: / new file:``, or
porcelain ``XY path``); then the agent stages with ``git add <paths>`` and commits (``tools.commit_done``).  A
tracked file the status listed as changed — one the session edited, or one the agent's own words between the
status and the commit name (it looked at it and left it: "an unrelated change in mm2_read.c") — that no ``git add`` between them named (``git add .``, ``-A``, ``-u``
and ``git commit -a`` stage everything: nothing is left out) and that no later commit of the session took is
still uncommitted: "Left out of the commit <sha> "<title>": cs_ctrl/mm2_read.c (still uncommitted)".  Untracked
files count only when a ``git add`` that named them failed (the agent dropped them after the error).  Kind
``fact``, prior ``LEFT_OUT``, quoting the status line of the first file left out.
"""

from __future__ import annotations

import re
import shlex

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.candidates import Candidate
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip

LEFT_OUT = 2.2
MAX_SHOWN = 4  # files named in one line
_STATUS_CMD = lazy_re(r"\bgit\s+(?:-C\s+\S+\s+)?status\b")
_ADD = lazy_re(r"\bgit\s+(?:-C\s+\S+\s+)?add\s+(?P<args>[^;&|]*)")
_ALL = frozenset({".", "-A", "--all", "-u", "--update", ":/", "*"})
_COMMIT_ALL = lazy_re(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b[^;&|]*\s-(?:a|am|[a-z]*a[a-z]*)\b")
_LONG = lazy_re(r"^\t(?:modified|deleted|renamed|typechange):\s+(?P<path>.+?)\s*$", re.M)
_PORCELAIN = lazy_re(r"^(?:[ MADRCU][MD]|[MD][ MD]) (?P<path>\S.*?)\s*$", re.M)


def _changed(text: str) -> list[tuple[str, int, int]]:
    """Tracked changed files a status output lists: ``(path, start, end)`` of each line."""
    out = []
    for m in _LONG.finditer(text):
        out.append((m.group("path").split(" -> ")[-1], m.start(), m.end()))
    if not out:
        for m in _PORCELAIN.finditer(text):
            out.append((m.group("path").split(" -> ")[-1], m.start(), m.end()))
    return out


def _added(cmd: str) -> tuple[set[str], bool]:
    """The paths a command stages and whether it stages everything."""
    paths: set[str] = set()
    every = bool(_COMMIT_ALL.search(cmd))
    for m in _ADD.finditer(cmd):
        try:
            args = shlex.split(m.group("args"))
        except ValueError:
            args = m.group("args").split()
        for a in args:
            if a in _ALL:
                every = True
            elif not a.startswith("-"):
                paths.add(a.rstrip("/"))
    return paths, every


def _covers(added: set[str], path: str) -> bool:
    p = path.rstrip("/")
    return any(p == a or p.endswith("/" + a) or a.endswith("/" + p) or p.startswith(a + "/") for a in added)


def _base(path: str) -> str:
    return path.rstrip("/").replace("\\", "/").rsplit("/", 1)[-1]


def _said(s: Scan, start: int, end: int) -> str:
    """The agent's own words (assistant text, reasoning) between events ``start`` and ``end``."""
    return "\n".join(s.events[j].text for j in range(start, end)
                     if s.events[j].kind in ("assistant_text", "reasoning") and s.events[j].agent is None)


def propose(s: Scan) -> list[Candidate]:
    """Files each successful commit left out (module rules), in transcript order.

    Several repositories may be in play (a submodule, parallel ``git status`` calls): a commit is matched with the
    latest status since the previous commit that lists one of the files it staged."""
    events = s.events
    edited = {_base(p) for c in s.calls for p in tools.edit_paths(events[c])}
    statuses: list[tuple[int, list[tuple[str, int, int]]]] = []
    added: set[str] = set()
    every = False
    pending: list[tuple[int, str, list[tuple[str, int, int]]]] = []  # (status result, commit label, left out)
    for call in s.calls:
        cmd = tools.raw_command(events[call])
        if not cmd:
            continue
        r = s.result_of.get(call)
        res = events[r] if r is not None else None
        if _STATUS_CMD.search(cmd) and res is not None and not tools.failed(res):
            found = _changed(res.text or "")
            if found:
                statuses.append((r, found))
        got, all_ = _added(cmd)
        if res is not None and not tools.failed(res):
            added |= got
            every = every or all_
        done = tools.commit_done(cmd, res) if "commit" in cmd else None
        if done is None:
            continue
        for _, _, left in pending:
            left[:] = [x for x in left if not all_ and not _covers(got, x[0])]
        status = next((st for st in reversed(statuses) if any(_covers(added, p) for p, _, _ in st[1])), None)
        if status is not None and not every:
            said = _said(s, status[0], call)
            left = [x for x in status[1]
                    if not _covers(added, x[0]) and (_base(x[0]) in said or _base(x[0]) in edited)]
            if left:
                sha, title = done
                label = " ".join(x for x in (sha, f'"{clip(title, 60)}"' if title else "") if x) or "that followed"
                pending.append((status[0], label, left))
            statuses.remove(status)
        added, every = set(), False
    out = []
    for r, label, left in pending:
        if not left:
            continue
        names = ", ".join(p for p, _, _ in left[:MAX_SHOWN]) + (
            f" and {len(left) - MAX_SHOWN} more" if len(left) > MAX_SHOWN else "")
        _, a, b = left[0]
        out.append(Candidate("fact", f"Left out of the commit {label}: {names} (still uncommitted)", r, a, b,
                             "scope", LEFT_OUT))
    return out
