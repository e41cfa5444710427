"""The scanner-library detection layer of ``scan(..., deep=True)`` (DESIGN.md "Redaction"; STACK.md
"secret scanning").

The library is betterleaks-py (Go engine, ~460 provider rules, no disk or network access).  Measured in
the project venv (``bench/redact_bench.py``): 17-20 ms import, 45-60 ms more for the first call (loads
its Go library), ~0.8 MB/s (~6 ms for 10 kB): a first deep scan of a 10 kB state file costs ~95 ms in
a fresh process, later ones ~6 ms.  That is too slow for the ``extract-raw`` and pre-compact hook
paths (~80 ms budget including Python start): they use the project rules alone.
kingfisher-secret-scanner 1.5 was measured too and not taken: 3.3 s to compile its rules on first use
and 230-300 ms to load them from its disk cache (in the user's home directory by default) on every
later run, with or without a cache directory of our own; 123/213 found on the bench.

``library_candidates(text)`` returns the library's hits as the project rules' raw candidates
``(start, end, priority, type)``: character offsets of the secret value only (the library reports the
whole ``name: value`` match and the value; we locate the value inside it), typed with the project's
labels where the library rule is one of ours (``LIBRARY_TYPES``, ``github-`` → ``github-token``…),
else ``generic-secret``.  Dropped: values that ``values.is_placeholder`` rejects (``changeme``,
``<REDACTED>``, ``$VAR``…), identifiers under the library's ``generic-*`` rules (``password:
hashedPassword``), and rules that report identifiers rather than secrets (``NOT_SECRETS``: client ids,
user names, hosts, URLs, public keys).

The library is imported on the first call only.  When it is missing or fails, the call returns None (the
caller then uses the project rules alone) and one line says so on stderr, once per process.
"""

from __future__ import annotations

import re
import sys
import threading
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~2.5 ms to import on the extract-raw hook path; annotations only
    from collections.abc import Callable
    from typing import Any

from pipeline.redact.values import has_digit_and_letter, is_identifier_path, is_placeholder

LIBRARY = "betterleaks-py"
MODULE = "betterleaks"
#: Library hits rank after every project rule (format rules < 100, assignments 100, PII 200-201); a
#: project-typed library hit ranks before a ``generic-secret`` one when two library hits overlap.
PRIORITY = 300

#: Library rule ids (``.1``/``.2`` variant suffixes removed) that are one of the project's types.
LIBRARY_TYPES = {
    "private-key": "private-key",
    "openai-api-key": "openai-api-key",
    "anthropic-api-key": "anthropic-api-key",
    "anthropic-admin-api-key": "anthropic-api-key",
    "aws-access-token": "aws-access-key-id",
    "alibaba-access-key-id": "aws-access-key-id",
    "aws-secret-access-key": "aws-secret-access-key",
    "slack-webhook-url": "slack-webhook",
    "gcp-api-key": "google-api-key",
    "gcp-gemini-api": "google-api-key",
    "npm-access-token": "npm-token",
    "pypi-upload-token": "pypi-token",
    "sendgrid-api-token": "sendgrid-key",
    "jwt": "jwt",
    "jwt-base64": "jwt",
    "generic-password": "password-assignment",
    "generic-credential-uri": "connection-string",
    "mongodb-connection-string": "connection-string",
}
#: Rule-id families that are one of the project's types (checked after ``LIBRARY_TYPES``).
LIBRARY_TYPE_PREFIXES = (
    ("github-", "github-token"),
    ("gitlab-", "gitlab-token"),
    ("slack-", "slack-token"),
    ("stripe-", "stripe-key"),
    ("huggingface-", "huggingface-token"),
)
GENERIC = "generic-secret"

#: Library rules that report an identifier, not a secret: the library finds them to pair them with the
#: secret they belong to.  An id, a user name, a host, a URL or a public key is not flagged.
NOT_SECRETS = frozenset(
    """
    adobe-client-id aikido-client-id algolia-application-id artifactory-jfrog-url asana-client-id
    auth0-client-id auth0-domain azure-client-id azure-storage-account-name azure-tenant-id
    bitbucket-client-id browserstack-username canva-client-id clickhouse-cloud-key-id cloudflare-account-id
    cloudinary-cloud-name discord-client-id ebay-client-id flutterwave-public-key generic-username
    langfuse-public-key lark-app-id linkedin-client-id lob-pub-api-key looker-client-id mailgun-pub-key
    messagebird-client-id miro-client-id mongodb-atlas-service-account-id mux-access-token-id
    new-relic-user-api-id paypal-client-id plaid-client-id planetscale-id plivo-auth-id polymarket-address
    ramp-client-id razorpay-key-id salesforce-instance-url sendbird-access-id snowflake-account-host
    sumologic-access-id supabase-project-url tableau-personal-access-token-name tableau-server-host
    upstash-redis-rest-url wiz-client-id zoho-client-id
    """.split()
)

_VARIANT = re.compile(r"\.\d+$")
#: Characters the library cannot take: NUL ends its C string, lone surrogates are not UTF-8.  Each is
#: replaced by one character, so offsets into the cleaned text are offsets into ``text``.
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")

Candidate = tuple[int, int, int, str]
_scan_string: Callable[[str], list[Any]] | None = None
_import_failed = False
_warned = False
_warm_up: threading.Thread | None = None
#: A short text that makes the library compile its rules (an empty one may return before it does).
_WARM_UP_TEXT = "duck-tape warm-up"


def library_type(rule_id: str) -> str | None:
    """The project type label for a library rule id, or None when the rule reports no secret.

    ``github-pat`` → ``github-token``, ``generic-password`` → ``password-assignment``,
    ``shopify-access-token`` → ``generic-secret``, ``discord-client-id`` → None.
    """
    rule = _VARIANT.sub("", rule_id)
    if rule in NOT_SECRETS:
        return None
    if rule in LIBRARY_TYPES:
        return LIBRARY_TYPES[rule]
    for prefix, kind in LIBRARY_TYPE_PREFIXES:
        if rule.startswith(prefix):
            return kind
    return GENERIC


def library_candidates(text: str) -> list[Candidate] | None:
    """The library's findings in ``text`` as ``(start, end, PRIORITY or PRIORITY + 1, type)`` tuples.

    Offsets are characters of ``text``, the span is the secret value; unsorted, possibly overlapping
    each other (not the project rules: ``pipeline.redact.scan`` merges).  Returns None when the library
    cannot be imported or fails on this text, after one stderr line per process.  Never raises.
    """
    if _warm_up is not None:
        _warm_up.join()
    scan_string = _load()
    if scan_string is None:
        return None
    clean = _UNSENDABLE.sub(lambda m: " " if m.group() == "\x00" else "?", text)
    try:
        found = scan_string(clean)
        return _candidates(clean, found)
    except Exception as exc:  # a failing library must never stop a state-file write
        _warn(f"failed ({type(exc).__name__}: {exc})")
        return None


def warm_up() -> None:
    """Start loading the library and compiling its rules in a background thread; return at once.

    The first deep scan of a process pays ~20 ms of Python import plus ~45-60 ms in the library's Go code
    compiling its rules (module docstring).  The Go part runs without the GIL (a ``ctypes`` call), so a caller
    with other work to do first — the pre-compact checkpoint reads and distils the transcript (issue 6: the hook
    must finish in < 0.15 s) — overlaps it with that work.  ``library_candidates`` waits for the thread.  Calling
    it again, or after the library is loaded, does nothing.  Never raises; a failure is reported by the scan, as
    without a warm-up.  Not for a process that forks afterwards (the library starts Go runtime threads).
    """
    global _warm_up
    if _warm_up is not None or _scan_string is not None or _import_failed:
        return
    _warm_up = threading.Thread(target=_compile_rules, name="duck-tape-secret-scanner-warm-up", daemon=True)
    _warm_up.start()


def _compile_rules() -> None:
    scan_string = _load()
    if scan_string is not None:
        try:
            scan_string(_WARM_UP_TEXT)
        except Exception:  # reported by the real scan, which fails the same way
            pass


def _load() -> Callable[[str], list[Any]] | None:
    """``betterleaks.scan_string``, imported on first use; None (and one warning) when missing."""
    global _scan_string, _import_failed
    if _scan_string is not None or _import_failed:
        return _scan_string
    try:
        from importlib import import_module

        _scan_string = import_module(MODULE).scan_string
    except Exception as exc:
        _import_failed = True
        _warn(f"unavailable ({type(exc).__name__}: {exc})")
    return _scan_string


def _warn(why: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(f"duck-tape: redaction: secret-scanner library {LIBRARY} {why}; using the project rules only",
              file=sys.stderr)


def _candidates(text: str, found: list[Any]) -> list[Candidate]:
    """Map library findings (1-based lines, 1-based inclusive UTF-8 byte columns) onto ``text``."""
    out: list[Candidate] = []
    line_starts: list[int] | None = None
    for f in found:
        kind = library_type(f.rule_id)
        value = f.match.value
        if kind is None or not value:
            continue
        if line_starts is None:
            line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        loc = f.location
        span = _located(text, line_starts, loc.start_line, loc.start_column - 1, loc.end_line, loc.end_column)
        if span is None:
            continue
        start, end = span
        # the location covers the whole match ("PASSWORD: value"); the value ends it
        pos = text.rfind(value, start, end)
        if pos >= 0:
            start, end = pos, pos + len(value)
        value = text[start:end]
        if is_placeholder(value):
            continue
        if f.rule_id.startswith("generic-") and is_identifier_path(value) and not has_digit_and_letter(value):
            continue  # "password: hashedPassword": a variable in code, as assign.py decides
        out.append((start, end, PRIORITY + (kind == GENERIC), kind))
    return out


def _located(text: str, line_starts: list[int], line: int, col: int, end_line: int, end_col: int
             ) -> tuple[int, int] | None:
    """Character span of a library location; ``col``/``end_col`` are byte counts into their lines."""
    if not (1 <= line <= end_line <= len(line_starts)):
        return None
    start = _char_offset(text, line_starts, line, col)
    end = _char_offset(text, line_starts, end_line, end_col)
    return (start, end) if start < end else None


def _char_offset(text: str, line_starts: list[int], line: int, byte_col: int) -> int:
    """Offset in ``text`` of ``byte_col`` UTF-8 bytes into 1-based ``line`` (clamped to the line)."""
    begin = line_starts[line - 1]
    stop = line_starts[line] - 1 if line < len(line_starts) else len(text)
    row = text[begin:stop]
    if row.isascii():
        return begin + min(max(byte_col, 0), len(row))
    return begin + len(row.encode("utf-8")[: max(byte_col, 0)].decode("utf-8", "ignore"))
