"""The background refinement (issue 25): a checkpoint's rules state made again with the model, for the same session.

``refine(store, state_name, …)`` is what ``duck-tape refine`` runs (the checkpoint hook starts it detached,
``pipeline.refine.spawn``; a user may run it by hand):

1. **guards** — inside a nested agent run nothing is done; the auto state file must exist and still be the newest
   file of its session (a later checkpoint, a manual save or a recovery of the session makes it moot);
2. **one at a time** — ``<store>/.refine.lock`` (a ``filelock``, released if the process dies): a second refinement
   waits for the first, at most ``agent_seconds``;
3. **the model** — the configured one (``model``; an ``agent:`` CLI or a litellm model), the llm engine forced,
   within the caps of one session (``agent_seconds``, ``agent_tokens``; ``max_tokens`` too when set), and a hard
   stop of the whole process at ``agent_seconds`` + ``GRACE`` seconds (``SIGALRM``) whatever the model does;
4. **the state** — ``pipeline.engines.build_state`` on the transcript (masking, the llm engine with its per-section
   fallback, screening, grounding, validate), action ``background refine``.  Written only when at least one
   section came from the model: ``<auto stamp>-recovered.state.md`` (the checkpoint's stamp, so it ranks with the
   checkpoint it refines and never above a later one; ``Created:`` is the real time), ``Session-Id`` the session's,
   the entries the checkpoint carried from earlier sessions kept (``pipeline.refine.keep``), secrets masked;
5. **the ledger** — what it spent, and why it wrote nothing when it did not (``pipeline.llm.ledger``), for
   ``duck-tape status``.

``restore`` and ``resume`` then prefer the refined file (``pipeline.state.store.choose_best``: a recovered file of
the session at least as new as its newest auto file is used as is); a refinement still running, or one that wrote
nothing, leaves them with the checkpoint.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from pipeline.errors import InputError

ACTION = "background refine"
LOCK = ".refine.lock"
GRACE = 60.0  # seconds past agent_seconds before the process stops itself


@dataclass(slots=True)
class Refined:
    """What a refinement did: ``written`` (the file, or None), ``outcome`` (written | fell back | skipped |
    failed), ``notes`` (lines for the log), ``tokens`` spent."""

    written: Path | None = None
    outcome: str = "skipped"
    notes: list[str] = field(default_factory=list)
    tokens: int = 0


class _Stopped(Exception):
    """The hard time stop fired."""


def _stop(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise _Stopped()


def _moot(store: Path, info, session: str | None) -> str | None:
    """Why refining ``info`` (the auto file) is pointless now, or None."""
    from pipeline.state.owner import file_session
    from pipeline.state.store import list_states

    for other in list_states(store):
        if other.path == info.path or other.order < info.order:
            continue
        if session and file_session(other.path) != session:
            continue
        if other.kind == "auto" and other.order > info.order:
            return f"a later checkpoint of the session exists ({other.path.name})"
        if other.kind in ("manual", "recovered"):
            return f"the session has a {other.kind} state file as new already ({other.path.name})"
    return None


def _transcript_of(store: Path, name: str, given: str | None) -> str | None:
    if given:
        return given
    from pipeline.state.marker import read_marker

    marker = read_marker(store)
    if marker is not None and marker.latest_state == name:
        return marker.transcript
    return None


def refine(store: Path, state_name: str, *, transcript: str | None = None, config=None,
           env: dict[str, str] | None = None) -> Refined:
    """Refine the auto state file ``state_name`` of ``store`` (module docstring).  Never raises for a model problem
    or a moot state (``outcome`` says); raises InputError for a state file that is not an auto file of the store,
    or no transcript to read."""
    from pipeline.llm import ledger
    from pipeline.state.owner import file_session
    from pipeline.state.store import STATE_RE, StateFileInfo

    env = dict(os.environ) if env is None else env
    done = Refined()
    if env.get("DUCK_TAPE_NESTED"):
        done.notes.append("inside a nested agent run: not refining (the recursion guard)")
        return done
    match = STATE_RE.fullmatch(state_name)
    path = store / state_name
    if match is None or match["kind"] != "auto" or not path.is_file():
        raise InputError(f"{state_name}: not an auto state file of {store} (refine works on a checkpoint's file)",
                         path=str(path))
    info = StateFileInfo(path, match["stamp"], "auto")
    session = file_session(path)
    source = _transcript_of(store, state_name, transcript)
    if not source:
        raise InputError(f"no transcript for {state_name}: pass --transcript (the marker names another state)",
                         path=str(path))
    if config is None:
        from pipeline.config import resolve
        from pipeline.refine.spawn import project_root

        config, _ = resolve(env=env, root=project_root(store))
    config = replace(config, engine="llm")
    if not config.model:
        done.notes.append("no model configured: set model (e.g. agent:claude-code) to refine")
        return done
    from filelock import FileLock

    with FileLock(str(store / LOCK), timeout=config.agent_seconds):
        why = _moot(store, info, session)
        if why:
            done.notes.append(f"not refining {state_name}: {why}")
            ledger.record(store, ledger.entry("refine", config.model, None, session=session, outcome="skipped",
                                              note=why))
            return done
        return _run(store, info, session, source, config, done)


def _run(store: Path, info, session: str | None, source: str, config, done: Refined) -> Refined:
    from pipeline.engines import build_state
    from pipeline.llm import ledger
    from pipeline.llm.usage import Usage
    from pipeline.redact.gate import redaction_gate
    from pipeline.refine.keep import keep_carried, write_free
    from pipeline.state.render import render
    from pipeline.transcripts import read_transcript
    from pipeline.transcripts.safety import RECOVER_MAX_BYTES, max_bytes_from_env

    usage = Usage()
    llm = None
    alarm = hasattr(signal, "SIGALRM")
    if alarm:
        previous = signal.signal(signal.SIGALRM, _stop)
        signal.alarm(int(config.agent_seconds + GRACE))
    try:
        from pipeline.llm.seam import model_for

        llm = model_for(config, usage=usage)
        transcript = read_transcript(source, max_bytes=max_bytes_from_env(RECOVER_MAX_BYTES), warn=False)
        built = build_state(transcript, config=config, llm=llm, action=ACTION, kind="recovered",
                            now=datetime.now(timezone.utc), session_id=session)
    except _Stopped:
        done.outcome = "failed"
        done.notes.append(f"stopped after {config.agent_seconds + GRACE:.0f} s (agent_seconds + {GRACE:.0f})")
        built = None
    except Exception as exc:  # noqa: BLE001 - a detached job reports into the log and the ledger
        done.outcome = "failed"
        done.notes.append(f"failed: {type(exc).__name__}: {' '.join(str(exc).split())}")
        built = None
    finally:
        if alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    seconds = getattr(llm, "seconds", None)
    done.tokens = usage.tokens
    if built is None:
        ledger.record(store, ledger.entry("refine", config.model, usage, session=session, seconds=seconds,
                                          outcome=done.outcome, note=done.notes[-1]))
        return done
    done.notes.extend(built.run.notes)
    if built.run.engine != "llm":
        done.outcome = "fell back"
        why = next((n for n in reversed(built.run.notes) if "rules" in n), "no section came from the model")
        done.notes.append("nothing written: no section came from the model; the checkpoint stays as it is")
        ledger.record(store, ledger.entry("refine", config.model, usage, session=session, seconds=seconds,
                                          outcome=done.outcome, note=why))
        return done
    state = replace(built.state, stamp=info.stamp)  # ranks with the checkpoint it refines
    state, kept = keep_carried(state, store)
    done.notes.extend(kept)
    text, _ = redaction_gate(render(state), mask=True, path=source, source=built.source)
    done.written = write_free(store, text, stamp=info.stamp, kind="recovered")
    done.outcome = "written"
    done.notes.append(f"wrote {done.written} ({state.trigger})")
    ledger.record(store, ledger.entry("refine", config.model, usage, session=session, seconds=seconds,
                                      outcome="written", file=done.written.name))
    return done
