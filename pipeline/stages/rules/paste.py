"""Context is not content (issue 12, 2.2): what in a user prompt is the user's own words, and what was pasted.

A prompt often carries text the user did not write: an expanded slash-command or skill template (``## Outline``,
``You MUST…``, ``$ARGUMENTS``, ``[FEATURE_NAME]``), a pasted build log, stack trace or tool output.  None of it is
a task, a decision, a fact or a constraint; the user's own sentences around it still are.  The signals are the
shape of the text, not its language:

* **log-like lines**: a leading timestamp or log level, box drawing, status glyphs (``✖ ⚠ ✔``), ANSI escapes,
  stack frames (``at f (file:1:2)``, ``File "x.py", line 3``), ``path:line:col`` locations, or a line that is
  mostly not letters; two or more in a row (or one with a status glyph) are a paste;
* **fenced code** blocks;
* **templates and pasted documents**: placeholders (``$ARGUMENTS``, ``{{name}}``, ``[ALL_CAPS]``), or a long text
  that opens with a markdown heading or holds three or more (people do not type headed documents into a
  prompt; harnesses expand them, users paste them).

Pure functions of the text; module-level patterns compile on first use (``pipeline.lazyre``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.lazyre import lazy_re

_LOGLINE = lazy_re(
    r"^\s*(?:"
    r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[?\d\d:\d\d:\d\d|"  # timestamps
    r"\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\b\]?[:\s]|"  # log levels
    r"(?:npm|yarn|pnpm) (?:ERR!|WARN)|"
    r"at \S+ \(?\S+:\d+(?::\d+)?\)?|at \S+:\d+:\d+|File \"[^\"]+\", line \d+|Traceback \(most recent|"
    r"[─│╭╮╰╯═║┌┐└┘├┤┬┴┼▶►✖✗✘⚠✔✓❌]|"  # box drawing and status glyphs
    r"(?:\x1b|←)\[\d|"  # ANSI escapes, raw or as Windows consoles print them
    r"\S+\.\w{1,5}:\d+(?::\d+)?[: ]|"  # path:line(:col)
    r"(?:\w+(?:Error|Exception)|E\d{3,}|error\[?E?\d*\]?):|"
    r"(?:\([\w.-]+\)\s*)?(?:[\w.-]+@[\w.-]+(?::\S*)?\s*[$#%]|[➜❯»]|PS\s+[A-Z]:\\\S*>)\s|"  # a shell prompt (a pasted terminal)
    r"(?:WARN|INFO|ERRO|DEBU)\[\d+\]|"  # logrus levels
    r"\[[\w .:/#-]{1,30}\]\s|[\w.-]{1,40}\s+\|\s"  # a "[tag] " prefix, a compose "service | " prefix
    r")",
    re.IGNORECASE,
)
#: a shell prompt opening a line: "(venv) ➜  app cmd", "dev@box:~/app$ cmd", "PS C:\\work> cmd"
_SHELL_PROMPT = lazy_re(r"^\s*(?:\([\w.-]+\)\s*)?(?:[\w.-]+@[\w.-]+(?::\S*)?\s*[$#%]|[➜❯»]|PS\s+[A-Z]:\\\S*>)\s")
#: the user's own prose after a pasted terminal: CJK text, or a sentence of five words or more that ends like one
_PROSE = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|^\s*(?:[A-Za-zÀ-ÿ'’,]+\s+){4,}[^\n]*[.!?]\s*$")
_CJK_START = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_GLYPH = lazy_re(r"[─│╭╮╰╯═║✖✗✘⚠❌]|(?:\x1b|←)\[\d")
_FENCE = lazy_re(r"^[ \t]*(?:```|~~~)")
_PLACEHOLDER = lazy_re(r"\$ARGUMENTS\b|\{\{\s*\w+\s*\}\}|\[[A-Z][A-Z0-9_]{3,}\]")
_HEADING = lazy_re(r"^#{1,4}\s+\S", re.MULTILINE)
_ERROR_CUE = lazy_re(
    r"[✖✗✘❌]|\b(?:error|errors|failed|failure|fatal|exception|panic|could not|cannot|can't|unable to|"
    r"not found|denied|refused|timed out|traceback)\b|错误|失败|エラー|失敗|오류|실패|erro\b|falhou|falha",
    re.IGNORECASE,
)
_HARD_ERROR = lazy_re(
    r"[✖✗✘❌]|\b(?:error|errors|failed|failure|fatal|exception|panic|could not|unable to|traceback)\b|"
    r"错误|失败|エラー|失敗|오류|실패|erro\b|falhou",
    re.IGNORECASE,
)
_NOT_LETTER = lazy_re(r"[\W\d_]+")  # what is left of a line without these runs is its letters

TEMPLATE_MIN_CHARS = 600  # a headed text shorter than this is typed, not expanded
DOCUMENT_MIN_CHARS = 200  # a markdown heading followed by this much text, after the user's words, opens a paste


def is_log_line(line: str) -> bool:
    """Whether ``line`` looks like machine output (see module rules); blank lines are not."""
    s = line.strip()
    if not s:
        return False
    if _LOGLINE.match(s):
        return True
    return len(s) >= 12 and len(_NOT_LETTER.sub("", s)) < 0.4 * len(s)


def is_template(text: str) -> bool:
    """Whether ``text`` is an expanded command/skill template or a pasted document rather than the user's own
    prompt: a placeholder, a text of ``2 * DOCUMENT_MIN_CHARS`` that opens with a markdown heading, or one of
    ``TEMPLATE_MIN_CHARS`` that holds three or more headings."""
    if _PLACEHOLDER.search(text):
        return True
    if len(text) >= 2 * DOCUMENT_MIN_CHARS and _HEADING.match(text.lstrip()):
        return True
    return len(text) >= TEMPLATE_MIN_CHARS and len(_HEADING.findall(text)) >= 3


@lru_cache(maxsize=64)
def own_words(text: str) -> str:
    """``text`` without its pasted parts: fenced code, runs of log-like lines, a template's body, and a pasted
    document (a markdown heading after the first line followed by ``DOCUMENT_MIN_CHARS`` of text, to the end).

    Returns the remaining lines joined with newlines (may be ""). A template returns "" whole: its author is
    the harness, not the user.  (Kept for the last 64 texts: several sections read the same prompt.)"""
    if is_template(text):
        return ""
    lines = text.splitlines()
    logs = [is_log_line(line) for line in lines]
    keep: list[str] = []
    in_code = False
    in_terminal = False  # after a pasted shell prompt, until a blank line or the user's own prose
    n = len(lines)
    for i, line in enumerate(lines):
        if _SHELL_PROMPT.match(line):
            in_terminal = True
            continue
        if in_terminal:
            if not line.strip():
                in_terminal = False
                continue
            if not _PROSE.search(line):
                continue
            in_terminal = False
            cjk = _CJK_START.search(line)
            if cjk and cjk.start() > 0 and not _CJK_START.match(line):
                line = line[cjk.start():]  # the output's last line and the user's words typed on it without a break
        if i and not in_code and _HEADING.match(line) and sum(map(len, lines[i:])) >= DOCUMENT_MIN_CHARS:
            break  # a pasted document after the user's words: the rest is not theirs
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        if logs[i]:
            near = (i > 0 and logs[i - 1]) or (i + 1 < n and logs[i + 1])
            if near or _GLYPH.search(line):
                continue
        elif _between_logs(lines, logs, i):
            continue  # a line inside a pasted log ("DECISION: …" between two of its lines) is the log's
        keep.append(line)
    return "\n".join(keep).strip()


def _between_logs(lines: list[str], logs: list[bool], i: int) -> bool:
    """Whether the nearest non-blank lines before and after line ``i`` are both log-like."""
    before = next((logs[k] for k in range(i - 1, -1, -1) if lines[k].strip()), False)
    after = next((logs[k] for k in range(i + 1, len(lines)) if lines[k].strip()), False)
    return before and after


@lru_cache(maxsize=64)
def is_paste(text: str) -> bool:
    """Whether ``text`` is mostly pasted output (at least 120 characters): the user's own words are under a
    fifth of it (and under 200 characters), or at least 3 lines are log-like and, with the one-word lines of a
    listing, they make 60 % of its non-blank lines outside code fences, with under 300 characters of prose
    besides."""
    t = text.strip()
    if len(t) < 120:
        return False
    own = own_words(t)
    if len(own) < 200 and len(own) < 0.2 * len(t):
        return True
    lines: list[str] = []
    in_code = False
    for ln in t.splitlines():
        if _FENCE.match(ln):
            in_code = not in_code
        elif ln.strip() and not in_code:
            lines.append(ln)
    flags = [is_log_line(ln) for ln in lines]
    logs = [ln for ln, log in zip(lines, flags) if log]
    words = [ln for ln, log in zip(lines, flags) if len(ln.split()) == 1 and not log]
    prose = sum(len(ln) for ln in lines if ln not in logs and ln not in words)
    return len(logs) >= 3 and len(logs) + len(words) >= 0.6 * len(lines) and prose < 300


def lead_words(text: str) -> str:
    """The user's own lines before the first log-like line, code fence or heading of a paste ("" when they
    hold under 3 words)."""
    out: list[str] = []
    for i, line in enumerate(text.strip().splitlines()):
        if is_log_line(line) or _FENCE.match(line) or (i and _HEADING.match(line)):
            break
        out.append(line)
    lead = "\n".join(out).strip()
    return lead if len(lead.split()) >= 3 else ""


def error_line(text: str, limit: int = 160) -> str | None:
    """The line of ``text`` that states its error (any language of the cue list), stripped of box drawing, or
    None: the first hard failure (``✖``, error, failed, fatal…) when there is one, else the first softer cue
    (not found, denied…)."""
    soft = None
    for line in text.splitlines():
        m = _ERROR_CUE.search(line)
        if not m:
            continue
        s = " ".join(re.sub(r"[─│╭╮╰╯═║┌┐└┘]+", " ", line).split())
        if len(s) < 8:
            continue
        s = s if len(s) <= limit else s[: limit - 1] + "…"
        if _HARD_ERROR.search(line):
            return s
        soft = soft or s
    return soft
