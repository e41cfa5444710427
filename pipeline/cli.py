"""The ``duck-tape`` command line: parse flags, call the stages, print, choose the exit code.

Thin by design (STYLE.md): each command imports what it needs inside its body so that the hook paths
(``extract-raw``) start fast.  Exit codes: DESIGN.md "Exit codes".
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from pipeline import __version__
from pipeline.engine_options import config_from_flags, engine_options

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_DIR = ".duck-tape"


def _err(line: str) -> None:
    """One line on stderr, masked like every text a command prints (issue 11)."""
    from pipeline.redact import safe

    click.echo(safe(line), err=True)


def _out(text: str, *, nl: bool = True) -> None:
    """``text`` on stdout, masked like every text a command prints (issue 11: resume's report goes into the
    agent's context, i.e. to the model).  A state text that passed the redaction gate comes out unchanged."""
    from pipeline.redact import safe

    click.echo(safe(text), nl=nl)


def _confirm_write(target: str, *, yes: bool) -> None:
    """Ask for approval of a previewed write (DESIGN.md "Approval"); raise ApprovalDeclined otherwise.

    Kept as the name this module uses; the shared implementation is ``pipeline.approval.confirm_write``.
    """
    from pipeline.approval import confirm_write

    confirm_write(target, yes=yes)


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="duck-tape")
def cli() -> None:
    """Recover what an AI coding agent lost at context compaction.

    Reads a session transcript (Claude Code, Copilot CLI, opencode, Codex, Gemini CLI, {role, content}
    JSONL) and writes a recovered Agent State file into .duck-tape/.  No model or API key is needed: the
    deterministic rules engine is the default.  Start with `duck-tape init` in your project, then
    `duck-tape status` after the next compaction.

    Exit codes: 0 done, 1 unexpected error, 2 bad usage or input, 3 refused by redaction,
    4 approval declined, 5 validation failed, 6 batch finished with failed sessions.
    """


@cli.command("extract-raw")
@click.argument("transcript", type=click.Path(dir_okay=True, path_type=str))
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Size cap in bytes (default: DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB).")
def extract_raw(transcript: str, max_bytes: int | None) -> None:
    """Print the raw material of TRANSCRIPT as markdown: what an agent reads to write its own summary.

    Sections: User Prompts, Tool Calls, Assistant Messages (last 10), Potential Decisions, Failed Tool
    Results, Session Metadata; secrets are masked as [REDACTED].  Never fails (hooks call it): an
    unreadable, unknown-format or oversized input prints the header and a one-line reason, exit 0.
    """
    from pipeline.stages.extract import write_raw

    write_raw(transcript, sys.stdout, max_bytes=max_bytes)


@cli.command()
@click.argument("transcript", type=click.Path(dir_okay=False, path_type=str))
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="State store to write into.")
@click.option("--yes", is_flag=True, help="Approve the write without asking (needed when not on a terminal).")
@click.option("--dry-run", is_flag=True, help="Print the state file and write nothing.")
@click.option("--mask", is_flag=True, help="Write <REDACTED> in place of detected secrets instead of refusing.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Size cap in bytes (default: DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB).")
@click.option("--merge", "merge_context", is_flag=True, help="Then merge the recovered state into CONTEXT.md (diff, approval, changelog).")
@click.option("--context", "context_path", type=click.Path(dir_okay=False, path_type=Path), default="CONTEXT.md",
              show_default=True, help="CONTEXT.md for --merge.")
@click.option("--session", "session", default=None, metavar="ID",
              help="opencode database (opencode.db): the session to recover (default: its only top-level session, "
                   "with its sub-agents' sessions folded in).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (path written, sections and their engines, notes; with --merge the "
                   "merge's changelog) instead of the file; never asks: pass --yes to write or --dry-run.")
@engine_options
def recover(transcript: str, directory: Path, yes: bool, dry_run: bool, mask: bool, max_bytes: int | None,
            merge_context: bool, context_path: Path, session: str | None, as_json: bool,
            engine: str | None, model: str | None, api_base: str | None, max_tokens: int | None) -> None:
    """Recover an Agent State file from TRANSCRIPT (rules engine, or llm with --engine/--model).

    Previews the file, asks for approval (or takes --yes), then writes DIR/<stamp>-recovered.state.md
    atomically (never over an existing file), rotates the store to at most 10 state files, and prints
    the written path as the last line of stdout.  Secrets refuse the write (exit 3) unless --mask.
    The header's Trigger says which engine made each section; llm fallbacks and usage go to stderr.
    --merge then merges the state into CONTEXT.md as `duck-tape merge` does (after the path is printed).
    """
    from pipeline.recovery import recover as run_recovery
    from pipeline.state.store import state_filename, write_state
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

    if as_json:
        from pipeline.commands.json_out import begin

        begin("recover")
    limit = max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES)
    config = config_from_flags(engine, model, api_base, max_tokens)
    result = run_recovery(transcript, max_bytes=limit, mask=mask or dry_run, config=config, session=session)
    if as_json:
        from pipeline.commands.json_out import emit, recover_report

        report = recover_report(result, directory, yes=yes, dry_run=dry_run)
        if merge_context:
            from pipeline.commands.context import merge_report
            from pipeline.state.parse import parse

            merged = merge_report(context_path, [parse(result.text)], yes=yes, dry_run=dry_run, mask=mask,
                                  sources=[report["written"]] if report["written"] else [])
            report["merge"] = {k: v for k, v in merged.items() if k != "command"}
        emit(report)
        return
    for line in result.notes:
        _err(line)
    for line in result.dropped:
        _err(f"duck-tape: validate: {line}")
    if result.redaction:
        for line in result.redaction:
            _err(line)
        _err("duck-tape: secrets masked with <REDACTED>" if mask else "duck-tape: preview masks secrets; writing needs --mask")
    _out(result.text, nl=False)
    if not dry_run:
        target = directory / state_filename(result.state.stamp, "recovered")
        _confirm_write(str(target), yes=yes)
        written = write_state(directory, result.text, stamp=result.state.stamp, kind="recovered")
        from pipeline.llm import ledger

        ledger.record_run(directory, "recover", result.run, written)  # the tokens a model spent, for `status`
        workspace = directory.absolute().parent
        ran_in = result.state.cwd
        if ran_in in ("", "unknown") or Path(ran_in) == workspace:
            resume = "duck-tape resume" + ("" if str(directory) == DEFAULT_DIR else f" --dir {shlex.quote(str(directory))}")
            _err(f"duck-tape: to continue from it, run: {resume}")  # issue 14: recover -> resume
        else:  # resume uses only this folder's sessions: it would not pick this file up here
            _err(f"duck-tape: the session ran in {ran_in}, not here: `duck-tape resume` there picks up its state; "
                 "here, read the file itself")
        _out(str(written))
    elif not merge_context:
        _err("duck-tape: dry run: nothing was written")
    if merge_context:
        from pipeline.commands.context import run_merge
        from pipeline.state.parse import parse

        run_merge(context_path, [parse(result.text)], yes=yes, dry_run=dry_run, mask=mask)


@cli.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_DIR,
              show_default=True, help="State store holding .last-compact and the state files.")
@click.option("--context", "context_path", type=click.Path(dir_okay=False, path_type=Path), default="CONTEXT.md",
              show_default=True, help="CONTEXT.md to read decisions from (read only).")
@click.option("--yes", is_flag=True, help="Approve writing a recovered state file without asking.")
@click.option("--dry-run", is_flag=True, help="Show what would be recovered and write nothing.")
@click.option("--mask", is_flag=True, help="Write <REDACTED> in place of detected secrets instead of refusing.")
@click.option("--session-start", default=None, metavar="ISO-8601",
              help="This session's start time; a marker older than it is reported (and resume continues).")
@click.option("--session", "session", default=None, metavar="ID", envvar="DUCK_TAPE_SESSION",
              help="Resume this session's compaction (its id as the harness names it).  Default: the newest "
                   "compaction in DIR.  [env: DUCK_TAPE_SESSION]")
@click.option("--reconcile", is_flag=True,
              help="Then compare the state with the workspace, read-only: commits since it was written, Remaining "
                   "items that look done, files that no longer exist.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Size cap in bytes for the marker's transcript when a recovery is needed (default: "
                   "DUCK_TAPE_MAX_TRANSCRIPT_BYTES, else 1 GiB).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (the state file used or recovered, Current/Done/Remaining, the relevant "
                   "decisions) instead of the report; never asks: a recovery needs --yes or --dry-run.")
@engine_options
def resume(directory: Path, context_path: Path, yes: bool, dry_run: bool, mask: bool, session_start: str | None,
           session: str | None, reconcile: bool, max_bytes: int | None, as_json: bool,
           engine: str | None, model: str | None, api_base: str | None, max_tokens: int | None) -> None:
    """Report where the work stands after a compaction (recovering a state file if needed).

    Reads the marker DIR/.last-compact, picks a state file (manual > recovered > auto; a manual or
    recovered file newer than the newest auto is used as is), otherwise recovers one from the marker's
    transcript: on a terminal previewed and written only after approval (--yes: without asking).  Off a
    terminal, as when an agent runs it, the recovery is made once per compaction, masked, and kept in
    DIR/.resume/ for the next runs; no state file is written unless --yes.  Then one short report (at most
    3 KB): the compaction time, the full state file's path, Current, Remaining, the last steps done, the newest
    decisions and facts, and the CONTEXT.md decisions relevant to the work.  Only state files duck-tape wrote
    in this folder are used (a planted, copied or another folder's file is named and left out), and no line
    that gives an AI agent orders is shown.
    --reconcile then checks the state against the workspace (the folder holding DIR), read-only: commits since
    its Created time, Remaining items that look done, files it names that no longer exist.
    """
    from pipeline import resume as resume_mod

    if as_json:
        from pipeline.commands.json_out import begin

        begin("resume")
    found = resume_mod.plan(directory, session_start=session_start, session=session)
    if as_json:
        _resume_json(found, directory, context_path, yes=yes, dry_run=dry_run, mask=mask, reconcile=reconcile,
                     max_bytes=max_bytes, config=config_from_flags(engine, model, api_base, max_tokens))
        return
    # plan() ends its messages with "Found …; recovering from the transcript …" when it needs a recovery: an agent's
    # run (no terminal, no --yes) says instead whether it made the recovery or reused this compaction's
    agent = bool(found.recover_from) and not (yes or dry_run or sys.stdin.isatty())
    for line in found.messages[:-1] if agent else found.messages:
        _out(line)
    if found.stop:
        return
    state = found.state
    state_path = str(found.state_path) if found.state_path is not None else None
    if agent:
        state, state_path = _resume_recovery_once(found, directory, max_bytes=max_bytes,
                                                  config=config_from_flags(engine, model, api_base, max_tokens))
    elif found.recover_from:
        from pipeline.recovery import recover as run_recovery
        from pipeline.state.naming import write_session_state
        from pipeline.state.store import state_filename
        from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

        config = config_from_flags(engine, model, api_base, max_tokens)
        result = run_recovery(found.recover_from, max_bytes=max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES),
                              mask=mask or dry_run, config=config, session_id=found.session_id)
        for line in [*result.notes, *(f"duck-tape: validate: {d}" for d in result.dropped), *result.redaction]:
            _err(line)
        state = result.state
        from pipeline.restore.guard import dropped_note, guard_text

        shown, dropped = guard_text(result.text)  # issue 22: no orders to an AI agent in what an agent reads
        note = dropped_note("duck-tape: resume:", dropped)
        if note:
            _err(note)
        if dry_run:
            _out(shown, nl=False)
            state_path = None
        else:
            if not yes:  # a terminal: the preview the approval is about
                _out(shown, nl=False)
            target = directory / state_filename(result.state.stamp, "recovered")
            _confirm_write(str(target), yes=yes)
            written, _ = write_session_state(directory, result.text, stamp=result.state.stamp, kind="recovered",
                                             session_id=result.state.session_id)
            from pipeline.llm import ledger

            ledger.record_run(directory, "resume", result.run, written)
            state_path = str(written)
            _out(f"Wrote {written}")
    context_lines = None
    if context_path.is_file():
        context_lines = resume_mod.context_decisions(context_path.read_text(encoding="utf-8", errors="replace"),
                                                     path=str(context_path))
    assert state is not None
    _out(resume_mod.report(state, found.marker, context_lines, str(context_path), state_path=state_path))
    if reconcile:  # issue 7: read-only; the workspace is the store's parent folder
        from pipeline.restore.reconcile import reconcile as run_reconcile

        workspace = directory.resolve().parent
        _out(f"Reconciliation with {workspace} (read-only):")
        # a state recovered now: commits since compaction
        since = found.marker.time if found.recover_from and found.marker is not None else None
        _out("\n".join(f"  {line}" for line in run_reconcile(state, str(workspace), since=since)))


def _resume_recovery_once(found, directory: Path, *, max_bytes: int | None, config):
    """``resume`` run by an agent (no terminal, no --yes) when only an auto checkpoint is there: the recovery from
    the marker's transcript, made once per compaction and kept masked in the store (``pipeline.resume_cache``);
    later runs read it instead of distilling again.  Prints one line saying which; returns ``(state, path)``
    (path None when the store could not keep it).  Only a failed validation goes to stderr."""
    from pipeline import resume_cache
    from pipeline.errors import DuckTapeError
    from pipeline.state.parse import parse

    engine = config.effective_engine() if config is not None else "rules"
    cache_key = resume_cache.key(found.marker, engine, getattr(config, "model", None) if engine == "llm" else None)
    kept = resume_cache.load(directory, cache_key)
    if kept is not None:
        try:
            state = parse(kept[1], path=str(kept[0]))
        except DuckTapeError:  # damaged or from another version: made again
            state = None
        if state is not None:
            _out(f"Using the recovery already made for this compaction from {found.recover_from}.")
            return state, str(kept[0])
    from pipeline.recovery import recover as run_recovery
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

    result = run_recovery(found.recover_from, max_bytes=max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES),
                          mask=True, config=config, session_id=found.session_id)
    for line in [*result.notes, *(f"duck-tape: validate: {d}" for d in result.dropped)]:
        _err(line)
    kept_at = resume_cache.save(directory, cache_key, result.text)
    from pipeline.llm import ledger

    ledger.record_run(directory, "resume", result.run, kept_at)  # a model's tokens, for `status`
    _out(f"Recovered this compaction's state from {found.recover_from} (secrets masked; `duck-tape resume --yes` "
         "writes it as a state file).")
    # the report is made from the masked text, as the next runs make it from the kept file
    return parse(result.text), str(kept_at) if kept_at is not None else None


def _resume_json(found, directory: Path, context_path: Path, *, yes: bool, dry_run: bool, mask: bool,
                 reconcile: bool, max_bytes: int | None, config) -> None:
    """``resume --json``: the steps of ``resume`` (recovery, CONTEXT.md decisions, reconciliation), one object."""
    from pipeline import resume as resume_mod
    from pipeline.commands.json_out import emit, resume_report

    recovery = None
    if found.recover_from and not found.stop:
        from pipeline.recovery import recover as run_recovery
        from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

        recovery = run_recovery(found.recover_from, max_bytes=max_bytes or max_bytes_from_env(RECOVER_MAX_BYTES),
                                mask=mask or dry_run, config=config, session_id=found.session_id)
    context_lines = None
    if context_path.is_file():
        context_lines = resume_mod.context_decisions(context_path.read_text(encoding="utf-8", errors="replace"),
                                                     path=str(context_path))
    lines = None
    state = recovery.state if recovery is not None else found.state
    if reconcile and state is not None:
        from pipeline.restore.reconcile import reconcile as run_reconcile

        since = found.marker.time if recovery is not None and found.marker is not None else None
        lines = run_reconcile(state, str(directory.resolve().parent), since=since)
    emit(resume_report(found, directory, recovery=recovery, yes=yes, dry_run=dry_run, context_path=context_path,
                       context_lines=context_lines, reconciliation=lines))


#: Modules under ``pipeline/commands/`` whose ``COMMANDS`` (a list of click commands) join the CLI.
#: Each keeps its imports inside the command bodies so that ``duck-tape --help`` stays fast.
COMMAND_MODULES: tuple[str, ...] = ("eval", "hooks", "batch", "context", "restore", "adopt", "verify", "nudge",
                                    "status", "mcp", "refine")


def _register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        for command in importlib.import_module(f"pipeline.commands.{name}").COMMANDS:
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: run the CLI and map exceptions to DESIGN.md exit codes (a command in ``--json`` mode
    also gets the error object on stdout, ``pipeline.commands.json_out``)."""
    from pipeline.commands.json_out import reset

    reset()
    try:
        return _run(argv)
    finally:
        reset()


def _fail(message: str, code: int, *, redaction: list[str] | None = None, line: str | None = None) -> int:
    """Report a failure: the stderr line (``line``, default ``duck-tape: error: <message>``) and, for a command in
    ``--json`` mode, the error object on stdout (``pipeline.commands.json_out.emit_error``); return ``code``."""
    from pipeline.commands.json_out import emit_error

    _err(line or f"duck-tape: error: {message}")
    emit_error(message, code, redaction=redaction)
    return code


def _run(argv: list[str] | None) -> int:
    from pipeline.errors import DuckTapeError, RedactionRefused

    try:
        cli.main(args=argv, prog_name="duck-tape", standalone_mode=False)
    except click.exceptions.Abort:
        return _fail("aborted", 4, line="duck-tape: aborted")
    except click.ClickException as exc:
        exc.show()
        from pipeline.commands.json_out import begin_from_args, emit_error

        begin_from_args(list(sys.argv[1:] if argv is None else argv))
        emit_error(exc.format_message(), 2)
        return 2
    except RedactionRefused as exc:
        for line in exc.report:
            _err(line)
        return _fail(str(exc), exc.exit_code, redaction=exc.report)
    except DuckTapeError as exc:  # status's Unhealthy: its object is printed already, so no error object
        return _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 1, line="duck-tape: interrupted")
    except OSError as exc:  # a bad path or an unusable destination (full disk, read-only...) is exit 2, named
        from pipeline.errors import is_path_error, path_error_message

        if not is_path_error(exc):
            return _fail(f"unexpected error: {type(exc).__name__}: {exc}", 1,
                         line=f"duck-tape: unexpected error: {type(exc).__name__}: {exc}")
        return _fail(path_error_message(exc), 2)
    except Exception as exc:  # unexpected: say what, exit 1
        return _fail(f"unexpected error: {type(exc).__name__}: {exc}", 1,
                     line=f"duck-tape: unexpected error: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
