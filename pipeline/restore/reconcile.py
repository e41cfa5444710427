"""Reconciliation: compare a state file with the workspace as it is now, strictly read-only (issue 7, item 3).

What is compared:

* **commits since the state file's ``Created`` time** — ``git log --since <Created> --name-status --no-renames``
  in the workspace (subjects and touched files; at most ``MAX_COMMITS``, under ``TIMEOUT_SECONDS``); only
  commits strictly after ``Created`` count (a naive time is UTC, a date alone is its midnight UTC);
* **files the state names** — path-like words in Current, Done, Remaining and Re-derivation (``named_paths``),
  checked with ``os.path.exists``: relative to the workspace, an absolute path under the state's ``Cwd`` (or the
  workspace) re-rooted in the workspace, any other absolute path as is.

What is reported (``drift_lines``): a Remaining item (or Current) that **looks done** — a later commit touches a
file it names, or the commit's subject shares its key words (at least 2, covering two thirds of the item's key
words, or all of a subject's 3 or more); files that **no longer exist** (with the commit that deleted them when git
knows); then the commits themselves.  No repository, no git, a timeout or a git error: one line saying so, and
the commit checks are skipped (file checks still run).  When none of (at least ``ELSEWHERE_MIN``) named files
exists, one line says the workspace is probably another folder than the state's instead of listing them all.

Read-only: the only things run are ``git log`` (with ``GIT_OPTIONAL_LOCKS=0``, so git takes no lock and writes
no index refresh) and ``stat``; the state file is never touched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

TIMEOUT_SECONDS = 2.0
MAX_COMMITS = 200
LISTED_COMMITS = 10
"""Commits listed one per line in the report (all of them count for the checks)."""
QUOTE_CHARS = 100
ELSEWHERE_MIN = 3
"""When at least this many files are named and none exists (none deleted by a commit), the workspace is likely
not where the state was written: one line says so instead of one line per file."""

_TOKEN_RE = re.compile(r"[\w./\\~+@-]+")
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.+@-]+/)*[\w+@-][\w.+@-]*\.(?P<ext>[a-z][a-z0-9]{1,7})")
_BARE_EXTENSIONS = frozenset(
    "py pyi md rst txt json jsonl yaml yml toml ini cfg conf env lock js mjs cjs ts tsx jsx vue svelte css scss "
    "html xml csv sql sh bash zsh ps1 rs go java kt swift c h cc cpp hpp cs rb php lua pl ex exs erl tf proto "
    "gradle ipynb prisma graphql dockerfile mk cmake exe dll so".split()
)
"""Extensions a bare file name (no ``/``) must have to count as a path: ``README.md`` yes, ``csv.writer`` no."""
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the and for with from into onto that this these those then than when what which while where will would "
    "should could can are was were been being have has had its it's our your their them they there here now "
    "next also only just not all any some more most very via per out off over under about after before again "
    "add adds added fix fixes fixed update updates updated change changes make makes use uses using run runs "
    "against between each every other same new old one two three done todo wip".split()
)


@dataclass(slots=True)
class WorkItems:
    """The parts of a state file reconciliation looks at: ``created`` ISO-8601, the recorded ``cwd``, and the
    Position and Re-derivation items."""

    created: str
    cwd: str
    current: str | None
    done: list[str]
    remaining: list[str]
    rederivation: list[str]


def work_items(state: object) -> WorkItems:
    """``WorkItems`` of a ``pipeline.state.sections.StateSections`` or a ``pipeline.state.model.AgentState``
    (whose Position items sit under ``state.position``)."""
    pos = getattr(state, "position", None) or state
    return WorkItems(
        created=state.created,  # type: ignore[attr-defined]
        cwd=state.cwd,  # type: ignore[attr-defined]
        current=pos.current,  # type: ignore[attr-defined]
        done=list(pos.done),  # type: ignore[attr-defined]
        remaining=list(pos.remaining),  # type: ignore[attr-defined]
        rederivation=list(state.rederivation),  # type: ignore[attr-defined]
    )


@dataclass(slots=True)
class Commit:
    """A commit: short ``sha``, committer time (ISO-8601 with offset), ``subject``, ``changes`` as (status letter,
    path relative to the repository's top level)."""

    sha: str
    time: str
    subject: str
    changes: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class GitLog:
    """What ``git log`` gave: ``status`` ok | no-repo | no-git | timeout | error; ``commits`` newest first;
    ``detail`` the first line of git's error for ``error``."""

    status: str
    commits: list[Commit] = field(default_factory=list)
    detail: str = ""


def since_utc(created: str) -> datetime:
    """``created`` as an aware UTC datetime (naive: UTC; a date alone: its midnight).  ``ValueError`` if not ISO-8601."""
    moment = datetime.fromisoformat(created)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def parse_git_log(text: str) -> list[Commit]:
    """Commits of ``git log --format=%x1e%h%x1f%cI%x1f%s --name-status`` output, in the order given."""
    commits = []
    for record in text.split("\x1e"):
        lines = record.strip("\n").split("\n")
        head = lines[0].split("\x1f")
        if len(head) != 3:
            continue
        commit = Commit(head[0], head[1], head[2])
        for line in lines[1:]:
            status, _, path = line.partition("\t")
            if path:
                commit.changes.append((status[:1], path.split("\t")[-1]))
        commits.append(commit)
    return commits


def git_log_since(root: str, created: str, *, timeout: float = TIMEOUT_SECONDS, git: str = "git") -> GitLog:
    """Commits in the repository holding ``root`` made strictly after ``created`` (newest first).  Never raises."""
    import subprocess

    try:
        since = since_utc(created)
    except ValueError:
        return GitLog("error", detail=f"Created {created!r} is not ISO-8601")
    args = [git, "-C", root, "-c", "core.quotepath=off", "log", "--no-color", "--no-renames", "--name-status",
            f"--max-count={MAX_COMMITS}", f"--since={since.strftime('%Y-%m-%d %H:%M:%S +0000')}",
            "--format=%x1e%h%x1f%cI%x1f%s"]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C", LANGUAGE="C", GIT_TERMINAL_PROMPT="0")
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return GitLog("no-git")
    except subprocess.TimeoutExpired:
        return GitLog("timeout")
    except OSError as exc:
        return GitLog("error", detail=str(exc))
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        if "not a git repository" in err:
            return GitLog("no-repo")
        if "does not have any commits" in err:
            return GitLog("ok")
        return GitLog("error", detail=(err.strip().splitlines() or [f"exit status {done.returncode}"])[0])
    commits = parse_git_log(done.stdout.decode("utf-8", "replace"))
    return GitLog("ok", [c for c in commits if _after(c.time, since)])


def _after(time: str, since: datetime) -> bool:
    try:
        return since_utc(time) > since
    except ValueError:
        return True


def named_paths(text: str) -> list[str]:
    """File paths named in ``text``: words shaped like a path to a file with a lowercase extension (``src/a.py``,
    ``docs/x.md``, ``/abs/f.json``, ``~/f.toml``; a bare name only with a common file extension, ``README.md``;
    backslashes read as ``/``; a ``:line`` suffix dropped).  URLs, branch names without an extension, ``e.g.``,
    versions and numbers are not paths."""
    found = []
    for token in _TOKEN_RE.findall(text.replace("\\", "/")):
        token = token.rstrip(".-")
        if token.startswith("-") or "//" in token:
            continue
        match = _PATH_RE.fullmatch(token)
        if match is None or ("/" not in token and match["ext"] not in _BARE_EXTENSIONS):
            continue
        if token not in found:
            found.append(token)
    return found


def _stem(word: str) -> str:
    """Strip -s, -ing, -ed while at least 3 characters remain, repeatedly ("settings" and "setting" meet)."""
    stripped = True
    while stripped:
        stripped = False
        for suffix in ("s", "ing", "ed"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word, stripped = word[: -len(suffix)], True
                break
    return word


def _key_words(text: str) -> dict[str, str]:
    """Stem -> the first word of ``text`` with that stem (see ``key_words``)."""
    found: dict[str, str] = {}
    for word in _WORD_RE.findall(text.lower()):
        if len(word) >= 3 and not word.isdigit() and word not in _STOP:
            stem = _stem(word)
            if stem not in _STOP:
                found.setdefault(stem, word)
    return found


def key_words(text: str) -> set[str]:
    """Lower-case words of 3+ characters, not numbers, not stop words, crudely stemmed (``_stem``)."""
    return set(_key_words(text))


def subject_match(item: str, subject: str) -> list[str]:
    """The key words ``item`` shares with a commit ``subject`` when they make it look done (as the item spells
    them, sorted), else []."""
    mine, theirs = _key_words(item), key_words(subject)
    shared = mine.keys() & theirs
    if len(shared) >= 2 and (3 * len(shared) >= 2 * len(mine) or (len(shared) == len(theirs) and len(shared) >= 3)):
        return sorted(mine[stem] for stem in shared)
    return []


def _relative(path: str, cwd: str, root: str) -> str | None:
    """``path`` relative to the workspace, or None for an absolute path outside both the recorded cwd and it."""
    if path.startswith("~"):
        return None
    if not path.startswith("/"):
        return path.removeprefix("./")
    for base in (cwd.rstrip("/"), root.rstrip("/")):
        if base and path.startswith(base + "/"):
            return path[len(base) + 1:]
    return None


def _same_file(touched: str, named: str) -> bool:
    return touched == named or touched.endswith("/" + named) or named.endswith("/" + touched)


@dataclass(slots=True)
class LooksDone:
    """A Position item (``where``: Remaining or Current) that a later ``commit`` seems to have completed."""

    where: str
    item: str
    commit: Commit
    files: list[str]
    words: list[str]


@dataclass(slots=True)
class Missing:
    """A file named in ``where`` that does not exist now; ``deleted_in`` the commit that deleted it, if known;
    ``in_workspace`` False for an absolute path outside the workspace and the state's Cwd."""

    path: str
    where: str
    deleted_in: Commit | None
    in_workspace: bool = True


@dataclass(slots=True)
class Drift:
    """The reconciliation of one state file: ``root`` the workspace, ``since`` the state's Created time, ``cwd``
    the folder it was written in; ``checked`` how many distinct file paths it names, ``in_workspace`` how many of
    them are in the workspace (relative, or absolute under the Cwd or the workspace)."""

    root: str
    since: str
    cwd: str
    log: GitLog
    looks_done: list[LooksDone]
    missing: list[Missing]
    checked: int
    in_workspace: int = 0


def find_drift(work: WorkItems, log: GitLog, root: str, exists: Callable[[str], bool]) -> Drift:
    """Compare ``work`` with the commits of ``log`` and the files ``exists`` (called with a path to test) finds.

    Pure apart from ``exists``.  Items are checked in file order; each looking-done item is reported once, with
    the newest commit that matches it.
    """
    looks_done = []
    positions = [("Current", work.current)] if work.current else []
    positions += [("Remaining", item) for item in work.remaining]
    for where, item in positions:
        named = [rel for rel in (_relative(p, work.cwd, root) for p in named_paths(item)) if rel]
        for commit in log.commits:
            files = sorted({path for _, path in commit.changes for n in named if _same_file(path, n)})
            words = subject_match(item, commit.subject)
            if files or words:
                looks_done.append(LooksDone(where, item, commit, files, words))
                break
    missing, seen = [], set()
    groups = [("Current", [work.current] if work.current else []), ("Done", work.done),
              ("Remaining", work.remaining), ("Re-derivation", work.rederivation)]
    for where, items in groups:
        for item in items:
            for path in named_paths(item):
                if path in seen:
                    continue
                seen.add(path)
                rel = _relative(path, work.cwd, root)
                target = os.path.join(root, rel) if rel is not None else os.path.expanduser(path)
                if not exists(target):
                    deleted = next((c for c in log.commits for status, touched in c.changes
                                    if status == "D" and rel is not None and _same_file(touched, rel)), None)
                    missing.append(Missing(path, where, deleted, rel is not None))
    inside = sum(1 for path in seen if _relative(path, work.cwd, root) is not None)
    return Drift(root, work.created, work.cwd, log, looks_done, missing, len(seen), inside)


def _quote(text: str) -> str:
    return '"' + (text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1].rstrip() + "…") + '"'


def _git_line(drift: Drift) -> str:
    log = drift.log
    if log.status == "no-repo":
        return f"- Git: {drift.root} is not in a git repository; commits not checked."
    if log.status == "no-git":
        return "- Git: git is not installed (not on PATH); commits not checked."
    if log.status == "timeout":
        return f"- Git: git log took over {TIMEOUT_SECONDS:g} s; commits not checked."
    if log.status == "error":
        return f"- Git: git log failed ({log.detail}); commits not checked."
    if not log.commits:
        return f"- Git: no commits since {drift.since}."
    count = len(log.commits)
    more = "+" if count >= MAX_COMMITS else ""
    return f"- Git: {count}{more} commit{'s' if count != 1 else ''} since {drift.since} (newest first):"


def drift_lines(drift: Drift) -> list[str]:
    """The report, one ``- …`` line each, most useful first: items that look done, files that no longer exist,
    the git status line, the file summary (when nothing is missing), then up to ``LISTED_COMMITS`` commits."""
    lines = []
    for hit in drift.looks_done:
        why = []
        if hit.files:
            why.append("touches " + ", ".join(hit.files))
        if hit.words:
            why.append("shares the key words " + ", ".join(hit.words))
        lines.append(f"- Looks done ({hit.where}): {_quote(hit.item)} — commit {hit.commit.sha} "
                     f"{_quote(hit.commit.subject)} ({hit.commit.time}) {' and '.join(why)}")
    missing = drift.missing
    inside = [m for m in missing if m.in_workspace]
    if drift.in_workspace >= ELSEWHERE_MIN and len(inside) == drift.in_workspace and not any(m.deleted_in for m in inside):
        lines.append(f"- None of the {drift.in_workspace} workspace files the state names exist under {drift.root} "
                     f"(it was written in {drift.cwd}): another checkout or folder?")
        missing = [m for m in missing if not m.in_workspace]
    for miss in missing:
        deleted = f"; deleted in commit {miss.deleted_in.sha} {_quote(miss.deleted_in.subject)}" if miss.deleted_in else ""
        lines.append(f"- No longer exists: {miss.path} (named in {miss.where}{deleted})")
    lines.append(_git_line(drift))
    if not drift.missing:
        lines.append(f"- Files named in Current/Done/Remaining/Re-derivation: all {drift.checked} exist."
                     if drift.checked else "- Files: none named in Current/Done/Remaining/Re-derivation.")
    for commit in drift.log.commits[:LISTED_COMMITS]:
        paths = [path for _, path in commit.changes]
        shown = ", ".join(paths[:3]) + (f", +{len(paths) - 3} more" if len(paths) > 3 else "")
        lines.append(f"- {commit.sha} {commit.time} {commit.subject}" + (f" [{shown}]" if shown else ""))
    if len(drift.log.commits) > LISTED_COMMITS:
        lines.append(f"- … and {len(drift.log.commits) - LISTED_COMMITS} older commit(s).")
    return lines


def reconcile(state: object, root: str, *, timeout: float = TIMEOUT_SECONDS, since: str | None = None) -> list[str]:
    """Reconcile ``state`` (``StateSections`` or ``AgentState``) with the workspace ``root``; the report lines.

    Commits count from ``since`` (ISO-8601) when given, else from the state's ``Created`` time: a state
    recovered after the fact describes the session up to the compaction, so its caller passes the marker's
    time.  Runs ``git log`` (read-only) and stats files; never writes.  Never raises for git problems (they
    become the Git line).
    """
    work = work_items(state)
    if since:
        work.created = since
    root = os.path.abspath(root)
    log = git_log_since(root, work.created, timeout=timeout)
    return drift_lines(find_drift(work, log, root, os.path.exists))
