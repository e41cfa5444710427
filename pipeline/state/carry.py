"""Carry forward, never regenerate away (issue 17, item 5): a new state file inherits what its transcript lost.

A session that continues another — Claude Code's continued session that starts with a summary, a Codex resume, a
new session in the same workspace after a checkpoint — has a transcript that no longer holds what the earlier
session ruled out or found.  A state distilled from it alone would drop the rejected approaches, the dead ends and
the facts of the previous state file.  So every automatic write (the pre-compact checkpoint and the restore that
distils a skipped one: ``pipeline.hooks.checkpoint.auto_state_text``):

* finds the **previous state file of the same workspace** (``previous_file``): the newest file of the store (the
  store is the workspace's ``.duck-tape``) written before this one, whose ``Cwd`` is the new state's (a store may
  hold files written from another folder, which are not this workspace's); any session's, the previous session's
  or this session's own earlier one — never an older one (the previous file carries what it inherited itself);
* **inherits** its REJECTED decisions (rejected approaches and dead ends) and its Established Facts that the new
  state does not hold already (same text, whitespace and case aside; a rejection whose option the new state
  decides again is not inherited), each marked with the session it came from: `` (carried from session <id>)``
  at the end of the reasoning or fact (an entry marked already keeps its mark: the session it first came from);
* **bumps the version**: ``, v<N>`` ends the ``Trigger`` field, N the previous file's version plus one (a file
  without one is v1).  The fixed header fields stay as they are: the version sits inside the free-text Trigger
  value, before the optional `` | Session-Id:`` suffix, so every reader of the format reads the file as before;
  a first write (no previous file) has no version suffix at all;
* **sweeps** Remaining items and Current that commits since the previous file made false — the checks of
  ``resume --reconcile`` (``pipeline.restore.reconcile.find_drift``: a later commit touches a file the item
  names, or its subject shares the item's key words) — and reports each swept item.

Pure functions plus ``carry_forward``, which reads the store and runs ``git log`` (read-only, short timeout).
Light module (hook path): standard library and ``pipeline.state`` only; the reconciliation is imported lazily.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.state.model import AgentState, Decision, Fact
from pipeline.state.sections import StateSections, read_sections

MARK = " (carried from session {})"
_MARKED = re.compile(r" \(carried from session [^()]+\)$")
_VERSION = re.compile(r"(?:^|, )v(?P<n>\d+)$")
SWEEP_TIMEOUT_SECONDS = 1.0
"""The hook's ``git log`` timeout for the sweep (the checkpoint's budget is a fraction of a second)."""
MAX_STATE_BYTES = 1024 * 1024


@dataclass(slots=True)
class Previous:
    """The previous state file: its ``path``, its content ``doc`` and the ``label`` its entries are marked with
    (its ``Session-Id``, else its ``Session`` label)."""

    path: Path
    doc: StateSections

    @property
    def label(self) -> str:
        from pipeline.state.store import session_label

        return self.doc.session_id or session_label(self.doc.stamp, self.doc.kind)


@dataclass(slots=True)
class Carried:
    """What ``carry_forward`` did: the new ``state``, the ``previous`` file (None: there is none), the carried
    ``decisions`` and ``facts`` (their lines), the ``swept`` items (``(where, item, why)``) and ``version``."""

    state: AgentState
    previous: Previous | None = None
    decisions: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    swept: list[tuple[str, str, str]] = field(default_factory=list)
    version: int | None = None

    def notes(self, prefix: str) -> list[str]:
        """One stderr line per thing done (nothing when there was no previous file)."""
        if self.previous is None:
            return []
        out = []
        count = len(self.decisions) + len(self.facts)
        if count:
            out.append(f"{prefix} carried {len(self.decisions)} rejected approach(es) and {len(self.facts)} fact(s) "
                       f"forward from {self.previous.path.name} (session {self.previous.label}); this state file is "
                       f"version {self.version} of the session")
        else:
            out.append(f"{prefix} nothing to carry forward from {self.previous.path.name}; this state file is "
                       f"version {self.version} of the session")
        out += [f"{prefix} swept {where} {item!r}: {why}" for where, item, why in self.swept]
        return out


def version_of(trigger: str | None) -> int:
    """The version a ``Trigger`` value ends with (``…, v3`` -> 3); 1 when it names none."""
    match = _VERSION.search(trigger or "")
    return int(match["n"]) if match else 1


def with_version(trigger: str | None, version: int) -> str:
    """``trigger`` ending with ``, v<version>`` (replacing a version it ends with; ``v<version>`` alone for none)."""
    base = _VERSION.sub("", trigger or "").rstrip(", ")
    return f"{base}, v{version}" if base else f"v{version}"


def _norm(text: str) -> str:
    return " ".join(_MARKED.sub("", text).split()).lower()


def _marked(text: str, label: str) -> str:
    return text if _MARKED.search(text) else text + MARK.format(label)


def inherit(state: AgentState, previous: StateSections, label: str) -> tuple[AgentState, list[str], list[str]]:
    """``(state with the inherited entries, carried decision lines, carried fact lines)`` (module docstring).

    Carried decisions come first in the Decision Log (they are older; their timestamps are kept), carried facts
    after the state's own.  Pure.
    """
    decided = {_norm(d.what) for d in state.decisions}
    known = {_norm(f.text) for f in state.facts}
    decisions, lines = [], []
    for d in previous.decisions:
        if d.status != "REJECTED" or _norm(d.what) in decided:
            continue
        decided.add(_norm(d.what))
        reasoning = _marked(d.reasoning if d.reasoning and d.reasoning != "None" else "rejected earlier", label)
        decisions.append(Decision(timestamp=d.timestamp, status="REJECTED", what=d.what, reasoning=reasoning,
                                  origin="carried"))
        lines.append(f"REJECTED: {d.what} - {reasoning}")
    facts = []
    for text in previous.facts:
        if _norm(text) in known:
            continue
        known.add(_norm(text))
        facts.append(Fact(text=_marked(text, label)))
    new = replace(state, decisions=[*decisions, *state.decisions], facts=[*state.facts, *facts])
    return new, lines, [f.text for f in facts]


def sweep(state: AgentState, drift: object) -> tuple[AgentState, list[tuple[str, str, str]]]:
    """``state`` without the Remaining items (and Current) that ``drift`` (a ``reconcile.Drift``) says look done;
    and ``(where, item, why)`` for each.  Pure."""
    swept = []
    done_items: dict[tuple[str, str], str] = {}
    for hit in drift.looks_done:  # type: ignore[attr-defined]
        why = []
        if hit.files:
            why.append("touches " + ", ".join(hit.files))
        if hit.words:
            why.append("shares the key words " + ", ".join(hit.words))
        done_items[(hit.where, hit.item)] = f"commit {hit.commit.sha} {hit.commit.subject!r} {' and '.join(why)}"
    remaining = []
    for item in state.position.remaining:
        why = done_items.get(("Remaining", item))
        if why:
            swept.append(("Remaining", item, why))
        else:
            remaining.append(item)
    current = state.position.current
    if current and ("Current", current) in done_items:
        swept.append(("Current", current, done_items[("Current", current)]))
        current = None
    if not swept:
        return state, []
    return replace(state, position=replace(state.position, current=current, remaining=remaining)), swept


def previous_file(store: str | os.PathLike[str], *, cwd: str, before: str) -> Previous | None:
    """The newest readable state file of ``store`` ordered before the stamp ``before`` (``YYYY-MM-DD-HHMM``; a
    file of the same minute counts) whose ``Cwd`` is ``cwd`` (either side ``unknown``: taken) and that this store
    wrote (issue 22: a planted or copied file's rejections and facts are never inherited, ``pipeline.state.trust``);
    None when there is none.  Unreadable or corrupt files are passed over."""
    from pipeline.errors import InputError
    from pipeline.state.store import list_states
    from pipeline.state.trust import owned

    try:
        states = list_states(store)
    except OSError:
        return None
    for info in reversed(states):
        if info.order > before:
            continue
        try:
            with open(info.path, "rb") as handle:
                data = handle.read(MAX_STATE_BYTES + 1)
            if len(data) > MAX_STATE_BYTES or not owned(store, info.path, data):
                continue
            doc = read_sections(data.decode("utf-8", "replace"), path=str(info.path))
        except (OSError, InputError):
            continue
        if doc.cwd != cwd and "unknown" not in (doc.cwd, cwd):
            continue
        return Previous(info.path, doc)
    return None


def carry_forward(state: AgentState, store: str | os.PathLike[str], *, sweep_commits: bool = True,
                  timeout: float = SWEEP_TIMEOUT_SECONDS) -> Carried:
    """Apply the module's rules to ``state`` about to be written into ``store``; the workspace is the store's
    parent folder.  Never raises for a missing store, unreadable files or git problems (nothing is carried or
    swept then)."""
    previous = previous_file(store, cwd=state.cwd, before=state.stamp)
    if previous is None:
        return Carried(state)
    new, decisions, facts = inherit(state, previous.doc, previous.label)
    version = version_of(previous.doc.trigger) + 1
    new = replace(new, trigger=with_version(new.trigger, version))
    swept: list[tuple[str, str, str]] = []
    if sweep_commits and (new.position.remaining or new.position.current):
        from pipeline.restore.reconcile import find_drift, git_log_since, work_items

        root = os.path.dirname(os.path.abspath(store))
        log = git_log_since(root, previous.doc.created, timeout=timeout)
        if log.status == "ok" and log.commits:
            new, swept = sweep(new, find_drift(work_items(new), log, root, lambda _path: True))
    return Carried(new, previous, decisions, facts, swept, version)
