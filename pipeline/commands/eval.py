"""``duck-tape eval``: score engines on probe-fact suites (issue 3; DESIGN.md job 3 "Evals").

Prints a markdown table (rows: engines; columns: recall overall and per kind, negative-probe violations,
decision precision, state tokens, compression, time), then each failing probe with the section content it was
checked against.  Exit 1 when an engine that ran misses its bar in ``evals/thresholds.toml``.
"""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.errors import DuckTapeError


class ThresholdMissed(DuckTapeError):
    """An engine's scores are below its bar in the thresholds file (exit 1)."""

    exit_code = 1


def _default_suite() -> str:
    from pipeline.resources import evals_path

    return str(evals_path("suites/core.yaml"))


@click.command("eval")
@click.option("--suite", "suites", multiple=True, metavar="FILE|real|real2",
              help="Suite YAML file, a corpus probes.json, or 'real' / 'real2' for the real-session suites "
                   "(probes.json of $DUCK_TAPE_CORPUS / $DUCK_TAPE_CORPUS2, by default shared/corpus and "
                   "shared/corpus2 beside a source checkout); "
                   "repeatable; "
                   "default: evals/suites/core.yaml.")
@click.option("--engine", default="all", show_default=True, metavar="rules|llm|baseline|all",
              help="Engine to score; 'all' runs every available engine and says why any other was skipped.")
@click.option("--model", default=None, metavar="MODEL",
              help="Score the llm engine live against this model: a litellm model string, or the agent CLI you use "
                   "(agent:claude-code, agent:codex, agent:gemini, agent:opencode, agent:copilot) "
                   "[default: the configured model, else the recorded cassettes].")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the raw scores (every probe of every case) as JSON to this file.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the printed report (table + failing probes) to this file.")
@click.option("--thresholds", "thresholds_path", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Thresholds TOML (default: evals/thresholds.toml).")
def eval_command(suites: tuple[str, ...], engine: str, model: str | None, json_path: Path | None,
                 report_path: Path | None, thresholds_path: str | None) -> None:
    """Score engines on probe facts planted in fixture transcripts.

    '--suite real' and '--suite real2' score real public transcripts (the corpus folders, $DUCK_TAPE_CORPUS and
    $DUCK_TAPE_CORPUS2) on probes people wrote by reading them before any engine ran: the honest numbers.  With
    '--engine all' the harness's own compaction summary is scored too, and on the sessions that hold one each
    engine together with it. The core suite (the default) was written alongside the
    rules engine and guards against regressions.

    Each probe names a section of the recovered state file and terms that must all appear there (or, for
    'absent', must not appear; for 'keep', must survive redaction).  Prints the table, then every failing
    probe; exits 1 when an engine misses its thresholds (evals/thresholds.toml).

    '--engine llm --model agent:claude-code' measures the model you already use, through its CLI (agent:codex,
    agent:gemini, agent:opencode, agent:copilot likewise); it spends that CLI's tokens (capped per session by
    agent_tokens and agent_seconds).
    """
    import json

    from evals import corpus, report, runner, thresholds
    from evals import engines as registry
    from evals.suite import load_suite

    paths = list(suites) or [_default_suite()]
    loaded = [corpus.load(corpus.alias_path(p), p) if p in corpus.ALIASES else corpus.load(p) if corpus.is_corpus_file(p)
              else load_suite(p)
              for p in paths]
    chosen, notes = registry.select(engine, model=model)
    from pipeline import tokens

    if not tokens.available():
        from pipeline.extras import install_line

        click.echo("duck-tape: eval: token counts are estimates (UTF-8 bytes / 4); exact counts need the llm "
                   f"extra: {install_line()}", err=True)
    names = {s.name for s in loaded}
    bars = thresholds.load(thresholds_path or thresholds.DEFAULT, suite=names.pop() if len(names) == 1 else None)
    scores = runner.run(loaded, chosen)
    names = [s.name for s in loaded]
    from pipeline.redact import safe

    # every printed or written text passes the one mask: a failing probe shows the entries it was checked
    # against, and a probe's terms may be a planted secret
    text = safe(report.markdown(scores, notes, names, model=model))
    click.echo(text, nl=False)
    if report_path is not None:
        _write(report_path, text)
    if json_path is not None:
        _write(json_path, safe(json.dumps(report.as_json(scores, notes, names, model=model), indent=2) + "\n"))
    missed = [line for s in scores if s.engine in bars for line in thresholds.misses(s, bars[s.engine])]
    if missed:
        for line in missed:
            click.echo(f"duck-tape: threshold missed: {line}", err=True)
        raise ThresholdMissed(f"{len(missed)} threshold(s) missed (evals/thresholds.toml)")


def _write(path: Path, text: str) -> None:
    """Write a report; an unusable destination (a folder, a full or read-only disk) is exit 2 naming ``path``."""
    from pipeline.errors import input_error_from_os

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise input_error_from_os(exc, str(path), action="cannot write the report") from None


COMMANDS = [eval_command]
