"""Text rules of the Claude Code reader: which ``user`` content is a person's prompt, and how a
sub-agent's answer is cleaned (FORMATS.md §1.2 "user prompt", "…exclude",
"…slash commands", "…IDE context", "sub-agent"; §6.1 "User ≠ human prompt").

Pure functions over already-parsed JSON values; no I/O.  String tests use ``startswith``/``find`` rather
than regular expressions: they run on every user line of a transcript.
"""

from __future__ import annotations

#: Texts of ``type:"user"`` lines that the harness wrote, not the person (FORMATS.md §1.2 "…exclude").
NOT_PROMPT_PREFIXES: tuple[str, ...] = (
    "[Request interrupted by user",  # "[Request interrupted by user]" / "… for tool use]"
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
)

#: IDE context blocks the VS Code entrypoint prepends to a prompt (FORMATS.md §1.2 "…IDE context").
IDE_TAGS: tuple[tuple[str, str], ...] = (
    ("<ide_opened_file>", "</ide_opened_file>"),
    ("<ide_selection>", "</ide_selection>"),
)

_AGENT_TRAILER = "agentId: "
_AGENT_TRAILER_MARK = "(for resuming"


def _tag_body(text: str, tag: str) -> str | None:
    """Inner text of the first ``<tag>…</tag>`` in ``text`` (stripped); None when the tag is absent."""
    open_tag = f"<{tag}>"
    start = text.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = text.find(f"</{tag}>", start)
    return (text[start:] if end < 0 else text[start:end]).strip()


def strip_ide_blocks(text: str) -> str:
    """Remove every ``<ide_opened_file>…</ide_opened_file>`` / ``<ide_selection>…</ide_selection>`` span.

    An unclosed block runs to the end of the text.  Text without ``<ide_`` is returned unchanged.
    """
    if "<ide_" not in text:
        return text
    for open_tag, close_tag in IDE_TAGS:
        while True:
            start = text.find(open_tag)
            if start < 0:
                break
            end = text.find(close_tag, start)
            text = text[:start] if end < 0 else text[:start] + text[end + len(close_tag):]
    return text


def slash_command(text: str) -> str:
    """``<command-name>/x</command-name>…<command-args>a</command-args>`` -> ``"/x a"`` (tags in any order).

    Falls back to ``<command-message>x is running…</command-message>`` when the name tag is missing.
    """
    name = _tag_body(text, "command-name")
    if not name:
        message = _tag_body(text, "command-message") or ""
        name = message.split(" is running", 1)[0].strip()
    if name and not name.startswith("/"):
        name = "/" + name
    args = _tag_body(text, "command-args") or ""
    return f"{name} {args}" if args else name


def prompt_text(content: object) -> str | None:
    """The person's prompt in a ``user`` line's ``message.content``, or None when it is not one.

    ``content`` is a string or a list of blocks (text blocks joined with a blank line; images and other
    blocks dropped).  IDE context blocks are removed; harness-written texts (``NOT_PROMPT_PREFIXES``) give
    None; slash-command wrappers become ``/name args``; ``<bash-input>cmd</bash-input>`` becomes ``!cmd``.
    The caller has already excluded tool results and flagged lines (isMeta, isCompactSummary…).
    Returns the prompt stripped of outer whitespace, or None when nothing is left.
    """
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                value = block.get("text")
                if isinstance(value, str):
                    parts.append(value)
            elif isinstance(block, str):
                parts.append(block)
        text = "\n\n".join(p for p in (strip_ide_blocks(p).strip() for p in parts) if p)
    else:
        return None
    text = strip_ide_blocks(text).strip()
    if not text or text.startswith(NOT_PROMPT_PREFIXES):
        return None
    if text.startswith("<command-"):
        return slash_command(text) or None
    if text.startswith("<bash-input>"):
        command = _tag_body(text, "bash-input")
        return f"!{command}" if command else None
    return text


def strip_agent_trailer(text: str) -> str:
    """Remove the trailing ``agentId: <id> (for resuming …)`` line of a sub-agent result (FORMATS.md §1.2).

    A ``<usage>…</usage>`` block after that line (newer versions) goes with it.  Text without such a
    trailer is returned unchanged.
    """
    cut = text.rfind(_AGENT_TRAILER)
    if cut < 0 or (cut > 0 and text[cut - 1] != "\n"):
        return text
    line_end = text.find("\n", cut)
    line = text[cut:] if line_end < 0 else text[cut:line_end]
    rest = "" if line_end < 0 else text[line_end:].strip()
    if _AGENT_TRAILER_MARK not in line or (rest and not rest.startswith("<usage>")):
        return text
    return text[:cut].rstrip()
