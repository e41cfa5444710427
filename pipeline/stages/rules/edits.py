"""What a string-replacing file edit really changed, from its own arguments (``old_string`` / ``new_string`` of
Claude Code's Edit, Gemini CLI's ``replace``, opencode's ``edit``; ``old_str`` / ``new_str`` of Copilot's and
Anthropic's ``str_replace_editor``).

* ``gist`` — a pure deletion (the new text is blank) is named by what it removed (``removed `'boundaryNotes' |```),
  so Done says what the edit did rather than only which file it touched; other edits have no gist here.
* ``dropped_imports`` — an edit that takes names out of an import statement (JavaScript / TypeScript ``import
  {A, B} from 'm'``, Python ``from m import A, B`` / ``import m``, Rust ``use m::{A, B};``) while the file, as the
  session last saw it after the edit (the edit's own result snippet, else the latest read of the file with the
  edit applied), still uses a dropped name: the file no longer compiles, whatever the agent's summary says.  Not
  a fact when a later edit of the file imports the name again, or a later build / type check / test run passed.

Structural: the edit's own strings, never the agent's description of them.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.trials import Trial

GIST_LIMIT = 50  # characters of removed text shown
MAX_NAMES = 4  # dropped names shown in a fact
_OLD_KEYS = ("old_string", "oldString", "old_str")
_NEW_KEYS = ("new_string", "newString", "new_str")
_ALL_KEYS = _OLD_KEYS + _NEW_KEYS + (
    "file_path", "filePath", "path", "instruction", "replace_all", "replaceAll", "expected_replacements",
    "command", "description",
)
_ARG_SPLIT = lazy_re(r"(?:^|\n)(" + "|".join(_ALL_KEYS) + r"): ?")
_JS_IMPORT = lazy_re(
    r"\bimport\s+(?:type\s+)?(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+([A-Za-z_$][\w$]*))?\s*"
    r"from\s*['\"]([^'\"]+)['\"]\s*;?"
)
_PY_FROM = lazy_re(r"(?m)^[ \t]*from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]+)")
_PY_IMPORT = lazy_re(r"(?m)^[ \t]*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)\s*$")
_RS_USE = lazy_re(r"\buse\s+([\w:]+)::\{([^}]*)\}\s*;|\buse\s+([\w:]+)::(\w+)\s*;")
_UPDATED = lazy_re(r"(?:Here is the updated code:|Here's the result of running `cat -n`[^\n]*:)\s*\n", re.I)
_CAT_N = lazy_re(r"(?m)^\s*\d+\t")


def edit_strings(ev) -> tuple[str, str] | None:
    """``(old, new)`` of a string-replacing edit call, read from its rendered arguments (``key: value`` lines,
    ``transcripts.common.call_text``); None when ``ev`` is not one or either string is missing."""
    if ev.kind != "tool_call" or tools.tool(ev) not in tools.EDIT_TOOLS:
        return None
    text = ev.text or ""
    if not any(k in text for k in _OLD_KEYS):
        return None
    parts = _ARG_SPLIT.split(text)
    values: dict[str, str] = {}
    for n in range(1, len(parts) - 1, 2):
        values.setdefault(parts[n], parts[n + 1])
    old = next((values[k] for k in _OLD_KEYS if k in values), None)
    new = next((values[k] for k in _NEW_KEYS if k in values), None)
    if old is None or new is None:
        return None
    return old, new


def gist(ev) -> str | None:
    """``removed `<what>``` for a pure deletion (module rules), else None."""
    got = edit_strings(ev)
    if got is None:
        return None
    old, new = got
    if new.strip() or not old.strip():
        return None
    shown = " ".join(old.split())
    if len(shown) > GIST_LIMIT:
        shown = shown[: GIST_LIMIT - 1].rstrip() + "…"
    return f"removed `{shown}`"


def _names(text: str) -> dict[str, str]:
    """Local names the import statements of ``text`` bind -> the statement's module."""
    out: dict[str, str] = {}
    if "import" in text:
        for m in _JS_IMPORT.finditer(text):
            default, braces, star, module = m.groups()
            for n in [default, star] + (braces.split(",") if braces else []):
                n = (n or "").strip()
                if n.startswith("type "):
                    n = n[5:].strip()
                n = n.split(" as ")[-1].strip()
                if re.fullmatch(r"[A-Za-z_$][\w$]*", n):
                    out[n] = module
        for m in _PY_FROM.finditer(text):
            for n in m.group(2).strip("()").replace("\n", " ").split(","):
                n = n.strip().split(" as ")[-1].strip()
                if re.fullmatch(r"[A-Za-z_]\w*", n):
                    out[n] = m.group(1)
        for m in _PY_IMPORT.finditer(text):
            for n in m.group(1).split(","):
                n = n.strip()
                local = n.split(" as ")[-1].strip() if " as " in n else n.split(".")[0]
                out[local] = n.split(" as ")[0].strip()
    if "use " in text:
        for m in _RS_USE.finditer(text):
            module = m.group(1) or m.group(3)
            for n in (m.group(2).split(",") if m.group(2) else [m.group(4)]):
                n = n.strip().split(" as ")[-1].strip()
                if re.fullmatch(r"[A-Za-z_]\w*", n) and n != "self":
                    out[n] = module
    return out


def _without_imports(text: str) -> str:
    for pat in (_JS_IMPORT, _PY_FROM, _PY_IMPORT, _RS_USE):
        text = pat.sub(" ", text)
    return text


def _after(s: Scan, i: int, old: str, new: str) -> tuple[int, str] | None:
    """``(event index, text)`` of the file as last seen after edit ``i``: the edit's result snippet, else the
    latest earlier read of the same path with the edit applied."""
    r = s.result_of.get(i)
    if r is not None:
        text = s.events[r].text or ""
        m = _UPDATED.search(text)
        if m:
            return r, _CAT_N.sub("", text[m.end():])
    path = s.events[i].target
    for j in reversed(s.calls):
        if j >= i:
            continue
        ev = s.events[j]
        if ev.target == path and ("read" in tools.tool(ev) or tools.tool(ev) == "view"):
            rr = s.result_of.get(j)
            if rr is not None and old in (s.events[rr].text or ""):
                return rr, s.events[rr].text.replace(old, new, 1)
            break
    return None


def _checked_after(s: Scan, i: int) -> bool:
    """Whether a build / type check / test run after call ``i`` passed (it would have caught a missing import)."""
    for j in s.calls:
        if j <= i:
            continue
        cmd = tools.command_of(s.events[j])
        if not cmd:
            continue
        kind = tools.command_kind(cmd)
        if kind and kind[0] in ("test", "lint", "build") and not tools.failed(s.events[s.result_of[j]]
                                                                           if j in s.result_of else None):
            return True
    return False


def dropped_imports(s: Scan) -> list[Trial]:
    """Facts for edits that dropped imported names still in use (module rules), chronological."""
    out: list[Trial] = []
    for i in s.calls:
        ev = s.events[i]
        got = edit_strings(ev)
        if got is None:
            continue
        old, new = got
        before = _names(old)
        if not before:
            continue
        dropped = [n for n in before if n not in _names(new)]
        if not dropped:
            continue
        res = s.result_of.get(i)
        if res is None or tools.failed(s.events[res], deep=False):
            continue
        after = _after(s, i, old, new)
        if after is None:
            continue
        where, text = after
        body = _without_imports(text)
        used = [n for n in dropped if re.search(r"(?<![\w$])" + re.escape(n) + r"(?![\w$])", body)]
        if not used:
            continue
        later = [j for j in s.calls if j > i and s.events[j].target == ev.target]
        readded = set()
        for j in later:
            g = edit_strings(s.events[j])
            if g is not None:
                readded |= set(_names(g[1]))
        used = [n for n in used if n not in readded]
        if not used or _checked_after(s, i):
            continue
        src = s.events[where].text or ""
        m = re.search(r"(?<![\w$])" + re.escape(used[0]) + r"(?![\w$])", _without_imports_keep(src))
        if m is None:
            continue
        a = src.rfind("\n", 0, m.start()) + 1
        b = src.find("\n", m.start())
        b = len(src) if b < 0 else b
        line = " ".join(src[a:b].split())
        names = ", ".join(used[:MAX_NAMES]) + (f" (+{len(used) - MAX_NAMES} more)" if len(used) > MAX_NAMES else "")
        module = before[used[0]]
        whole = not _names(new)
        how = f"removed the whole import from '{module}'" if whole else f"took {names} out of the import from '{module}'"
        fact = (f"The edit of {ev.target} {how}, but {names} {'is' if len(used) == 1 else 'are'} still used "
                f"(`{line[:80]}`): the file no longer compiles; nothing was built or type-checked after it")
        out.append(Trial(fact, where, a, b, rank=0, weak=False))
    return out


def _without_imports_keep(text: str) -> str:
    """``text`` with its import statements blanked out character for character (offsets kept)."""
    for pat in (_JS_IMPORT, _PY_FROM, _PY_IMPORT, _RS_USE):
        text = pat.sub(lambda m: " " * len(m.group(0)), text)
    return text
