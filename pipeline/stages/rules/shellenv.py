"""Environment traps read from the shape of the shell calls: where the commands really ran, where git put its
repository, which branch it is on.  Structural: a directory change, then what later outputs name; never the
agent's own words about it (the agent in such a session usually misreads it).

* **cd does not carry over** — a shell call that only changes directory (``cd X``, ``pushd X``, ``Set-Location
  X``, ``chdir X``), then either (a) a later call's output names the starting directory itself as where it ran
  ("Directory listing for /home/dev:", "Initialized empty Git repository in /home/dev/.git/", a ``pwd`` printing
  it, "No files found … within /home/dev"), or (b) the next shell call fails and the same command later works
  once chained to the directory change (``cd X && cmd``, ``git -C X …``).  Harnesses that run each command in a
  fresh shell (Gemini CLI's ``run_shell_command``, Codex's ``exec_command``) behave so; the fact tells the
  resuming developer to chain the ``cd`` or pass the directory.
* **repository outside the intended folder** — ``git init`` printed "Initialized empty Git repository in
  D/.git/" (or "Reinitialized existing …") while the latest directory change named another folder, or D is a
  home directory (``/home/<u>``, ``/Users/<u>``, ``/root``, ``C:\\Users\\<u>``): the next ``git add .`` would
  stage everything under D.
* **branch mismatch** — the branch git reports (the initial-branch hint of ``git init``, "On branch X",
  "Switched to a new branch 'X'", a commit line ``[X sha]``) differs from the branch a ``git push`` names later
  (in a user prompt or a call), with no rename or checkout in between: that push would fail ("src refspec main
  does not match any").

Every fact quotes the output line that shows it (evidence rule).  Linear in the number of calls.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.trials import Trial, error_span

_CD_ONLY = lazy_re(r"^\s*(?:cd|pushd|chdir|Set-Location|sl)\s+(?:-[LP]\s+|-Path\s+)?(['\"]?)([^\s'\";&|]+)\1\s*;?\s*$",
                   re.I)
_CD_CHAINED = lazy_re(r"^\s*(?:cd|pushd|Set-Location)\s+(?:-Path\s+)?(['\"]?)([^\s'\";&|]+)\1\s*(?:&&|;)", re.I)
_GIT_INIT = lazy_re(r"(?:Reinitialized existing|Initialized empty) Git repository in (\S+?)/?\.git/?\s*$", re.M)
_HOME = lazy_re(r"^(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:[\\/]Users[\\/][^\\/]+)$")
_BRANCH_SEEN = lazy_re(
    r"Using '([\w./-]+)' as the name for the initial branch|^On branch ([\w./-]+)\s*$|"
    r"Switched to (?:a new )?branch '([\w./-]+)'|^\[([\w./-]+)(?: \(root-commit\))? [0-9a-f]{7,40}\] ",
    re.M,
)
_BRANCH_KEYS = ("initial branch", "On branch", "Switched to", "] ")
_RENAME = lazy_re(r"\bgit\s+(?:branch\s+(?:-[mM]|--move)\s+|checkout\s+(?:-[bB]\s+)?|switch\s+(?:-[cC]\s+)?)\S")
_PUSH_BRANCH = lazy_re(r"\bgit\s+push\b((?:\s+-{1,2}[\w-]+)*)\s+([\w.-]+)\s+(?:HEAD:)?([\w./-]+)")
_LIST_TOOLS = frozenset({"list_directory", "ls", "list", "glob", "read_folder"})
QUOTE_LIMIT = 110  # characters of an evidence line shown


def _line_at(text: str, at: int) -> tuple[int, int]:
    """``(start, end)`` of the line of ``text`` holding offset ``at``, without its line break."""
    a = text.rfind("\n", 0, at) + 1
    b = text.find("\n", at)
    return a, len(text) if b < 0 else b


def _join(base: str, target: str) -> str:
    """``target`` resolved against ``base`` (``..`` and ``.`` folded); absolute targets are kept."""
    if target.startswith(("/", "~")) or re.match(r"[A-Za-z]:", target):
        path = target
    else:
        path = base.rstrip("/") + "/" + target
    parts: list[str] = []
    for p in path.split("/"):
        if p == "..":
            if len(parts) > 1:
                parts.pop()
        elif p not in (".", ""):
            parts.append(p)
        elif not parts:
            parts.append("")
    return "/".join(parts) or "/"


def _names_dir(text: str, base: str) -> int | None:
    """Offset in ``text`` where it names ``base`` itself as the place a command ran (followed by the end, a
    space, ``:``, a quote or ``/.git``), or None; a path *under* ``base`` is no such naming."""
    at = text.find(base)
    n = len(base)
    while at >= 0:
        nxt = text[at + n: at + n + 5]
        if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "/._-")) and (
            not nxt or nxt[0] in " \t\n:'\"`)," or nxt.startswith("/.git") or nxt in ("/", "/\n")
        ):
            return at
        at = text.find(base, at + 1)
    return None


_DIR_ARG = lazy_re(r"(?:^|\n)(?:dir_path|path|directory|dir|cwd): *([^\n]*)")


def _names_folder(call_text: str) -> bool:
    """Whether a listing call names a folder of its own (``dir_path: src``) rather than the current one
    (no directory argument, or ``.`` / ``./``)."""
    m = _DIR_ARG.search(call_text)
    return m is not None and m.group(1).strip() not in ("", ".", "./")


def _shell_result(s: Scan, i: int):
    r = s.result_of.get(i)
    return s.events[r] if r is not None else None


def _cd_target(cmd: str) -> str | None:
    m = _CD_ONLY.match(cmd)
    return m.group(2) if m else None


def build(s: Scan) -> list[Trial]:
    """The traps of ``s`` (module rules), at most one of each kind, chronological by evidence."""
    out = [t for t in (_cd_trap(s), _repo_trap(s), _branch_trap(s)) if t is not None]
    out.sort(key=lambda t: t.ev)
    return out


def _cd_trap(s: Scan) -> Trial | None:
    """Rule "cd does not carry over" (both evidence shapes)."""
    base = (s.meta.cwd or "").rstrip("/") or None
    calls = s.calls
    for n, i in enumerate(calls):
        cmd = tools.command_of(s.events[i])
        target = _cd_target(cmd) if cmd else None
        if target is None:
            continue
        res = _shell_result(s, i)
        if res is None or tools.failed(res):
            continue  # a cd that failed explains itself
        dest = _join(base, target) if base else None
        later = calls[n + 1:]
        # (a) a later output names the starting directory as where it ran; a shell output is the best proof,
        # then a listing of ".", then a search from it (a search tool may always start at the project root)
        if base and dest and dest != base:
            best: tuple[int, int, int, int, str, str] | None = None  # (strength, result, start, end, what, cd)
            last_cd = cmd
            for j in later:
                ev = s.events[j]
                jcmd = tools.command_of(ev)
                if jcmd and _cd_target(jcmd) is not None:
                    last_cd = jcmd
                    continue
                if jcmd and (_CD_CHAINED.match(jcmd) or (_cd_target(jcmd) is None and " -C " in jcmd)):
                    break  # the agent chains the directory change from here on
                name = tools.tool(ev)
                if not jcmd and (name not in _LIST_TOOLS or _names_folder(ev.text or "")):
                    continue  # a listing of a named folder says nothing about the shell's directory
                r = s.result_of.get(j)
                if r is None:
                    continue
                text = s.events[r].text or ""
                hit = _names_dir(text[:4000], base)
                if hit is None:
                    continue
                strength = 0 if jcmd else (2 if "glob" in name or "search" in name else 1)
                if best is None or strength < best[0]:
                    a, b = _line_at(text, hit)
                    best = (strength, r, a, b, f"`{jcmd}`" if jcmd else name, last_cd)
                    if strength == 0:
                        break
            if best is not None:
                _, r, a, b, what, shown_cd = best
                text = s.events[r].text
                shown = " ".join(text[a:b].split())[:QUOTE_LIMIT]
                fact = (f"`{shown_cd}` in its own shell call does not carry over: each call starts again in {base} "
                        f"(after it, {what} ran there: \"{shown}\"); chain it (`{shown_cd} && …`) or pass the "
                        f"directory")
                return Trial(fact, r, a, b, rank=0, weak=False)
        # (b) the next shell call fails, and the same command chained to the cd works later
        nxt = next((j for j in later if tools.command_of(s.events[j])), None)
        if nxt is None:
            continue
        ncmd = tools.command_of(s.events[nxt])
        nres = _shell_result(s, nxt)
        if _cd_target(ncmd) is not None or nres is None or not tools.failed(nres):
            continue
        for j in later:
            jcmd = tools.command_of(s.events[j])
            m = _CD_CHAINED.match(jcmd) if jcmd else None
            if m is None or m.group(2).rstrip("/") != target.rstrip("/") or ncmd not in jcmd:
                continue
            jres = _shell_result(s, j)
            if jres is None or tools.failed(jres):
                continue
            text = nres.text or ""
            span = error_span(text[:4000]) or _line_at(text, 0)
            a, b = span
            shown = " ".join(text[a:b].split())[:QUOTE_LIMIT]
            fact = (f"`{cmd}` in its own shell call does not carry over: `{ncmd}` after it failed ({shown}) and "
                    f"worked as `{jcmd[:80]}`; chain the cd in every call")
            return Trial(fact, s.result_of[nxt], a, b, rank=0, weak=False)
    return None


def _repo_trap(s: Scan) -> Trial | None:
    """Rule "repository outside the intended folder"."""
    base = (s.meta.cwd or "").rstrip("/") or None
    intended: str | None = None
    for i in s.calls:
        cmd = tools.command_of(s.events[i])
        if not cmd:
            continue
        target = _cd_target(cmd)
        if target is not None:
            intended = _join(base, target) if base or target.startswith("/") else target
            continue
        if "git" not in cmd or "init" not in cmd:
            continue
        res = _shell_result(s, i)
        if res is None:
            continue
        text = res.text or ""
        m = _GIT_INIT.search(text)
        if m is None:
            continue
        where = m.group(1).rstrip("/") or "/"
        chained = _CD_CHAINED.match(cmd)
        if chained:
            intended = _join(base or "", chained.group(2)) if base or chained.group(2).startswith("/") else None
        home = bool(_HOME.match(where))
        off = intended is not None and intended.rstrip("/") != where and intended.startswith("/")
        if not home and not off:
            continue
        why = []
        if off:
            why.append(f"not in {intended}, the folder the directory change named")
        if home:
            why.append("that is the home directory, so `git add .` there would stage all of it")
        a, b = m.start(), m.end()
        fact = f"`{cmd[:60]}` created the repository at {where}/.git — " + "; ".join(why)
        return Trial(fact, s.result_of[i], a, b, rank=0, weak=False)
    return None


def _branch_trap(s: Scan) -> Trial | None:
    """Rule "branch mismatch": the last branch git reported, against a push named after it (a call) or in the
    request it works on (the latest user prompt before it, or any later one), with no rename after it."""
    seen: tuple[str, int, int, int, int] | None = None  # (branch, call index, result index, start, end)
    for i in s.calls:
        cmd = tools.command_of(s.events[i])
        if not cmd or "git" not in cmd:
            continue
        if _RENAME.search(cmd):
            seen = None
        res = _shell_result(s, i)
        if res is None or not res.text:
            continue
        head = res.text[:4000]
        if not any(k in head for k in _BRANCH_KEYS):
            continue  # cheap screen: every branch line holds one of these
        for m in _BRANCH_SEEN.finditer(head):
            seen = (next(g for g in m.groups() if g), i, s.result_of[i], m.start(), m.end())
    if seen is None:
        return None
    at = seen[1]
    asked = next((u for u in reversed(s.users) if u < at), None)
    texts = [s.events[u].text or "" for u in s.users if (asked is not None and u >= asked) or u > at]
    for i in s.calls:
        if i > at:
            cmd = tools.command_of(s.events[i])
            if cmd and _RENAME.search(cmd):
                return None
            if cmd and "push" in cmd:
                texts.append(cmd)
    for text in texts:
        if "push" in text:
            got = _mismatch(seen, text)
            if got:
                return got
    return None


def _mismatch(seen: tuple[str, int, int, int, int], text: str) -> Trial | None:
    branch, _, r, a, b = seen
    for m in _PUSH_BRANCH.finditer(text):
        pushed = m.group(3)
        if pushed == branch or pushed in ("HEAD", "--all", "--tags"):
            continue
        push = " ".join(m.group(0).split())
        fact = (f"The repository is on branch '{branch}' (as git printed it), but `{push}` pushes '{pushed}': "
                f"rename it first (`git branch -m {pushed}`) or push '{branch}'")
        return Trial(fact, r, a, b, rank=0, weak=False)
    return None
