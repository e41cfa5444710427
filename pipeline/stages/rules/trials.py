"""Trial and error (issue 13, §1.2): what the tool calls themselves established, whatever words the agent used.

Read from the shape of the calls, not from cue words:

* **Changed retry** — a tool call fails (the harness's error flag, a non-zero exit, a runner's failure lines:
  ``tools.failed``), and a later call of the same tool before the next user prompt (within ``RETRY_WINDOW``
  calls) that *differs* from it and shares most of its words succeeds: the difference is the fact
  ("`python x.py` failed (ModuleNotFoundError: No module named 'cv2'); `conda run -n viv python x.py` worked").
  Of several successful candidates the most similar one is the fix.  A retry that repeats the command unchanged
  (tests re-run after an edit) says nothing about the environment and is not a fact.
* **Blocked** — a hook, sandbox or permission layer refused the call (``BLOCKED:``, "was blocked", permission
  denied, "not allowed", "operation not permitted"): an environment trap, with the workaround when a changed
  retry succeeded.
* **Missing capability** — "command not found", "No module named", "is not installed", "Path already exists":
  a fact about the environment even when nothing was retried; so is a file write that failed and was never
  retried on the same path (the file is not what the session believes).
* **Repeated** — the same error (its line with numbers, hashes and quoted names masked) seen again is one fact,
  counted: "… (seen 3 times)".

Each fact quotes the failed result's error line (evidence rule).  Linear: each failed call looks ahead at most
``RETRY_WINDOW`` calls.  Pure functions of the ``Scan``; patterns compile on first use.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.scan import Scan

#: the harness's words when the user declined a tool call (``decisions`` reads those)
DENIED = lazy_re(
    r"user\s+(?:doesn't|does\s+not)\s+want\s+to\s+proceed|user\s+(?:rejected|denied|declined)|denied[-\s]interactively|"
    r"rejected\s+by\s+(?:the\s+)?user|permission\s+denied\s+by\s+(?:the\s+)?user",
    re.IGNORECASE,
)

RETRY_WINDOW = 8  # later calls a failed call's retry may be
CMD_LIMIT = 80  # characters of a command shown
ERR_LIMIT = 130  # characters of an error line shown
PATH_LIMIT = 28  # a longer path is shown as …/<last part>
MIN_SIMILAR = 0.5  # share of the failed command's words the retry must hold

_BLOCKED = lazy_re(
    r"\bBLOCKED\b|\bwas\s+blocked\b|\bblocked\s+by\b|permission\s+denied|\bnot\s+allowed\b|operation\s+not\s+permitted|"
    r"\baccess\s+(?:is\s+)?denied\b|\brefused\s+to\s+run\b|\bsandbox\w*\b.{0,40}\b(?:denied|blocked|prevent\w*)|"
    r"\bEACCES\b|\bEPERM\b|\bmay\s+only\b",
    re.I,
)
_CAPABILITY = lazy_re(
    r"command\s+not\s+found|\bis\s+not\s+recognized\s+as\b|no\s+module\s+named|modulenotfounderror|cannot\s+find\s+module|"
    r"\b(?:is\s+)?not\s+installed\b|path\s+already\s+exists|\balready\s+exists\b|\bnot\s+a\s+git\s+repository\b|"
    r"\bno\s+(?:gpu|cuda|display)\b|\bcannot\s+open\s+display\b",
    re.I,
)
#: a line that states the failure (any language of paste's cue list, plus merge conflicts and hook blocks)
_ERR_LINE = lazy_re(
    r"[✖✗✘❌]|\b(?:error|errors|failed|failure|fatal|exception|panic|could\s+not|cannot|can't|unable\s+to|not\s+found|"
    r"denied|refused|timed\s+out|conflict|blocked|not\s+allowed|already\s+exists|not\s+permitted|no\s+module)\b|"
    r"\w+(?:Error|Exception)\b|错误|失败|エラー|失敗|오류|실패|\berro\b|falhou|falha",
    re.I,
)
#: a generic runner line that names no cause ("npm error code 1", "Exit code 1", "A complete log of this run")
_GENERIC = lazy_re(
    r"^(?:npm\s+(?:error|ERR!)\s+(?:code|path|command|errno|syscall|A\s+complete\s+log|signal)\b|exit\s+code:?\s*\d+$|"
    r"error:\s+command\s+failed|.*\bcommand\s+failed$|.*\ba\s+complete\s+log\b|.*\bfor\s+more\s+(?:info|details)\b|"
    r"traceback\s+\(most\s+recent|\s*at\s+\S+\s+\(|\s*File\s+\"|error\s+conda\.cli\.main_run)",
    re.I,
)
_HINT = lazy_re(r"\b(?:use|set|try|run|pass|add|did\s+you\s+mean|to\s+override|instead|hint)\b|--\w", re.I)
#: an error that says how to get past it ("Use ALLOW_DIRTY=1 to override", "did you mean", "hint: …")
_FIX_HINT = lazy_re(
    r"\bto\s+override\b|\bdid\s+you\s+mean\b|^hint:|\buse\s+[`'\"]?[A-Za-z_][\w-]*=\S+|\btry\s+(?:running\s+)?[`'\"]?--?\w|"
    r"\brun\s+[`'\"][^`'\"]{3,}[`'\"]\s+(?:first|to\s+fix)",
    re.I,
)
_GLYPH_ERR = lazy_re(r"[✖✗✘❌]")
_ERRNO_CODE = lazy_re(r"\bE[A-Z]{3,}\b|\breason:")
_DECOR = lazy_re(r"[─│╭╮╰╯═║┌┐└┘]+|^\s*(?:[✖✗✘❌⚠]\s*)?(?:\[[\dT:.\-Z ]+\]\s*)?")
_MASK = lazy_re(r"\d+|[0-9a-f]{7,}|'[^']*'|\"[^\"]*\"|`[^`]*`|\S*[/\\]\S*")
_WORD = lazy_re(r"[A-Za-z0-9_.-]+")
_REDIRECT = lazy_re(r"\s*\d?>&?\d?\s*(?:/dev/null)?\s*$|\s+2>&1\b")
#: a segment that only looks around (prints, lists, checks a version) rather than doing the failed thing again
_DIAG = lazy_re(
    r"^(?:which|type|command\s+-v|where|ls|dir|cat|echo|printf|head|tail|pwd|find|grep|rg|wc|stat|file|env|printenv|"
    r"git\s+(?:status|log|branch|show|diff|remote|stash|reset|checkout\s+--)|#|rm|rmdir|del|kill|pkill|"
    r"(?:pip3?|npm|pnpm|yarn|cargo|brew|apt(?:-get)?|conda)\s+(?:uninstall|remove|rm))\b|\s--(?:version|help)\b|\s-V$",
    re.I,
)
#: the shell command in a call's argument text ("command: …" up to the next argument line), line breaks kept
_ARG_COMMAND = lazy_re(r"(?:^|\n)(?:command|cmd): (.*?)(?=\n(?:description|timeout|run_in_background|sessionId|async|"
                       r"workdir|cwd|dangerouslyDisableSandbox|shell|justification|login|yield_time_ms|max_output_tokens): |\Z)", re.S)
_PATH = lazy_re(r"(?:[A-Za-z]:)?[\w.~-]*(?:[/\\][\w.@+-]+)+[/\\]?")
_ASSIGN = lazy_re(r"^(?:export\s+)?[A-Za-z_]\w*=\S*$")
_NOISE_SEG = lazy_re(r"^(?:echo|printf|#|true|:$)", re.I)
#: the agent's own typo in what it typed, not a fact about the environment
#: …nor is a test that fails on the code under work (the fix is in the code, not in the call)
_OWN_TYPO = lazy_re(
    r"\b(?:SyntaxError|IndentationError|unexpected\s+(?:token|EOF|end\s+of\s+file)|unterminated)\b|"
    r"^FAILED\s|^E?\s*AssertionError\b|\bassert\s.+==|\b\d+\s+(?:failed|failing)\b|\btests?\s+failed\b|"
    r"(?m:^\s*usage:\s)",  # a command called the wrong way prints its usage
    re.I,
)
#: a path that is not there, as a reading or listing command says it
_NO_PATH = lazy_re(
    r"no\s+such\s+file\s+or\s+directory|cannot\s+access|can't\s+read|cannot\s+open|cannot\s+find\s+the\s+path|"
    r"does\s+not\s+exist|(?:file|path|directory)\s+not\s+found",
    re.I,
)


@dataclass(slots=True)
class Trial:
    """One fact from the calls: ``text`` to show, the result event ``ev`` and the span of its error line."""

    text: str
    ev: int
    start: int
    end: int
    rank: int  # 0 blocked, 1 changed retry, 2 missing capability / unretried write, 3 other repeated error
    weak: bool = True  # no retry, or one that shares under three quarters of the failed command's words


@lru_cache(maxsize=256)
def error_span(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the line of ``text`` that best states its error: a cause-naming line (a status glyph,
    a reason after a colon, a hint such as "Use ALLOW_DIRTY=1 to override") beats a generic runner line
    ("npm error code 1", "Exit code 1"); earliest on ties.  None when no line names an error."""
    best: tuple[int, int, int] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.strip()
        if len(body) < 8 or not _ERR_LINE.search(body):
            continue
        score = 1
        if _GENERIC.match(body):
            score -= 3
        if _GLYPH_ERR.search(body):
            score += 2
        if _BLOCKED.search(body) or _CAPABILITY.search(body):
            score += 2
        head, sep, tail = body.partition(":")
        if sep and len(tail.split()) >= 3:
            score += 1
        if _HINT.search(body):
            score += 1
        if _ERRNO_CODE.search(body):
            score += 2  # "getaddrinfo ENOTFOUND registry.npmjs.org" names the cause
        if best is None or score > best[0]:
            lead = len(line) - len(line.lstrip())
            end = start + lead + len(body)
            if body.endswith(":"):  # "…would be overwritten by merge:" names its object on the next line
                nxt = text[pos:].split("\n", 1)[0].strip()
                if nxt:
                    end = text.index(nxt, pos) + len(nxt)
            best = (score, start + lead, end)
    if best is None or best[0] < 0:
        return None
    return best[1], best[2]


def _squeeze(text: str) -> str:
    """Long paths shortened to ``…/<last part>`` (the command stays recognisable; the quote keeps it whole)."""

    def short(m: re.Match) -> str:
        p = m.group(0)
        if len(p) <= PATH_LIMIT:
            return p
        tail = p.rstrip("/\\'\"").replace("\\", "/").rsplit("/", 1)[-1]
        return "…/" + tail if tail else p

    return _PATH.sub(short, _URL.sub(_short_url, text))


_URL = lazy_re(r"\b[a-z][\w+.-]*://[^\s`'\"<>)]+")


def _short_url(m: re.Match) -> str:
    """A URL as its scheme and host, then ``…/<last part>`` when it is long (the host is what failed)."""
    url = m.group(0)
    if len(url) <= PATH_LIMIT + 12:
        return url
    host = _URL_HOST.match(url)
    tail = url.rstrip("/").rsplit("/", 1)[-1][:40]
    return f"{host.group(0)}/…/{tail}" if host and tail and host.end() < len(url) else url


_URL_HOST = lazy_re(r"^[a-z][\w+.-]*:/+[^/\s]+")


def _clean(line: str, limit: int) -> str:
    s = " ".join(_squeeze(_DECOR.sub(" ", line)).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _short(cmd: str) -> str:
    cmd = " ".join(_squeeze(_REDIRECT.sub("", cmd)).split())
    return cmd if len(cmd) <= CMD_LIMIT else cmd[: CMD_LIMIT - 1] + "…"


def _words(cmd: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(cmd))


def _what(ev) -> str:
    """What the call ran or touched, on one line: the shell command, else ``tool target``."""
    if tools.command_of(ev):
        m = _ARG_COMMAND.search(ev.text or "")
        return tools.unwrap_argv((m.group(1) if m else ev.target or "").strip()).strip()
    target = " ".join((ev.target or "").split())
    return f"{tools.tool(ev)} {target}".strip()


def _parts(cmd: str) -> list[str]:
    """The segments of a compound command that do something (``echo`` banners and comments dropped)."""
    every = [x.strip() for line in cmd.splitlines() for x in tools.segments(line.strip().rstrip("\\"))]
    every = [x for x in every if x]
    segs = [x for x in every if not _NOISE_SEG.match(x) and not _ASSIGN.match(x)]
    return segs or every


def _diagnostic(parts: list[str]) -> bool:
    return bool(parts) and all(_DIAG.search(x) for x in parts)


def _diff(failed: str, fixed: str) -> tuple[str, str]:
    """The parts of two compound commands that differ (shared ``&&``/``;`` segments dropped, e.g. the ``cd``)."""
    a, b = _parts(failed), _parts(fixed)
    common = set(a) & set(b)
    da = " && ".join(x for x in a if x not in common) or failed
    db = " && ".join(x for x in b if x not in common) or fixed
    return da, db


def _worked(failed: str, fixed: str) -> str:
    """How the retry that worked differs: the whole command when it fits, else the words it dropped and added
    ("worked without `.claude/`", "worked with `--break-system-packages`")."""
    shown = f"`{_short(fixed)}` worked"
    if len(" ".join(fixed.split())) <= CMD_LIMIT:
        return shown
    a, b = fixed.split(), failed.split()
    gone = [w for w in b if w not in a]
    new = [w for w in a if w not in b]
    if a[:1] != b[:1] or not (gone or new) or len(gone) + len(new) > 3 or len(" ".join(gone + new)) > CMD_LIMIT:
        return shown  # another command, or many changes: the command itself says it best
    parts = ([f"without `{_short(' '.join(gone))}`"] if gone else []) + ([f"with `{_short(' '.join(new))}`"] if new else [])
    return "it worked " + " and ".join(parts)


def _signature(line: str) -> str:
    return " ".join(_MASK.sub("#", line.lower()).split())


#: the harness reporting how the agent used a tool or that the user stopped it, not anything about the environment:
#: an edit whose old text did not match, a file edited before it was read, a call the user aborted or interrupted
_MECHANICS = lazy_re(
    r"no\s+(?:match|replacement\s+was\s+performed)|old_str(?:ing)?\b.{0,40}\b(?:not\s+found|not\s+unique|did\s+not\s+appear)|"
    r"string\s+to\s+replace\s+not\s+found|found\s+\d+\s+matches\s+of\s+the\s+string|has\s+not\s+been\s+read\s+yet|"
    r"read\s+it\s+first|exceeds\s+maximum\s+allowed\s+tokens|usage\s+limit\s+reached|"
    r"nothing\s+(?:added\s+)?to\s+commit|no\s+changes\s+added\s+to\s+commit",  # git's no-op: the work was already in
    re.IGNORECASE,
)
def harness_refusal(text: str) -> bool:
    """Whether a tool or sub-agent result is the harness's own refusal or limit (``_MECHANICS``: an edit tool
    misused, a usage limit reached), not anything the call found."""
    return bool(_MECHANICS.search(text[:400]))


#: a read of a path that is not there: the agent looking for something, not a trap (unless a write failed the same)
_NOT_THERE = lazy_re(r"^(?:error:\s*)?(?:file|path)\s+(?:does\s+not|doesn't)\s+exist|^file\s+not\s+found", re.IGNORECASE)
#: the user stopped the call before it finished
_INTERRUPTED = lazy_re(
    r"user\s+(?:aborted|interrupted|cancell?ed)|interrupted\s+by\s+(?:the\s+)?user|request\s+interrupted", re.IGNORECASE
)


_HEAD_SKIP = lazy_re(r"^(?:cd\s+\S+\s*(?:&&|;)\s*|(?:[A-Z_][A-Z0-9_]*=\S*\s+)+|sudo\s+|env\s+|time\s+)+")


def _head(cmd: str) -> str:
    """The program and its first argument word, after ``cd X &&``, variables and ``sudo``: "nix flake", "git push";
    the same for two commands means a retry of the same thing."""
    words = [w for w in _HEAD_SKIP.sub("", cmd.strip()).split() if not w.startswith("-")][:2]
    return " ".join(words)


#: a line of a search's output: ``path:line:`` then the matched text
_MATCH_LINE = lazy_re(r"^\s*(?:…|\.\.\.)?[\w./\\~-]+:\d+[:-]")
#: what only filters a command's output: a pipe into grep/tail/head/tee/less/sort, a redirection, ``&& grep …``
_FILTERS = lazy_re(r"\s*(?:\||&&)\s*(?:grep|rg|tail|head|tee|less|sort|uniq|wc|cut|awk|sed\s+-n)\b[^|;&]*|\s*\d?>&?\d?\s*(?:/dev/null)?")


def _wraps(cmd: str, head: str) -> bool:
    """Whether ``cmd`` runs ``head``'s program through another one (``npx node@20 x.js``, ``uv run pytest``,
    ``conda run -n env python x.py``): a word of it starts with the program and the head's second word follows."""
    prog, _, arg = head.partition(" ")
    words = cmd.split()
    for k, w in enumerate(words):
        if w.startswith(prog) and (not arg or arg in words[k + 1:]):  # "git -C dir log" runs "git log"
            return True
    return False


#: a script the agent typed inline (``python - <<'PY'``, ``python -c "…"``, ``node -e``): its exceptions are the
#: agent's own code failing, unless a module or a file is missing (that is the environment)
_INLINE_SCRIPT = lazy_re(r"\b(?:python3?|node|ruby|perl)\s+(?:-\s*<<|-[ce]\s)")
_ENV_MISSING = lazy_re(r"ModuleNotFoundError|ImportError|No\s+module\s+named|Cannot\s+find\s+module|command\s+not\s+found")


def own_failure(text: str) -> bool:
    """Whether a failed result reads as the agent's own mistake or the code under work failing its tests (a syntax
    error, an assertion, "3 failed"), not as something about the environment."""
    return bool(_OWN_TYPO.search(text))


def _passed_later(s: Scan, calls: list[int], n: int, what: str) -> bool:
    """Whether a later call running the same thing as ``calls[n]`` (the same command; for other tools the same
    arguments) succeeded."""
    events = s.events
    shell = bool(tools.command_of(events[calls[n]]))
    same = (lambda j: _what(events[j]) == what) if shell else (lambda j: events[j].text == events[calls[n]].text)
    for j in calls[n + 1:]:
        if same(j) and not tools.failed(events[s.result_of[j]], deep=False):
            return True
    return False


#: a line that says only that the call ended, or a harness's header (Codex: "Chunk ID: …", "Wall time: …")
_EXIT_ONLY = lazy_re(
    r"^(?:exit\s+code:?\s*\d+|<exited\s+with\s+exit\s+code\s+\d+>|error:?|failed\.?|process\s+exited\s+with\s+code\s+\d+|"
    r"(?:chunk\s+id|wall\s+time|original\s+token\s+count|total\s+output\s+lines|output)\s*:.*)$",
    re.I,
)


_PROGRAM_SAYS = lazy_re(r"^[\w.+-]{1,30}:\s+\S")


def _first_line(text: str) -> tuple[int, int] | None:
    """The line of a failed result whose lines hold no error word that says most about it: the first one shaped
    ``program: message`` ("sudo: a terminal is required to read the password"), else the last one that says more
    than its exit code (git's "nothing to commit, working tree clean" after "On branch main")."""
    pos = 0
    last = None
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.strip()
        if len(body) >= 8 and not _EXIT_ONLY.match(body):
            lead = len(line) - len(line.lstrip())
            span = (start + lead, start + lead + len(body))
            if _PROGRAM_SAYS.match(body):
                return span
            last = span
    return last


def build(s: Scan) -> list[Trial]:
    """Trial-and-error facts of ``s`` (module rules), chronological; ``rank`` (blocked, changed retry, missing
    capability, any other failure) is the prior ``facts`` gives each (``candidates`` weighs and picks them)."""
    events = s.events
    calls = [i for i in s.calls if i in s.result_of]
    users = s.users
    written_ok: dict[str, int] = {}  # path -> last call index that wrote it successfully
    for i in calls:
        ev = events[i]
        if not tools.failed(events[s.result_of[i]], deep=False):
            for p in tools.edit_paths(ev) or ([ev.target] if tools.is_create(ev) and ev.target else []):
                written_ok[p] = i
    seen: dict[str, Trial] = {}
    out_stopped: list[Trial] = []
    counts: dict[str, int] = {}
    order: list[str] = []
    u = 0
    for n, i in enumerate(calls):
        r = s.result_of[i]
        res = events[r]
        if not (res.text or "").strip() or not tools.failed(res, deep=False):
            continue
        text = res.text
        if DENIED.search(text[:400]) or harness_refusal(text):
            continue  # the user declined the call, or the agent misused its edit tool: not the environment
        if _NOT_THERE.search(text.strip()[:200]) and not tools.command_of(events[i]) and not tools.edit_paths(events[i]):
            continue  # a read tool looking for a file that is not there
        if tools.command_of(events[i]) and _diagnostic(_parts(_what(events[i]))) and _NO_PATH.search(text[:600]):
            continue  # a reading or listing command guessing a path: the agent looking around, not a trap
        if _INLINE_SCRIPT.search(_what(events[i])) and not _ENV_MISSING.search(text[:4000]):
            continue  # the agent's own inline script failing: its code, not the environment
        stopped = _INTERRUPTED.search(text[:400])
        if stopped:  # a run the user stopped never finished: what it would have shown is not known
            out_stopped.append(Trial(f"`{_short(_what(events[i]))}` was interrupted by the user before it finished", r,
                                     stopped.start(), stopped.end(), 0, True))
            continue
        span = error_span(text[:4000])
        parts = _parts(_what(events[i])) if tools.command_of(events[i]) else []
        if span is None and parts and _diagnostic(parts):
            continue  # a reading command whose output names no error (a file's text, cut short): nothing learnt
        if span is not None and parts and _diagnostic(parts[:1]) and _MATCH_LINE.match(text[span[0]:span[1]]):
            continue  # a search's match ("src/x.py:101: raise ValueError(…)"): the code it found, not its error
        span = span or _first_line(text[:4000])
        if span is None:
            continue
        a, b = span
        err = text[a:b]
        sig = _signature(err)
        counts[sig] = counts.get(sig, 0) + 1
        if sig in seen and seen[sig].rank <= 1 and not seen[sig].weak:
            continue
        while u < len(users) and users[u] < i:
            u += 1
        next_user = users[u] if u < len(users) else len(events)
        ev = events[i]
        what = _what(ev)
        shell = bool(tools.command_of(ev))
        fw = _words(" ".join(_parts(what)))
        heads = {_head(p) for p in _parts(what)} | {_head(what)}  # a retry may redo any step of a compound command
        fix = None
        best = 0.0
        typo = bool(_OWN_TYPO.search(err))
        for j in calls[n + 1: n + 1 + RETRY_WINDOW]:
            if j > next_user or typo:
                break
            other = events[j]
            if tools.tool(other) != tools.tool(ev) or (not shell and other.target != ev.target):
                continue
            ow = _what(other)
            if ow == what or tools.failed(events[s.result_of[j]], deep=False):
                continue
            da, db = _diff(what, ow)
            if shell and _diagnostic(_parts(db)) and not _diagnostic(_parts(da)):
                continue
            if shell and not any(_head(ow) == h or _wraps(ow, h) for h in heads):
                continue  # another program ("nix develop …" after "nix flake check"): not a retry of it
            if shell and _FILTERS.sub("", ow).strip() == _FILTERS.sub("", what).strip():
                continue  # the same run with its output filtered ("… | grep FAIL"): a look at it, not a fix
            share = len(fw & _words(" ".join(_parts(ow)))) / max(1, len(fw))
            if share >= MIN_SIMILAR and share > best:
                best, fix = share, ow
        blocked = bool(_BLOCKED.search(err))
        shown = _clean(err, ERR_LIMIT)
        if fix is not None:
            da, db = _diff(what, fix)
            verb = "was blocked" if blocked else "failed"
            fact = f"`{_short(da)}` {verb} ({shown}); " + _worked(da, db)
            rank = 0 if blocked else 1
        elif blocked:
            fact = f"`{_short(what)}` was blocked: {shown}"
            rank = 0
        elif _CAPABILITY.search(err) or _FIX_HINT.search(err):
            fact = f"`{_short(what)}` failed: {shown}"
            rank = 2
        else:
            paths = tools.edit_paths(ev) or ([ev.target] if tools.is_create(ev) and ev.target else [])
            if paths and all(written_ok.get(p, -1) < i for p in paths):
                fact = f"`{_short(what)}` failed and was not retried: {shown}"
                rank = 2
            elif _passed_later(s, calls, n, what):
                continue  # the same call passed later, after edits: the code under work, not the environment
            else:
                fact = f"`{_short(what)}` failed: {shown}"
                rank = 3
        if typo:
            continue
        weak = fix is None or best < 0.75
        old = seen.get(sig)
        if old is not None and (old.rank < rank or (old.rank == rank and (weak or not old.weak))):
            continue
        seen[sig] = Trial(fact, r, a, b, rank, weak)
        if old is None:
            order.append(sig)
    out: list[Trial] = []
    for sig in order:
        t = seen[sig]
        if counts[sig] >= 2:
            t.text += f" (seen {counts[sig]} times)"
        out.append(t)
    return sorted(out + out_stopped, key=lambda t: t.ev)
