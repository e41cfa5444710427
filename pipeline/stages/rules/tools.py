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
    r"^(?:(?:[A-Z_][A-Z0-9_]*=\S*|sudo|time|timeout\s+\d+[smh]?|env|nice|uv\s+run|poetry\s+run|pdm\s+run|"
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
            r"mix\s+test|make\s+(?:test|check)\w*|bazel\s+test|swift\s+test|rake\s+test|php\s+artisan\s+test)\b"
        ),
    ),
    (
        "lint",
        lazy_re(
            r"^(?:\S*/)?(?:ruff|mypy|pyright|flake8|pylint|black|isort|eslint|prettier|tsc\s+--noEmit|"
            r"(?:npm|pnpm|yarn)\s+(?:run\s+)?(?:lint|typecheck|format)|cargo\s+(?:clippy|fmt)|golangci-lint|"
            r"shellcheck|make\s+(?:lint|fmt|format|typecheck)|pre-commit\s+run)\b"
        ),
    ),
    (
        "build",
        lazy_re(
            r"^(?:\S*/)?(?:make|cmake|cargo\s+(?:build|check)|go\s+(?:build|vet|generate)|tsc|"
            r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?build|docker(?:\s+compose|-compose)\s+(?:up|build|run)|"
            r"docker\s+build|mvn|\.?/?gradlew?|dotnet\s+build|build|meson|ninja|bazel\s+build|pip\s+install\s+-e|"
            r"pyinstaller|poetry\s+build|hatch\s+build|uv\s+build)\b"
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
    r"exit\s+code:?\s*[1-9]|exited\s+with\s+(?:code|status)\s+[1-9]|\"exit_code\":\s*[1-9]|exit\s+status\s+[1-9]|"
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
    cmd = ev.target or ev.text or ""
    return " ".join(cmd.split())


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
    return bool(_FAIL.search(low) or _FAIL_CAPS.search(text))


def relative(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies under it (either slash style), else unchanged."""
    if cwd:
        base = cwd.rstrip("/\\")
        if base and len(path) > len(base) + 1 and path.startswith(base) and path[len(base)] in "/\\":
            return path[len(base) + 1:]
    return path
