"""The batch report, markdown and JSON (issue 6, item 1): per session harness, events, decisions, facts,
engine, tokens, cost, seconds, status and errors; totals; the files skipped and why.

``seconds`` of a row is the time the session took when it was processed (for a cached row: in the run
that filled the cache); ``cost`` is US dollars (``None``/``n/a`` when the model has no known price; the rules
engine costs 0).  Totals count every row; ``computed_seconds`` sums only the sessions processed in this run.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from pipeline.redact import safe

from pipeline.batch.runner import BatchRun
from pipeline.batch import compactions

COLUMNS = ("session", "harness", "events", "decisions", "facts", "engine", "tokens", "cost", "seconds", "status", "errors")
_DROP = ("text", "cacheable", "text_digest")


def totals(run: BatchRun) -> dict:
    """Counts and sums over ``run.rows`` (status counts, events, decisions, facts, tokens, cost, seconds).

    ``failed`` and ``refused`` repeat the ``status`` counts of the sessions not written (issue 24, item 5: every
    line of a run counts them the same way, ``problems``)."""
    by_status: dict[str, int] = {}
    cached = events = decisions = facts = tokens = 0
    costs: list = []
    seconds: list[float] = []
    computed: list[float] = []
    for row in run.rows:  # one pass; the float sums below add in row order, as ``sum`` over the rows would
        status = row["status"]
        by_status[status] = by_status.get(status, 0) + 1
        spent = row.get("seconds") or 0.0
        seconds.append(spent)
        if row.get("cached"):
            cached += 1
        else:
            computed.append(spent)
        events += row.get("events") or 0
        tokens += row.get("tokens") or 0
        if status == "ok":
            decisions += row.get("decisions") or 0
            facts += row.get("facts") or 0
            costs.append(row.get("cost"))
    return {
        "sessions": len(run.rows),
        "status": dict(sorted(by_status.items())),
        "cached": cached,
        "failed": by_status.get("failed", 0),
        "refused": by_status.get("refused", 0),
        "events": events,
        "decisions": decisions,
        "facts": facts,
        "tokens": tokens,
        "cost": None if any(c is None for c in costs) else round(sum(costs), 6),
        "seconds": round(sum(seconds), 3),
        "computed_seconds": round(sum(computed), 3),
        "wall_seconds": run.wall_seconds,
        "skipped_files": len(run.skipped),
        **({"compactions": found} if (found := compactions.totals(run.rows)) else {}),
    }


def problems(t: dict, names: dict[str, list[str]] | None = None) -> str:
    """``"1 failed, 5 refused by redaction"`` from ``totals`` ``t`` ("" when every session was written), the words
    the summary line, the report and the exit-6 error all use; ``names`` (status -> session names) adds up to five
    names after each count."""
    parts = []
    for status, label in (("failed", "failed"), ("refused", "refused by redaction")):
        count = t.get(status, 0)
        if count:
            shown = (names or {}).get(status, [])
            more = f" +{count - len(shown[:5])} more" if len(shown) > 5 else ""
            parts.append(f"{count} {label}" + (f" ({', '.join(shown[:5])}{more})" if shown else ""))
    return ", ".join(parts)


def _public(row: dict) -> dict:
    """``row`` without the fields the report leaves out (``_DROP``), keys in the same order."""
    public = row.copy()
    for key in _DROP:
        public.pop(key, None)
    return public


def to_json(run: BatchRun, t: dict | None = None) -> dict:
    """The JSON report: ``run`` fields (``idle``: None, or why nothing was processed), ``sessions`` (rows without
    the state text), ``skipped``, ``totals`` (``t``: ``totals(run)`` when the caller has it)."""
    return {
        "started": run.started,
        "finished": run.finished,
        "engine": run.engine,
        "jobs": run.jobs,
        "out": run.out,
        "interrupted": run.interrupted,
        "idle": run.idle or None,
        "sessions": [_public(row) for row in run.rows],
        "skipped": [{"path": s.path, "reason": s.reason} for s in run.skipped],
        "totals": t or totals(run),
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


def _cells(row: dict) -> list[str]:
    problems = row.get("errors") or ([n for n in row.get("notes", []) if row["status"] != "ok"])
    return [
        row.get("session_id") or Path(row["path"]).name, row.get("harness") or "-", str(row.get("events") or 0),
        str(row.get("decisions") or 0), str(row.get("facts") or 0), row.get("engine") or "-",
        str(row.get("tokens") or 0), _cost(row.get("cost")), f"{row.get('seconds') or 0.0:.2f}", _status(row),
        "; ".join(problems),
    ]


def _total_cells(run: BatchRun, t: dict) -> list[str]:
    states = ", ".join(f"{k} {v}" for k, v in t["status"].items())
    return [f"**total** ({t['sessions']} sessions)", "", str(t["events"]), str(t["decisions"]), str(t["facts"]),
            run.engine, str(t["tokens"]), _cost(t["cost"]), f"{t['seconds']:.2f}",
            f"{states}; cached {t['cached']}" if states else f"cached {t['cached']}", ""]


def table_rows(run: BatchRun, t: dict | None = None) -> list[list[str]]:
    """The markdown table's cells, one list per session plus the totals row (``t``: ``totals(run)``)."""
    return [*(_cells(row) for row in run.rows), _total_cells(run, t or totals(run))]


def _table_line(row: dict) -> str:
    """``"| " + " | ".join(_cell(c) for c in _cells(row)) + " |"`` in one f-string, with ``_cell`` applied only to
    the cells that can hold whitespace or a ``|`` (numbers cannot): a thousand rows are a thousand lines."""
    get = row.get
    status = row["status"]
    problems = get("errors") or ([n for n in get("notes", []) if status != "ok"])
    cost = get("cost")
    return (f"| {_cell(get('session_id') or Path(row['path']).name)} | {_cell(get('harness') or '-')} "
            f"| {get('events') or 0} | {get('decisions') or 0} | {get('facts') or 0} | {_cell(get('engine') or '-')} "
            f"| {get('tokens') or 0} | {'n/a' if cost is None else f'${cost:.4f}'} | {get('seconds') or 0.0:.2f} "
            f"| {_cell(_status(row))} | {_cell('; '.join(problems))} |")


def to_markdown(run: BatchRun, t: dict | None = None) -> str:
    """The markdown report: a header, the sessions table with totals, the skipped files, each row's notes
    (``t``: ``totals(run)`` when the caller has it)."""
    t = t or totals(run)
    lines = [
        "# duck-tape batch report",
        "",
        f"Started: {run.started} | Finished: {run.finished} | Wall: {run.wall_seconds:.2f} s | Engine: {run.engine} "
        f"| Jobs: {run.jobs} | Out: {run.out}" + (" | **interrupted**" if run.interrupted else ""),
        "",
        f"{t['sessions']} session(s): {t['cached']} from cache, {problems(t) or '0 failed'}; "
        f"{t['computed_seconds']:.2f} s of processing in this run.",
        *(("", f"Nothing to do: {run.idle}.") if run.idle else ()),
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---:" if c in ("events", "decisions", "facts", "tokens", "cost", "seconds") else "---" for c in COLUMNS) + "|",
    ]
    lines += [_table_line(row) for row in run.rows]
    lines.append("| " + " | ".join(_cell(c) for c in _total_cells(run, t)) + " |")
    lines += compactions.markdown(run.rows, t.get("compactions"))
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


def _masked_json(report: dict) -> bytes:
    """The JSON report's bytes with every secret masked (issue 22 item 6: a token in a transcript's path): one deep
    scan of the whole text (``<REDACTED>`` holds no JSON syntax, so the text stays JSON; checked, and each string
    masked on its own should a finding ever straddle one)."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    text = orjson.dumps(report, option=option).decode("utf-8")
    masked = safe(text)
    if masked is text:
        return text.encode("utf-8")
    try:
        orjson.loads(masked)
        return masked.encode("utf-8")
    except orjson.JSONDecodeError:
        from pipeline.commands.json_out import masked as mask_each

        return orjson.dumps(mask_each(report), option=option)


def write_reports(run: BatchRun, report: str | None, out: Path, t: dict | None = None) -> tuple[Path, Path]:
    """Write both reports (temporary file + rename, like the state files: a rerun recreates them from the
    cache); return their paths, every secret in them masked (paths included).  ``t``: ``totals(run)`` when the
    caller has it.  Raises OSError."""
    from pipeline.batch.cache import replace_quickly

    md_path, json_path = report_paths(report, out)
    t = t or totals(run)
    data = _masked_json(to_json(run, t))
    markdown = safe(to_markdown(run, t))
    for path, blob in ((md_path, markdown.encode("utf-8")), (json_path, data)):
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_quickly(path, blob)
    return md_path, json_path
