"""Is a candidate value a literal secret, or a reference / template / placeholder? (DESIGN.md "Redaction").

Pure predicates on one value string, used by the rules (``rules.py``, ``assign.py``) after a match.  A
reference (``$VAR``, ``${{ secrets.X }}``, ``os.environ[...]``, ``process.env.X``), a template
(``{token}``, ``%s``), a mask (``***``, ``<REDACTED>``, ``[REDACTED]``), an ALL_CAPS env-var name, a
file path, or one of ``PLACEHOLDER_WORDS`` is not a secret.

``changeme`` and the like are placeholders by decision: a published default is not a secret, and a
state-file write refused over ``changeme`` would only teach people to pass ``--mask`` without reading.
"""

from __future__ import annotations

from pipeline.redact.lazy import lazy_pattern

#: Values shorter than this are never flagged, so the report's 4-character preview never shows a whole
#: value (DESIGN.md "Redaction": "never showing the full value").
MIN_VALUE_CHARS = 5

#: Lower-cased values that are placeholders, type names or literals of code, not secrets.
PLACEHOLDER_WORDS = frozenset(
    """
    password passwd passphrase secret secrets token apikey api_key api-key changeme change_me change-me
    changeit example sample dummy placeholder redacted masked hidden none null nil undefined true false
    string bytes integer number boolean required optional unknown empty notset unset default secretstr
    object testing fixme
    """.split()
)
_PLACEHOLDER_PREFIXES = ("your", "my_", "my-", "insert", "replace", "enter_", "enter-", "<", "[")
_REFERENCE_PREFIXES = (
    "$", "%(", "%{", "{", "!", "&", "*", "process.env", "os.environ", "os.getenv", "getenv",
    "env.", "env(", "env[", "ENV[", "secrets.", "vault:", "arn:",
)
# compiled on first use: only candidate values reach these (see ``lazy.py``)
_ENV_NAME = lazy_pattern(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_IDENT_PATH = lazy_pattern(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_FILE_NAME = lazy_pattern(r"[\w.-]+\.(?:pem|key|crt|cer|p12|pfx|json|txt|env|ya?ml|toml|ini|cfg|conf)")
_MASK_RUN = lazy_pattern(r"[*xX.•#_-]+|(.)\1+")


def is_placeholder(value: str) -> bool:
    """True when ``value`` (a candidate secret value, characters) is not a literal secret.

    Covers: too short (< ``MIN_VALUE_CHARS``), placeholder words, ``your_…``/``<…>``/``[…]``,
    references (``$…``, ``{…}``, ``process.env…``), ellipses, masks (``***``, ``xxxxx``, ``REDACTED``),
    ALL_CAPS_ENV_NAMES, and file paths or key-file names.  Never raises.
    """
    low = value.lower()
    if (
        len(value) < MIN_VALUE_CHARS
        or low in PLACEHOLDER_WORDS
        or low.startswith(_PLACEHOLDER_PREFIXES)
        or value.startswith(_REFERENCE_PREFIXES)
        or "..." in value
        or "…" in value
        or "***" in value
        or "REDACTED" in value
        or ("{" in value and "}" in value)
        or "%s" in value
        or _MASK_RUN().fullmatch(value)
        or _ENV_NAME().fullmatch(value)
    ):
        return True
    # file paths and key-file names are where a secret lives, not the secret
    if value.startswith(("~/", "./", "../")) or (value.startswith("/") and "/" in value[1:]):
        return True
    return _FILE_NAME().fullmatch(value) is not None


def is_identifier_path(value: str) -> bool:
    """True for ``name`` / ``obj.attr.attr``: in code, a variable, not a literal."""
    return _IDENT_PATH().fullmatch(value) is not None


def has_digit_and_letter(value: str) -> bool:
    """At least one ASCII/Unicode digit and one letter."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def mixed_alnum(value: str) -> bool:
    """Upper case, lower case and digits all present: what random API-key bodies look like."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )
