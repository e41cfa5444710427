"""Secrets known by where they sit rather than by a prefix or an ``name = value`` operator (issue 11, part 2).

Each function appends raw candidates ``(start, end, PRIORITY, type)`` (value only, character offsets of
``text``) like the other rule families; ``pipeline.redact.rules.candidates`` runs them all.

* passwords on command lines: ``mysql -pVALUE`` (also ``mysqldump``, ``mysqladmin``, ``mariadb``: the value glued
  to ``-p``), ``redis-cli -a VALUE``, ``sshpass -p VALUE`` (quoted or not);
* signed-URL parameters: ``X-Amz-Signature=``, ``X-Amz-Credential=``, ``X-Amz-Security-Token=``,
  ``X-Goog-Signature=``/``Credential=``, Azure SAS ``sig=``, CloudFront/OSS ``Signature=``;
* a 32- or 40-hex key right after a Datadog key name in prose (``datadog api key: 3f8a…``, ``DD app key 9c…``);
* an AWS secret access key (40 characters of base64, mixed case and digits) near an AWS key id (``AKIA…`` /
  ``ASIA…``): from the line before it to two lines after; the pair is what ``aws configure`` and
  ``create-access-key`` output show, and how people paste it;
* YAML ``password: value`` lines (a whole line ``<name ending in password/secret/token>: <one word>``, also behind
  the line numbers of a file-read tool's output, ``     5→  password: …``): YAML values
  are literals, so ``password: mysecretpassword`` is one (code such as ``password: hashedPassword,`` is not a
  whole ``name: word`` line or reads as a variable: camelCase or snake_case).

Nothing here flags on entropy alone: each needs its command, parameter or name next to the value.
"""

from __future__ import annotations

from pipeline.redact.lazy import finditer_at, guarded_pattern, lazy_pattern
from pipeline.redact.values import is_placeholder, mixed_alnum

PRIORITY = 90  # after the format rules, before assignments (100): a specific shape names the type
Out = list[tuple[int, int, int, str]]

_VALUE = rb"(?:'(?P<q1>[^'\n]{1,256})'|\"(?P<q2>[^\"\n]{1,256})\"|(?P<bare>[^\s'\"`;|&<>]{1,256}))"
#: ``mysql … -pVALUE`` on one line; matched case-sensitively (``-P3306`` is a port).
_MYSQL = guarded_pattern((b"mysql", b"mariadb"), rb"(?:mysql(?:dump|admin|import|check|sh)?|mariadb(?:-dump)?)\b[^\n]*?"
                         rb"[ \t]-p(?=[^\s])")
_REDIS = guarded_pattern((b"redis-cli",), rb"redis-cli\b[^\n]*?[ \t](?:-a|--pass)[ \t]+(?=[^\s-])")
_SSHPASS = guarded_pattern((b"sshpass",), rb"sshpass\b[^\n]*?[ \t]-p[ \t]*(?=[^\s-])")
_CLI_VALUE = lazy_pattern(_VALUE)
#: a port or a port mapping (``3306``, ``3306:3306``, ``127.0.0.1:3306:3306/tcp``): what ``-p`` takes in docker
_PORTS = lazy_pattern(r"(?:[0-9.]+:)?[0-9]{1,5}(?:-[0-9]{1,5})?(?::[0-9]{1,5}(?:-[0-9]{1,5})?)?(?:/(?:tcp|udp|sctp))?")

_SIGNED = guarded_pattern(
    (b"sig", b"credential", b"security-token"),
    rb"[?&;](?:x-(?:amz|goog|ms|oss)-(?:signature|credential|security-token)|sig|signature|x-amz-sig)"
    rb"=(?P<v>[^&\s\"'<>#\\]{8,2048})",
)
_DATADOG_LITERALS = (b"datadog", b"dd")
_DATADOG = guarded_pattern(
    _DATADOG_LITERALS,
    rb"(?:datadog|\bdd)[ _.-]{0,3}(?:api|app(?:lication)?)[ _-]?key\b[^\n0-9a-f]{0,20}?(?<![0-9a-f])"
    rb"(?P<v>[0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-z])",
)
_AWS_ID = guarded_pattern((b"A",), rb"A(?<![A-Za-z0-9]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_NEAR = lazy_pattern(rb"(?<![A-Za-z0-9/+=])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_YAML_LITERALS = (b"pass", b"secret", b"token")
_YAML = guarded_pattern(
    _YAML_LITERALS,
    rb"(?m)^(?:[ \t]*[0-9]{1,6}(?:\?|\t))?[ \t]*(?:- )?[\"']?(?P<name>[a-z0-9_.-]{0,40}(?:pass(?:word|wd|phrase)|secret|token))[\"']?:[ \t]+"
    rb"(?P<v>[^\s\"'#,;{}\[\]()]{5,256})[ \t]*\r?$",
)


def shaped(text: str, raw: bytes, low: bytes, out: Out) -> None:
    """Append the candidates of every rule in the module docstring found in ``text``."""
    _command_lines(text, raw, low, out)
    signed = _SIGNED(low)
    if signed is not None:
        for m in signed.finditer(low):
            value = text[m.start("v") : m.end("v")]
            if not is_placeholder(value):
                out.append((m.start("v"), m.end("v"), PRIORITY, "signed-url-parameter"))
    datadog = _DATADOG(low)
    if datadog is not None:  # matches start at a literal; the pattern has no literal prefix for re to seek
        for m in finditer_at(datadog, low, _DATADOG_LITERALS):
            out.append((m.start("v"), m.end("v"), PRIORITY, "datadog-key"))
    _aws_pairs(text, raw, out)
    yaml = _YAML(low)
    if yaml is not None:  # a match is one whole line holding a literal
        for m in finditer_at(yaml, low, _YAML_LITERALS, line=True):
            start, end = m.span("v")
            value = text[start:end]
            if is_placeholder(value) or value.isdigit() or "_" in value or "." in value:
                continue  # a number, a snake_case variable, an attribute path or a file name
            if any(c.isupper() for c in value[1:]) and value.isalpha():
                continue  # camelCase: a variable in code
            out.append((start, end, PRIORITY, "password-assignment" if b"pass" in m.group("name") else
                        "secret-assignment"))


def _command_lines(text: str, raw: bytes, low: bytes, out: Out) -> None:
    for pattern_for in (_MYSQL, _REDIS, _SSHPASS):
        pattern = pattern_for(raw)
        if pattern is None:
            continue
        for m in pattern.finditer(raw):
            v = _CLI_VALUE().match(raw, m.end())
            if v is None:
                continue
            group = v.lastgroup or "bare"
            start, end = v.span(group)
            value = text[start:end]
            if is_placeholder(value) or _PORTS().fullmatch(value):
                continue  # issue 22 item 3: ``docker run … mysql -p3306:3306`` publishes a port, it is no password
            out.append((start, end, PRIORITY, "password-assignment"))


def _aws_pairs(text: str, raw: bytes, out: Out) -> None:
    ids = _AWS_ID(raw)
    if ids is None:
        return
    for m in ids.finditer(raw):
        begin = raw.rfind(b"\n", 0, m.start())  # the id's line and the one before it ...
        begin = max(raw.rfind(b"\n", 0, begin) + 1 if begin > 0 else 0, m.start() - 400)
        for s in _AWS_SECRET_NEAR().finditer(raw, begin, m.start()):
            value = text[s.start("v") : s.end("v")]
            if mixed_alnum(value) and not is_placeholder(value):
                out.append((s.start("v"), s.end("v"), PRIORITY, "aws-secret-access-key"))
        stop = m.end()  # ... and the two after it
        for _ in range(3):  # the id's line and the two after it
            nl = raw.find(b"\n", stop + 1)
            stop = len(raw) if nl < 0 else nl
            if nl < 0:
                break
        for s in _AWS_SECRET_NEAR().finditer(raw, m.end(), min(stop, m.end() + 400)):
            value = text[s.start("v") : s.end("v")]
            if mixed_alnum(value) and not is_placeholder(value):
                out.append((s.start("v"), s.end("v"), PRIORITY, "aws-secret-access-key"))
