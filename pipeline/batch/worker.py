"""One batch session: transcript file -> result record (state file text + figures), never raising.

Runs in a worker process (rules engine) or thread (llm engine); it writes nothing — the runner writes the
state files, the cache and the report.  Steps: read (``pipeline.transcripts``), skip it when it ended before
``--since``, add the final answers of linked sub-agent files that the parent lacks (``subagents.link``),
build the state with the chosen engine (``pipeline.engines.build_state``: distil, screen, weave, validate;
``kind`` recovered, ``Trigger: batch, engine: …``), then the redaction gate of every state-file write
(``pipeline.recovery.redaction_gate``: refused unless ``mask``).

The state's stamp and ``Created:`` are the session's last event time (else its first, else the file's
modification time), so a rerun writes byte-identical files and ``--merge`` can order sessions by time.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from pipeline.transcripts.safety import RECOVER_MAX_BYTES

if TYPE_CHECKING:
    from pipeline.config import Config

STATUSES = ("ok", "failed", "refused", "ignored", "skipped")
"""``ok`` state built; ``failed`` unreadable/invalid; ``refused`` by redaction (``--mask`` not given);
``ignored`` a ``.json`` file found in a folder that is not a session transcript (a config file, a Gemini CLI
``logs.json`` prompt log); ``skipped`` ended before ``--since``."""


@dataclass(slots=True)
class Job:
    """One session to process.  ``config`` None = the rules engine; ``since``: ISO-8601 UTC or None."""

    path: str
    subagents: list[str] = field(default_factory=list)
    explicit: bool = False
    config: Config | None = None
    mask: bool = False
    max_bytes: int = RECOVER_MAX_BYTES  # the CLI passes DUCK_TAPE_MAX_TRANSCRIPT_BYTES or --max-bytes
    since: str | None = None
    verify: bool = False  # also check each compaction's summary (``pipeline.verify``): record["verify"]


def _moment(iso: str | None, path: str) -> datetime:
    if iso:
        try:
            return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(timezone.utc)
        except ValueError:
            pass
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)


def ended_before(last: str | None, since: str | None, path: str) -> bool:
    """True when a session whose last event is at ``last`` (ISO-8601) ended before ``since`` (ISO-8601 UTC, the
    ``--since`` option); False when either is None.  An unparsable ``last`` counts as the file's mtime."""
    return bool(since and last and _moment(last, path) < _moment(since, path))


def _line(exc: BaseException) -> str:
    from pipeline.stages.rules.text import one_line

    return one_line(str(exc)) or type(exc).__name__


def empty_record(path: str, subagents: list[str]) -> dict:
    """A record with every field at its "nothing happened yet" value."""
    return {
        "path": path, "subagent_files": list(subagents), "session_id": None, "harness": None, "format": None,
        "start": None, "end": None, "events": 0, "subagents_linked": 0, "decisions": 0, "facts": 0,
        "engine": None, "model": None, "tokens": 0, "cost": 0.0, "seconds": 0.0, "status": "failed",
        "errors": [], "notes": [], "redacted": 0, "text": None, "cacheable": True,
    }


def _link_subagents(transcript, job: Job, record: dict):
    from pipeline.batch.subagents import inspect, link
    from pipeline.transcripts import read_transcript

    subs = []
    for path in job.subagents:
        try:
            subs.append((inspect(path), read_transcript(path, max_bytes=job.max_bytes, warn=False)))
        except Exception as exc:  # a bad sub-agent file must not sink its parent session
            record["notes"].append(f"sub-agent file {path} not read: {_line(exc)}")
    transcript, added = link(transcript, subs)
    record["subagents_linked"] = len(subs)
    if added:
        record["notes"].append(f"added the final answer of {added} sub-agent file(s) missing from the session")
    return transcript


def run_job(job: Job) -> dict:
    """Process ``job`` into a record (see ``empty_record`` for the fields).  Never raises ``Exception``.

    ``cacheable`` is False for results that depend on more than the cache key (``--since`` skips, unexpected
    exceptions that may be transient).
    """
    from pipeline.errors import DuckTapeError, RedactionRefused

    started = time.perf_counter()
    record = empty_record(job.path, job.subagents)
    try:
        _run(job, record)
    except RedactionRefused as exc:
        record["status"] = "refused"
        record["errors"] = [*exc.report, f"{_line(exc)}"]
    except DuckTapeError as exc:
        record["status"] = "failed"
        record["errors"] = [_line(exc)]
    except Exception as exc:  # noqa: BLE001 — isolate the failure, report it, keep the batch going
        record["status"] = "failed"
        record["errors"] = [f"unexpected {type(exc).__name__}: {_line(exc)}"]
        record["cacheable"] = False
    record["seconds"] = round(time.perf_counter() - started, 4)
    _mask_messages(record)
    return record


def _mask_messages(record: dict) -> None:
    """Errors and notes pass the same mask as every printed or written text (issue 11): they reach the batch
    report, its JSON, the cache and stderr."""
    from pipeline.redact import safe

    for name in ("errors", "notes"):
        record[name] = [safe(line) if isinstance(line, str) else line for line in record[name]]


def _run(job: Job, record: dict) -> None:
    from pipeline.errors import InputError
    from pipeline.transcripts import NOT_TRANSCRIPTS
    from pipeline.transcripts.detect import detect_format

    try:
        if job.config is None or job.config.effective_engine() == "rules":
            built = _built_streamed(job, record)
        else:
            built = _built_whole(job, record)
    except InputError:
        if not job.explicit and job.path.endswith(".json") and not os.path.islink(job.path):
            fmt = detect_format(job.path)
            if fmt == "unknown" or fmt in NOT_TRANSCRIPTS:  # found in a folder: a Gemini logs.json beside
                record["status"] = "ignored"  # the checkpoints, a harness's config file
                record["notes"].append(NOT_TRANSCRIPTS[fmt].split(";")[0] if fmt in NOT_TRANSCRIPTS else
                                       "not a transcript (a JSON file of no known transcript format)")
                return
        raise
    if built is None:
        return
    _finish(job, record, *built)
    if job.verify:
        from pipeline.verify.compare import counts_record, verify_path

        record["verify"] = counts_record(verify_path(job.path, max_bytes=job.max_bytes))


def _skipped(job: Job, record: dict, meta) -> bool:
    """Record the session's metadata; True (and the record says so) when it ended before ``--since``."""
    record.update(session_id=meta.session_id, harness=meta.harness, format=meta.format, start=meta.start_time,
                  end=meta.end_time)
    last = meta.end_time or meta.start_time
    if ended_before(last, job.since, job.path):
        record["status"] = "skipped"
        record["notes"].append(f"session ended {last}, before --since {job.since}")
        record["cacheable"] = False
        return True
    return False


def _built_whole(job: Job, record: dict):
    """The llm engine: the whole transcript in memory, as the engine condenses it itself."""
    from pipeline.engines import build_state
    from pipeline.transcripts import read_transcript

    transcript = read_transcript(job.path, max_bytes=job.max_bytes, warn=False)
    meta = transcript.meta
    record["events"] = len(transcript.events)
    warning = transcript.report.warning(job.path)
    if warning:
        record["notes"].append(warning.removeprefix("duck-tape: warning: "))
    if _skipped(job, record, meta):
        return None
    if job.subagents:
        transcript = _link_subagents(transcript, job, record)
        record["events"] = len(transcript.events)
    last = meta.end_time or meta.start_time
    built = build_state(transcript, config=job.config, action="batch", kind="recovered", now=_moment(last, job.path))
    return built.state, built.text, built.dropped, built.run, built.source


def _built_streamed(job: Job, record: dict):
    """The rules engine: the transcript segment by segment (``pipeline.segmented``), sub-agent answers added to the
    segment they belong in.  The stamp is the session's last event time, known once it is read: the state is
    woven with a provisional one and given its own after."""
    from datetime import timezone
    from dataclasses import replace

    from pipeline.engines import EngineRun
    from pipeline.segmented import distil_stream
    from pipeline.stages.distil import RULES_SECTIONS
    from pipeline.stages.models import Distillate
    from pipeline.stages.validate import rendered
    from pipeline.state.store import make_stamp

    if job.since:  # a session that ended before --since is skipped: read it first (no distilling) for its end
        from pipeline.transcripts.segments import stream

        last: list = []
        stream(job.path, lambda segment: last.__setitem__(slice(None), [segment.transcript.meta]),
               max_bytes=job.max_bytes, warn=False)
        if last and _skipped(job, record, last[0]):
            return None
    prepare = _SubagentLinker(job, record) if job.subagents else None
    provisional = _moment(None, job.path)  # the file's time; the stamp is set from the session's end below
    folded = distil_stream(job.path, max_bytes=job.max_bytes, action="batch", kind="recovered", now=provisional,
                           trigger="batch, engine: rules", warn=False, prepare=prepare)
    record["events"] = folded.events
    warning = folded.report.warning(job.path) if folded.report is not None else None
    if warning:
        record["notes"].append(warning.removeprefix("duck-tape: warning: "))
    if _skipped(job, record, folded.meta):
        return None
    if prepare is not None:
        prepare.report()
    meta = folded.meta
    moment = _moment(meta.end_time or meta.start_time, job.path)
    state = replace(folded.state, stamp=make_stamp(moment),
                    created=moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    state, text = rendered(state)
    run = EngineRun(distillate=Distillate(engines={name: "rules" for name in RULES_SECTIONS}))
    return state, text, folded.dropped, run, folded.source


class _SubagentLinker:
    """``prepare`` of a streamed batch read: each linked sub-agent file's final answer that the session lacks goes
    into the segment whose time span holds it (``subagents.link``; the last segment takes the rest)."""

    def __init__(self, job: Job, record: dict) -> None:
        from pipeline.batch.subagents import inspect
        from pipeline.transcripts import read_transcript

        self.record = record
        self.subs = []
        self.added = 0
        for path in job.subagents:
            try:
                self.subs.append((inspect(path), read_transcript(path, max_bytes=job.max_bytes, warn=False)))
            except Exception as exc:  # a bad sub-agent file must not sink its parent session
                record["notes"].append(f"sub-agent file {path} not read: {_line(exc)}")
        record["subagents_linked"] = len(self.subs)

    def __call__(self, transcript, last: bool):
        from pipeline.batch.subagents import already_counted, final_answer, link

        if not self.subs:
            return transcript
        stamps = [e.timestamp for e in transcript.events if e.timestamp]
        end = stamps[-1] if stamps else None
        take, keep = [], []
        for info, sub in self.subs:
            answer = final_answer(sub)
            if answer is None or already_counted(transcript, answer.text):
                continue  # nothing to add, or the session has it
            when = sub.meta.end_time or answer.timestamp
            (take if last or (when and end and when <= end) else keep).append((info, sub))
        self.subs = keep
        if not take:
            return transcript
        linked, added = link(transcript, take)
        self.added += added
        return linked

    def report(self) -> None:
        if self.added:
            self.record["notes"].append(f"added the final answer of {self.added} sub-agent file(s) missing from the "
                                        "session")


def _finish(job: Job, record: dict, state, text: str, dropped: list, run, source) -> None:
    from pipeline.recovery import redaction_gate
    from pipeline.stages.rules.text import one_line

    record["notes"].extend(one_line(n) for n in run.notes)
    if dropped:
        record["notes"].append(f"dropped {len(dropped)} entr{'y' if len(dropped) == 1 else 'ies'} without "
                               "evidence (or with evidence in injected instructions)")
    record.update(engine=run.engine, model=run.model, decisions=len(state.decisions), facts=len(state.facts))
    if run.usage is not None:
        record["tokens"] = run.usage.tokens
        record["cost"] = run.usage.cost
        if run.usage.failed:
            record["cacheable"] = False  # a failed llm call may succeed next time
    text, report = redaction_gate(text, mask=job.mask, path=job.path, source=source)
    if report:
        record["redacted"] = sum(1 for line in report if line.startswith("Flagged:"))
        record["notes"].append(f"masked {record['redacted']} potential secret(s) with <REDACTED>")
    record["text"] = text
    record["status"] = "ok"
