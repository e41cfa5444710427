"""Position.Done's accomplished steps, read from the tool calls (issue 12 §2.5 "Done tells the truth": "the tests
pass" is not "I ran the tests").  See ``outcomes`` for the rules; ``position`` merges them with the todo list.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import branches, edits, tools
from pipeline.stages.rules.episodes import check_runs, edited, scratch, shell_writes
from pipeline.stages.rules.episodes import raw as raw_of
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip

ITEM_LIMIT = 200  # characters per item


def steps(s: Scan) -> list[tuple[int, str]]:
    """Accomplished steps from tool calls, chronological (``outcomes``'s first half)."""
    return outcomes(s)[0]


def outcomes(s: Scan) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(done steps, open failures)`` (``_outcomes``), computed once per scan."""
    got = s.memo.get("outcomes")
    if got is None:
        got = s.memo["outcomes"] = _outcomes(s)
    return got


def _outcomes(s: Scan) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(done steps, open failures)`` from the tool calls, each ``(event index, text)``, chronological.

    Done steps (issue 12 §2.5, "the tests pass" is not "I ran the tests"):

    * edit runs (one line per run of file edits; a pure deletion adds what it removed, ``edits.gist``): edit
      tools, and shell writes (``cat > f <<EOF``, ``tee``,
      ``sed -i``, ``cp``, ``mv``, ``apply_patch``; ``tools.shell_edits``); a failed call edits nothing;
    * ``Ran `<check>` (passed|clean|succeeded)`` for a test/lint/build command whose latest run passed
      (``tools.check_runs``): a runner failure line marks a run failed whatever its exit code, and a filtered
      run (``| tail``, ``|| true``, ``; echo done``) proves a pass only by a runner summary.  A run whose
      outcome is not shown is left out of Done (never written as passed), and does not clear an earlier
      failure;
    * ``Committed <sha> "<message>"`` (the id from git's ``[branch sha] title`` line), ``Pushed <remote
      branch>`` (a rejected or failed push is not done), what a CLI created (``gh pr/issue create``, deploys,
      publishes, tickets) with the URL / key it printed, commits a sub-agent reports with their ids;
    * ``Checked <local url> (curl): <first line of the body>`` for the latest successful request to each
      local URL (curl, wget, httpie, Invoke-WebRequest).

    Open failures (Remaining): a check whose latest decisive run failed, unless a later run of the same program
    and kind passed, and a deploy / publish / push whose latest attempt failed, each naming the command and the
    runner's failure line.
    """
    cwd = s.meta.cwd
    steps: list[tuple[int, str]] = []
    run_paths: list[str] = []
    run_created: set[str] = set()
    run_gists: list[str] = []
    run_last = -1
    seg_pass: dict[str, tuple[int, str, str]] = {}  # segment -> (index, kind, runner key) of its latest pass
    runner: dict[str, tuple[int, str, str, str, str]] = {}  # key -> (index, outcome, kind, segment, reason)
    shipped: dict[str, tuple[int, bool, str, str]] = {}  # key -> (index, ok, what, reason)
    fetched: dict[str, tuple[int, str]] = {}  # url -> (index, text)
    created: list[tuple[int, str, list[tuple[str, str]]]] = []  # runs of `<tool> create` calls: (index, tool, made)

    def flush() -> None:
        nonlocal run_paths, run_created, run_last, run_gists
        if run_paths:
            created = [p for p in run_paths if p in run_created]
            edited = [p for p in run_paths if p not in run_created]
            parts = []
            if edited:
                parts.append("Edited " + _list(edited))
            if created:
                parts.append(("created " if parts else "Created ") + _list(created))
            what = "; ".join(dict.fromkeys(run_gists))
            steps.append((run_last, clip("; ".join(parts) + (f" ({what})" if what else ""), ITEM_LIMIT)))
        run_paths, run_created, run_last, run_gists = [], set(), -1, []

    def add_edits(i: int, paths: list[tuple[str, bool]]) -> None:
        nonlocal run_last
        for p, created in paths:
            rp = tools.relative(p, cwd)
            if scratch(rp):
                continue  # a scratch file outside the session's folder
            if rp in run_paths:
                run_paths.remove(rp)
            run_paths.append(rp)
            if created:
                run_created.add(rp)
        run_last = i

    call_set = set(s.calls)
    gone = branches.abandoned(s.events)  # edits of a branch the user rewound away from are not Done
    for i in sorted(call_set | set(s.users) | set(s.todo_lists)):
        ev = s.events[i]
        if i in gone:
            continue
        if ev.kind != "tool_call":
            flush()
            continue
        result = s.events[s.result_of[i]] if i in s.result_of else None
        paths = edited(s, i)
        if paths:
            if result is not None and result.is_error:
                continue
            add_edits(i, [(p, tools.is_create(ev)) for p in paths])
            said = edits.gist(ev)
            if said:
                run_gists.append(said)
            continue
        cmd = tools.command_of(ev)
        if not cmd:
            continue
        raw = raw_of(s, i)
        checks = check_runs(s, i)
        if checks:
            flush()
            for kind, key, seg, outcome in checks:
                if outcome == "passed":
                    seg_pass[seg] = (i, kind, key)
                if outcome != "unknown":
                    reason = tools.failure_reason(result) if outcome == "failed" else ""
                    runner[key] = (i, outcome, kind, seg, reason)
            continue
        shell_paths = shell_writes(s, i)
        if shell_paths:
            if result is None or tools.failed(result):
                continue
            add_edits(i, shell_paths)
            continue
        got = tools.fetch_check(raw, result)
        if got:
            url, body = got
            fetched.pop(url, None)
            fetched[url] = (i, f"Checked {url} ({raw.split()[0].rsplit('/', 1)[-1]})" + (f": {body}" if body else ""))
            continue
        made = tools.created_ref(raw, result)
        if made:
            label, ident, ok = made
            flush()
            if ok:
                steps.append((i, clip(f"{label}: {ident}" if ident else label, ITEM_LIMIT)))
            if result is not None:
                shipped[label] = (i, ok, label, "" if ok else tools.failure_reason(result))
            continue
        record = _record(raw, result)
        if record:
            flush()
            prog, ident, title = record
            if created and created[-1][1] == prog:
                created[-1][2].append((ident, title))
            else:
                created.append((i, prog, [(ident, title)]))
            continue
        if "git" not in cmd:
            continue
        msg = tools.commit_message(cmd, ev.text)
        push = tools.push_target(cmd)
        if msg is None and push is None:
            continue
        flush()
        if msg is not None:
            got_commit = tools.commit_done(raw, result)
            if got_commit is not None:
                sha, title = got_commit
                text = msg or title
                steps.append((i, clip("Committed" + (f" {sha}" if sha else "") + (f' "{text}"' if text else
                                                                                     (" changes" if not sha else "")),
                                      ITEM_LIMIT)))
        if push is not None and result is not None:
            ok = tools.push_done(raw, result)
            if ok:
                steps.append((i, clip(f"Pushed {push}".strip(), ITEM_LIMIT)))
            shipped["git push"] = (i, ok, f"git push {push}".strip(), "" if ok else tools.failure_reason(result))
    flush()
    for i, prog, made in created:
        steps.append((i, clip(_created_line(prog, made), ITEM_LIMIT)))
    verbs = {"test": "passed", "lint": "clean", "build": "succeeded"}
    for seg, (i, kind, key) in seg_pass.items():
        if runner[key][1] == "failed" and runner[key][0] > i:
            continue  # a later run of the same runner failed: this pass is stale
        steps.append((i, clip(f"Ran `{seg}` ({verbs[kind]})", ITEM_LIMIT)))
    steps.extend(fetched.values())
    steps.extend(_subagent_commits(s))
    steps.sort(key=lambda p: p[0])
    wants = {"test": "passing", "lint": "clean", "build": "succeeding"}
    failures: list[tuple[int, str]] = []
    settled: dict[tuple[str, str], int] = {}  # (kind, program) -> index of its latest passing run
    for key, (i, outcome, kind, seg, reason) in runner.items():
        if outcome == "passed":
            settled[(kind, key.split()[0])] = max(i, settled.get((kind, key.split()[0]), -1))
    for key, (i, outcome, kind, seg, reason) in runner.items():
        if outcome != "failed" or settled.get((kind, key.split()[0]), -1) > i:
            continue  # a later run of the same program and kind passed (``make x`` failed, then ``make`` passed)
        shown = seg if len(seg) <= 60 else key
        failures.append((i, clip(f"Get `{shown}` {wants[kind]}: last run failed" + (f" — {reason}" if reason else ""),
                                 ITEM_LIMIT)))
    for key, (i, ok, what, reason) in shipped.items():
        if not ok:
            shown = what.split(": ", 1)[0].replace("Deployed with ", "").replace("Published with ", "").strip("`")
            failures.append((i, clip(f"Retry `{shown}`: last attempt failed" + (f" — {reason}" if reason else ""),
                                     ITEM_LIMIT)))
    failures.sort(key=lambda p: p[0])
    return steps, failures


_CREATE_CMD = lazy_re(r"^(?P<head>(?P<prog>[\w.-]+)(?:\s+[a-z][\w-]*){0,2}?\s+(?:create|new|add))\b(?P<rest>.*)$", re.DOTALL)
_MAKES = lazy_re(r"\s(?:create|new|add)\b")
_JSON_ID = lazy_re(r'"(?:id|key|number|identifier)"\s*:\s*"?([\w][\w.:/-]*)')
_QUOTED = lazy_re(r"""["']([^"'\n]{3,120})["']""")
_NOT_RECORDS = frozenset({"git", "npm", "npx", "pnpm", "yarn", "pip", "uv", "cargo", "go", "mkdir", "touch", "docker",
                          "python", "python3", "node", "conda", "poetry", "bun", "deno", "rails", "dotnet", "ng"})


def _record(raw: str, result) -> tuple[str, str, str] | None:
    """``(command head, id, title)`` for a command that created a record in a tracker or service and printed its id
    (``bd create "Phase 1" … -> {"id": "app-gsa.1"}``, ``tea issues create``, ``az boards work-item create``): the
    last segment is ``<tool> [<noun>] create|new|add …`` and the result, not a failure, holds a JSON id.  Package
    managers, git and file tools are left out (their "add" / "new" make no record)."""
    if result is None or not _MAKES.search(raw) or tools.failed(result):
        return None
    parts = tools.split_shell(raw)
    if not parts:
        return None
    m = _CREATE_CMD.match(" ".join(parts[0][0].split()))
    if not m or m.group("prog") in _NOT_RECORDS:
        return None
    ident = _JSON_ID.search(result.text or "")
    if not ident:
        return None
    title = _QUOTED.search(m.group("rest") or "")
    return m.group("head"), ident.group(1), title.group(1) if title else ""


def _created_line(cmd: str, made: list[tuple[str, str]]) -> str:
    """``Created <id> "<title>" with `<tool> create``` for one record, ``Created N records with `<tool> create`:
    <first id> "<title>" … <last id>`` for a run of them."""
    first_id, first_title = made[0]
    head = f'{first_id} "{first_title}"' if first_title else first_id
    if len(made) == 1:
        return f"Created {head} with `{cmd}`"
    return f"Created {len(made)} records with `{cmd}`: {head} … {made[-1][0]}"


_SHA_ITEM = lazy_re(
    r"^[ \t]*(?:[-*+]|\d{1,3}[.)])?[ \t]*(?:\*\*)?`?(?P<sha>(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12})`?(?:\*\*)?"
    r"[ \t]*(?:—|–|-|:)[ \t]*`?(?P<title>[^`\n]{3,}?)`?[ \t]*$",
    re.MULTILINE,
)
_COMMIT_HEAD = lazy_re(r"\bcommit(?:s|ted)?\b|\bcreated\b|\bmade\b", re.IGNORECASE)
_HISTORY_HEAD = lazy_re(r"\b(?:recent|log|history|previous|existing|earlier|before|prior|upstream|base)\b",
                        re.IGNORECASE)


def _subagent_commits(s: Scan) -> list[tuple[int, str]]:
    """Commits a sub-agent reports having made (its answer lists ``<sha> — <title>`` under a "Commits" /
    "Created commits" head, not under "Recent commits" / "git log"), as ``Committed <sha> "<title>" (<agent>
    sub-agent)``."""
    out: list[tuple[int, str]] = []
    for i in s.subagent_results:
        text = s.events[i].text or ""
        if "commit" not in text.lower():
            continue
        head = ""
        for line in text.split("\n"):
            m = _SHA_ITEM.match(line)
            if m is None:
                if line.strip() and not line.startswith(("  ", "\t")):
                    head = line
                continue
            if not _COMMIT_HEAD.search(head) or _HISTORY_HEAD.search(head):
                continue
            who = f" ({s.events[i].agent} sub-agent)" if s.events[i].agent else " (sub-agent)"
            out.append((i, clip(f'Committed {m.group("sha")} "{m.group("title").strip()}"{who}', ITEM_LIMIT)))
    return out


def _list(paths: list[str], shown: int = 4) -> str:
    if len(paths) <= shown:
        return ", ".join(paths)
    return ", ".join(paths[:shown]) + f" (+{len(paths) - shown} more)"

