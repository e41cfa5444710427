"""Translate an Agent State into a ``ContextDelta`` with the rigid map (DESIGN.md "CONTEXT.md (Tier 1)", "Translation").

* Approved Workflow -> Decisions: one entry, key ``workflow-<slug>``, the workflow's own words on one line;
* Decision Log -> Decisions: one entry per decision, key = slug of *what* (``assign_keys``), text
  ``<STATUS>: <what> - <reasoning>`` (status kept), date = the decision's UTC date;
* Position.Remaining -> Open-Questions: one per item, dated with the state's ``Created:`` date;
* Established Facts -> Glossary: one term per fact; ``term: definition`` keeps its term, otherwise a slug key and
  the whole fact as the definition; facts that are lines of a fenced block (pasted output) are left out;
* Position.Current, Position.Done, Re-derivation, Suggested Skills: not translated.  Done items are carried in
  ``ContextDelta.done`` only to resolve Open-Questions and Deferred-Debt they match; they are never written.

Every text goes through ``reduce_text`` (no fenced output, commit hashes or long path prefixes).  Keys depend
only on the state's own text, so merging the same state twice gives the same keys.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from pipeline.context.delta import ContextDelta, DeltaEntry, DeltaQuestion
from pipeline.context.keys import assign_keys, slug, split_term
from pipeline.context.reduce import outside_fences, reduce_text
from pipeline.state.model import AgentState
from pipeline.state.store import session_label

WORKFLOW_PREFIX = "workflow-"

Masker = Callable[[str], tuple[str, int]]
"""Masks the secrets of a text: returns the masked text and how many were masked (``pipeline.context.gate.masker``)."""


def _unmasked(text: str) -> tuple[str, int]:
    return text, 0


def created_moment(created: str) -> datetime:
    """``Created:`` (ISO-8601; ``Z``, an offset or none = UTC) as an aware UTC datetime.  Raises ``ValueError``."""
    moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def translate(state: AgentState, *, masker: Masker | None = None) -> ContextDelta:
    """The ``ContextDelta`` of ``state`` (module docstring).  Raises ``ValueError`` for a bad ``created``.

    ``masker`` (``--mask``) is applied to every state text before it is reduced and keyed, so no secret reaches a
    key or a text; the number masked goes into each entry's ``redacted``.
    """
    clean = masker or _unmasked
    moment = created_moment(state.created)
    day = moment.strftime("%Y-%m-%d")
    entries: list[DeltaEntry] = []
    workflow, hidden = clean(state.approved_workflow or "")
    workflow = reduce_text(workflow)
    if workflow:
        entries.append(DeltaEntry(section="Decisions", key=WORKFLOW_PREFIX + slug(workflow), text=workflow, date=day,
                                  redacted=hidden))
    entries.extend(_decisions(state, day, clean))
    entries.extend(_facts(state, clean))
    questions = []
    for item in state.position.remaining:
        text, hidden = clean(item)
        if reduce_text(text):
            questions.append(DeltaQuestion(text=reduce_text(text), date=day, redacted=hidden))
    return ContextDelta(
        session=session_label(state.stamp, state.kind),
        origin=f"{state.repo}@{state.branch}",
        repo=state.repo,
        stamp=moment.strftime("%Y-%m-%d %H:%M"),
        entries=entries,
        questions=questions,
        done=[text for text in (reduce_text(clean(item)[0]) for item in state.position.done) if text],
    )


def _decisions(state: AgentState, day: str, clean: Masker) -> list[DeltaEntry]:
    whats, reasons, hidden = [], [], []
    for decision in state.decisions:
        what, n = clean(decision.what)
        reasoning, m = clean(decision.reasoning)
        whats.append(reduce_text(what))
        reasons.append(reduce_text(reasoning))
        hidden.append(n + m)
    out = []
    for decision, what, reasoning, n, key in zip(state.decisions, whats, reasons, hidden, assign_keys(whats)):
        if not what:
            continue
        text = f"{decision.status}: {what}" + (f" - {reasoning}" if reasoning else "")
        date = decision.timestamp[:10] if len(decision.timestamp) >= 10 and decision.timestamp[4] == "-" else day
        out.append(DeltaEntry(section="Decisions", key=key, text=text, date=date, redacted=n))
    return out


def _facts(state: AgentState, clean: Masker) -> list[DeltaEntry]:
    facts = [f.text for f in state.facts]
    pairs = [clean(text) for text, keep in zip(facts, outside_fences(facts)) if keep]
    kept = [(reduce_text(text), n) for text, n in pairs if reduce_text(text)]
    split = [split_term(text) for text, _ in kept]
    keys = iter(assign_keys([rest for term, rest in split if term is None]))
    out = []
    for (text, n), (term, rest) in zip(kept, split):
        if term is not None:
            out.append(DeltaEntry(section="Glossary", key=term, text=rest, redacted=n))
        else:
            out.append(DeltaEntry(section="Glossary", key=next(keys), text=text, redacted=n))
    return out
