"""Run a batch: discover, look up the cache, process the rest in parallel, write state files (issue 6, item 1).

* Sessions whose key (``cache.session_key``) has a record are served from the cache: no work.  The records of
  the last run come from the cache index (``cache.Index``: one read), the others from their record files.
* The rest run in a process pool for the rules engine (CPU-bound; ``spawn`` start method, Ctrl-C ignored in
  the workers so the main process decides) and in a bounded thread pool for the llm engine (I/O-bound);
  ``jobs`` = 1 runs them in this process.  Each result is cached as soon as it arrives, so an interrupted
  run resumes where it stopped: on Ctrl-C the sessions already running finish and are kept, the queued ones
  are cancelled, the finished state files are written and the run is returned marked ``interrupted``.
* A failing session is a row of the report; the batch goes on (``BatchPartialFailure``, exit 6, at the end).
* Files with the same bytes are processed once (the others are listed as duplicates); two different files
  of the same session id keep the one with more events.
* Each ``ok`` session is written to ``<out>/<session id>.state.md`` (``outputs.write_outputs``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from pipeline.batch.cache import (
    LLM_OUTPUT_KEYS,
    Cache,
    Index,
    code_fingerprint,
    config_fingerprint,
    session_key,
    text_digest,
)
from pipeline.batch.discover import Discovery, Skipped, discover, since_text
from pipeline.batch.outputs import fill_texts, output_name, write_outputs  # noqa: F401 (output_name re-exported)
from pipeline.errors import BatchInterrupted, BatchPartialFailure, InputError  # noqa: F401 (the first two re-exported)
from pipeline.transcripts.safety import RECOVER_MAX_BYTES

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from pipeline.batch.worker import Job
    from pipeline.config import Config

FAILED = ("failed", "refused")


@dataclass(slots=True)
class BatchOptions:
    """``out``: folder for state files (and, by default, ``.cache`` and the reports); ``config``: the engine
    settings (None = rules engine); ``since``: aware datetime or None; ``max_bytes``: size cap per transcript;
    ``texts``: every ``ok`` row of the run carries its state ``text`` (for ``--merge``; rows served from the
    cache index otherwise carry only ``text_digest``); ``verify``: every ``ok`` row also carries ``verify``, its
    compactions' kept/lost counts (``pipeline.verify.compare.counts_record``)."""

    out: Path
    jobs: int = 2
    config: Config | None = None
    mask: bool = False
    max_bytes: int = RECOVER_MAX_BYTES  # the CLI passes DUCK_TAPE_MAX_TRANSCRIPT_BYTES or --max-bytes
    since: datetime | None = None
    cache_dir: Path | None = None
    texts: bool = False
    verify: bool = False

    @property
    def engine(self) -> str:
        """The engine that will run: ``rules`` or ``llm`` (``auto`` resolved)."""
        return self.config.effective_engine() if self.config is not None else "rules"


@dataclass(slots=True)
class BatchRun:
    """The outcome: one ``rows`` record per session (``worker.empty_record`` fields plus ``cached``, ``key``,
    ``output``, ``output_path``), the discovery's ``skipped`` files, times (UTC ISO, wall seconds).  ``idle``
    (added, default ""): why a run found nothing to process although transcripts were there (every one last
    modified before ``--since``): a run with nothing to do, not an error (DESIGN.md "Exit codes": 0)."""

    rows: list[dict] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    engine: str = "rules"
    jobs: int = 1
    out: str = ""
    started: str = ""
    finished: str = ""
    wall_seconds: float = 0.0
    interrupted: bool = False
    idle: str = ""

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.rows if r["status"] in FAILED]


def _fingerprint(options: BatchOptions, digests: Index) -> str:
    settings = {}
    if options.engine == "llm" and options.config is not None:
        settings = {k: getattr(options.config, k) for k in LLM_OUTPUT_KEYS}
    if options.verify:  # a record made without the compaction check must not serve a --verify run
        settings = {**settings, "verify": True}
    return config_fingerprint(options.engine, settings, mask=options.mask, max_bytes=options.max_bytes,
                              code=code_fingerprint(digests))


def run_job(job: Job) -> dict:
    """``worker.run_job``, imported on first use: a rerun served from the cache never loads the worker (nor, through
    it, the engines).  The process pool runs this function, so a worker process imports it the same way."""
    from pipeline.batch.worker import run_job as run

    return run(job)


def _empty_record(path: str, subagents: list[str]) -> dict:
    from pipeline.batch.worker import empty_record

    return empty_record(path, subagents)


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _executor(options: BatchOptions) -> Executor:
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    if options.engine == "llm":
        return ThreadPoolExecutor(max_workers=options.jobs, thread_name_prefix="duck-tape-batch")
    import multiprocessing

    return ProcessPoolExecutor(max_workers=options.jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_sigint)


def renames(stored: dict, path: str, subagents: list[str]) -> dict[str, str]:
    """{path as the ``stored`` record spells it: path as this run spells it} for the transcript and its sub-agent
    files (a sub-agent file is matched by its file name), leaving out the ones spelled the same.  Records store
    paths as the run that made them was given them (``fixtures/archive/…`` from one folder, ``/work/…`` from
    another); so do their errors and notes."""
    found: dict[str, str] = {}
    old = stored.get("path")
    if type(old) is str and old and old != path:
        found[old] = path
    olds = stored.get("subagent_files")
    if subagents and type(olds) is list:
        by_name = {os.path.basename(p): p for p in subagents}
        for sub in olds:
            new = by_name.get(os.path.basename(sub)) if type(sub) is str and sub else None
            if new is not None and new != sub:
                found[sub] = new
    return found


def respell(texts: list, names: dict[str, str]) -> list:
    """``texts`` with every path of ``names`` (``renames``) replaced by its new spelling, where it stands as a
    whole path: not inside a longer path (``dir/a.jsonl`` in ``/x/dir/a.jsonl``, ``a.json`` in ``a.jsonl`` or
    ``a.json.bak``).  Items that are not strings are kept as they are."""
    if not names or not texts:
        return list(texts)
    import re

    pattern = re.compile("|".join(rf"(?<![\w./\\-]){re.escape(old)}(?![\w/\\-]|\.\w)"
                                  for old in sorted(names, key=len, reverse=True)))
    return [pattern.sub(lambda m: names[m.group(0)], t) if type(t) is str else t for t in texts]


def _served(stored: dict, candidate, key: str) -> dict:
    """The row of a cache hit: a copy of the ``stored`` record (its lists too: rows are changed later, the record
    stays as stored) with this run's path and sub-agent files; its errors and notes name the files as this run
    found them (``respell``: the record keeps the spelling of the run that made it, also in records of earlier
    versions).  A record from the index has no ``text``: ``write_outputs`` reads it from the record file if the
    state file must be written."""
    names = renames(stored, candidate.path, candidate.subagents)
    return {**stored, "path": candidate.path, "subagent_files": list(candidate.subagents), "cached": True,
            "key": key, "notes": respell(stored.get("notes") or (), names),
            "errors": respell(stored.get("errors") or (), names)}


def _plan(discovery: Discovery, options: BatchOptions, cache: Cache, digests: Index,
          run: BatchRun) -> list[tuple[Job, dict]]:
    """Key every session, drop same-content duplicates, take cache hits (from the index, else from the record
    files); return the jobs left to run."""
    fingerprint = _fingerprint(options, digests)
    by_digest: dict[str, str] = {}
    todo: list[tuple[Job, dict]] = []
    since = options.since.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if options.since else None
    for candidate in discovery.sessions:
        try:
            digest = digests.digest(candidate.path, candidate.absolute)
            subs = [digests.digest(p) for p in candidate.subagents]
        except OSError as exc:
            row = _empty_record(candidate.path, candidate.subagents)
            row.update(errors=[f"cannot read: {exc.strerror or exc}"], cached=False, key=None, cacheable=False)
            run.rows.append(row)
            continue
        if digest in by_digest:
            run.skipped.append(Skipped(candidate.path, f"same content as {by_digest[digest]} (duplicate)"))
            continue
        by_digest[digest] = candidate.path
        key = session_key(digest, subs, fingerprint)
        hit = digests.row(key)
        if hit is None:
            hit = cache.get(key)
        if hit is not None and not (candidate.explicit and hit.get("status") == "ignored"):  # named files must read
            digests.keep(key, hit)
            row = _served(hit, candidate, key)
            if since and row["status"] == "ok":  # the key does not hold --since: apply it to the cached session
                from pipeline.batch.worker import ended_before

                last = row.get("end") or row.get("start")
                if ended_before(last, since, candidate.path):
                    row["status"] = "skipped"
                    row["notes"].append(f"session ended {last}, before --since {since}")
            run.rows.append(row)
            continue
        from pipeline.batch.worker import Job

        job = Job(candidate.path, list(candidate.subagents), candidate.explicit, options.config, options.mask,
                  options.max_bytes, since, verify=options.verify)
        todo.append((job, {"key": key}))
    return todo


def _finish_row(record: dict, extra: dict, cache: Cache, index: Index) -> dict:
    record.update(extra, cached=False)
    if record.get("text") is not None:
        record["text_digest"] = text_digest(record["text"])  # a rerun compares it with the state file's memo
    if record.get("cacheable") and record["status"] != "skipped":
        try:
            cache.put(extra["key"], record)
            index.keep(extra["key"], record)
        except OSError as exc:
            record["notes"].append(f"not cached: {exc}")
    return record


def _execute(todo: list[tuple[Job, dict]], options: BatchOptions, cache: Cache, index: Index, run: BatchRun,
             progress, on_result: Callable[[dict], None] | None) -> None:
    def accept(record: dict, extra: dict) -> None:
        row = _finish_row(record, extra, cache, index)
        run.rows.append(row)
        if progress is not None:
            progress.done(row)
        if on_result is not None:
            on_result(row)

    if options.jobs <= 1 or len(todo) <= 1:
        for job, extra in todo:
            accept(run_job(job), extra)
        return
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    executor = _executor(options)
    futures = {executor.submit(run_job, job): (job, extra) for job, extra in todo}
    taken: set = set()
    try:
        for future in as_completed(futures):
            taken.add(future)
            job, extra = futures[future]
            try:
                record = future.result()
            except BrokenProcessPool as exc:
                record = _empty_record(job.path, job.subagents)
                record.update(errors=[f"worker process died: {exc}"], cacheable=False)
            accept(record, extra)
    except KeyboardInterrupt:
        executor.shutdown(wait=True, cancel_futures=True)  # running sessions finish: keep (and cache) them
        for future, (job, extra) in futures.items():
            if future not in taken and future.done() and not future.cancelled() and future.exception() is None:
                run.rows.append(_finish_row(future.result(), extra, cache, index))
        raise
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def run_batch(paths: list[str], options: BatchOptions, *, progress=None,
              on_result: Callable[[dict], None] | None = None) -> BatchRun:
    """Run the batch over ``paths`` (files or folders).  Returns the ``BatchRun`` (the caller writes the report).

    Raises InputError (exit 2) when a path does not exist or no transcript was found.  When transcripts were
    found but every one was last modified before ``--since``, the run comes back empty with ``idle`` saying so
    (nothing to do is not an error; the index is left as it was).  A Ctrl-C
    (``KeyboardInterrupt``, also one raised by ``on_result``) stops the run: the finished sessions' state files
    are written and the run comes back with ``interrupted`` set (the caller reports, then exits as interrupted).
    """
    started = time.perf_counter()
    run = BatchRun(engine=options.engine, jobs=max(1, options.jobs), out=str(options.out),
                   started=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    cache_dir = options.cache_dir or options.out / ".cache"
    index = Index(cache_dir)
    discovery = discover(paths, exclude=[str(options.out), str(cache_dir)], since=options.since, describe=index.agent)
    if discovery.missing:
        raise InputError(f"no such file or folder: {', '.join(discovery.missing)}")
    if discovery.not_regular:
        raise InputError(f"not a regular file (a FIFO, socket or device): {', '.join(discovery.not_regular)}")
    from pipeline.batch.opencode_db import expand

    expand(discovery, str(cache_dir))
    run.skipped = list(discovery.skipped)
    if not discovery.sessions and discovery.before_since:
        run.idle = (f"{discovery.before_since} transcript file(s) found under {', '.join(paths)}, all last modified "
                    f"before --since {since_text(options.since)}")
        run.finished = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        run.wall_seconds = round(time.perf_counter() - started, 3)
        return run
    if not discovery.sessions:
        # issue 22 item 6: a corrupt opencode.db said "no transcripts found"; name what was found and why it was not read
        databases = [s for s in discovery.skipped if s.path.endswith(".db")]
        if databases:
            raise InputError("no session could be read: " + "; ".join(
                s.reason if s.reason.startswith(s.path) else f"{s.path}: {s.reason}" for s in databases[:5]))
        raise InputError(f"no transcripts found under {', '.join(paths)} (looked for *.jsonl, *.json and *.db files)")
    cache = Cache(cache_dir)
    todo = _plan(discovery, options, cache, index, run)
    if progress is not None:
        progress.start(len(todo), sum(1 for r in run.rows if r.get("cached")), run.jobs if len(todo) > 1 else 1)
    try:
        _execute(todo, options, cache, index, run, progress, on_result)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        if progress is not None:
            progress.finish()
        for row in [r for r in run.rows if r["status"] == "ignored"]:  # not a session: list it with the skipped files
            run.rows.remove(row)
            run.skipped.append(Skipped(row["path"], (row["notes"] or ["not a transcript"])[-1]))
        write_outputs(run.rows, options.out, index, cache)
        if options.texts:
            fill_texts(run.rows, cache)
        try:
            index.save()
        except OSError:
            pass  # the index only saves reading files next time
        run.rows.sort(key=lambda r: r["path"])
        run.finished = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        run.wall_seconds = round(time.perf_counter() - started, 3)
    return run


def default_jobs() -> int:
    """Worker count when ``--jobs`` is not given: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
