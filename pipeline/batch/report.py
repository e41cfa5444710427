"""The batch report, markdown and JSON (issue 6, item 1): per session harness, events, decisions, facts,
engine, tokens, cost, seconds, status and errors; totals; the files skipped and why.

``seconds`` of a row is the time the session took when it was processed (for a cached row: in the run
that filled the cache); ``cost`` is US dollars (``None``/``n/a`` when the model has no known price; the rules
engine costs 0).  Totals count every row; ``computed_seconds`` sums only the sessions processed in this run.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from pipeline.batch.runner import FAILED, BatchRun

COLUMNS = ("session", "harness", "events", "decisions", "facts", "engine", "tokens", "cost", "seconds", "status", "errors")
_DROP = ("text", "cacheable")


def totals(run: BatchRun) -> dict:
    """Counts and sums over ``run.rows`` (status counts, events, decisions, facts, tokens, cost, seconds)."""
    rows = run.rows
    by_status: dict[str, int] = {}
    for row in rows:
        by_status[row["status"]] = by_status.get(row["status"], 0) + 1
    costs = [r.get("cost") for r in rows if r["status"] == "ok"]
    return {
        "sessions": len(rows),
        "status": dict(sorted(by_status.items())),
        "cached": sum(1 for r in rows if r.get("cached")),
        "failed": sum(1 for r in rows if r["status"] in FAILED),
        "events": sum(r.get("events") or 0 for r in rows),
        "decisions": sum(r.get("decisions") or 0 for r in rows if r["status"] == "ok"),
        "facts": sum(r.get("facts") or 0 for r in rows if r["status"] == "ok"),
        "tokens": sum(r.get("tokens") or 0 for r in rows),
        "cost": None if any(c is None for c in costs) else round(sum(costs), 6),
        "seconds": round(sum(r.get("seconds") or 0.0 for r in rows), 3),
        "computed_seconds": round(sum(r.get("seconds") or 0.0 for r in rows if not r.get("cached")), 3),
        "wall_seconds": run.wall_seconds,
        "skipped_files": len(run.skipped),
    }


def to_json(run: BatchRun) -> dict:
    """The JSON report: ``run`` fields, ``sessions`` (rows without the state text), ``skipped``, ``totals``."""
    return {
        "started": run.started,
        "finished": run.finished,
        "engine": run.engine,
        "jobs": run.jobs,
        "out": run.out,
        "interrupted": run.interrupted,
        "sessions": [{k: v for k, v in row.items() if k not in _DROP} for row in run.rows],
        "skipped": [{"path": s.path, "reason": s.reason} for s in run.skipped],
        "totals": totals(run),
    }


def _cell(value: object) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def _cost(value: object) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _status(row: dict) -> str:
    status = row["status"]
    if row.get("cached"):
        status += " (cached)"
    if row.get("output") in ("written", "updated"):
        status += f", {row['output']}"
    return status


def table_rows(run: BatchRun, t: dict | None = None) -> list[list[str]]:
    """The markdown table's cells, one list per session plus the totals row (``t``: ``totals(run)``)."""
    out = []
    for row in run.rows:
        problems = row.get("errors") or ([n for n in row.get("notes", []) if row["status"] != "ok"])
        out.append([
            row.get("session_id") or Path(row["path"]).name, row.get("harness") or "-", str(row.get("events") or 0),
            str(row.get("decisions") or 0), str(row.get("facts") or 0), row.get("engine") or "-",
            str(row.get("tokens") or 0), _cost(row.get("cost")), f"{row.get('seconds') or 0.0:.2f}", _status(row),
            "; ".join(problems),
        ])
    t = t or totals(run)
    states = ", ".join(f"{k} {v}" for k, v in t["status"].items())
    out.append([f"**total** ({t['sessions']} sessions)", "", str(t["events"]), str(t["decisions"]), str(t["facts"]),
                run.engine, str(t["tokens"]), _cost(t["cost"]), f"{t['seconds']:.2f}", f"{states}; cached {t['cached']}", ""])
    return out


def to_markdown(run: BatchRun) -> str:
    """The markdown report: a header, the sessions table with totals, the skipped files, each row's notes."""
    t = totals(run)
    lines = [
        "# duck-tape batch report",
        "",
        f"Started: {run.started} | Finished: {run.finished} | Wall: {run.wall_seconds:.2f} s | Engine: {run.engine} "
        f"| Jobs: {run.jobs} | Out: {run.out}" + (" | **interrupted**" if run.interrupted else ""),
        "",
        f"{t['sessions']} session(s): {t['cached']} from cache, {t['failed']} failed"
        + (f" (of which {t['status']['refused']} refused by redaction)" if t["status"].get("refused") else "") + "; "
        f"{t['computed_seconds']:.2f} s of processing in this run.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---:" if c in ("events", "decisions", "facts", "tokens", "cost", "seconds") else "---" for c in COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in cells) + " |" for cells in table_rows(run, t)]
    if run.skipped:
        lines += ["", "## Skipped files", ""]
        lines += [f"- `{s.path}`: {s.reason}" for s in run.skipped]
    noted = [r for r in run.rows if r.get("notes")]
    if noted:
        lines += ["", "## Notes", ""]
        for row in noted:
            lines += [f"- `{row['path']}`: {_cell(note)}" for note in row["notes"]]
    return "\n".join(lines) + "\n"


def report_paths(report: str | None, out: Path) -> tuple[Path, Path]:
    """(markdown path, JSON path): ``--report FILE`` names one (``.json`` -> the JSON one) and the other sits
    beside it with the other suffix; default ``<out>/report.md`` and ``<out>/report.json``."""
    if not report:
        return out / "report.md", out / "report.json"
    path = Path(report)
    if path.suffix == ".json":
        return path.with_suffix(".md"), path
    return path, path.with_suffix(".json")


def write_reports(run: BatchRun, report: str | None, out: Path) -> tuple[Path, Path]:
    """Write both reports (temporary file + rename, like the state files: a rerun recreates them from the
    cache); return their paths.  Raises OSError."""
    from pipeline.batch.cache import replace_quickly

    md_path, json_path = report_paths(report, out)
    data = orjson.dumps(to_json(run), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    for path, blob in ((md_path, to_markdown(run).encode("utf-8")), (json_path, data)):
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_quickly(path, blob)
    return md_path, json_path
