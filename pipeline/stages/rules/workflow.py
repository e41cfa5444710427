"""Approved Workflow: the first real user prompt plus the user's later redirections (DESIGN.md "Agent State
file": "what was approved, in the user's terms").

Rules (task brief):
* the first real prompt is the first ``user_prompt`` that is not a bare slash command (``/clear``), not an
  interruption marker, not a continuation word (``continue``, ``go on``) and not a pasted compaction summary;
  compaction summaries are their own event kind and never count;
* it is kept in the user's words and lines, cut at about ``FIRST_PROMPT_LIMIT`` characters at a sentence or
  word boundary with ``…``;
* a later prompt that changes or extends scope ("actually, also…", "instead…", "change of plan", "scratch
  that", "let's also"…) becomes a line ``Redirected <ISO-8601>: <prompt>``; at most ``MAX_REDIRECTIONS`` (the
  newest) are kept;
* with no real prompt at all, the compaction summary's stated request is used, labelled as such.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, clip_block, one_line

FIRST_PROMPT_LIMIT = 1200  # characters
REDIRECTION_LIMIT = 300  # characters per redirection line (after the prefix)
MAX_REDIRECTIONS = 12

_BARE_SLASH = lazy_re(r"^/[\w:.-]+\s*$")
_CONTROL = lazy_re(
    r"^(?:continue|go on|keep going|carry on|next|proceed|resume|ok|okay|yes|y|go|hi|hello|hey|thanks|thank you)"
    r"[.!]*$",
    re.IGNORECASE,
)
_NOT_A_PROMPT = lazy_re(
    r"^(?:\[Request interrupted by user|This session is being continued from a previous conversation|"
    r"<local-command-|<command-name>|Caveat: The messages below)",
)
_LEAD = r"^(?:(?:ok(?:ay)?|oh|hmm+|wait|so|and|also|but|hey|right|alright|well|one more thing)[,.!:]*\s+)*"
_REDIRECT = lazy_re(
    _LEAD
    + r"(?:actually\b|instead\b|also\b|scratch that|change of plans?|new plan|on second thought|forget (?:about )?"
    r"(?:it|that|the)\b|never ?mind|let'?s also\b|let us also\b|and also\b|additionally\b|in addition\b|"
    r"one more thing|while you'?re at it|before (?:you|that|we)\b|after that\b|(?:can|could|would) you also\b|"
    r"please also\b|rather than\b|don'?t bother\b|drop the\b|skip the\b|stop\b|pivot\b|let'?s switch\b|"
    r"let'?s (?:not|change)\b|change the plan\b|plan change\b)",
    re.IGNORECASE,
)
_REDIRECT_ANYWHERE = lazy_re(
    r"\b(?:change of plans?|scratch that|instead of\b|on second thought|let'?s also|also (?:cover|add|handle|"
    r"include|support|update|fix|test|do|make|check|implement|write|remove|rename|migrate|port)\b|"
    r"no longer (?:need|want)|don'?t bother with|forget about|new requirement|requirements? changed|"
    r"expand (?:the )?scope|out of scope|descope|pivot to)",
    re.IGNORECASE,
)
_SUMMARY_REQUEST = lazy_re(
    r"(?:Primary Request and Intent:?|^#+\s*Goal\b:?|<overview>|^\*\*Goal\*\*:?|User'?s? (?:request|goal):)"
    r"\s*(.+?)(?:\n\s*\n|\n\s*(?:\d+\.|#+)\s|</overview>|$)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


def is_real_prompt(text: str) -> bool:
    """True when ``text`` is a prompt with content: not empty, not a bare slash command, not a control word,
    not a harness wrapper or interruption marker."""
    t = text.strip()
    if not t or _BARE_SLASH.match(t) or _CONTROL.match(t) or _NOT_A_PROMPT.match(t):
        return False
    return True


def first_prompt_index(s: Scan) -> int | None:
    """Index of the first real user prompt, or None."""
    for i in s.users:
        if is_real_prompt(s.events[i].text):
            return i
    return None


def is_redirection(text: str) -> bool:
    """True when a later prompt changes or extends the approved scope (see module rules)."""
    t = text.strip()
    return bool(_REDIRECT.match(t) or _REDIRECT_ANYWHERE.search(t[:400]))


def build(s: Scan) -> str | None:
    """The Approved Workflow text, or None when the transcript holds no request at all."""
    first = first_prompt_index(s)
    if first is None:
        return _from_summary(s)
    lines = [clip_block(s.events[first].text, FIRST_PROMPT_LIMIT)]
    redirects: list[str] = []
    seen = {one_line(s.events[first].text).lower()}
    for i in s.users:
        if i <= first:
            continue
        text = s.events[i].text
        if not is_real_prompt(text) or not is_redirection(text):
            continue
        key = one_line(text).lower()
        if key in seen:  # the same prompt replayed (duplicated history)
            continue
        seen.add(key)
        ts = s.ts(i) or "unknown-time"
        redirects.append(f"Redirected {ts}: {clip(text, REDIRECTION_LIMIT)}")
    lines.extend(redirects[-MAX_REDIRECTIONS:])
    return "\n".join(lines)


def _from_summary(s: Scan) -> str | None:
    for i in s.compactions:
        m = _SUMMARY_REQUEST.search(s.events[i].text)
        if m and m.group(1).strip():
            return "From the compaction summary: " + clip(m.group(1), FIRST_PROMPT_LIMIT)
    return None
