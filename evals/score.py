"""Scoring (issue 3 "Scoring"): per-probe verdicts, recall per kind and per section, negative-probe
violations, decision precision, sizes in bytes and tokens, compression, wall time.

Matching rule: a term *occurs* in an entry when, after lower-casing and collapsing whitespace in both, it is a
substring of the entry that does not start or end inside a word (so ``6380`` does not match ``63800`` and ``rq``
does not match ``requests``).  A probe's terms must all occur in one entry of its section.

The approved / rejected views apply "the final state wins": an entry holding every term counts only when no
later Decision Log entry of the other status has the probe's ``subject`` (default: its first term) in its
``what``.  An ``absent`` probe on the approved view is therefore violated only by a decision that still stands,
and only when the option itself (the entry's ``what``) holds its terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evals.sections import Views
from evals.suite import NEGATIVE_KINDS, POSITIVE_KINDS, Probe

_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """Lower case, every whitespace run one space, ends stripped."""
    return _WS.sub(" ", text).strip().lower()


def occurs(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text`` under the module's matching rule (both already normalized or not)."""
    t, s = norm(term), norm(text)
    if not t:
        return False
    start = s.find(t)
    while start >= 0:
        end = start + len(t)
        left_ok = start == 0 or not (t[0].isalnum() and s[start - 1].isalnum())
        right_ok = end == len(s) or not (t[-1].isalnum() and s[end].isalnum())
        if left_ok and right_ok:
            return True
        start = s.find(t, start + 1)
    return False


def substring(term: str, text: str) -> bool:
    """Whether ``term`` is a plain substring of ``text`` after normalizing both (the real-session corpus rule)."""
    t = norm(term)
    return bool(t) and t in norm(text)


def _all(terms: list[str], entry: str, match=occurs) -> bool:
    return all(match(t, entry) for t in terms)


@dataclass(slots=True)
class ProbeResult:
    """The verdict on one probe: ``passed``; ``checked`` = the section content it was checked against."""

    case: str
    probe: Probe
    passed: bool
    checked: list[str]
    reason: str = ""

    @property
    def violation(self) -> bool:
        return self.probe.negative and not self.passed


def _standing(views: Views, status: str, probe: Probe) -> list[str]:
    """Entries of ``status`` holding every term that no later entry of the other status reversed.

    A positive probe's terms may sit anywhere in the line (option and reasoning); an ``absent`` probe is about
    the option itself, so its terms must be in the entry's ``what`` (a reasoning that mentions a rejected
    option, "use X, an alias would hide the next rename", does not approve the alias)."""
    subject = probe.subject or probe.terms[0]
    out = []
    decisions = views.decisions
    for n, d in enumerate(decisions):
        if d.status != status or not _all(probe.terms, d.what if probe.kind == "absent" else d.line):
            continue
        if any(later.status != status and occurs(subject, later.what) for later in decisions[n + 1:]):
            continue
        out.append(d.line)
    return out


def _status(d) -> str:
    """A Decision Log line's effective status: an APPROVED entry marked "(later rejected)" counts as REJECTED."""
    if d.status == "APPROVED" and "(later rejected)" in d.line.lower():
        return "REJECTED"
    return d.status


def _entries(views: Views, probe: Probe) -> list[str]:
    """The entries of every section ``probe`` checks; with ``status``, Decision Log entries of that status only."""
    out: list[str] = []
    for where in probe.wheres:
        if probe.status and where == "decisions":
            out.extend(d.line for d in views.decisions if _status(d) == probe.status)
        else:
            out.extend(views.get(where))
    return out


def _check_absent_status(case: str, probe: Probe, views: Views, match) -> ProbeResult:
    """Violated when a standing entry of ``probe.status`` names a term in its *what* and none of ``unless``."""
    hits = [
        d.line for d in views.decisions
        if _status(d) == probe.status and any(match(t, d.what) for t in probe.terms)
        and not any(match(u, d.line) for u in probe.unless)
    ]
    reason = "" if not hits else f"found in {len(hits)} entr{'y' if len(hits) == 1 else 'ies'}"
    return ProbeResult(case, probe, not hits, hits or [d.line for d in views.decisions], reason)


def check(case: str, probe: Probe, views: Views) -> ProbeResult:
    """Check ``probe`` against the ``views`` of one state file."""
    match = substring if probe.matching == "substring" else occurs
    if probe.kind == "absent_status":
        return _check_absent_status(case, probe, views, match)
    where = probe.where
    if probe.sections is None and probe.status is None and where in ("approved", "rejected"):
        entries = views.get(where)
        hits = _standing(views, where.upper(), probe)
    else:
        entries = _entries(views, probe)
        if probe.kind == "absent" and probe.any_term:
            hits = [e for e in entries if any(match(t, e) for t in probe.terms)]
        else:
            hits = [e for e in entries if _all(probe.terms, e, match)]
    if probe.kind == "absent":
        passed = not hits
        reason = "" if passed else f"found in {len(hits)} entr{'y' if len(hits) == 1 else 'ies'}"
        return ProbeResult(case, probe, passed, hits or entries, reason)
    if not hits:
        return ProbeResult(case, probe, False, entries, "no entry holds every term")
    if probe.max_entries is not None and len(hits) > probe.max_entries:
        return ProbeResult(case, probe, False, hits, f"{len(hits)} entries hold every term (at most {probe.max_entries})")
    return ProbeResult(case, probe, True, hits)


@dataclass(slots=True)
class CaseScore:
    """One engine on one case."""

    case: str
    engine: str
    results: list[ProbeResult]
    harness: str = ""
    decisions: int = 0
    grounded: int = 0
    state_bytes: int = 0
    state_tokens: int = 0
    transcript_tokens: int = 0
    seconds: float = 0.0
    error: str | None = None


@dataclass(slots=True)
class EngineScore:
    """One engine over all cases: the numbers of the table's row."""

    engine: str
    cases: list[CaseScore] = field(default_factory=list)

    @property
    def results(self) -> list[ProbeResult]:
        return [r for c in self.cases for r in c.results]

    def _recall(self, pick) -> float | None:
        chosen = [r for r in self.results if not r.probe.negative and pick(r)]
        return sum(r.passed for r in chosen) / len(chosen) if chosen else None

    @property
    def recall(self) -> float | None:
        """Passed ÷ all positive probes."""
        return self._recall(lambda r: True)

    def kind_recall(self) -> dict[str, float]:
        """Recall per positive kind present in the suite."""
        out = {}
        for kind in POSITIVE_KINDS:
            value = self._recall(lambda r, k=kind: r.probe.kind == k)
            if value is not None:
                out[kind] = value
        return out

    def section_recall(self) -> dict[str, float]:
        """Recall per section checked by positive probes."""
        out = {}
        for section in sorted({r.probe.where for r in self.results if not r.probe.negative}):
            out[section] = self._recall(lambda r, s=section: r.probe.where == s)
        return out

    @property
    def violations(self) -> int:
        """Negative probes (``absent`` found, ``keep`` missing) that failed."""
        return sum(r.violation for r in self.results)

    @property
    def negatives(self) -> int:
        return sum(r.probe.kind in NEGATIVE_KINDS for r in self.results)

    @property
    def decision_precision(self) -> float | None:
        """Decision Log entries whose evidence quote is found in the cited transcript event ÷ all entries
        (None when no case produced an entry)."""
        total = sum(c.decisions for c in self.cases)
        return sum(c.grounded for c in self.cases) / total if total else None

    @property
    def state_tokens(self) -> int:
        return sum(c.state_tokens for c in self.cases)

    @property
    def state_bytes(self) -> int:
        return sum(c.state_bytes for c in self.cases)

    @property
    def compression(self) -> float | None:
        """Transcript tokens ÷ state tokens, over all cases."""
        state = self.state_tokens
        return sum(c.transcript_tokens for c in self.cases) / state if state else None

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.cases)

    @property
    def errors(self) -> list[CaseScore]:
        return [c for c in self.cases if c.error]
