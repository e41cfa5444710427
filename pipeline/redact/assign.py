"""Passwords and secrets in assignments (DESIGN.md "Redaction": "passwords and secrets in assignments",
"env-var values of secret-looking names").

A hit is a name ending in ``password``/``passwd``/``passphrase``/``secret``/``token`` or a secret
``*key`` name (``api_key``, ``apiKey``, ``X-Api-Key``, ``AWS_SECRET_ACCESS_KEY``, any ``FOO_KEY`` env
name with a random-looking value), then ``=``, ``:``, ``:=``, ``=>`` (or a space after a ``--flag``),
then a literal value.  The finding's span is the value only.

Where an unquoted value is a literal: env lines (``NAME=value``, YAML ``NAME: value`` with an
ALL_CAPS name) and flags.  Elsewhere (``password = x``, ``password: x`` in code) an unquoted value that
reads as a variable (``user_password``, ``self.token``), a call, a number or a short word is not a
secret; a literal written that way (``password: mysecretpassword``) is a known miss unless it has
letters and digits and 8+ characters (``password: hunter22``).  Quoted values with whitespace (UI
labels, messages) are not flagged.
"""

from __future__ import annotations

from pipeline.redact.lazy import guarded_pattern, lazy_pattern
from pipeline.redact.values import has_digit_and_letter, is_identifier_path, is_placeholder

_WORDS = (rb"pass(?:word|wd|phrase)", rb"secret", rb"token", rb"key")
_WORD_LITERALS = (b"pass", b"secret", b"token", b"key")  # one per ``_WORDS`` entry: what every match holds
#: Where a secret-looking name ends, found in the lower-cased view where an operator follows: one
#: literal-led pass per word (an alternation of the four costs ~10x more in ``re``), skipped when the
#: word's literal is absent from the text.  Patterns here compile on first use (``lazy.py``).
_KEYWORDS = tuple(
    guarded_pattern((literal,), word + rb"(?=\\?[\"']?[ \t]*[:=])") for literal, word in zip(_WORD_LITERALS, _WORDS)
)
#: ``--password VALUE``: a flag name ending in a keyword, then a space.
_FLAG = guarded_pattern((b"--",), rb"--[a-z0-9_-]{0,40}?(?P<kw>" + b"|".join(_WORDS) + rb")(?=[ \t]+[^\s-])")
#: What follows the name: an optional closing quote, an operator, a value (groups v1-v4, last in the
#: pattern, so ``match.lastgroup`` names the one that matched).
_TAIL = lazy_pattern(
    rb"\\?[\"']?"  # closing quote of a quoted key: "api_key": / \"api_key\":
    rb"(?P<op>[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)"
    rb"(?:\\\"(?P<v1>[^\"\\\n]{1,512})\\\""  # JSON-escaped "..." inside a JSON string
    rb"|\"(?P<v2>(?:[^\"\\\n]|\\.){1,512})\""
    rb"|'(?P<v3>(?:[^'\\\n]|\\.){1,512})'"
    rb"|(?P<v4>[^\s\"'`,;)\]}>=&\\]{1,512}=*))"  # unquoted: up to a quote, separator, query "&" or "\"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_UPPER_NAME = lazy_pattern(r"-*[A-Z][A-Z0-9_.-]*")
_ENV_KEY_NAME = lazy_pattern(r"[A-Z][A-Z0-9_.-]*[_.-]KEY")
#: Names ending in "key" that hold a secret (compared lower-cased, without ``_ - .``).
_SECRET_KEY_NAMES = ("apikey", "secretkey", "accesskey", "privatekey", "authkey", "encryptionkey",
                     "signingkey", "masterkey", "appkey", "accountkey", "subscriptionkey", "clientkey")
#: Env names ending in _KEY that are not secrets.
_PUBLIC_KEY_WORDS = ("PUBLIC", "PUBLISHABLE", "SORT", "PRIMARY", "FOREIGN", "PARTITION", "CACHE")
PRIORITY = 100


def assignments(text: str, raw: bytes, low: bytes, out: list[tuple[int, int, int, str]]) -> None:
    """Append ``(start, end, PRIORITY, type)`` for each secret assigned in ``text``.

    ``raw`` is ``text``'s latin-1 view and ``low`` its lower-cased copy (offsets = ``text``'s).
    Types: ``password-assignment``, ``aws-secret-access-key``, ``secret-assignment``.
    """
    for keyword_for in _KEYWORDS:
        keyword = keyword_for(low)
        if keyword is not None:
            for k in keyword.finditer(low):
                _assignment(text, raw, k.start(), k.end(), out)
    flag = _FLAG(low)
    if flag is not None:
        for f in flag.finditer(low):
            _assignment(text, raw, f.start("kw"), f.end("kw"), out)


def _assignment(text: str, raw: bytes, kw_start: int, kw_end: int, out: list[tuple[int, int, int, str]]) -> None:
    """Check the name ending at ``text[kw_start:kw_end]`` for an assigned literal secret."""
    m = _TAIL().match(raw, kw_end)
    if m is None:
        return
    group = m.lastgroup
    start, end = m.span(group)
    value = text[start:end]
    quoted = group != "v4"
    if is_placeholder(value) or (quoted and any(c.isspace() for c in value) and not _passphrase(text, kw_start, kw_end, value)):
        return
    i = kw_start
    while i > max(0, kw_start - 80) and text[i - 1] in _NAME_CHARS:
        i -= 1
    if text.endswith("://", 0, i):
        return  # scheme://user:password@host: the user of a URL, left to the connection-string rule
    name = text[i:kw_end]
    raw_op = m.group("op")
    op = raw_op.strip()
    is_flag = name.startswith("-")
    if not op and not is_flag:
        return  # "the password is ..." prose; only a --flag takes a space-separated value
    if not quoted and not is_flag and ("(" in value or "[" in value):
        return  # a call or a subscript: os.environ[...], get_secret()
    env_line = _UPPER_NAME().fullmatch(name) is not None and (raw_op == b"=" or op == b":")
    kind = _type(name.lstrip("-"), text[kw_start:kw_end], value, quoted or is_flag or env_line)
    if kind is not None:
        out.append((start, end, PRIORITY, kind))


#: Words of UI labels and messages ("Enter your password", "Password is too short"), never of a pass-phrase.
_LABEL_WORDS = frozenset(
    """
    password passwords passphrase secret token your enter please invalid incorrect wrong required must confirm
    forgot reset new old current show hide field label placeholder is are be not too short long least characters
    match matches do does should here type value empty missing expired for of the to
    """.split()
)


def _passphrase(text: str, kw_start: int, kw_end: int, value: str) -> bool:
    """A quoted value with spaces after a ``password``/``passphrase``/``secret`` name is a pass-phrase unless it
    reads as a UI label or a message: at least 12 characters, two or more words, none of ``_LABEL_WORDS``."""
    if not text[kw_start:kw_end].lower().startswith(("pass", "secret")):
        return False
    words = value.lower().split()
    return len(value) >= 12 and len(words) >= 2 and not any(w.strip(".,:;!?") in _LABEL_WORDS for w in words)


def _type(name: str, kw: str, value: str, literal_context: bool) -> str | None:
    """The finding type for ``name = value``, or None when the name or value is not a secret.

    ``name`` ends with the keyword ``kw``; ``literal_context`` is True when the value is quoted, a
    flag's value, or on an env line, where an unquoted value is a literal.
    """
    kw = kw.lower()
    norm = name.lower().replace("_", "").replace("-", "").replace(".", "")
    if kw == "key" and not norm.endswith(_SECRET_KEY_NAMES):
        # other *_KEY names only as env vars with a random-looking value (not SORT_KEY=created_at)
        if (not _ENV_KEY_NAME().fullmatch(name) or any(w in name for w in _PUBLIC_KEY_WORDS)
                or len(value) < 12 or not has_digit_and_letter(value)):
            return None
    if not literal_context and (
        len(value) < 8 or value.isdigit() or (is_identifier_path(value) and not has_digit_and_letter(value))
    ):
        return None  # unquoted after ": " or " = " in code: a variable, a number or a word
    if kw.startswith("pass"):
        return "password-assignment"
    if "aws" in norm and "secret" in norm:
        return "aws-secret-access-key"
    return "secret-assignment"
