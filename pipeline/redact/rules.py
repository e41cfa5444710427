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
10-20x slower in ``re``).  Each rule also names the literals one of which every match contains
(``FormatRule.literals``): until its pattern is compiled, a rule whose literals are all absent from the
text is skipped (``in`` on bytes costs about what running the pattern does) and the pattern is compiled
only the first time a text needs it, which keeps ``import`` and a first scan of ordinary text cheap on
the hook path (``lazy.py``).  Values are always sliced from the
original ``text``.  Nothing is flagged on entropy alone: git SHAs, UUIDs and tool-call ids have neither
a secret prefix nor a secret name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pipeline.redact.assign import assignments
from pipeline.redact.forms import forms
from pipeline.redact.lazy import guarded_pattern, lazy_pattern
from pipeline.redact.pii import emails, phones
from pipeline.redact.shapes import shaped
from pipeline.redact.values import has_digit_and_letter, is_placeholder, mixed_alnum

Candidate = tuple[int, int, int, str]
#: check(text, match, value) -> keep?  ``match`` is over the latin-1 view; ``value`` is from ``text``.
Check = Callable[[str, re.Match[bytes], str], bool]

_TOKEN = b"A-Za-z0-9_-"
_PK_HEADER = rb"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PK_FOOTER = rb"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_NL = rb"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or one JSON-escaped (``\n`` as two characters) in a JSON string
#: PEM body: base64 runs (or Proc-Type/DEK-Info header lines) separated by line breaks or spaces
#: (keys pasted on one line), then the footer when it is there (a tool result may cut the block).
_PK_BODY = (rb"(?:(?:[ \t]*" + _NL + rb"|[ \t])[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*))*"
            rb"(?:[ \t]*" + _NL + rb"?[ \t]*" + _PK_FOOTER + rb")?")
_PK_LINE = lazy_pattern(r"[A-Za-z0-9+/=]{40,}")


class FormatRule:
    """One format rule: ``kind`` (finding type), ``literals`` (every match contains one of these bytes),
    the pattern's ``source`` (bytes), an optional ``check``, and whether the value is the pattern's
    group ``v`` (else the whole match).  ``pattern_for(raw)`` gives the compiled pattern, or None when
    ``raw`` holds none of the literals (see ``lazy.guarded_pattern``: compiled on first need)."""

    __slots__ = ("kind", "literals", "source", "check", "has_value_group", "pattern_for")

    def __init__(self, kind: str, literals: tuple[bytes, ...], source: bytes, check: Check | None = None) -> None:
        self.kind = kind
        self.literals = literals
        self.source = source
        self.check = check
        self.has_value_group = b"(?P<v>" in source
        self.pattern_for = guarded_pattern(literals, source)

    def __repr__(self) -> str:
        return f"FormatRule({self.kind!r}, {self.literals!r})"


def _tok(kind: str, prefix: bytes, rest: bytes, check: Check | None = None) -> FormatRule:
    """A token rule: the literal ``prefix`` then ``rest``, not glued to a longer token on either side.

    The left-edge check is a look-behind placed *after* the literal, so the pattern still starts with
    the literal and ``re`` finds candidates at memory speed.  The rule's literal is ``prefix``.
    """
    lit = re.escape(prefix)
    source = lit + b"(?<![" + _TOKEN + b"]" + lit + b")" + rest + b"(?![" + _TOKEN + b"])"
    return FormatRule(kind, (prefix,), source, check)


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
    return _PK_LINE().search(value) is not None


def _basic_credentials(text: str, m: re.Match[bytes], value: str) -> bool:
    """``Basic <b64>`` is a credential when the base64 decodes to printable ``user:password``."""
    from binascii import Error as B64Error  # deferred: only a "Basic …" candidate gets here
    from binascii import a2b_base64

    try:
        decoded = a2b_base64(value + "=" * (-len(value) % 4)).decode("utf-8")
    except (B64Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password and decoded.isprintable())


_SCHEME = lazy_pattern(r"[A-Za-z][A-Za-z0-9+.-]{1,30}")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def _url_password(text: str, m: re.Match[bytes], value: str) -> bool:
    """``scheme://user:PASSWORD@host``: a URL scheme before ``://`` and a literal password."""
    i = j = m.start()
    while j > max(0, i - 31) and text[j - 1] in _SCHEME_CHARS:
        j -= 1
    return _SCHEME().fullmatch(text, j, i) is not None and not is_placeholder(value)


#: The format rules in priority order: a provider rule wins over a generic one when two findings start
#: together (the priority of a hit is the rule's position here).
FORMAT_RULES: tuple[FormatRule, ...] = (
    FormatRule("private-key", (b"-----BEGIN",), _PK_HEADER + _PK_BODY, _private_key_body),
    _tok("anthropic-api-key", b"sk-ant-", rb"[A-Za-z0-9_-]{20,}"),
    _tok("openai-api-key", b"sk-", rb"(?!ant-)(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{20,})", _body_mixed),
    # "A", not the four prefixes: a one-byte test is memchr-fast, four scans would cost more than the pattern
    FormatRule("aws-access-key-id", (b"A",), rb"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _tok("github-token", b"gh", rb"[pousr]_[A-Za-z0-9]{36,255}"),
    _tok("github-token", b"github_pat_", rb"[A-Za-z0-9_]{50,255}"),
    _tok("gitlab-token", b"glpat-", rb"[A-Za-z0-9_-]{20,}"),
    _tok("slack-token", b"xox", rb"[abposre]-[A-Za-z0-9-]{10,}", _has_digit),
    _tok("slack-token", b"xapp-", rb"[A-Za-z0-9-]{10,}", _has_digit),
    FormatRule("slack-webhook", (b"hooks.slack.com/",),
               rb"hooks\.slack\.com/(?:services|workflows)/(?P<v>[A-Za-z0-9/_-]{20,})"),
    _tok("stripe-key", b"sk_", rb"(?:live|test)_[A-Za-z0-9]{16,}"),
    _tok("stripe-key", b"rk_", rb"(?:live|test)_[A-Za-z0-9]{16,}"),
    _tok("stripe-key", b"whsec_", rb"[A-Za-z0-9]{24,}"),
    _tok("google-api-key", b"AIza", rb"[A-Za-z0-9_-]{35}"),
    _tok("google-oauth-token", b"ya29.", rb"[A-Za-z0-9_-]{20,}"),
    _tok("google-oauth-token", b"GOCSPX-", rb"[A-Za-z0-9_-]{20,}"),
    _tok("npm-token", b"npm_", rb"[A-Za-z0-9]{36}"),
    _tok("pypi-token", b"pypi-AgE", rb"[A-Za-z0-9_-]{50,}"),
    _tok("huggingface-token", b"hf_", rb"(?P<body>[A-Za-z0-9]{30,})", _body_two_cases),
    _tok("sendgrid-key", b"SG.", rb"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    # issue 24 item 8: DigitalOcean personal, OAuth and refresh tokens; the library's rule takes hex bodies only
    _tok("digitalocean-token", b"dop_v1_", rb"[A-Za-z0-9]{40,80}"),
    _tok("digitalocean-token", b"doo_v1_", rb"[A-Za-z0-9]{40,80}"),
    _tok("digitalocean-token", b"dor_v1_", rb"[A-Za-z0-9]{40,80}"),
    # issue 22 item 2: a Discord webhook's token (the id before it is not a secret)
    FormatRule("discord-webhook", (b"discord",),
               rb"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{15,22}/(?P<v>[A-Za-z0-9_-]{40,100})"),
    _tok("jwt", b"eyJ", rb"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    FormatRule("bearer-token", (b"earer",), rb"earer(?<=\b[Bb]earer)[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)",
               _token_literal),
    FormatRule("basic-auth", (b"asic",),
               rb"asic(?<=\b[Bb]asic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", _basic_credentials),
    FormatRule("connection-string", (b"://",),
               rb"://[^\s:/?#@\"'<>]*:(?P<v>[^\s/?#@\"'<>]{1,256})@[^\s/?#@\"'<>]", _url_password),
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
    for priority, rule in enumerate(FORMAT_RULES):
        pattern = rule.pattern_for(raw)
        if pattern is None:
            continue  # no match can exist without one of the rule's literals
        kind, check, has_value_group = rule.kind, rule.check, rule.has_value_group
        for m in pattern.finditer(raw):
            start, end = m.span("v") if has_value_group else m.span()
            if check is None or check(text, m, text[start:end]):
                out.append((start, end, priority, kind))
    low = raw.lower()  # ASCII-only lower-casing: offsets unchanged
    assignments(text, raw, low, out)
    shaped(text, raw, low, out)
    forms(text, raw, low, out)
    emails(text, raw, out)
    phones(text, raw, low, out)
    return out


def format_candidates(text: str) -> list[Candidate]:
    """The hits of the format rules and assignments alone in ``text`` (no PII, no shapes, no forms): what a secret
    wrapped in base64 is recognised by (``forms._wrapped``, which must not recurse).  Never raises."""
    out: list[Candidate] = []
    raw = latin1_view(text)
    for priority, rule in enumerate(FORMAT_RULES):
        pattern = rule.pattern_for(raw)
        if pattern is None:
            continue
        for m in pattern.finditer(raw):
            start, end = m.span("v") if rule.has_value_group else m.span()
            if rule.check is None or rule.check(text, m, text[start:end]):
                out.append((start, end, priority, rule.kind))
    assignments(text, raw, raw.lower(), out)
    return out
