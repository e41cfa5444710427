"""Reports of an eval run (issue 3 "duck-tape eval"): the markdown table, the failing probes, the raw JSON.

Table rows are engines; columns: recall overall (passed/total) and per positive kind, negative-probe violations
(failed/total), decision precision, state file tokens (sum over cases), compression (transcript tokens ÷ state
tokens) and wall time.  "–" marks a value with nothing to measure.
"""

from __future__ import annotations

from evals.score import EngineScore, ProbeResult
from evals.suite import POSITIVE_KINDS, SECTION_TITLES

SHOWN_ENTRIES = 6  # entries of the checked section shown per failing probe
ENTRY_LIMIT = 300  # characters per shown entry


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(scores: list[EngineScore]) -> str:
    """The markdown table, one row per engine."""
    kinds = [k for k in POSITIVE_KINDS if any(k in s.kind_recall() for s in scores)]
    head = ["engine", "recall", *kinds, "neg. violations", "decision precision", "state tokens", "compression", "time (s)"]
    rows = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    for s in scores:
        positives = [r for r in s.results if not r.probe.negative]
        passed = sum(r.passed for r in positives)
        by_kind = s.kind_recall()
        cells = [
            s.engine,
            f"{_f(s.recall)} ({passed}/{len(positives)})",
            *[_f(by_kind.get(k)) for k in kinds],
            f"{s.violations}/{s.negatives}",
            _f(s.decision_precision),
            str(s.state_tokens),
            (_f(s.compression, 1) + "x") if s.compression is not None else "–",
            f"{s.seconds:.2f}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def harness_table(scores: list[EngineScore]) -> str:
    """Recall per harness (rows: engines, columns: harnesses in first-seen order); "" for a single harness."""
    harnesses = list(dict.fromkeys(c.harness for s in scores for c in s.cases if c.harness))
    if len(harnesses) < 2:
        return ""
    rows = ["| engine | " + " | ".join(harnesses) + " |", "|---|" + "---:|" * len(harnesses)]
    for s in scores:
        cells = [s.engine]
        for h in harnesses:
            chosen = [r for c in s.cases if c.harness == h for r in c.results if not r.probe.negative]
            passed = sum(r.passed for r in chosen)
            cells.append(f"{_f(passed / len(chosen))} ({passed}/{len(chosen)})" if chosen else "–")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _entry(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= ENTRY_LIMIT else line[: ENTRY_LIMIT - 1] + "…"


def _failure(r: ProbeResult) -> list[str]:
    p = r.probe
    terms = ", ".join(f'"{t}"' for t in p.terms)
    where = " or ".join(SECTION_TITLES[w] for w in p.wheres)
    out = [f"- `{r.case}` / `{p.id}` ({p.kind}, {where}): {terms} — {r.reason}"]
    if p.note:
        out.append(f"  - why: {p.note}")
    shown = [] if p.where == "file" and p.kind != "absent" else r.checked[:SHOWN_ENTRIES]
    if not shown and p.where != "file":
        out.append("  - checked against: (section empty)")
    for entry in shown:
        out.append(f"  - checked against: {_entry(entry)}")
    if len(r.checked) > len(shown) and shown:
        out.append(f"  - … {len(r.checked) - len(shown)} more entr{'y' if len(r.checked) - len(shown) == 1 else 'ies'}")
    return out


def failures(scores: list[EngineScore]) -> str:
    """Each failing probe per engine, with the section content it was checked against."""
    lines: list[str] = []
    for s in scores:
        failed = [r for r in s.results if not r.passed]
        lines.append(f"### {s.engine}: {len(failed)} failing probe(s)")
        for case in s.errors:
            lines.append(f"- `{case.case}`: engine error: {case.error}")
        for r in failed:
            lines.extend(_failure(r))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def markdown(scores: list[EngineScore], notes: list[str], suites: list[str], *, model: str | None = None) -> str:
    """The whole report: suites, the model of the llm row (``eval --model``), skipped engines, the table, then the
    failing probes."""
    out = [f"Suites: {', '.join(suites)}"]
    if model:
        out.append(f"Model of the llm row: {model} (live)")
    out.extend(f"Not run: {n}" for n in notes)
    out += ["", table(scores), ""]
    from evals.summary import comparison

    compared = comparison(scores)
    if compared:
        out += [*compared, ""]
    per_harness = harness_table(scores)
    if per_harness:
        out += ["Recall per harness:", "", per_harness, ""]
    out += ["## Failing probes", "", failures(scores)]
    return "\n".join(out)


def as_json(scores: list[EngineScore], notes: list[str], suites: list[str], *, model: str | None = None) -> dict:
    """The raw scores: per engine its summary and every case with every probe verdict (``model``: the llm row's
    model when ``eval --model`` named one, else null)."""
    return {
        "suites": suites,
        "model": model,
        "not_run": notes,
        "engines": [
            {
                "engine": s.engine,
                "recall": s.recall,
                "kind_recall": s.kind_recall(),
                "section_recall": s.section_recall(),
                "negative_violations": s.violations,
                "negative_probes": s.negatives,
                "decision_precision": s.decision_precision,
                "state_bytes": s.state_bytes,
                "state_tokens": s.state_tokens,
                "compression": s.compression,
                "seconds": s.seconds,
                "cases": [
                    {
                        "case": c.case, "harness": c.harness, "error": c.error, "decisions": c.decisions, "grounded": c.grounded,
                        "state_bytes": c.state_bytes, "state_tokens": c.state_tokens,
                        "transcript_tokens": c.transcript_tokens, "seconds": c.seconds,
                        "probes": [
                            {"id": r.probe.id, "kind": r.probe.kind, "section": r.probe.where, "passed": r.passed,
                             "violation": r.violation, "reason": r.reason}
                            for r in c.results
                        ],
                    }
                    for c in s.cases
                ],
            }
            for s in scores
        ],
    }
