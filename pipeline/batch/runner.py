"""Run a batch: discover, look up the cache, process the rest in parallel, write state files (issue 6, item 1).

* Sessions whose key (``cache.session_key``) has a record are served from the cache: no work.
* The rest run in a process pool for the rules engine (CPU-bound; ``spawn`` start method, Ctrl-C ignored in
  the workers so the main process decides) and in a bounded thread pool for the llm engine (I/O-bound);
  ``jobs`` = 1 runs them in this process.  Each result is cached as soon as it arrives, so an interrupted
  run resumes where it stopped: on Ctrl-C the sessions already running finish and are kept, the queued ones
  are cancelled, the finished state files are written and the run is returned marked ``interrupted``.
* A failing session is a row of the report; the batch goes on (``BatchPartialFailure``, exit 6, at the end).
* Files with the same bytes are processed once (the others are listed as duplicates); two different files
  of the same session id keep the one with more events.
* Each ``ok`` session is written to ``<out>/<session id>.state.md`` (temporary file + rename, no fsync: the
  cache can recreate it; an identical file is left untouched).  The output folder is not a ``.duck-tape``
  store: no rotation, no marker.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from pipeline.batch.cache import (
    LLM_OUTPUT_KEYS,
    Cache,
    Digests,
    code_fingerprint,
    config_fingerprint,
    replace_quickly,
    session_key,
    text_digest,
)
from pipeline.batch.discover import Discovery, Skipped, discover
from pipeline.batch.worker import Job, empty_record, run_job
from pipeline.errors import BatchInterrupted, BatchPartialFailure, InputError  # noqa: F401 (the first two re-exported)

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from pipeline.config import Config

FAILED = ("failed", "refused")


@dataclass(slots=True)
class BatchOptions:
    """``out``: folder for state files (and, by default, ``.cache`` and the reports); ``config``: the engine
    settings (None = rules engine); ``since``: aware datetime or None; ``max_bytes``: size cap per transcript."""

    out: Path
    jobs: int = 2
    config: Config | None = None
    mask: bool = False
    max_bytes: int = 256 * 1024 * 1024
    since: datetime | None = None
    cache_dir: Path | None = None

    @property
    def engine(self) -> str:
        """The engine that will run: ``rules`` or ``llm`` (``auto`` resolved)."""
        return self.config.effective_engine() if self.config is not None else "rules"


@dataclass(slots=True)
class BatchRun:
    """The outcome: one ``rows`` record per session (``worker.empty_record`` fields plus ``cached``, ``key``,
    ``output``, ``output_path``), the discovery's ``skipped`` files, times (UTC ISO, wall seconds)."""

    rows: list[dict] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    engine: str = "rules"
    jobs: int = 1
    out: str = ""
    started: str = ""
    finished: str = ""
    wall_seconds: float = 0.0
    interrupted: bool = False

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.rows if r["status"] in FAILED]


def output_name(record: dict) -> str:
    """``<session id>.state.md`` with characters outside ``[A-Za-z0-9._-]`` replaced by ``_``; a session without
    an id is named after its file (``<stem>-<8 hex of its key>``)."""
    sid = record.get("session_id")
    base = sid if sid else f"{Path(record['path']).stem}-{(record.get('key') or '')[:8]}"
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")[:150] or "session"
    return f"{safe}.state.md"


def _fingerprint(options: BatchOptions, digests: Digests) -> str:
    settings = {}
    if options.engine == "llm" and options.config is not None:
        settings = {k: getattr(options.config, k) for k in LLM_OUTPUT_KEYS}
    return config_fingerprint(options.engine, settings, mask=options.mask, max_bytes=options.max_bytes,
                              code=code_fingerprint(digests))


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


def _plan(discovery: Discovery, options: BatchOptions, cache: Cache, digests: Digests,
          run: BatchRun) -> list[tuple[Job, dict]]:
    """Key every session, drop same-content duplicates, take cache hits; return the jobs left to run."""
    fingerprint = _fingerprint(options, digests)
    by_digest: dict[str, str] = {}
    todo: list[tuple[Job, dict]] = []
    since = options.since.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if options.since else None
    for candidate in discovery.sessions:
        try:
            digest = digests.digest(candidate.path)
            subs = [digests.digest(p) for p in candidate.subagents]
        except OSError as exc:
            row = empty_record(candidate.path, candidate.subagents)
            row.update(errors=[f"cannot read: {exc.strerror or exc}"], cached=False, key=None, cacheable=False)
            run.rows.append(row)
            continue
        if digest in by_digest:
            run.skipped.append(Skipped(candidate.path, f"same content as {by_digest[digest]} (duplicate)"))
            continue
        by_digest[digest] = candidate.path
        key = session_key(digest, subs, fingerprint)
        hit = cache.get(key)
        if hit is not None and not (candidate.explicit and hit.get("status") == "ignored"):  # named files must read
            hit.update(path=candidate.path, subagent_files=list(candidate.subagents), cached=True, key=key)
            run.rows.append(hit)
            continue
        job = Job(candidate.path, list(candidate.subagents), candidate.explicit, options.config, options.mask,
                  options.max_bytes, since)
        todo.append((job, {"key": key}))
    return todo


def _finish_row(record: dict, extra: dict, cache: Cache) -> dict:
    record.update(extra, cached=False)
    if record.get("cacheable") and record["status"] != "skipped":
        try:
            cache.put(extra["key"], record)
        except OSError as exc:
            record["notes"].append(f"not cached: {exc}")
    return record


def _execute(todo: list[tuple[Job, dict]], options: BatchOptions, cache: Cache, run: BatchRun,
             progress, on_result: Callable[[dict], None] | None) -> None:
    def accept(record: dict, extra: dict) -> None:
        row = _finish_row(record, extra, cache)
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
                record = empty_record(job.path, job.subagents)
                record.update(errors=[f"worker process died: {exc}"], cacheable=False)
            accept(record, extra)
    except KeyboardInterrupt:
        executor.shutdown(wait=True, cancel_futures=True)  # running sessions finish: keep (and cache) them
        for future, (job, extra) in futures.items():
            if future not in taken and future.done() and not future.cancelled() and future.exception() is None:
                run.rows.append(_finish_row(future.result(), extra, cache))
        raise
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _resolve_duplicates(rows: list[dict]) -> None:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if row["status"] == "ok":
            groups.setdefault(output_name(row), []).append(row)
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda r: (-r["events"], r["path"]))
        winner = group[0]
        for row in group[1:]:
            row["status"] = "duplicate"
            row["notes"] = [*row["notes"], f"same session id as {winner['path']}, which has more events (or sorts "
                                           "first); kept that one"]


def write_outputs(rows: list[dict], out: Path, digests: Digests) -> None:
    """Write ``<out>/<name>`` for every ``ok`` row (``output``: written | updated | unchanged | error).

    A file whose digest (``digests``: not even read when its stat is unchanged since it was written) equals
    the text's is left untouched.
    """
    _resolve_duplicates(rows)
    for row in rows:
        if row["status"] != "ok" or row.get("text") is None:
            continue
        target = out / output_name(row)
        row["output_path"] = str(target)
        want = text_digest(row["text"])
        try:
            existed = target.is_file()
            if existed and digests.digest(str(target)) == want:
                row["output"] = "unchanged"
                continue
            out.mkdir(parents=True, exist_ok=True)
            replace_quickly(target, row["text"].encode("utf-8"))
            digests.record(target, want)
            row["output"] = "updated" if existed else "written"
        except OSError as exc:
            row["status"] = "failed"
            row["output"] = "error"
            row["errors"] = [*row["errors"], f"cannot write {target}: {exc.strerror or exc}"]


def run_batch(paths: list[str], options: BatchOptions, *, progress=None,
              on_result: Callable[[dict], None] | None = None) -> BatchRun:
    """Run the batch over ``paths`` (files or folders).  Returns the ``BatchRun`` (the caller writes the report).

    Raises InputError (exit 2) when a path does not exist or nothing to process was found.  A Ctrl-C
    (``KeyboardInterrupt``, also one raised by ``on_result``) stops the run: the finished sessions' state files
    are written and the run comes back with ``interrupted`` set (the caller reports, then exits as interrupted).
    """
    started = time.perf_counter()
    run = BatchRun(engine=options.engine, jobs=max(1, options.jobs), out=str(options.out),
                   started=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    cache_dir = options.cache_dir or options.out / ".cache"
    discovery = discover(paths, exclude=[str(options.out), str(cache_dir)], since=options.since)
    if discovery.missing:
        raise InputError(f"no such file or folder: {', '.join(discovery.missing)}")
    run.skipped = list(discovery.skipped)
    if not discovery.sessions:
        raise InputError(f"no transcripts found under {', '.join(paths)} (looked for *.jsonl and *.json files)")
    cache = Cache(cache_dir)
    digests = Digests(cache_dir)
    todo = _plan(discovery, options, cache, digests, run)
    if progress is not None:
        progress.start(len(todo), sum(1 for r in run.rows if r.get("cached")), run.jobs if len(todo) > 1 else 1)
    try:
        _execute(todo, options, cache, run, progress, on_result)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        if progress is not None:
            progress.finish()
        for row in [r for r in run.rows if r["status"] == "ignored"]:  # not a session: list it with the skipped files
            run.rows.remove(row)
            run.skipped.append(Skipped(row["path"], (row["notes"] or ["not a transcript"])[-1]))
        write_outputs(run.rows, options.out, digests)
        try:
            digests.save()
        except OSError:
            pass  # the memo only saves reading files next time
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
