"""``duck-tape batch``: re-distil an archive of transcripts into one state file per session (issue 6, item 1).

Thin: parse flags, resolve the engine configuration, call ``pipeline.batch.runner.run_batch``, write the
reports, optionally merge into CONTEXT.md (``pipeline.commands.context.run_merge``: diff preview, approval,
changelog), choose the exit code (0 done, or nothing to do because every transcript is older than --since;
2 bad usage (also an --out, --cache-dir or --report that cannot be written, checked before any work) or no
transcripts; 6 some sessions failed; 1 interrupted; 4 merge not approved; 3 merge refused by redaction).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pipeline.engine_options import engine_options


def _since(value: str | None):
    """``--since`` as an aware UTC datetime: ``YYYY-MM-DD`` (midnight UTC) or ISO-8601 (naive = UTC)."""
    if value is None:
        return None
    from datetime import datetime, timezone

    from pipeline.errors import InputError

    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--since {value!r}: expected a date (YYYY-MM-DD) or an ISO-8601 time") from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


@click.command("batch", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the state files (<session id>.state.md), the cache (.cache/) and the report.")
@engine_options
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Sessions processed at once: worker processes (rules) or threads (llm).  Default: the CPUs.")
@click.option("--since", default=None, metavar="DATE", help="Only sessions active on or after DATE (YYYY-MM-DD or ISO-8601, UTC).")
@click.option("--merge", "merge_into", default=None, type=click.Path(dir_okay=False, path_type=Path), metavar="CONTEXT.md",
              help="Merge the state files into CONTEXT.md, oldest session first, with one combined changelog.")
@click.option("--report", default=None, metavar="FILE",
              help="Report path (markdown; the JSON report goes beside it).  Default: OUT/report.md and OUT/report.json.")
@click.option("--mask", is_flag=True, help="Write <REDACTED> in place of detected secrets instead of refusing the session.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Size cap per transcript in bytes (default: DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Cache folder (default: OUT/.cache).")
@click.option("--yes", is_flag=True, help="Approve the --merge write without asking.")
@click.option("--verify", is_flag=True,
              help="Also check each compaction's summary against the entries extracted before it (duck-tape "
                   "verify): kept/lost per session and the totals in the report.")
def batch(paths: tuple[str, ...], out: Path, engine: str | None, model: str | None, api_base: str | None,
          max_tokens: int | None, jobs: int | None, since: str | None, merge_into: Path | None, report: str | None,
          mask: bool, max_bytes: int | None, cache_dir: Path | None, yes: bool, verify: bool) -> None:
    """Re-distil old transcripts: one state file per session into OUT, a report, optionally a CONTEXT.md merge.

    PATHS are transcript files or folders, searched recursively (Claude Code project folders, Copilot CLI's
    ~/.copilot, Gemini CLI's ~/.gemini, opencode exports and databases).  Claude Code sub-agent files are linked to their parent session, not
    run on their own.  Results are cached by transcript content + engine + configuration, so a rerun of an
    unchanged archive does no work and an interrupted run resumes where it stopped.  A failing session is
    reported and the batch goes on; exit code 6 when any session failed.
    """
    from pipeline.batch.progress import make_progress
    from pipeline.batch.report import totals, write_reports
    from pipeline.batch.runner import BatchInterrupted, BatchOptions, BatchPartialFailure, default_jobs, run_batch
    from pipeline.batch.targets import check_targets
    from pipeline.engine_options import config_from_flags
    from pipeline.errors import InputError
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

    if merge_into is not None:
        from pipeline.batch import merge

        if not merge.available():
            raise InputError("--merge is not available yet: the CONTEXT.md merge engine (pipeline.context.api) is "
                             "not part of this build; run without --merge")
    check_targets(out, cache_dir, report)
    config = config_from_flags(engine, model, api_base, max_tokens)
    from pipeline.llm.agents import is_agent

    if config.effective_engine() == "llm" and config.model and not is_agent(config.model):  # once, not per session
        from pipeline.extras import require_llm

        require_llm(f"batch with the llm engine (model {config.model})")
    options = BatchOptions(out=out, jobs=jobs or default_jobs(), config=config, mask=mask,
                           max_bytes=max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES), since=_since(since),
                           cache_dir=cache_dir, texts=merge_into is not None, verify=verify)
    run = run_batch(list(paths), options, progress=make_progress(sys.stderr))
    t = totals(run)
    md_path, json_path = write_reports(run, report, out, t)
    if run.idle:  # DESIGN.md "Exit codes": 0 done (or nothing to do); the user's --since left nothing
        click.echo(f"Nothing to do: {run.idle}.")
        click.echo(f"Report: {md_path} and {json_path}")
        if merge_into is not None:
            click.echo(f"Nothing to merge into {merge_into}.")
        return
    written = sum(1 for r in run.rows if r.get("output") in ("written", "updated"))
    unchanged = sum(1 for r in run.rows if r.get("output") == "unchanged")
    states = ", ".join(f"{n} {status}" for status, n in t["status"].items())
    click.echo(f"{t['sessions']} session(s), {t['cached']} from cache: {states}; {t['decisions']} decisions, "
               f"{t['facts']} facts; {written} state file(s) written, {unchanged} unchanged in {out}; "
               f"{run.wall_seconds:.2f} s"
               + (f"; {t['skipped_files']} other file(s) skipped (listed in the report)" if t["skipped_files"] else ""))
    if t.get("compactions"):
        from pipeline.batch.compactions import sentence

        click.echo(sentence(t["compactions"]))
    click.echo(f"Report: {md_path} and {json_path}")
    if run.interrupted:
        raise BatchInterrupted(f"interrupted after {len(run.rows)} session(s); they are written and cached: "
                               "run the same command again to resume")
    if merge_into is not None:
        from pipeline.commands.context import run_merge

        ordered, files = merge.states_and_names(run.rows)
        click.echo(f"Merging {len(ordered)} state file(s) into {merge_into}, oldest session first")
        run_merge(merge_into, ordered, yes=yes, dry_run=False, mask=mask, names=files)
    if run.failures:
        from pipeline.batch.report import problems

        names: dict[str, list[str]] = {}
        for r in run.failures:
            names.setdefault(r["status"], []).append(r.get("session_id") or Path(r["path"]).name)
        hint = "; pass --mask to write the refused ones with <REDACTED>" if t["refused"] and not mask else ""
        raise BatchPartialFailure(f"{len(run.failures)} of {t['sessions']} session(s) not written: "
                                  f"{problems(t, names)}{hint}; see {md_path}")


COMMANDS = [batch]
