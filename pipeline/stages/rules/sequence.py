"""A command sequence the user handed the agent, and how far the agent got through it (Position).

Shape: the user's latest real prompt holds two or more shell command lines — a fenced shell block, or a run of
consecutive lines that each start like a command (``git …``, ``cd …``, ``npm …``, ``$ …``; prose lines around
them, in any language, are allowed) — and the agent ran at least one of them afterwards (a shell call whose
command holds the line).  That is a script the user wants run in order: the first line no call ran yet is the
step in flight, the lines after it are what remains.  Structural (command lines against the commands the calls
ran); no phrase list.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.workflow import is_real_prompt

MIN_LINES = 2
LINE_LIMIT = 140  # characters of a command line shown

#: the programs a hand-written command line usually starts with (a line is a command when its first word is one)
_PROGRAMS = (
    "git|cd|pushd|popd|ls|dir|mkdir|rm|rmdir|cp|mv|touch|cat|echo|chmod|chown|ln|export|set|source|sudo|"
    "npm|npx|pnpm|yarn|bun|node|deno|pip|pip3|pipx|python|python3|py|uv|poetry|conda|venv|"
    "cargo|rustup|go|make|cmake|gradle|gradlew|mvn|dotnet|java|javac|"
    "docker|docker-compose|podman|kubectl|helm|terraform|gh|glab|az|aws|gcloud|firebase|vercel|netlify|railway|"
    "heroku|flyctl|fly|curl|wget|ssh|scp|rsync|tar|unzip|brew|apt|apt-get|dnf|yum|pacman|systemctl|service|"
    "composer|php|bundle|gem|rails|rake|ruby|mix|elixir|flutter|dart|swift|xcodebuild|pod|Set-Location|"
    "New-Item|Remove-Item|Copy-Item|Move-Item|code|touch|alembic|pytest|tox|jest|vitest|tsc|eslint|prettier"
)
_COMMAND_LINE = lazy_re(r"^\s*(?:\$\s+|>\s+|PS[^>]*>\s*)?(?:(?:" + _PROGRAMS + r")(?=\s|$)|\./\S+)")
_FENCE = lazy_re(r"^\s*(?:```|~~~)")
_PROMPT_MARK = lazy_re(r"^\s*(?:\$|>|PS[^>]*>)\s+")


def is_command_line(line: str) -> bool:
    """Whether ``line`` starts like a command a person types (a known program, ``./script``, a ``$ `` prompt)."""
    return bool(_COMMAND_LINE.match(line))


def command_lines(text: str) -> list[str]:
    """The command lines of a prompt (module rules), prompt marks (``$ ``) stripped; [] when under
    ``MIN_LINES``.  A fenced block counts only when its lines start like commands too (code is not a script)."""
    lines = (text or "").split("\n")
    out: list[str] = []
    run: list[str] = []
    in_fence = False
    for line in lines + [""]:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        body = line.strip()
        if body and not body.startswith("#") and _COMMAND_LINE.match(body):
            run.append(_PROMPT_MARK.sub("", body))
            continue
        if in_fence and (not body or body.startswith("#")):
            continue
        if len(run) >= MIN_LINES:
            out.extend(run)
        run = []
    return out


def _norm(cmd: str) -> str:
    return " ".join(cmd.split())


def progress(s: Scan) -> tuple[int, list[str], list[str]] | None:
    """``(prompt index, lines run, lines still open)`` for the user's latest real prompt when it is a command
    sequence the agent started on (module rules); None otherwise.  Open lines keep the prompt's order."""
    last = next((i for i in reversed(s.users) if is_real_prompt(s.events[i].text)), None)
    if last is None:
        return None
    lines = command_lines(s.events[last].text)
    if len(lines) < MIN_LINES:
        return None
    ran = [_norm(tools.command_of(s.events[i])) for i in s.calls if i > last]
    ran = [c for c in ran if c]
    if not ran:
        return None
    done: list[str] = []
    open_: list[str] = []
    for line in lines:
        key = _norm(line)
        (done if any(key in c for c in ran) else open_).append(line)
    if not done:
        return None
    return last, done, open_


def position(s: Scan) -> tuple[str | None, list[str]]:
    """``(next line, later lines)`` of the sequence in progress, each clipped; ``(None, [])`` when there is none or
    every line ran."""
    got = progress(s)
    if got is None or not got[2]:
        return None, []
    _, done, open_ = got
    total = len(done) + len(open_)
    shown = [re.sub(r"\s+", " ", x)[:LINE_LIMIT] for x in open_]
    first = f"`{shown[0]}` (next of the {total} commands the user gave; {len(done)} ran)"
    rest = [f"Run `{x}` (from the user's commands, not run yet)" for x in shown[1:]]
    return first, rest
