"""Secret forms no maintained scanner rule covers (issue 22, item 2): written here, the rest is the library's.

The scanner library (betterleaks, ``library.py``) and the format rules (``rules.py``) find keys by their prefix or
their ``NAME=value`` shape.  An adversarial probe found four forms that neither sees, each reaching every output:

* **kubeconfig credentials**: ``client-key-data:`` and ``client-certificate-data:`` (base64 of a PEM key or
  certificate; YAML or its JSON form).  The user's ``token:`` is a ``*token`` assignment already (``assign.py``);
* **base64-wrapped secrets**: a run of base64 (24-4,096 characters) that decodes to printable text holding a
  secret a format rule finds there (an ``echo … | base64`` of a GitHub token, a Kubernetes ``Secret``'s ``data:``
  value, a Basic-auth blob without its ``Basic``).  The run is the finding;
* **a password stated in a sentence**, in English, German, French, Spanish, Portuguese, Italian, Chinese and
  Japanese: "the password is X", "das Passwort ist X", "le mot de passe est X", "la contraseña es X", "a senha é X",
  "la password è X", "密码是 X", "パスワードは X".  The value must look like a password (a digit, a symbol or a capital
  inside it, 5+ characters): "the password is wrong" / "das Passwort ist falsch" are messages, not secrets.

Each function appends raw candidates ``(start, end, PRIORITY, type)`` (the value only, character offsets of
``text``), like the other families; ``rules.candidates`` runs them.  Patterns compile on first use and each pass is
skipped when its literal is absent (``lazy.py``), so ordinary text pays a few ``in`` tests.
"""

from __future__ import annotations

from pipeline.redact.lazy import finditer_at, guarded_pattern, lazy_pattern
from pipeline.redact.values import MIN_VALUE_CHARS, is_identifier_path, is_placeholder

PRIORITY = 95  # after the shapes (90), before assignments (100): the form names the type
Out = list[tuple[int, int, int, str]]

_KUBE_LITERALS = (b"client-key-data", b"client-certificate-data")
_KUBE = guarded_pattern(
    _KUBE_LITERALS,
    rb"client-(?:key|certificate)-data\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>[A-Za-z0-9+/]{16,}={0,2})",
)

#: base64 (standard or URL-safe alphabet) runs short enough to be a wrapped token, not an image or an archive
_B64_MIN, _B64_MAX = 24, 4096
#: leftmost-longest runs of the alphabet (no look-around: ``re`` scans a plain class run several times faster)
_B64_RUN = lazy_pattern(rb"[A-Za-z0-9+/_-]{24,}")
_PRINTABLE = bytes(range(32, 127)) + b"\t\n\r"

#: "<password word> <is>" per language (searched in the lower-cased view; the value follows).  ASCII and Latin-1
#: languages run on the byte view; Chinese and Japanese on the text itself.
_SENTENCE_LITERALS = (b"pass", b"pw", b"kennwort", b"mot de passe", b"contrase", b"clave", b"senha")
_SENTENCE_STARTS = (b"pass", b"pw", b"kennwort", b"mot", b"contrase", b"clave", b"senha")
_SENTENCE = guarded_pattern(
    _SENTENCE_LITERALS,
    rb"(?:\b(?:password|passphrase|passwd|pw|pwd|passwort|kennwort|mot de passe|contrase\xf1a|contrasena|clave|"
    rb"senha)\b)"
    rb"(?:[ \t]+(?:for|of|f\xfcr|von|de|du|del|da|do|di|per|pour|para)(?:[ \t]+[^\s.,;:]{1,40}){1,3})?"
    rb"[ \t]+(?:is|was|ist|lautet|war|est|\xe9tait|es|era|\xe9|\xe8)(?![a-z])[ \t]*:?[ \t]*"
    rb"(?:now[ \t]+|still[ \t]+|jetzt[ \t]+|maintenant[ \t]+|ahora[ \t]+)?",
)
_CJK_SENTENCE = lazy_pattern(r"(?:密码|密碼|口令|パスワード)(?:是|为|為|は|：|:)[ \t　]*")
#: the value: up to whitespace; quotes and trailing sentence punctuation are not part of it
_VALUE = lazy_pattern(r"[\"'`«“「]?(?P<v>[^\s\"'`»”」。，；：！？、]{1,128})")
_TRAILING = ".,;:!?)]}。，；：！？、」』"
#: words that follow "password is" in messages, never a password
_MESSAGE_WORDS = frozenset(
    """
    wrong incorrect invalid required missing expired empty correct valid set reset changed stored saved hashed
    encrypted hidden shown masked redacted needed too not the a an in on at from to your my our their this that
    falsch richtig ung\xfcltig abgelaufen erforderlich leer faux incorrect invalide expir\xe9 requis vide
    incorrecta inv\xe1lida caducada requerida vac\xeda errada inv\xe1lida obrigat\xf3ria sbagliata
    """.split()
)


def forms(text: str, raw: bytes, low: bytes, out: Out) -> None:
    """Append the candidates of every form in the module docstring found in ``text`` (``raw``: its latin-1 view,
    ``low``: that lower-cased; offsets are ``text``'s)."""
    _kubeconfig(text, raw, out)
    _sentences(text, low, out)
    _wrapped(text, raw, out)


def _kubeconfig(text: str, raw: bytes, out: Out) -> None:
    pattern = _KUBE(raw)
    if pattern is None:
        return
    for m in finditer_at(pattern, raw, _KUBE_LITERALS):
        out.append((m.start("v"), m.end("v"), PRIORITY, "kubeconfig-credential"))


def _password_like(value: str) -> bool:
    """A value that reads as a password, not as the word of a message ("wrong", "falsch")."""
    if len(value) < MIN_VALUE_CHARS or is_placeholder(value) or value.lower() in _MESSAGE_WORDS:
        return False
    if is_identifier_path(value) and not any(c.isdigit() for c in value):
        return False  # "the password is user_password": a variable in code, as assign.py decides
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    inner_capital = any(c.isupper() for c in value[1:])
    return has_digit or has_symbol or inner_capital


def _value_at(text: str, at: int) -> tuple[int, int] | None:
    m = _VALUE().match(text, at)
    if m is None:
        return None
    start, end = m.span("v")
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return (start, end) if _password_like(text[start:end]) else None


def _sentences(text: str, low: bytes, out: Out) -> None:
    pattern = _SENTENCE(low)
    if pattern is not None:  # every match starts at one of the literals: tried only there
        for m in finditer_at(pattern, low, _SENTENCE_STARTS):
            span = _value_at(text, m.end())
            if span is not None:
                out.append((*span, PRIORITY, "password-in-prose"))
    if not text.isascii() and ("密" in text or "口令" in text or "パスワード" in text):
        for m in _CJK_SENTENCE().finditer(text):
            span = _value_at(text, m.end())
            if span is not None:
                out.append((*span, PRIORITY, "password-in-prose"))


def _wrapped(text: str, raw: bytes, out: Out) -> None:
    """Base64 runs whose decoded text holds a secret a format rule finds (module docstring)."""
    from binascii import Error as B64Error
    from binascii import a2b_base64

    for m in _B64_RUN().finditer(raw):
        run = m.group()
        if len(run) > _B64_MAX or run.isupper() or run.islower():
            continue  # too long for a wrapped token; one case only (digests, words, names): base64 of text mixes cases
        body = run.replace(b"-", b"+").replace(b"_", b"/")
        try:
            decoded = a2b_base64(body + b"=" * (-len(body) % 4))
        except (B64Error, ValueError):
            continue
        if len(decoded) < 16 or not decoded.isascii() or len(decoded.translate(None, _PRINTABLE)) * 20 > len(decoded):
            continue  # base64 of a wrapped token decodes to text
        from pipeline.redact.rules import format_candidates

        if format_candidates(decoded.decode("ascii")):
            end = m.end()
            while end < len(raw) and end - m.end() < 2 and raw[end] == 61:  # its "=" padding goes with it
                end += 1
            out.append((m.start(), end, PRIORITY, "base64-wrapped-secret"))
