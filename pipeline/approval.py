"""Approval of previewed writes (DESIGN.md "Approval").

Approval words: approve, approved, ok, go ahead, confirm, yes, and sentences that clearly approve
("yes, write it", "looks good, go ahead").  Every prompt offers ``[y/N]``, so ``y`` (any case) is the short
form of yes and approves too (issue 24: it is what people type).  Not approval: "continue", "next", any other
bare letter or number (an option pick), a negated or hedged answer ("no", "not yet", "don't", "wait").
"""

from __future__ import annotations

import re
from collections.abc import Callable

_APPROVE = re.compile(
    r"^(?:y|yes|yep|yeah|ok|okay|approve|approved|confirm|confirmed|go ahead|lgtm|sure|do it|write it|"
    r"looks good|sounds good|ship it)\b",
)
_APPROVE_ANYWHERE = re.compile(r"\b(?:approve|approved|go ahead|confirm(?:ed)?|lgtm)\b")
_NEGATIVE = re.compile(
    r"\b(?:no|not|don'?t|do not|never|wait|stop|cancel|hold|nope|nah|reject|decline|cannot|can'?t|won'?t|later)\b"
)
_NOT_APPROVAL = re.compile(r"^(?:continue|next|[a-xz]|\d+)[.!]?$")  # every bare letter but y (the prompt's [y/N])

PROMPT_CHOICES = "[y/N]"
"""What every approval prompt ends with: ``y`` approves, anything else (Enter included) declines."""


def is_approval(answer: str) -> bool:
    """True when ``answer`` clearly approves a previewed write (DESIGN.md "Approval").

    >>> is_approval("yes"), is_approval("Y"), is_approval("Go ahead."), is_approval("continue"), is_approval("b")
    (True, True, True, False, False)
    """
    text = " ".join(answer.lower().replace("’", "'").split())
    if not text or _NOT_APPROVAL.match(text) or text.rstrip(" .!").endswith("?"):
        return False  # a question ("approved?") asks, it does not approve
    if _NEGATIVE.search(text):
        return False
    return bool(_APPROVE.match(text) or _APPROVE_ANYWHERE.search(text))


def ask(question: str, *, read: Callable[[str], str] | None = None) -> bool:
    """Ask ``question`` once with ``read`` (default: the built-in ``input``, looked up at call time), ending it
    with `` [y/N] `` (``PROMPT_CHOICES``); True only for an approving answer.  EOF (no answer) counts as declined.
    """
    try:
        answer = (read or input)(f"{question.rstrip()} {PROMPT_CHOICES} ")
    except EOFError:
        return False
    return is_approval(answer)


def confirm_write(target: str, *, yes: bool) -> None:
    """Approval of a previewed write (DESIGN.md "Approval"): return when approved, else raise ``ApprovalDeclined``.

    ``yes`` (``--yes``) approves without asking.  Otherwise a terminal is asked once with ``ask``; without a
    terminal on stdin nothing can be asked, so the write is declined with a hint to pass ``--yes`` or ``--dry-run``.
    Shared by every command that writes a state file or CONTEXT.md.
    """
    import sys

    from pipeline.errors import ApprovalDeclined

    if yes:
        return
    if not sys.stdin.isatty():
        raise ApprovalDeclined(f"not a terminal, so nothing was written to {target}: pass --yes to approve or --dry-run to preview")
    if not ask(f"Write {target}?"):
        raise ApprovalDeclined(f"not approved; nothing was written to {target}")
