"""The compaction part of the batch report (``batch --verify``, issue 17 §3): per session what its compactions'
summaries kept of the entries extracted before them, and the totals over the archive.

Works on the rows' ``verify`` records (``pipeline.verify.compare.counts_record``); rows without one (not ``ok``,
or a run without ``--verify``) are left out.  "Decisions" are Decision Log entries of either status; "rejected
alternatives" the REJECTED ones.
"""

from __future__ import annotations

from pipeline.verify.entries import KINDS
from pipeline.verify.render import LABELS, percent


def totals(rows: list[dict]) -> dict | None:
    """``{"sessions", "compactions", "compared", "missing", "counts": {kind: [kept, total]}}`` over the rows
    that carry a ``verify`` record; None when none does."""
    found = [r["verify"] for r in rows if isinstance(r.get("verify"), dict)]
    if not found:
        return None
    counts = {k: [0, 0] for k in KINDS}
    for v in found:
        for k, (a, b) in v.get("counts", {}).items():
            if k in counts:
                counts[k][0] += a
                counts[k][1] += b
    return {"sessions": len(found), "compactions": sum(v.get("compactions", 0) for v in found),
            "compared": sum(v.get("compared", 0) for v in found), "missing": sum(v.get("missing", 0) for v in found),
            "counts": counts}


def sentence(t: dict) -> str:
    """``Across 412 compactions, the summaries kept 61 % of decisions and 23 % of rejected alternatives (…).``"""
    c = t["counts"]
    decided = (c["approved"][0] + c["rejected"][0], c["approved"][1] + c["rejected"][1])
    kept = sum(a for a, _ in c.values())
    total = sum(b for _, b in c.values())
    extra = f"; {t['missing']} compaction(s) kept no summary" if t["missing"] else ""
    return (f"Across {t['compared']} compaction(s) compared ({t['compactions']} in {t['sessions']} session(s){extra}), "
            f"the summaries kept {percent(*decided)} of decisions and {percent(*c['rejected'])} of rejected "
            f"alternatives ({kept}/{total} entries, {percent(kept, total)}).")


def markdown(rows: list[dict], t: dict | None) -> list[str]:
    """The report section: a table of sessions with compactions (kept/total per kind) and the totals sentence;
    ``[]`` when no row carries a ``verify`` record."""
    if t is None:
        return []
    head = ["session", "compactions", "compared", *(LABELS[k] for k in KINDS), "kept"]
    out = ["", "## Compactions (--verify)", "", sentence(t), "",
           "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        v = r.get("verify")
        if not isinstance(v, dict) or not v.get("compactions"):
            continue
        c = v["counts"]
        kept = sum(a for a, _ in c.values())
        total = sum(b for _, b in c.values())
        name = r.get("session_id") or r.get("path", "?")
        out.append("| " + " | ".join([f"`{name}`", str(v["compactions"]), str(v["compared"]),
                                      *(f"{c[k][0]}/{c[k][1]}" for k in KINDS), percent(kept, total)]) + " |")
    sessions_without = t["sessions"] - sum(1 for r in rows if isinstance(r.get("verify"), dict)
                                           and r["verify"].get("compactions"))
    if sessions_without:
        out += ["", f"{sessions_without} session(s) had no compaction."]
    return out
