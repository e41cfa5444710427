"""Weave stage: ``Distillate`` + ``TranscriptMeta`` -> ``AgentState`` (DESIGN.md "Stages", "Agent State file").

Fills the header and applies the file's bounds, whichever engine produced the distillate:

* header: ``stamp`` = UTC ``YYYY-MM-DD-HHMM`` of ``now``; ``created`` = ``now`` as ISO-8601 UTC to the second
  with ``Z``; ``cwd`` = ``meta.cwd`` or ``unknown``; ``repo`` = ``meta.repo`` or the last path component of the
  cwd (either slash style) or ``unknown``; ``branch`` = ``meta.git_branch``, else the branch the session's git output showed
  (``Distillate.branch``), else ``unknown``; ``kind`` and
  ``trigger`` as the caller passes them (a naive ``now`` is taken as UTC);
* Position: Current on one line; Done deduplicated, the newest ``MAX_DONE`` kept (newest last); Remaining
  deduplicated, order kept;
* Decision Log: chronological (stable for equal times), exact duplicates dropped, ``what`` and ``reasoning``
  on one line and capped (160 / 200 characters), an empty reasoning written as "not stated"; a decision
  with no timestamp takes ``created``;
* Established Facts: one line each, deduplicated by normalized text, at most ``MAX_FACTS``;
* Re-derivation: deduplicated, ``Read the transcript: <meta.path>`` first (added when missing and the path is
  known);
* Approved Workflow: trailing spaces and blank-line runs squeezed, lines kept.
"""

from __future__ import annotations

import re

from dataclasses import replace
from datetime import datetime, timezone

from pipeline.stages.models import Distillate
from pipeline.stages.rules.text import clip, norm_key, norm_ts, one_line
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.transcripts.model import TranscriptMeta

MAX_DONE = 15
MAX_FACTS = 60  # a backstop: the engines pick facts to a byte budget (rules.candidates)
WHAT_LIMIT = 160
REASON_LIMIT = 200
FACT_LIMIT = 300


def repo_name(remote: str) -> str:
    """A git remote (``https://user@host/owner/name.git``, ``git@host:owner/name.git``, ``ssh://…``) as
    ``owner/name``: what the header's Repo/Branch names, without the scheme, host or credentials; anything else
    as it is (Copilot already gives ``owner/name``)."""
    text = remote.strip()
    m = re.match(r"^(?:[a-z][a-z0-9+.-]*://)?(?:[^@/\s]+@)?[^/:\s]+[:/](?P<path>[^\s]+?)(?:\.git)?/?$", text, re.I)
    if m and ("://" in text or "@" in text):
        parts = [p for p in m.group("path").split("/") if p]
        if parts:
            return "/".join(parts[-2:])
    return text


def _repo_of(meta: TranscriptMeta) -> str:
    if meta.repo and meta.repo.strip():
        return repo_name(meta.repo)
    cwd = (meta.cwd or "").strip().rstrip("/\\")
    if not cwd:
        return "unknown"
    name = cwd.replace("\\", "/").rsplit("/", 1)[-1]
    return name or "unknown"


def _unique(items: list[str], limit: int | None = None) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        line = one_line(item)
        if not line or line in seen:
            continue
        seen.add(line)
        out.append(line if limit is None else clip(line, limit))
    return out


def _workflow(text: str | None) -> str | None:
    if not text or not text.strip():
        return None
    lines: list[str] = []
    for line in text.strip().splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip() or None


def _decisions(items: list[Decision], created: str) -> list[Decision]:
    out: list[Decision] = []
    seen: set[tuple[str, str, str]] = set()
    stamped = []
    for n, d in enumerate(items):
        ts = norm_ts(d.timestamp) or created
        stamped.append((ts, n, d))
    stamped.sort(key=lambda t: (t[0], t[1]))
    for ts, _, d in stamped:
        what = clip(d.what, WHAT_LIMIT)
        key = (ts, d.status, norm_key(what))
        if not what or key in seen:
            continue
        seen.add(key)
        reasoning = clip(d.reasoning, REASON_LIMIT) or "not stated"
        out.append(replace(d, timestamp=ts, what=what, reasoning=reasoning))
    return out


def _facts(items: list[Fact]) -> list[Fact]:
    out: list[Fact] = []
    seen: set[str] = set()
    for f in items:
        text = clip(f.text, FACT_LIMIT)
        key = norm_key(text) or " ".join(text.lower().split())  # a CJK-only fact has no ASCII key
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(replace(f, text=text))
        if len(out) >= MAX_FACTS:
            break
    return out


def run(
    distillate: Distillate,
    meta: TranscriptMeta,
    *,
    kind: str = "recovered",
    now: datetime,
    trigger: str | None = None,
    session_id: str | None = None,
) -> AgentState:
    """Weave ``distillate`` into a whole ``AgentState`` for the session described by ``meta``.

    ``now`` is the creation time (naive = UTC); ``kind`` is ``manual`` | ``auto`` | ``recovered``; ``trigger``
    goes to the header as given; ``session_id`` (default ``meta.session_id``) to its ``Session-Id`` field.  Raises ``ValueError`` for a ``kind`` outside those three.
    """
    moment = now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now.astimezone(timezone.utc)
    created = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    pos = distillate.position
    rederivation = _unique(distillate.rederivation)
    if meta.path:
        head = f"Read the transcript: {meta.path}"
        if head not in rederivation:
            rederivation.insert(0, head)
        else:
            rederivation.remove(head)
            rederivation.insert(0, head)
    return AgentState(
        stamp=moment.strftime("%Y-%m-%d-%H%M"),
        kind=kind,
        cwd=one_line(meta.cwd or "") or "unknown",
        repo=_repo_of(meta),
        branch=one_line(meta.git_branch or distillate.branch or "") or "unknown",
        trigger=trigger,
        created=created,
        session_id=one_line(session_id or meta.session_id or "") or None,
        approved_workflow=_workflow(distillate.approved_workflow),
        position=Position(
            current=one_line(pos.current) if pos.current and pos.current.strip() else None,
            done=_unique(pos.done)[-MAX_DONE:],
            remaining=_unique(pos.remaining),
        ),
        decisions=_decisions(distillate.decisions, created),
        facts=_facts(distillate.facts),
        rederivation=rederivation,
        suggested_skills=_unique(distillate.suggested_skills),
    )
