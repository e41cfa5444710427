"""What a tool call did: file edits, shell commands (test / build / lint / run), commits, failures.

Tool names differ by harness (FORMATS.md §1–§4 tool-call rows, §6.7 "Renamed tools"); they are matched in
lower case.  Used by ``position`` (Done) and ``rederive`` (Re-derivation).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.lazyre import LazyPattern, lazy_re
from pipeline.transcripts.model import Event

SHELL_TOOLS = frozenset(
    {
        "bash", "shell", "shell_command", "exec_command", "exec", "local_shell", "powershell", "run_in_terminal",
        "execute_command", "run_command", "terminal", "run_shell_command", "cmd",
    }
)
EDIT_TOOLS = frozenset(
    {
        "edit", "multiedit", "write", "notebookedit", "create", "str_replace_editor", "str_replace", "insert",
        "apply_patch", "patch", "write_file", "edit_file", "create_file", "replace", "search_replace",
    }
)
CREATE_TOOLS = frozenset({"write", "create", "create_file", "write_file"})

_PATCH_FILE = lazy_re(r"\*\*\* (?:Update|Add) File: ([^\n*]+?)(?=\s*(?:\*\*\*|\n|$))")
_VIEW_CMD = lazy_re(r"\bcommand\W+view\b")
_SEGMENT_SPLIT = lazy_re(r"\s*(?:&&|\|\||;|\|)\s*")
_PREFIX = lazy_re(
    r"^(?:(?:[A-Z_][A-Z0-9_]*=\S*|sudo|time|timeout\s+\d+[smh]?|env|nice|uvx|"
    r"uv\s+run(?:\s+--(?:with|extra|group|python|project|directory)[ =]\S+|\s+--(?:no-sync|frozen|locked|all-extras))*|"
    r"poetry\s+run|pdm\s+run|"
    r"hatch\s+run|pipenv\s+run|bundle\s+exec|npx|bunx|pnpm\s+exec|yarn\s+exec|(?:\S*/)?\.?venv/bin/|"
    r"(?:\S*/)?python3?(?:\.\d+)?\s+-m)\s*)+"
)
_KINDS: tuple[tuple[str, LazyPattern], ...] = (
    (
        "test",
        lazy_re(
            r"^(?:\S*/)?(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|rspec|phpunit|ctest|unittest|"
            r"playwright\s+test|cypress\s+run|go\s+test|cargo\s+(?:test|nextest)|(?:npm|pnpm|bun)\s+(?:run\s+)?test|"
            r"yarn\s+(?:run\s+)?test|deno\s+test|dotnet\s+test|mvn\s+(?:\S+\s+)*test|\.?/?gradlew?\s+test|"
            r"mix\s+test|make\s+(?:test|check)\w*|bazel\s+test|swift\s+test|rake\s+test|php\s+artisan\s+test|"
            r"(?:just|task)\s+(?:test|check)\w*)\b"
        ),
    ),
    (
        "lint",
        lazy_re(
            r"^(?:\S*/)?(?:ruff|mypy|pyright|flake8|pylint|black|isort|eslint|prettier|tsc\s+--noEmit|"
            r"(?:npm|pnpm|yarn)\s+(?:run\s+)?(?:lint|typecheck|format)|cargo\s+(?:clippy|fmt)|golangci-lint|"
            r"shellcheck|make\s+(?:lint|fmt|format|typecheck)|pre-commit\s+run|"
            r"(?:just|task)\s+(?:lint|fmt|format|clippy|typecheck))\b"
        ),
    ),
    (
        "build",
        lazy_re(
            r"^(?:\S*/)?(?:make|cmake|cargo\s+(?:build|check)|go\s+(?:build|vet|generate)|tsc|"
            r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?build|docker(?:\s+compose|-compose)\s+(?:up|build|run)|"
            r"docker\s+build|mvn|\.?/?gradlew?|dotnet\s+build|build|meson|ninja|bazel\s+build|pip\s+install\s+-e|"
            r"pyinstaller|poetry\s+build|hatch\s+build|uv\s+build|(?:just|task)\s+build)\b"
        ),
    ),
    (
        "run",
        lazy_re(
            r"^(?:\S*/)?(?:(?:npm|pnpm|yarn|bun)\s+(?:run\s+\S+|start)|cargo\s+run|go\s+run|uvicorn|gunicorn|"
            r"flask\s+run|python3?\s+(?!-c\b)\S+\.py|python3?\s+manage\.py|node\s+\S+\.[cm]?js|deno\s+run|"
            r"docker(?:\s+compose|-compose)\s+exec|\./\S+\.sh)\b"
        ),
    ),
)
_COMMIT = lazy_re(r"\bgit\s+(?:-C\s+\S+\s+)?commit\b")
_COMMIT_MSG = lazy_re(r"""(?:\s-[a-zA-Z]*m|\s--message)[=\s]*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))""")
_HEREDOC = lazy_re(r"<<\s*'?\"?EOF'?\"?\s*(.+?)\s*(?:EOF|$)", re.S)
_PUSH = lazy_re(r"\bgit\s+push\b(?P<args>[^;&|]*)")
_PR = lazy_re(r"\bgh\s+pr\s+create\b")
# Failure signals in a tool result: lower-case patterns (searched in the lower-cased text) and two capitalised
# markers (searched as written).
_FAIL = lazy_re(
    r"exit\s+code:?\s*[1-9]|exited\s+with\s+(?:exit\s+)?(?:code|status)\s+[1-9]|\"exit_code\":\s*[1-9]|exit\s+status\s+[1-9]|"
    r"\b[1-9]\d*\s+(?:failed|errors?)\b|traceback\s+\(most\s+recent\s+call\s+last\)|npm\s+err!|error\[e\d+\]|"
    r"(?m:^error:)|command\s+not\s+found|no\s+such\s+file\s+or\s+directory"
)
_FAIL_CAPS = lazy_re(r"\b(?:FAILED|ERROR)\b")
_FAIL_WORDS = ("exit", "fail", "error", "err!", "traceback", "not found", "no such file")


def tool(ev: Event) -> str:
    """Lower-case tool name of a call or result ("" when none)."""
    return (ev.tool_name or "").lower()


def command_of(ev: Event) -> str:
    """The shell command of a shell tool call, on one line ("" when the event is not one)."""
    if ev.kind != "tool_call" or tool(ev) not in SHELL_TOOLS:
        return ""
    cmd = unwrap_argv(ev.target or ev.text or "")
    return " ".join(cmd.split())


def unwrap_argv(cmd: str) -> str:
    """A command given as an argv array (Codex's ``["bash", "-lc", "<script>"]``) as the script it runs
    (``_argv_script``); any other text unchanged."""
    t = cmd.strip()
    if not t.startswith("[") or not t.endswith("]"):
        return cmd
    return _argv_script(t) or cmd


_ARG_KEY = lazy_re(
    r"\n(?:description|timeout|async|sessionId|session_id|run_in_background|workdir|cwd|justification|"
    r"with_escalated_permissions|sandbox_permissions|is_background|explanation|mode|shell|delay|initial_wait|"
    r"yield_time_ms|max_output_tokens|login|dangerouslyDisableSandbox|restart):[ \t]"
)


def raw_command(ev: Event) -> str:
    """The shell command of a shell tool call with its line breaks (heredocs, multi-line scripts), taken from
    the call's rendered arguments (``command: …`` up to the next argument line); the one-line target when the
    arguments do not hold it.  "" when ``ev`` is not a shell call."""
    flat = command_of(ev)
    if not flat:
        return ""
    text = ev.text or ""
    at = 9 if text.startswith("command: ") else text.find("\ncommand: ") + 10
    if at < 10 and not text.startswith("command: "):
        return flat
    raw = text[at:]
    end = _ARG_KEY.search(raw)
    if end:
        raw = raw[: end.start()]
    if raw.startswith("["):  # Codex's argv form: ["bash", "-lc", "<script>"]
        script = _argv_script(raw)
        if script:
            return script
    return raw if " ".join(raw.split()) == flat or len(flat) < len(" ".join(raw.split())) else flat


def _argv_script(raw: str) -> str:
    """The script of an argv list rendered as JSON (``["bash", "-lc", "cat > f <<EOF\\n…"]`` -> the script with
    its line breaks; ``["git", "status"]`` -> ``git status``); "" when ``raw`` is no such list."""
    import json

    try:
        argv = json.loads(raw.strip())
    except ValueError:
        return ""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return ""
    for k, a in enumerate(argv[:-1]):
        if a in ("-c", "-lc", "-ic", "-Command", "/c", "/C"):
            return argv[k + 1]
    import shlex

    return shlex.join(argv)


def edit_paths(ev: Event) -> list[str]:
    """Paths a file-editing tool call wrote (apply_patch may name several); [] for other events."""
    if ev.kind != "tool_call":
        return []
    name = tool(ev)
    if name not in EDIT_TOOLS:
        return []
    if name == "str_replace_editor" and _VIEW_CMD.search(ev.text or ""):
        return []
    if name in ("apply_patch", "patch"):
        paths = [p.strip() for p in _PATCH_FILE.findall(ev.text or "")]
        if paths:
            return list(dict.fromkeys(paths))
    target = (ev.target or "").strip()
    if not target or target in ("unknown", "patch") or "\n" in target:
        return []
    return [target]


def is_create(ev: Event) -> bool:
    """True for a whole-file write (Write / create) rather than an edit."""
    return tool(ev) in CREATE_TOOLS


def segments(cmd: str) -> list[str]:
    """The parts of a compound shell command split at ``&&``, ``||``, ``;`` and ``|``."""
    return [seg for seg in _SEGMENT_SPLIT.split(cmd) if seg]


@lru_cache(maxsize=4096)
def command_kind(cmd: str) -> tuple[str, str] | None:
    """``(kind, segment)`` for the first test/lint/build/run segment of ``cmd``, kinds tried in that order.

    ``segment`` is the matching part of a compound command (``cd x && pytest -q`` -> ``pytest -q``), with
    wrappers such as ``uv run``, ``npx``, ``python -m`` and env assignments kept.
    """
    segs = [(seg, _PREFIX.sub("", seg)) for seg in segments(cmd)]
    for kind, pattern in _KINDS:
        for seg, bare in segs:
            if pattern.match(bare):
                return kind, seg.strip("()").strip() if seg.count("(") != seg.count(")") else seg
    return None


def commit_message(cmd: str, full: str | None = None) -> str | None:
    """The message of a ``git commit`` command (first line), or None when ``cmd`` does not commit.

    ``full`` is the call's whole argument text (with line breaks, e.g. a heredoc message); used when it holds
    the commit too, since ``cmd`` (the call's target) is flattened to one line.
    """
    m = _COMMIT.search(cmd)
    if not m:
        return None
    if full:
        mf = _COMMIT.search(full)
        if mf:
            cmd, m = full, mf
    rest = cmd[m.end():]
    here = _HEREDOC.search(rest)
    if here:
        msg = here.group(1)
    else:
        mm = _COMMIT_MSG.search(rest)
        msg = next((g for g in mm.groups() if g), "") if mm else ""
    msg = msg.replace("\\n", "\n").strip().split("\n")[0]
    return " ".join(msg.split())[:120] or ""


def push_target(cmd: str) -> str | None:
    """``remote branch`` (or what is given) of a ``git push`` command, flags (``-u``, ``--force-with-lease``)
    skipped; None when ``cmd`` does not push."""
    m = _PUSH.search(cmd)
    if not m:
        return None
    return " ".join([a for a in m.group("args").split() if not a.startswith("-")][:2])


def opens_pr(cmd: str) -> bool:
    """True for ``gh pr create``."""
    return bool(_PR.search(cmd))


def failed(result: Event | None, *, deep: bool = True) -> bool:
    """True when a tool result reports failure: the harness's error flag, or an exit code / failure count in
    its text (Codex has no flag, FORMATS.md §4 "tool error").  A missing result counts as failed.

    ``deep=False`` reads only the first 300 characters (cheap enough to ask of every result).
    """
    if result is None:
        return True
    if result.is_error:
        return True
    text = result.text or ""
    if not deep:
        text = text[:300]
    elif len(text) > 4000:
        text = text[:2000] + "\n" + text[-2000:]
    low = text.lower()
    if not any(w in low for w in _FAIL_WORDS):
        return False
    if "error: (none)" in low:  # Gemini CLI's shell output names an empty error field: not a failure
        low = low.replace("error: (none)", "")
        text = _NO_ERROR.sub("", text)
        if not any(w in low for w in _FAIL_WORDS):
            return False
    return bool(_FAIL.search(low) or _FAIL_CAPS.search(text))


_NO_ERROR = lazy_re(r"(?i)error:\s*\(none\)")


def relative(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies under it (either slash style), else unchanged."""
    if cwd:
        base = cwd.rstrip("/\\")
        if base and len(path) > len(base) + 1 and path.startswith(base) and path[len(base)] in "/\\":
            return path[len(base) + 1:]
    return path


# --- What a shell command proved (issue 12 §2.5 "Done tells the truth") -------------------------------------

# Runner summary / failure lines that mark a run failed whatever its exit code (searched case-sensitively, one
# line at a time): pytest, jest/vitest, go test, cargo, tsc, mypy/ruff/eslint, npm, timeouts.
_RUNNER_FAIL = lazy_re(
    r"(?m)^[ \t]*(?:=+ .*\b\d+ (?:failed|errors?)\b.*|FAILED\b.*|FAIL(?:\s+\S.*)?|--- FAIL:.*|"
    r"Tests?:?\s+.*\b[1-9]\d* failed.*|Test Suites:.*\b[1-9]\d* failed.*|.*\btest result: FAILED.*|"
    r".*\berror TS\d+:.*|.*\berror\[E\d+\].*|error: could not compile.*|Found [1-9]\d* errors?\b.*|"
    r".*✖ [1-9]\d* problems?.*|[1-9]\d* (?:failing|failed)\b.*|.*\b[1-9]\d* failed(?:,|;| in\b).*|"
    r".*\bCommand timed out after\b.*|.*\bTimed out after\b.*|npm ERR!.*|npm error .*|make(?:\[\d+\])?: \*\*\* .*)$"
)
# The cause lines worth naming when a run failed without a runner summary (first match wins).
_CAUSE = lazy_re(
    r"(?m)^[ \t>●✖×!]*(?P<line>.*(?:Cannot find module|not found|No module named|ModuleNotFoundError|ImportError|"
    r"SyntaxError|TypeError|ReferenceError|AssertionError|[Ee]rror:\s*\S|cannot|could not|Could not|failed|"
    r"Permission denied|refused|rejected|fatal:).*)$"
)
_RUNNER_PASS = lazy_re(
    r"(?m)(?:^=*\s*\d+ passed\b|\btest result: ok\b|^Tests?:?\s+\d+ passed\b|^ok\s+\S+|^\s*\d+ passing\b|"
    r"All checks passed|^Success: no issues found|Build succeeded|Compiled successfully|^\s*Finished\b|"
    r"^\[100%\] Built target\b)"
)
_NO_COMMIT = lazy_re(r"nothing to commit|no changes added to commit|nothing added to commit")
_COMMIT_LINE = lazy_re(r"(?m)^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<title>.*)$")
_PUSH_FAIL = lazy_re(r"! \[(?:rejected|remote rejected)\]|error: failed to push|^fatal:|Could not read from remote|"
                     r"Permission denied \(publickey\)|Authentication failed", re.M)
_REDIRECT_TAIL = lazy_re(r"(?:\s+(?:[12]?>&[12]|[12]?>>?\s*/dev/null|&>\s*/dev/null))+\s*$")
_URL = lazy_re(r"https?://[^\s'\"<>`)\]]+")
_LOCAL_URL = lazy_re(r"^(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::\d+)?(?:[/?#]\S*)?$|^:\d+(?:/\S*)?$")
_FETCH_FAIL = lazy_re(
    r"Connection refused|Failed to connect|Could not resolve|curl: \(\d+\)|Empty reply from server|"
    r"Unable to connect|No connection could be made|ERROR \d{3}|^HTTP/\S+ [45]\d\d|\"status\":\s*[45]\d\d\b|"
    r"Internal Server Error|Not Found|Bad Gateway|Service Unavailable", re.M
)
_PROGRESS = lazy_re(r"^\s*(?:%\s+Total|\d+\s+\d+|[\d.]+[kMG]?\s+\d+)|^<exited with|^\s*\[?\d+/\d+\]?$")
_CREATE_CLI = lazy_re(
    r"^(?:gh|glab|hub)\s+(?P<what>pr|mr|issue|release|gist|repo)\s+create\b|^jira\s+issue\s+create\b|"
    r"^linear\s+issue\s+create\b"
)
_DEPLOY_CLI = lazy_re(
    r"^(?:vercel(?:\s+(?:deploy|--prod))?|netlify\s+deploy|fly(?:ctl)?\s+deploy|railway\s+up|firebase\s+deploy|"
    r"gcloud\s+(?:run|app|functions)\s+deploy|wrangler\s+(?:deploy|publish)|serverless\s+deploy|sls\s+deploy|"
    r"sam\s+deploy|cdk\s+deploy|heroku\s+\S+|kubectl\s+apply|helm\s+(?:install|upgrade)|terraform\s+apply|"
    r"pulumi\s+up|docker\s+push|(?:npm|pnpm|yarn)\s+publish|cargo\s+publish|twine\s+upload|"
    r"(?:uv|poetry|hatch)\s+publish|gem\s+push|dotnet\s+nuget\s+push)\b"
)
_PUBLISHED = lazy_re(r"^\+ (\S+@\S+)$|Uploading (\S+ v\S+)|Apply complete!.*|digest: (sha256:[0-9a-f]{12})|"
                     r"^\S+/\S+ (?:created|configured)$", re.M)
_ISSUE_KEY = lazy_re(r"\b[A-Z][A-Z0-9]+-\d+\b")
_SHELL_OPS = ("&&", "||", "|", ";", "\n", "&")


def split_shell(cmd: str) -> list[tuple[str, str]]:
    """``cmd`` cut into ``(segment, operator after it)`` pairs at ``&&``, ``||``, ``|``, ``;``, ``&`` and line
    breaks outside quotes; a heredoc body (``<<EOF`` … ``EOF``) stays with its segment.  The last operator is ""."""
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    quote = ""
    i, n = 0, len(cmd)
    heredoc: str | None = None
    while i < n:
        c = cmd[i]
        if heredoc is not None:
            end = cmd.find("\n" + heredoc, i)
            stop = n if end < 0 else end + 1 + len(heredoc)
            buf.append(cmd[i:stop])
            i, heredoc = stop, None
            continue
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(cmd[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "<" and cmd.startswith("<<", i) and not cmd.startswith("<<<", i):
            m = re.match(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", cmd[i:])
            if m:
                buf.append(m.group(0))
                i += len(m.group(0))
                nl = cmd.find("\n", i)
                if nl >= 0:
                    buf.append(cmd[i:nl])
                    i = nl
                    heredoc = m.group(1)
                continue
        op = next((o for o in _SHELL_OPS if cmd.startswith(o, i)), None)
        if op == "&" and (cmd.startswith("&>", i) or (i and cmd[i - 1] in "<>")):
            op = None  # a redirection (&>, 2>&1), not a background job
        if op == "|" and i and cmd[i - 1] == ">":
            op = None  # >| clobber redirection
        if op is not None:
            seg = "".join(buf).strip()
            if seg:
                out.append((seg, op))
            elif out and op != "\n":
                out[-1] = (out[-1][0], op)
            buf = []
            i += len(op)
            continue
        buf.append(c)
        i += 1
    seg = "".join(buf).strip()
    if seg:
        out.append((seg, ""))
    elif out:
        out[-1] = (out[-1][0], "")
    return out


def _masked(parts: list[tuple[str, str]], at: int) -> bool:
    """True when the exit status of ``parts[at]`` does not reach the caller: a later ``|``, ``||``, ``;``,
    ``&`` or line break lets another command decide it (``pytest | tail -5``, ``make || true``, ``x; echo done``)."""
    return any(op and op != "&&" for _, op in parts[at:])


_FILTERS = frozenset(
    {"tail", "head", "grep", "egrep", "fgrep", "rg", "sed", "awk", "cut", "sort", "uniq", "wc", "tee", "cat", "less",
     "more", "column", "tr", "jq", "echo", "true", "false", "printf", ":", "exit", "sleep", "wait", "Out-String",
     "Select-Object", "Select-String", "findstr"}
)


def _others_after(parts: list[tuple[str, str]], at: int) -> bool:
    """True when a real command (not a filter such as ``tail``/``grep``, not ``echo``/``true``) runs after
    ``parts[at]``: its output and exit status may be that command's."""
    for seg, _ in parts[at + 1:]:
        argv = seg.split()
        prog = argv[0].rsplit("/", 1)[-1] if argv else ""
        if prog and prog not in _FILTERS:
            return True
    return False


def failure_line(text: str) -> str:
    """The runner's failure line in a tool result (``3 failed, 40 passed``, ``FAIL src/a.test.ts``,
    ``test result: FAILED``, ``error TS2345: …``, ``Command timed out after 2m``…), "" when it shows none."""
    if not text:
        return ""
    m = _runner_fail(text if len(text) <= 20000 else text[:10000] + "\n" + text[-10000:])
    return " ".join(m.group(0).split())[:160] if m else ""


# Every ``_RUNNER_FAIL`` alternative holds one of these on the line where its match starts (``Test`` and ``FAIL``
# open theirs; the rest sit on that line because ``.`` stops at a line break): a line without any cannot start a
# match, so the pattern (whose ``.*`` alternatives cost a scan of the rest of the line at every line start) is
# only tried at the starts of lines that hold one.
_RUNNER_FAIL_KEYS = ("fail", "FAIL", "error", "Found ", "✖", "imed out after", "npm ", "Test", "make")


def _runner_fail(text: str) -> re.Match[str] | None:
    """``_RUNNER_FAIL.search(text)``: the same match, tried only at the starts of lines holding a key word."""
    nxt = {k: text.find(k) for k in _RUNNER_FAIL_KEYS}
    nxt = {k: at for k, at in nxt.items() if at >= 0}
    pattern = _RUNNER_FAIL.compiled
    pos = 0
    while nxt:
        at = min(nxt.values())
        start = text.rfind("\n", 0, at) + 1
        m = pattern.match(text, start)
        if m:
            return m
        end = text.find("\n", at)
        if end < 0:
            return None
        pos = end + 1
        for k in [k for k, v in nxt.items() if v < pos]:
            found = text.find(k, pos)
            if found < 0:
                del nxt[k]
            else:
                nxt[k] = found
    return None


def cause_line(text: str) -> str:
    """The first line of a failed result that names a cause (``Cannot find module 'x'``, ``Error: …``), else its
    first non-empty line that is more than a header; "" for empty text."""
    if not text:
        return ""
    m = _CAUSE.search(text[:8000])
    if m and not m.group("line").rstrip().endswith(":"):
        return " ".join(m.group("line").split())[:160]
    for line in text[:8000].splitlines():
        line = line.strip(" \t>●✖×")
        if line and not line.endswith(":") and not line.startswith("<exited"):
            return " ".join(line.split())[:160]
    return ""


def display(seg: str) -> str:
    """A command segment as shown in the state file: trailing ``2>&1`` / ``>/dev/null`` redirections dropped."""
    return _REDIRECT_TAIL.sub("", seg).strip() or seg


def check_runs(raw_cmd: str, result: Event | None) -> list[tuple[str, str, str, str]]:
    """``(kind, key, segment, outcome)`` for each test/lint/build segment of a shell command ([] when it has none).

    ``key`` groups reruns of the same runner (``npm test -- --watch=false`` and ``npm test`` are both ``npm test``;
    wrappers such as ``uv run`` / ``.venv/bin/`` are dropped).  ``outcome`` is ``passed``, ``failed`` or ``unknown``:

    * a runner failure line in the output (``failure_line``) marks the run failed whatever the exit status;
    * an unfiltered run (nothing after the check but ``&&``) passed unless the result reports failure;
    * a filtered or chained run (``| tail -5``, ``| grep FAIL``, ``|| true``, ``; echo done``,
      ``2>/dev/null || echo …``) says nothing by its exit status: it passed only when a runner summary shows a
      pass (``12 passed``, ``test result: ok``), else its outcome is unknown; when another real command runs
      after it, a failure in the output may be that command's (unknown too);
    * several checks in one command (``tsc --noEmit && vitest run``) all passed when the command did; when it
      failed, which one failed is not known (unknown for each);
    * a call without a result (the session ended mid-run) is unknown.
    """
    parts = split_shell(raw_cmd)
    found: list[tuple[int, str, str, str]] = []
    for at, (seg, _) in enumerate(parts):
        bare = _PREFIX.sub("", " ".join(seg.split()))
        for kind, pattern in _KINDS[:3]:
            m = pattern.match(bare)
            if m:
                key = " ".join(m.group(0).split()).rsplit("/", 1)[-1]
                found.append((at, kind, key, display(" ".join(seg.split()))))
                break
    if not found:
        return []
    if result is None:
        return [(kind, key, shown, "unknown") for _, kind, key, shown in found]
    text = result.text or ""
    fail_line = failure_line(text)
    if len(found) > 1:
        last = found[-1][0]
        ok = not fail_line and (
            (not _masked(parts, last) and not failed(result))
            or (_RUNNER_PASS.search(text) is not None and not result.is_error and not _others_after(parts, last))
        )
        return [(kind, key, shown, "passed" if ok else "unknown") for _, kind, key, shown in found]
    at, kind, key, shown = found[0]
    others = _others_after(parts, at)
    masked = _masked(parts, at)
    if fail_line:
        outcome = "unknown" if others and masked else "failed"
    elif not masked:
        outcome = "failed" if failed(result) and not (others and _RUNNER_PASS.search(text)) else "passed"
    elif _RUNNER_PASS.search(text) and not (others and result.is_error):
        outcome = "passed"
    else:
        outcome = "unknown"
    return [(kind, key, shown, outcome)]


def failure_reason(result: Event | None) -> str:
    """What a failed run's result says went wrong: its runner failure line, else its cause line."""
    if result is None:
        return ""
    text = result.text or ""
    return failure_line(text) or cause_line(text)


def commit_done(raw_cmd: str, result: Event | None) -> tuple[str, str] | None:
    """``(sha, title)`` when a ``git commit`` command demonstrably committed: git's ``[branch 7e2d976] title``
    line in the output gives both; an unfiltered commit whose result reports no failure and no "nothing to
    commit" gives ``("", "")``.  None when it did not commit (failed, nothing to commit, outcome hidden)."""
    if result is None:
        return None
    text = result.text or ""
    m = _COMMIT_LINE.search(text)
    if m:
        return m.group("sha")[:7], " ".join(m.group("title").split())
    if failed(result) or _NO_COMMIT.search(text):
        return None
    parts = split_shell(raw_cmd)
    at = next((k for k, (seg, _) in enumerate(parts) if _COMMIT.search(seg)), None)
    if at is None or _masked(parts, at):
        return None
    return "", ""


def push_done(raw_cmd: str, result: Event | None) -> bool:
    """True when a ``git push`` went through: no failure in the result (``! [rejected]``, ``fatal:``, ``error:
    failed to push``) and, when its exit status is hidden (``|| echo``), git's ``a -> b`` / up-to-date line."""
    if result is None or failed(result):
        return False
    text = result.text or ""
    if _PUSH_FAIL.search(text):
        return False
    parts = split_shell(raw_cmd)
    at = next((k for k, (seg, _) in enumerate(parts) if _PUSH.search(seg)), None)
    if at is not None and _masked(parts, at):
        return " -> " in text or "Everything up-to-date" in text
    return True


def _argv(seg: str, *, strict: bool = False) -> list[str]:
    """The words of a command's first line (shell quoting read); when its quotes do not close, its words split at
    whitespace, or [] if ``strict`` (a script cut off or spread over lines: its words name no files)."""
    import shlex

    first = seg.split("\n", 1)[0]
    try:
        return shlex.split(first, posix=True)
    except ValueError:
        return [] if strict else first.split()


def created_ref(raw_cmd: str, result: Event | None) -> tuple[str, str, bool] | None:
    """``(label, identifier, ok)`` for a command that creates something outside the repository: ``gh pr
    create`` / ``gh issue create`` / ``glab mr create`` / a ticket CLI (identifier: the URL or key it printed),
    a deploy (``fly deploy``, ``vercel --prod``, ``kubectl apply``…: the URL it printed) or a package publish
    (``npm publish``: ``+ pkg@1.2.3``).  ``ok`` is False when the result reports failure.  None for other
    commands."""
    for at, (seg, _) in enumerate(split_shell(raw_cmd)):
        bare = _PREFIX.sub("", " ".join(seg.split()))
        m = _CREATE_CLI.match(bare)
        d = None if m else _DEPLOY_CLI.match(bare)
        if not m and not d:
            continue
        if bare.startswith("heroku") and not re.match(r"heroku\s+(?:container:release|releases:\S+|deploy)", bare):
            continue
        text = (result.text if result is not None else "") or ""
        ok = result is not None and not failed(result) and not failure_line(text) and not _PUSH_FAIL.search(text)
        urls = _URL.findall(text)
        if m:
            what = m.group("what") or "issue"
            label = {"pr": "Opened pull request", "mr": "Opened merge request", "issue": "Created issue",
                     "release": "Created release", "gist": "Created gist", "repo": "Created repository"}[what]
            ident = next((u for u in reversed(urls) if re.search(r"/(?:pull|issues|merge_requests|releases|browse)/", u)),
                         urls[-1] if urls else "")
            if not ident:
                key = _ISSUE_KEY.search(text)
                ident = key.group(0) if key else ""
            return label, ident.rstrip(".,"), ok
        pub = _PUBLISHED.search(text)
        if pub:
            ident = next((g for g in pub.groups() if g), pub.group(0))
        else:
            ident = next((u for u in reversed(urls) if "github.com" not in u and "docs." not in u), "")
        verb = "Published" if re.search(r"publish|upload|push", d.group(0)) else "Deployed"
        return f"{verb} with `{display(' '.join(d.group(0).split()))}`", ident.rstrip(".,"), ok
    return None


def fetch_check(raw_cmd: str, result: Event | None) -> tuple[str, str] | None:
    """``(url, first line of the body)`` for a successful request to a local URL (curl, wget, httpie/xh,
    PowerShell's Invoke-WebRequest / Invoke-RestMethod): a result with no failure, no connection error and no
    4xx/5xx status.  None otherwise."""
    if result is None or failed(result):
        return None
    for seg, _ in split_shell(raw_cmd):
        argv = _argv(seg)
        if not argv:
            continue
        prog = argv[0].rsplit("/", 1)[-1].lower()
        if prog not in ("curl", "curl.exe", "wget", "http", "https", "xh", "invoke-webrequest", "iwr",
                        "invoke-restmethod", "irm"):
            continue
        url = next((a for a in argv[1:] if not a.startswith("-") and _LOCAL_URL.match(a)), None)
        if url is None:
            continue
        text = result.text or ""
        if _FETCH_FAIL.search(text):
            return None
        body = ""
        for line in text.splitlines():
            line = line.strip()
            if line and not _PROGRESS.match(line):
                body = " ".join(line.split())
                body = body if len(body) <= 100 else body[:99] + "…"
                break
        if url.startswith(":"):
            url = "localhost" + url
        return url, body
    return None


_WRITERS = ("cat", "echo", "printf")


def shell_edits(raw_cmd: str, full: str | None = None) -> list[tuple[str, bool]]:
    """Files a shell command wrote, as ``(path, created)``: ``cat > f <<EOF`` / ``echo … > f`` (created;
    ``>>`` appends, an edit), ``tee [-a] f``, ``sed -i … f`` (edit), ``cp … dst`` / ``mv … dst`` (created),
    Codex's ``apply_patch`` heredoc (its ``*** Update/Add File:`` lines).  ``/dev/*`` and scratch files under
    ``/tmp`` are left out (the caller keeps those under the session's cwd)."""
    out: list[tuple[str, bool]] = []
    body = full or raw_cmd
    if "*** Begin Patch" in body and re.search(r"(?m)^\s*(?:apply_patch|applypatch)\b", body):
        for m in re.finditer(r"\*\*\* (Update|Add) File: ([^\n*]+?)\s*$", body, re.M):
            out.append((m.group(2).strip(), m.group(1) == "Add"))
        return list(dict.fromkeys(out))
    for seg, _ in split_shell(raw_cmd):
        argv = _argv(seg, strict=True)
        if not argv:
            continue
        prog = argv[0].rsplit("/", 1)[-1]
        if prog in _WRITERS or "<<" in seg.split("\n", 1)[0]:
            for k, a in enumerate(argv):
                m = re.fullmatch(r"(\d?)(>>?|>\|)(.*)", a)
                if not m or m.group(1) == "2":
                    continue
                path = m.group(3) or (argv[k + 1] if k + 1 < len(argv) else "")
                if path and not path.startswith("&"):
                    out.append((path, m.group(2) != ">>"))
        elif prog == "tee":
            append = any(a in ("-a", "--append") for a in argv[1:])
            out.extend((a, not append) for a in argv[1:] if not a.startswith("-"))
        elif prog in ("sed", "gsed", "perl") and any(a.startswith("-i") or a == "--in-place" or
                                                     (prog == "perl" and a.startswith("-") and "i" in a)
                                                     for a in argv[1:]):
            explicit = any(a in ("-e", "-f", "--expression", "--file") for a in argv[1:]) or prog == "perl"
            args, skip = [], False
            for a in argv[1:]:
                if skip:
                    skip = False
                    continue
                if a in ("-e", "-f", "--expression", "--file"):
                    skip = True
                    continue
                if a.startswith("-"):
                    continue
                args.append(a)
            files = args if explicit and prog != "perl" else args[1:]
            out.extend((a, False) for a in files)
        elif prog in ("cp", "mv"):
            args, skip = [], False
            for a in argv[1:]:
                redirect = re.fullmatch(r"\d*(?:>>?|<|&>)(.*)", a)
                if skip or redirect:
                    skip = bool(redirect) and not redirect.group(1)  # "2> log": the next word is the target
                    continue
                if not a.startswith("-"):
                    args.append(a)
            if len(args) >= 2:
                out.append((args[-1], True))
    keep = []
    for path, created in out:
        if not path or "$" in path or "`" in path or path.startswith(("/dev/", "-")) or path in ("/dev/null",):
            continue
        keep.append((path, created))
    return list(dict.fromkeys(keep))
