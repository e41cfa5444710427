"""``duck-tape status``: is duck-tape set up here, and did the last checkpoint work?  (``pipeline.status``.)"""

from __future__ import annotations

import re
from pathlib import Path

import click

from pipeline.errors import DuckTapeError


class Unhealthy(DuckTapeError):
    """``status`` found problems (exit 1); they are already printed."""

    exit_code = 1


def _age(seconds: int | None) -> str:
    if seconds is None:
        return "age unknown"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


_FILE_SOURCE = re.compile(r"^(?P<kind>[\w-]+): (?P<path>.+) (?P<table>\[[^\]]+\]\.[\w-]+)$")


def _config_lines(config: dict) -> list[str]:
    """The configuration, one line per key, each file named once below as ``[n]`` (issue 24, item 6: 17 lines
    each repeated the full path of the shipped default.toml)."""
    files: list[str] = []
    lines = ["Configuration (value  <- where it comes from):"]
    for key, item in config.items():
        source = item["source"]
        found = _FILE_SOURCE.match(source)
        if found:
            path = found["path"]
            if path not in files:
                files.append(path)
            source = f"{found['kind']} [{files.index(path) + 1}] {found['table']}"
        lines.append(f"  {key} = {item['value']!r}  <- {source}")
    lines += [f"  [{n}] {path}" for n, path in enumerate(files, 1)]
    return lines


def _text(report: dict) -> str:
    lines = []
    lines.append("Hooks:")
    if not report["hooks"]:
        lines.append("  none installed")
    for hook in report["hooks"]:
        parts = [p for p, on in (("checkpoint", hook["checkpoint"]), ("restore", hook["restore"])) if on]
        missing = "" if hook["program_found"] else f"  (program {hook['program']!r} not found)"
        lines.append(f"  {hook['harness']} ({hook['scope']}): {' + '.join(parts)} in {hook['path']}{missing}")
    marker = report["marker"]
    lines.append("Last compaction:")
    if marker is None:
        lines.append("  none yet (no marker in the store)")
    else:
        lines.append(f"  {marker['time']} ({_age(marker['age_seconds'])})"
                     + (f", session {marker['session']}" if marker.get("session") else ""))
        if marker["transcript"]:
            state = "exists" if marker["transcript_exists"] else "no longer exists"
            lines.append(f"  transcript: {marker['transcript']} ({state})")
    last = report["last_checkpoint"]
    if last is not None:
        if last["wrote_state"]:
            lines.append(f"  checkpoint wrote {last['state']}")
        else:
            lines.append(f"  checkpoint wrote only the marker: {last['reason']}")
    lines.append(f"State files in {report['store']}:")
    if not report["states"]:
        lines.append("  none")
    for state in report["states"]:
        lines.append(f"  {Path(state['path']).name}  {state['kind']}, {_age(state['age_seconds'])}")
    context = report["context"]
    if not context["exists"]:
        lines.append(f"CONTEXT.md: {context['path']} does not exist yet (duck-tape merge creates it)")
    elif context["error"]:
        lines.append(f"CONTEXT.md: {context['error']}")
    else:
        missing = context["missing_sections"]
        lines.append(f"CONTEXT.md: {context['path']}, " + (f"lacks {', '.join(missing)}" if missing else "all sections present"))
    engine = report["engine"]
    reach = {True: "reachable", False: "NOT reachable", None: "not checked"}[engine["reachable"]]
    model = f", model {engine['model']}" if engine["model"] else ""
    lines.append(f"Engine: {engine['effective']} (asked: {engine['requested']}){model}: {reach} ({engine['detail']})")
    refine = report["refine"]
    lines.append(f"Background refinement: {'on, with ' + str(refine['model']) if refine['on'] else 'off'}")
    usage = report["llm_usage"]
    if usage:
        by = ", ".join(f"{action} {tokens:,}" for action, tokens in usage["by_action"].items())
        lines.append(f"Model tokens spent here: {usage['tokens']:,} in {usage['runs']} run(s) since {usage['since']} "
                     f"({by})")
        for label, item in (("last refinement", usage["last_refine"]), ("last run", usage["last"])):
            if item is None or (label == "last run" and item is usage["last_refine"]):
                continue
            seconds = f", {item['seconds']} s" if item.get("seconds") is not None else ""
            why = f": {item['note']}" if item.get("note") and item.get("outcome") != "written" else ""
            lines.append(f"  {label}: {item['time']} {item['action']} with {item['model']}, {item['tokens']:,} "
                         f"tokens{seconds}, {item['outcome']}{why}")
    lines += _config_lines(report["config"])
    for line in report["warnings"]:
        lines.append(f"note: {line}")
    if report["problems"]:
        lines.append("Problems:")
        lines += [f"  - {p}" for p in report["problems"]]
    else:
        lines.append("Healthy.")
    return "\n".join(lines)


@click.command("status", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=".",
              show_default=True, help="Project folder to look at (must exist).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="State store (default: .duck-tape in the project folder).")
@click.option("--context", "context_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CONTEXT.md to check (default: CONTEXT.md in the project folder).")
@click.option("--check-model", is_flag=True, help="Send the configured model one tiny request to see it answer.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def status(root: Path, directory: Path | None, context_path: Path | None, check_model: bool, as_json: bool) -> None:
    """Show whether duck-tape is set up here and whether the last checkpoint worked.

    Lists the installed hooks and where they are, the last compaction (time, session, transcript and whether
    it still exists), the state files with kind and age, whether the last checkpoint wrote a state file or
    only the marker and why, CONTEXT.md and its sections, the engine and whether its model is reachable
    (a connection test or key check; --check-model sends a real request), and the effective configuration
    with where each value comes from.  Exit 0 when healthy, 1 with the problems listed.
    """
    from pipeline.commands.json_out import begin, emit
    from pipeline.status import gather

    if as_json:
        begin("status")
    root = root.absolute()
    report = gather(root, directory or root / ".duck-tape", context_path or root / "CONTEXT.md",
                    check_model=check_model)
    if as_json:
        emit(report)
    else:
        from pipeline.redact import safe

        click.echo(safe(_text(report)))
    if report["problems"]:
        raise Unhealthy(f"{len(report['problems'])} problem(s) found")


COMMANDS = [status]
