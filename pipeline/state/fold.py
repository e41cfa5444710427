"""Fold two states of one session into one: what an earlier part of the session established, updated by a later part
(issue 23: every byte read once).

A long session is distilled a segment at a time (``pipeline.transcripts.segments``), and a checkpoint distils only
what was appended since the last one; ``fold(older, newer)`` joins the results, every section, as if the session had
been read whole:

* **header**: the newer part's (its stamp, kind, trigger, creation time); Cwd, Repo/Branch and Session-Id fall back
  to the older part's when the newer one does not know them (a read that starts mid-file misses the session's
  opening records);
* **Approved Workflow** (the task list of ``rules.workflow``: the first request, then ``Task``/``Redirected``
  ``<ISO-8601>: …`` lines, the newest labelled ``Active task``/``Active redirection``): **tasks append**.  The older
  part's text stays; the newer part's opening request becomes a ``Task <head_time>:`` line (dropped when it is the
  request carried over from the older part, ``head_seen``), its task lines follow; a task already listed (same
  text, whitespace and case aside) is not repeated; lines the newer part took from a compaction summary (``From the
  compaction summary…``) are dropped (the older part is what the summary summarised); only the newest task keeps the
  ``Active`` label;
* **Position** comes from the newest part: its Current and Remaining (its view of what is in flight and what is
  left supersedes the older part's, whose items it did or dropped); Done: the older items then the newer ones (an item
  done again moves to its newest place), the newest ``MAX_DONE``.  A newer part that names no Current and no Remaining
  (work after a compaction with no todo list of its own, a few lines of talk) keeps the older part's, minus what
  either part did (the same item, or one whose words a Done item holds: "Tests for pagination" is done by "Tests for
  pagination and the legacy array response"), a question the older part ended on (``Waiting for the user: …``,
  ``rules.position``: the newer part starts with the user's next prompt) and what it took from a compaction
  summary's pending list (its workflow's ``From the compaction summary, pending: …`` line: the harness model's
  paraphrase);
* **Decision Log** (append-only): the older entries, then the newer ones that are not already there with the same
  status (same option, whitespace, case and punctuation aside), in time order; a later decision of the other status
  on the same option (a reversal) is kept beside the earlier one, later in the log, which is how a reader sees
  that it supersedes it;
* **Established Facts**: the older facts, then the newer ones not already there (same text, whitespace, case and
  punctuation aside); over ``MAX_FACTS``, the user's constraints stay, then root causes and quirks found by trial,
  then sub-agent findings, then other facts, the newest first within each (``_FACT_RANK``), in their order;
* **Re-derivation** (in ``rules.rederive``'s order): the newer part's ``Read the transcript`` line, the ``Read:`` and
  the ``Run:`` lines, each at its newest place, the newest ``MAX_FILES`` and ``MAX_COMMANDS`` of them, then every
  other line once;
* **Suggested Skills**: both, once each.

Evidence is kept as it is: the caller rebases event indexes to the whole transcript before folding
(``pipeline.segmented``).  Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import replace

from pipeline.state.model import AgentState, Decision, Fact, Position

MAX_DONE = 15
MAX_FACTS = 25
MAX_FILES = 15
MAX_COMMANDS = 10
TASK_LIMIT = 220
TRANSCRIPT_LINE = "Read the transcript: "
WAITING = "Waiting for the user: "

_TASK = re.compile(r"^(?P<label>Active task|Active redirection|Task|Redirected) (?P<ts>\S+): (?P<body>.*)$")
_SUMMARY = "From the compaction summary"
_LEFT_OUT = re.compile(r"^\(\d+ earlier task\(s\) left out\)$")
_PUNCT = re.compile(r"[\W_]+")
_UNKNOWN = ("", "unknown", None)
#: Which facts stay past ``MAX_FACTS``: the user's constraints, then what was found by trial (root causes and the
#: environment's quirks), then sub-agent findings, then the rest; the newest first within a kind.
_FACT_RANK = {"constraint": 0, "root_cause": 1, "quirk": 1, "subagent": 2, "fact": 3}


def key(text: str) -> str:
    """The comparison key of an entry: lower case, punctuation gone, whitespace collapsed."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _split_workflow(text: str | None) -> tuple[list[str], list[tuple[str, str, str] | str]]:
    """``(head lines, task lines)``: the lines before the first task line, then each task line as ``(label, time,
    text)`` (a ``(N earlier task(s) left out)`` or summary line among them as the plain string)."""
    if not text:
        return [], []
    head: list[str] = []
    tasks: list[tuple[str, str, str] | str] = []
    for line in text.splitlines():
        m = _TASK.match(line)
        if m:
            tasks.append((m["label"], m["ts"], m["body"]))
        elif tasks or _LEFT_OUT.match(line.strip()):
            tasks.append(line)
        else:
            head.append(line)
    return head, tasks


def _plain(label: str) -> str:
    return {"Active task": "Task", "Active redirection": "Redirected"}.get(label, label)


def fold_workflow(older: str | None, newer: str | None, *, head_time: str | None = None,
                  head_seen: bool = False) -> str | None:
    """The Approved Workflow of ``older`` followed by ``newer`` (module rules)."""
    if not older or not older.strip():
        return newer
    if not newer or not newer.strip():
        return older
    old_head, old_tasks = _split_workflow(older)
    new_head, new_tasks = _split_workflow(newer)
    new_head = [ln for ln in new_head if not ln.startswith(_SUMMARY)]
    new_tasks = [t for t in new_tasks if not (isinstance(t, str) and t.startswith(_SUMMARY))]
    seen = {key(t[2]) for t in old_tasks if not isinstance(t, str)}
    seen.add(key(" ".join(old_head)))
    added: list[tuple[str, str, str] | str] = []
    head_text = " ".join(" ".join(new_head).split())
    if head_text and not head_seen:
        added.append(("Task", head_time or "unknown-time", _clip(head_text, TASK_LIMIT)))
    added.extend(new_tasks)
    tasks: list[tuple[str, str, str] | str] = [t if isinstance(t, str) else (_plain(t[0]), t[1], t[2]) for t in old_tasks]
    for t in added:
        if isinstance(t, str):
            tasks.append(t)
            continue
        k = key(t[2])
        if not k or k in seen:
            continue
        seen.add(k)
        tasks.append((_plain(t[0]), t[1], t[2]))
    last = max((n for n, t in enumerate(tasks) if not isinstance(t, str)), default=None)
    lines = list(old_head)
    for n, t in enumerate(tasks):
        if isinstance(t, str):
            lines.append(t)
            continue
        label = t[0]
        if n == last:
            label = "Active task" if label == "Task" else "Active redirection"
        lines.append(f"{label} {t[1]}: {t[2]}")
    return "\n".join(lines)


_PENDING = "From the compaction summary, pending: "


def _summary_pending(workflow: str | None) -> list[str]:
    """Keys of the items a workflow's ``From the compaction summary, pending:`` lines list."""
    out = []
    for line in (workflow or "").splitlines():
        if line.startswith(_PENDING):
            out.extend(key(item.rstrip("…")) for item in line[len(_PENDING):].split("; "))
    return [k for k in out if k]


def _from_summary(item: str, pending: list[str]) -> bool:
    k = key(item)
    return any(k[:40] == p[:40] for p in pending) if len(k) >= MIN_SWEEP_KEY else k in pending


def _fold_position(older: Position, newer: Position, pending: list[str] = ()) -> Position:
    new_done = {key(d) for d in newer.done}
    done = _unique([d for d in older.done if key(d) not in new_done] + list(newer.done))[-MAX_DONE:]
    if newer.current or newer.remaining:  # the newer part says what is in flight and what is left
        return Position(current=newer.current, done=done, remaining=list(newer.remaining))
    later = [key(d) for d in (*older.done, *newer.done)]
    current = older.current if older.current and key(older.current) not in later else None
    carried = [r for r in older.remaining
               if key(r) not in later and not r.startswith(WAITING) and not _done_by(key(r), later)
               and not _from_summary(r, pending)]
    return Position(current=current, done=done, remaining=_unique(carried))


MIN_SWEEP_KEY = 12  # characters: a shorter item ("tests") is too vague to call done by containment


def _done_by(item: str, later: list[str]) -> bool:
    """Whether the item key ``item`` is held, as whole words, by one of the ``later`` Done/Current keys."""
    if len(item) < MIN_SWEEP_KEY:
        return False
    padded = f" {item} "
    return any(padded in f" {k} " for k in later)


def _unique(items: list[str]) -> list[str]:
    out, seen = [], set()
    for item in items:
        k = key(item)
        if k and k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _fold_decisions(older: list[Decision], newer: list[Decision]) -> list[Decision]:
    have = {(d.status, key(d.what)) for d in older}
    out = list(older)
    for d in newer:
        k = (d.status, key(d.what))
        if k in have:
            continue
        have.add(k)
        out.append(d)
    return sorted(out, key=lambda d: d.timestamp or "")  # stable: equal times keep their order


def _fold_facts(older: list[Fact], newer: list[Fact]) -> list[Fact]:
    have = {key(f.text) for f in older}
    out = list(older)
    for f in newer:
        k = key(f.text)
        if k and k not in have:
            have.add(k)
            out.append(f)
    if len(out) <= MAX_FACTS:
        return out
    ranked = sorted(range(len(out)), key=lambda n: (_FACT_RANK.get(out[n].kind, len(_FACT_RANK)), -n))
    keep = set(ranked[:MAX_FACTS])
    return [f for n, f in enumerate(out) if n in keep]


def _fold_rederivation(older: list[str], newer: list[str]) -> list[str]:
    head = [ln for ln in newer if ln.startswith(TRANSCRIPT_LINE)] or [ln for ln in older if ln.startswith(TRANSCRIPT_LINE)]
    other: dict[str, None] = {}
    reads: dict[str, None] = {}
    runs: dict[str, None] = {}
    for line in [*older, *newer]:
        if line.startswith(TRANSCRIPT_LINE):
            continue
        bucket = reads if line.startswith("Read: ") else runs if line.startswith("Run: ") else other
        bucket.pop(line, None)
        bucket[line] = None
    return head[:1] + list(reads)[-MAX_FILES:] + list(runs)[-MAX_COMMANDS:] + list(other)


def _known(new: str | None, old: str | None) -> str | None:
    return old if new in _UNKNOWN and old not in _UNKNOWN else new


def fold(older: AgentState, newer: AgentState, *, head_time: str | None = None, head_seen: bool = False) -> AgentState:
    """``newer`` (a later part of the session) folded onto ``older`` (module rules).

    ``head_time``: the ISO-8601 time of the newer part's opening request (its ``Task`` line's time); ``head_seen``:
    that request is one the older part read already (a segment's carried prompt), so it adds no task.
    """
    return replace(
        newer,
        cwd=_known(newer.cwd, older.cwd) or "unknown",
        repo=_known(newer.repo, older.repo) or "unknown",
        branch=_known(newer.branch, older.branch) or "unknown",
        session_id=newer.session_id or older.session_id,
        approved_workflow=fold_workflow(older.approved_workflow, newer.approved_workflow, head_time=head_time,
                                        head_seen=head_seen),
        position=_fold_position(older.position, newer.position, _summary_pending(older.approved_workflow)),
        decisions=_fold_decisions(older.decisions, newer.decisions),
        facts=_fold_facts(older.facts, newer.facts),
        rederivation=_fold_rederivation(older.rederivation, newer.rederivation),
        suggested_skills=_unique([*older.suggested_skills, *newer.suggested_skills]),
    )
