"""The shared vocabulary of the CONTEXT.md translation's classifier (``pipeline.context.classify``; issue 26).

``Verdict`` (where an item goes, or why it is left out) and the reasons; and the structural readings every rule
uses: ``subject_words`` (what a text names besides function words and pointers at the session), ``head_action``
(is it headed by an action of a working session?), ``command_shaped`` (is it a shell command in backticks?) and
``clauses`` (a text cut at clause punctuation).  Pure functions on strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.context import lexicon as lx
from pipeline.context.keys import STOP_WORDS
from pipeline.lazyre import lazy_re

_I = re.IGNORECASE

# Reasons an item is left out (the preview's ``Skipped: <what> (<reason>)``).
PROCEDURAL = "procedural approval"
DECLINED_ACTION = "declined session action"
PLAN = "plan approval (task list)"
COMMAND = "command run in the session"
PLACEHOLDER = "placeholder, not a choice"
NO_SUBJECT = "names no lasting subject"
TEMPORARY = "temporary, not a lasting choice"
PROMPT_TEXT = "prompt text, not the user's words"
NARRATION = "assistant's narration"
REQUEST = "one-off request"
ONE_OFF_FAILURE = "one-off failure"
PASTED = "pasted output"
HARNESS = "harness error"
PROGRESS = "progress report"
OBSERVATION = "one-off observation"
OFFER = "assistant's offer"
STEP = "procedural step"
TASK_LIST = "task list"
INTERRUPTED = "step interrupted or not allowed, not a failure"
FOR_THE_USER = "instruction for the user, not project work"
FRAGMENT = "fragment that needs the message around it"
GUESS = "a guess, not an established fact"
REQUIREMENT = "a requirement of the task, not a finding"


@dataclass(frozen=True, slots=True)
class Verdict:
    """Where one item goes: ``target`` is a CONTEXT.md section name (Decisions, Conventions, Glossary, Notes,
    Deferred-Debt, Open-Questions, Goals) or None when it is left out, with ``reason`` saying why.  ``text`` is what
    to write (the item, or the part of it that holds the rule/question); ``term`` the Glossary term; ``type`` the
    Deferred-Debt type."""

    target: str | None
    reason: str | None = None
    text: str = ""
    term: str | None = None
    type: str | None = None


def skip(reason: str, text: str = "") -> Verdict:
    """A verdict that leaves the item out for ``reason``."""
    return Verdict(None, reason, text)


# --- shared structure ---------------------------------------------------------------------------------------

_NOT_LATIN = "\\W\\d_\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_WORD = lazy_re(rf"[^{_NOT_LATIN}]+(?:['’-][^{_NOT_LATIN}]+)*")
"""A word in a script with spaces (a CJK run inside it is not part of it: ``GraphQLを使う`` -> ``GraphQL``)."""
_CJK_RUN = lazy_re(r"[\u3400-\u9fff\uac00-\ud7af\u30a0-\u30ff]{2,}")
BACKTICK = lazy_re(r"`([^`]+)`")
COMMAND_SHAPE = lazy_re(r"(?:[A-Z_][A-Z0-9_]*=\S+\s+)*(?:sudo\s+)?[a-z.][\w.+-]*(?:\s+[-\w./:=@'\"~*$<>|&;\[\]{},]+)+")
_DETERMINER = lazy_re(
    r"(?:the|a|an|this|that|these|those|all|any|each|my|our|your|it|them|some|both|up|out|off|over|back|on|with|"
    r"to|and|again|now|ahead|two|three|four|several|de|do|da|dos|das|del|al|o|os|as|um|uma|el|la|los|las|un|una|esse|essa|isso|isto|todo|todos|todas|tudo|"
    r"PR|MR|pr|branch|commits?|changes?|tests?|builds?|server|app|script|commands?|migrations?|deploy(?:ment)?|"
    r"main|master|origin|HEAD)\b|[`'\"(#/\d~.]|[\w.-]+/[\w.-]+",
    _I,
)
SHELL_WORD = lazy_re(
    r"(?:git|npm|pnpm|yarn|npx|uv|uvx|pip3?|python3?|make|cmake|cargo|go|docker|kubectl|bash|sh|zsh|cd|rm|ls|cat|"
    r"curl|wget|node|deno|bun|conda|brew|apt(?:-get)?|sudo|ssh|scp|rsync|mkdir|cp|mv|chmod|chown|grep|rg|sed|awk|"
    r"tar|gh|terraform|helm|mvn|gradle|dotnet|java|ruby|gem|bundle|rails|php|composer)(?:\s|$)",
    _I,
)
_NEGATION = frozenset("no not never don't dont doesn't do".split())


def subject_words(text: str) -> list[str]:
    """The words of ``text`` that name something: Latin words that are not function words, deictics, negations or
    generic nouns (``approach``, ``option``, ``change``…), plus runs of two or more CJK characters without a deictic."""
    words = []
    for word in _WORD.findall(text):
        low = word.casefold().strip("'’-")
        if low in STOP_WORDS or low in lx.GENERIC_NOUNS or low in _NEGATION or lx.DEICTIC.fullmatch(low):
            continue
        words.append(low)
    stripped = lx.DEICTIC.sub(" ", text)
    words += _CJK_RUN.findall(stripped)
    return words


def head_action(text: str) -> str | None:
    """``"session"`` or ``"edit"`` when ``text`` is headed by an action verb of a working session (module
    docstring), else None.  Latin script: the first word after lead-ins ("ok", "let's", "pode", "por favor"),
    followed by an object that points at the session (a determiner, a deictic, a command, a path, a PR…) or by
    nothing; CJK: a session verb anywhere (Korean and Japanese put the verb last)."""
    body = lx.LEAD_IN.sub("", text.strip()).strip()
    if not body:
        return None
    for kind, latin, cjk in (("session", lx.SESSION_VERB_LATIN, lx.SESSION_VERB_CJK),
                             ("edit", lx.EDIT_VERB_LATIN, lx.EDIT_VERB_CJK)):
        head = latin.match(body)
        if head and not re.match(r"[-_\w]", body[head.end():head.end() + 1]):
            rest = body[head.end():].lstrip(" ,:")
            if not rest or _DETERMINER.match(rest) or len(body.split()) <= 3:
                return kind
        if lx.CJK.search(body[:12]) and cjk.search(body):
            return kind
    return None


def command_shaped(text: str) -> bool:
    """True when ``text`` is (or names, after "run", "running", "the") a shell command in backticks:
    ``running `npm install x` ``, ``The `firebase deploy` command``."""
    body = re.sub(r"^(?:the\s+|a\s+)?(?:(?:re)?run(?:ning)?|execut(?:e|ing)|invok(?:e|ing)|call(?:ing)?|type|typing)?\s*",
                  "", text.strip(), flags=_I)
    quoted = BACKTICK.match(body)
    if quoted is None:
        return False
    inner = quoted.group(1).strip()
    return bool(COMMAND_SHAPE.fullmatch(inner)) or inner.startswith(("[\"bash", "['bash", "bash ", "sh "))


def clauses(text: str) -> list[tuple[int, str]]:
    """``(offset, clause)`` pieces of ``text`` cut at sentence and clause punctuation and at ", but/and/so"."""
    out, start = [], 0
    for match in re.finditer(r"[;；:：。！!?？]\s*|\.\s+|,\s*(?:but|and|so|then|mas|pero|y|e)?\s*|，|、|\s[—–-]\s|[()（）]",
                             text, flags=_I):
        piece = text[start:match.start()]
        if piece.strip():
            out.append((start + len(piece) - len(piece.lstrip()), piece.strip()))
        start = match.end()
    if text[start:].strip():
        tail = text[start:]
        out.append((start + len(tail) - len(tail.lstrip()), tail.strip()))
    return out
