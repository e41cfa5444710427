"""Reduce state-file text to decision level for CONTEXT.md (issue 5, "Translate"; DESIGN.md "CONTEXT.md (Tier 1)").

CONTEXT.md is committed and read by every later session, so it keeps the decision and drops the detail that stays
in the state file: fenced code blocks (raw command output, logs) with the line that introduces them (one ending
in ``:``), commit hashes and the leading directories of long paths.  Nothing is paraphrased: the remaining words are the state file's own, joined on one line.
"""

from __future__ import annotations

import re

from pipeline.context.parse import fenced, norm

_COMMIT = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/-])")
"""A git commit hash: 7-40 lowercase hex characters with at least one digit and one letter, standing alone."""

_PATH = re.compile(r"(?<![\w/.~:@-])(?:~?/)?(?:[\w.@+-]+/){3,}[\w.@+-]*[\w@+-]")
"""A path of four or more components (URLs are not matched: their path follows ``//``)."""

KEEP_COMPONENTS = 3
_EMPTY_WRAP = re.compile(r"\(\s*\)|\[\s*\]|``")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:)\]])")


def shorten_path(path: str) -> str:
    """The last ``KEEP_COMPONENTS`` components of a long path (``/home/dev/shop/src/shop/api.py`` -> ``src/shop/api.py``)."""
    parts = [p for p in path.split("/") if p and p != "~"]
    return "/".join(parts[-KEEP_COMPONENTS:])


def outside_fences(lines: list[str]) -> list[bool]:
    """For each line: False when it belongs to a fenced block (raw output) or introduces one (ends with ``:`` right
    before the fence, like ``from the ingress log:``), True otherwise.  Works on a multi-line text split into
    lines and on a list of one-line items (Established Facts are one fact per line)."""
    keep: list[bool] = []
    previous = False
    for line, inside in zip(lines, fenced([line + "\n" for line in lines])):
        if inside and not previous:
            last = next((k for k in range(len(keep) - 1, -1, -1) if keep[k]), None)
            if last is not None and last == len(keep) - 1 and lines[last].rstrip().endswith(":"):
                keep[last] = False
        previous = inside
        keep.append(not inside)
    return keep


def reduce_text(text: str) -> str:
    """``text`` on one line without fenced blocks, commit hashes and long path prefixes (module docstring).

    ``"Fixed (3f9a2c1) in /home/dev/shop/src/shop/ratelimit.py"`` -> ``"Fixed in src/shop/ratelimit.py"``.
    Spacing is only tidied where a hash was removed.  Returns ``""`` when nothing is left.
    """
    lines = text.splitlines()
    one = norm(" ".join(line for line, keep in zip(lines, outside_fences(lines)) if keep))
    one = _PATH.sub(lambda m: shorten_path(m.group(0)), one)
    without = _COMMIT.sub("", one)
    if without != one:
        one = _SPACE_BEFORE_PUNCT.sub(r"\1", norm(_EMPTY_WRAP.sub("", without)))
    return one
