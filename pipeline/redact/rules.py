"""Format rules of DESIGN.md "Redaction" and the one entry point that runs every rule.

``candidates(text)`` returns raw, possibly overlapping hits as ``(start, end, priority, type)`` tuples:
character offsets of the secret value in ``text`` (end exclusive), lower priority winning a tie.
``pipeline.redact`` merges them into findings.  Three families:

* format rules (here): a documented prefix or shape (``sk-proj-``, ``AKIA``, ``ghp_``, ``eyJ….eyJ….``,
  ``-----BEGIN … PRIVATE KEY-----``, ``Bearer``, ``scheme://user:password@host``), each with an
  optional check of the matched value;
* assignments (``assign.py``): a secret-looking name, an operator, a literal value;
* PII (``pii.py``): e-mail addresses and phone numbers.

Speed: every pattern is a ``bytes`` pattern that starts with a literal, run over ``text`` encoded as
latin-1 with ``?`` for other characters, so byte offsets are character offsets and ``re`` scans one
byte per character for the literal (a pattern that starts with a look-behind or a character class is
10-20x slower in ``re``).  Values are always sliced from the original ``text``.  Nothing is flagged on
entropy alone: git SHAs, UUIDs and tool-call ids have neither a secret prefix nor a secret name.
"""

from __future__ import annotations

import re
from binascii import Error as _B64Error
from binascii import a2b_base64
from collections.abc import Callable

from pipeline.redact.assign import assignments
from pipeline.redact.pii import emails, phones
from pipeline.redact.values import has_digit_and_letter, is_placeholder, mixed_alnum

Candidate = tuple[int, int, int, str]
#: check(text, match, value) -> keep?  ``match`` is over the latin-1 view; ``value`` is from ``text``.
Check = Callable[[str, re.Match[bytes], str], bool]

_TOKEN = b"A-Za-z0-9_-"
_PK_HEADER = rb"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PK_FOOTER = rb"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_NL = rb"(?:\r?\n|\\r?\\n)"  # a line break, or one JSON-escaped inside a JSON string
#: PEM body: base64 runs (or Proc-Type/DEK-Info header lines) separated by line breaks or spaces
#: (keys pasted on one line), then the footer when it is there (a tool result may cut the block).
_PK_BODY = (rb"(?:(?:[ \t]*" + _NL + rb"|[ \t])[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*))*"
            rb"(?:[ \t]*" + _NL + rb"?[ \t]*" + _PK_FOOTER + rb")?")
_PK_LINE = re.compile(r"[A-Za-z0-9+/=]{40,}")


def _tok(prefix: bytes, rest: bytes) -> re.Pattern[bytes]:
    """A token: the literal ``prefix`` then ``rest``, not glued to a longer token on either side.

    The left-edge check is a look-behind placed *after* the literal, so the pattern still starts with
    the literal and ``re`` finds candidates at memory speed.
    """
    lit = re.escape(prefix)
    return re.compile(lit + b"(?<![" + _TOKEN + b"]" + lit + b")" + rest + b"(?![" + _TOKEN + b"])")


def _body_mixed(text: str, m: re.Match[bytes], value: str) -> bool:
    """Random key bodies mix upper case, lower case and digits (``sk-learn-...`` words do not)."""
    return mixed_alnum(text[m.start("body") : m.end("body")])


def _body_two_cases(text: str, m: re.Match[bytes], value: str) -> bool:
    """Hugging Face token bodies are random letters of both cases, digits optional."""
    body = text[m.start("body") : m.end("body")]
    return any(c.isupper() for c in body) and any(c.islower() for c in body)


def _has_digit(text: str, m: re.Match[bytes], value: str) -> bool:
    return any(c.isdigit() for c in value)


def _token_literal(text: str, m: re.Match[bytes], value: str) -> bool:
    return has_digit_and_letter(value) and not is_placeholder(value)


def _private_key_body(text: str, m: re.Match[bytes], value: str) -> bool:
    """A header alone (in prose or docs) is not a key: require a base64 run of 40+ (PEM lines are 64)."""
    return _PK_LINE.search(value) is not None


def _basic_credentials(text: str, m: re.Match[bytes], value: str) -> bool:
    """``Basic <b64>`` is a credential when the base64 decodes to printable ``user:password``."""
    try:
        decoded = a2b_base64(value + "=" * (-len(value) % 4)).decode("utf-8")
    except (_B64Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password and decoded.isprintable())


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,30}")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def _url_password(text: str, m: re.Match[bytes], value: str) -> bool:
    """``scheme://user:PASSWORD@host``: a URL scheme before ``://`` and a literal password."""
    i = j = m.start()
    while j > max(0, i - 31) and text[j - 1] in _SCHEME_CHARS:
        j -= 1
    return _SCHEME.fullmatch(text, j, i) is not None and not is_placeholder(value)


#: (type, pattern, check or None), in priority order: a provider rule wins over a generic one when two
#: findings start together.  The value is group "v" when the pattern has one, else the whole match.
FORMAT_RULES: tuple[tuple[str, re.Pattern[bytes], Check | None], ...] = (
    ("private-key", re.compile(_PK_HEADER + _PK_BODY), _private_key_body),
    ("anthropic-api-key", _tok(b"sk-ant-", rb"[A-Za-z0-9_-]{20,}"), None),
    ("openai-api-key", _tok(b"sk-", rb"(?!ant-)(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{20,})"),
     _body_mixed),
    ("aws-access-key-id", re.compile(rb"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"), None),
    ("github-token", _tok(b"gh", rb"[pousr]_[A-Za-z0-9]{36,255}"), None),
    ("github-token", _tok(b"github_pat_", rb"[A-Za-z0-9_]{50,255}"), None),
    ("gitlab-token", _tok(b"glpat-", rb"[A-Za-z0-9_-]{20,}"), None),
    ("slack-token", _tok(b"xox", rb"[abposre]-[A-Za-z0-9-]{10,}"), _has_digit),
    ("slack-token", _tok(b"xapp-", rb"[A-Za-z0-9-]{10,}"), _has_digit),
    ("slack-webhook", re.compile(rb"hooks\.slack\.com/(?:services|workflows)/(?P<v>[A-Za-z0-9/_-]{20,})"), None),
    ("stripe-key", _tok(b"sk_", rb"(?:live|test)_[A-Za-z0-9]{16,}"), None),
    ("stripe-key", _tok(b"rk_", rb"(?:live|test)_[A-Za-z0-9]{16,}"), None),
    ("stripe-key", _tok(b"whsec_", rb"[A-Za-z0-9]{24,}"), None),
    ("google-api-key", _tok(b"AIza", rb"[A-Za-z0-9_-]{35}"), None),
    ("google-oauth-token", _tok(b"ya29.", rb"[A-Za-z0-9_-]{20,}"), None),
    ("google-oauth-token", _tok(b"GOCSPX-", rb"[A-Za-z0-9_-]{20,}"), None),
    ("npm-token", _tok(b"npm_", rb"[A-Za-z0-9]{36}"), None),
    ("pypi-token", _tok(b"pypi-AgE", rb"[A-Za-z0-9_-]{50,}"), None),
    ("huggingface-token", _tok(b"hf_", rb"(?P<body>[A-Za-z0-9]{30,})"), _body_two_cases),
    ("sendgrid-key", _tok(b"SG.", rb"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"), None),
    ("jwt", _tok(b"eyJ", rb"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), None),
    ("bearer-token", re.compile(rb"earer(?<=\b[Bb]earer)[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"), _token_literal),
    ("basic-auth", re.compile(rb"asic(?<=\b[Bb]asic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
     _basic_credentials),
    ("connection-string", re.compile(rb"://[^\s:/?#@\"'<>]*:(?P<v>[^\s/?#@\"'<>]{1,256})@[^\s/?#@\"'<>]"),
     _url_password),
)


def latin1_view(text: str) -> bytes:
    """``text`` as bytes, one byte per character: latin-1, ``?`` for every other character.

    Byte offsets in it are character offsets in ``text``; ASCII patterns match exactly as in ``text``.
    """
    return text.encode("latin-1", "replace")


def candidates(text: str) -> list[Candidate]:
    """All raw hits in ``text``: ``(start, end, priority, type)``, unsorted, possibly overlapping.

    Offsets are characters of ``text``; the span is the secret value only.  Never raises.
    """
    out: list[Candidate] = []
    raw = latin1_view(text)
    for priority, (kind, pattern, check) in enumerate(FORMAT_RULES):
        has_value_group = "v" in pattern.groupindex
        for m in pattern.finditer(raw):
            start, end = m.span("v") if has_value_group else m.span()
            if check is None or check(text, m, text[start:end]):
                out.append((start, end, priority, kind))
    low = raw.lower()  # ASCII-only lower-casing: offsets unchanged
    assignments(text, raw, low, out)
    emails(text, raw, out)
    phones(text, raw, low, out)
    return out
