"""E-mail addresses and phone numbers (DESIGN.md "Redaction": "e-mail addresses, phone numbers and
similar PII").

Every e-mail address is flagged, placeholder domains included (``dev@example.com`` is what fixtures
plant, and what the shared corpus put in place of real addresses), except addresses that name no
person: service senders (``noreply@…``, ``…@users.noreply.github.com``, which Claude Code's
``Co-Authored-By: Claude <noreply@anthropic.com>`` puts in every commit), ``git@host:org/repo`` SSH
remotes, and file names like ``icon@2x.png``.  A number is a phone number only with phone formatting
(North American ``(555) 201-0173`` / ``555-201-0173`` / ``555.201.0173``, or ``+CC`` with separators)
or after a phone word (``phone: 4155550123``), and only with 8-15 digits: ports, sizes, epoch times,
dates, versions, IP addresses and UUID groups are none of these.
"""

from __future__ import annotations

from pipeline.redact.lazy import guarded_pattern, lazy_pattern

# Patterns compile on first use (``lazy.py``) and each pass is skipped when its literal is absent.
_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_DOMAIN = lazy_pattern(rb"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?P<tld>[A-Za-z]{2,24})"
                       rb"(?![\w-]|\.[A-Za-z0-9])")
_AT = guarded_pattern((b"@",), b"@")
#: "name@2x.png", "pkg@1.2.3.tgz": file names, not addresses.
_FILE_TLDS = frozenset(
    "png jpg jpeg gif svg webp ico bmp tif tiff pdf js mjs cjs ts tsx jsx css scss map json yaml yml "
    "toml lock txt py pyc rs go md html htm xml csv log sh wasm whl gz tgz zip tar so dylib dll exe".split()
)
_SERVICE_LOCALS = frozenset({"noreply", "no-reply", "donotreply", "do-not-reply", "git"})

_END = rb"(?![\w-]|\.[0-9])"
#: North American numbers, found from the separator before the last 4 digits (a literal-led pass),
#: then matched from 7, 8 or 9 characters before it.  Area code and exchange start with 2-9.
_NANP_ANCHORS = (guarded_pattern((b"-",), rb"-[0-9]{4}" + _END), guarded_pattern((b".",), rb"\.[0-9]{4}" + _END))
_NANP = lazy_pattern(rb"(?<![\w+.-])(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}(?P<sep>[-.]))[2-9][0-9]{2}"
                     rb"(?(sep)(?P=sep)|-)[0-9]{4}" + _END)
#: International with separators: +44 20 7946 0958, +1-202-555-0173, +49 (30) 1234567.
_INTL = guarded_pattern((b"+",), rb"\+(?<![\w+]\+)[1-9][0-9]{0,3}(?:[ .-]\(?[0-9]{1,5}\)?|\([0-9]{1,5}\)){1,5}" + _END)
#: After a phone word (searched lower-cased): "phone: +14155550123", "Tel. 0301234567"; "phone" may
#: end a word (telephone, cellphone), the others must start one (not hotel, automobile).
_WORDS = (guarded_pattern((b"phone",), b"phone"),) + tuple(
    guarded_pattern((w,), w + b"(?<![a-z]" + w + b")") for w in (b"mobile", b"tel", b"fax")
)
_WORD_TAIL = lazy_pattern(rb"(?:[ _-]?(?:no|number|num|#))?\.?[\"']?[ \t]*[:=]?[ \t]*[\"']?"
                          rb"(?P<v>\+?[0-9][0-9 ().-]{6,18}[0-9])" + _END)
PRIORITY = 200

Out = list[tuple[int, int, int, str]]


def emails(text: str, raw: bytes, out: Out) -> None:
    """Append ``(start, end, PRIORITY, "email")`` for each personal address; found from each ``@``."""
    at_sign = _AT(raw)
    if at_sign is None:
        return
    for at in at_sign.finditer(raw):
        i = j = at.start()
        while j > max(0, i - 64) and text[j - 1] in _LOCAL_CHARS:
            j -= 1
        if j == i or not text[j].isalnum():
            continue
        before = text[j - 1] if j > 0 else " "
        if (before.isalnum() or before in "_.%+:/@\\-") and not text.endswith("mailto:", 0, j):
            continue  # glued to a longer token: a path, a URL's user, a JSON escape such as \n
        d = _DOMAIN().match(raw, i + 1)
        if d is None:
            continue
        local, domain = text[j:i].lower(), text[i + 1 : d.end()].lower()
        if (domain.rpartition(".")[2] in _FILE_TLDS or local in _SERVICE_LOCALS
                or local.startswith(("noreply", "no-reply")) or "noreply" in domain):
            continue
        out.append((j, d.end(), PRIORITY, "email"))


def phones(text: str, raw: bytes, low: bytes, out: Out) -> None:
    """Append ``(start, end, PRIORITY + 1, "phone")`` for each phone number in ``text``."""
    for anchor_for in _NANP_ANCHORS:
        anchor = anchor_for(raw)
        if anchor is None:
            continue
        for a in anchor.finditer(raw):
            for back in (7, 8, 9):
                m = _NANP().match(raw, a.start() - back) if a.start() >= back else None
                if m is not None and m.end() == a.end():
                    _phone(text, m.start(), m.end(), out)
                    break
    intl = _INTL(raw)
    if intl is not None:
        for m in intl.finditer(raw):
            _phone(text, m.start(), m.end(), out)
    for word_for in _WORDS:
        word = word_for(low)
        if word is None:
            continue
        for w in word.finditer(low):
            m = _WORD_TAIL().match(low, w.end())
            if m is not None:
                _phone(text, m.start("v"), m.end("v"), out)


def _phone(text: str, start: int, end: int, out: Out) -> None:
    span = text[start:end]
    if 8 <= sum(c.isdigit() for c in span) <= 15 and "  " not in span:
        out.append((start, end, PRIORITY + 1, "phone"))
