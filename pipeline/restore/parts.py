"""The state file's content as handoff parts, in display order and in priority order (issue 7, item 1).

Required parts come first in priority — the approved workflow, Current, Remaining, the decisions (REJECTED ones
included, with their reasons), the user's constraints — then the reconciliation section, then the optional
parts (the other facts, Done, Re-derivation, Suggested Skills) while they fit.  Current is fitted before the
workflow (it is one line, and a workflow shortened to the room left still says what was approved, while a
dropped Current loses the step in flight), so a tiny budget carries both; the workflow may take at most
``WORKFLOW_SHARE`` of the budget so that a long pasted spec cannot crowd out Remaining and the decisions (and
Current at most ``CURRENT_SHARE``).  Once Remaining, the decisions, the constraints or the reconciliation section
cannot be taken whole, nothing of a lower priority is added: optional parts only ever join complete required
ones.  Done is taken newest first (shown oldest first); facts and Re-derivation skip an item that does not fit
and try the next.  Every item is first shortened to ``ITEM_CAP`` bytes; the workflow's items are its non-blank lines.

**The delta (issue 17, item 2).**  When the compaction's own summary is known (``pipeline.verify.delta``), the
decisions, constraints, facts and Remaining items it carries are left out (the new context holds them) and the
ones it lost form the ``lost`` part, fitted and shown first (``DELTA_PRIORITY``, ``DELTA_DISPLAY``; at most
``LOST_SHARE`` of the budget, so Current still fits); Current and the workflow follow, then the rest as before.
An incomplete ``lost`` part ends the fitting for everything but Current and the workflow.

**Constraint lines.**  A state file does not keep fact kinds (DESIGN.md "Agent State file": one fact per line),
so the constraints the user stated are recognised by their phrasing: a fact is a constraint when a clause of it
*starts* with a directive — never, always, don't / do not, must (not), shouldn't, avoid, make sure, ensure,
stick to, stay in/on/within/away, leave, keep, preserve, only — optionally after "no,", "please", "but",
"and", "so", "just", "also", "then"; or when it says "you/we must", "must not", "should not", "may not",
"are not allowed to", "you/we don't", "you/we never" (but not "don't know / think / see…").  Requiring the
directive at the start of a clause is what separates "never push to main" (a rule) from "the key never expires"
(a finding) and "it only works on FastAPI" (a quirk).  This mirrors the rules engine's constraint cues
(``pipeline.stages.rules.facts``), which look at the user's own sentences; facts that are not constraints stay
in Established Facts (optional).
"""

from __future__ import annotations

import re

from pipeline.restore.fit import Part, Sizer, shorten
from pipeline.state.sections import StateSections

ITEM_CAP = 600
"""Bytes an item may take before fitting; a longer one is shortened (and counted as shortened)."""
WORKFLOW_SHARE = 0.4
"""Most of the budget the Approved Workflow may take."""
CURRENT_SHARE = 0.25
"""Most of the budget Current may take (so that it cannot crowd out the workflow on a tiny budget)."""
LOST_SHARE = 0.7
"""Most of the budget the entries the compaction summary lost may take (the delta: module docstring)."""

_DIRECTIVE = (
    r"(?:never|always|don'?t|do\s+not|must(?:\s+not|n'?t)?|should\s*n'?t|should\s+not|avoid|make\s+sure|ensure|"
    r"stick\s+to|stay\s+(?:in|on|within|away)|leave|keep|preserve|only)"
)
_CONSTRAINT_RE = re.compile(
    rf"(?:^|[,;:.!?(]\s*|\b(?:no|please|but|and|so|just|also|then)\s+)(?:please\s+)?{_DIRECTIVE}\b"
    r"|\b(?:you|we)\s+(?:must|mustn'?t|should\s*n'?t|should\s+not|may\s+not|are\s+not\s+allowed\s+to|"
    r"don'?t|do\s+not|never)\b",
    re.IGNORECASE,
)
_NOT_CONSTRAINT_RE = re.compile(
    r"\b(?:don'?t|do\s+not)\s+(?:know|think|understand|see|remember|care|mind)\b", re.IGNORECASE
)

NAMES = {
    "lost": "Lost by the compaction summary",
    "workflow": "Approved Workflow",
    "current": "Current",
    "remaining": "Remaining",
    "decisions": "Decisions",
    "constraints": "Constraints",
    "drift": "Since the state file",
    "facts": "Established Facts",
    "done": "Done",
    "rederivation": "Re-derivation",
    "skills": "Suggested Skills",
}
HEADINGS = {
    "lost": "## Lost by the compaction summary (not in your context; REJECTED ones: do not retry them)",
    "workflow": "## Approved Workflow",
    "current": "## Current",
    "remaining": "## Remaining (next first)",
    "decisions": "## Decisions (REJECTED ones: do not retry them)",
    "constraints": "## Constraints (the user's rules)",
    "drift": "## Since the state file (read-only check of the workspace)",
    "facts": "## Established Facts",
    "done": "## Done (oldest first)",
    "rederivation": "## Re-derivation",
    "skills": "## Suggested Skills",
}
DISPLAY = ("workflow", "current", "remaining", "decisions", "constraints", "drift",
           "facts", "done", "rederivation", "skills")
PRIORITY = ("current", "workflow", "remaining", "decisions", "constraints", "drift",
            "facts", "done", "rederivation", "skills")
REQUIRED = frozenset({"workflow", "current", "remaining", "decisions", "constraints"})
GATES = frozenset({"remaining", "decisions", "constraints", "drift"})
"""Parts that, when not taken whole, end the fitting: nothing of a lower priority is added after them (Current
and the workflow are bounded by their shares of the budget instead)."""
DELTA_DISPLAY = ("lost", *DISPLAY)
DELTA_PRIORITY = ("lost", *PRIORITY)
DELTA_GATES = GATES | {"lost"}
DELTA_OPEN = frozenset({"current", "workflow"})
"""With the delta, the parts still fitted after an incomplete gate part."""
LOST_LABELS = {"remaining": "Remaining", "constraint": "Constraint", "fact": "Fact"}
"""How a lost entry is labelled in the ``lost`` part (decisions carry their status already)."""


def is_constraint(fact: str) -> bool:
    """True when the fact line reads as a rule the user stated (module docstring: how it is recognised)."""
    text = fact.replace("’", "'")
    return _CONSTRAINT_RE.search(text) is not None and _NOT_CONSTRAINT_RE.search(text) is None


def split_facts(facts: list[str]) -> tuple[list[str], list[str]]:
    """``(constraints, other facts)``, each in file order."""
    constraints = [f for f in facts if is_constraint(f)]
    others = [f for f in facts if not is_constraint(f)]
    return constraints, others


def _part(key: str, items: list[str], sizer: Sizer, **options: object) -> Part:
    capped, pre_cut = [], set()
    for n, item in enumerate(items):
        short = shorten(item, ITEM_CAP, sizer) or item  # None only for limits far below ITEM_CAP
        if short != item:
            pre_cut.add(n)
        capped.append(short)
    return Part(NAMES[key], HEADINGS[key], capped, pre_cut=frozenset(pre_cut), **options)  # type: ignore[arg-type]


def build_parts(doc: StateSections, drift: list[str] | None, *, budget: int, sizer: Sizer,
                judged: dict[tuple[str, int], bool] | None = None) -> dict[str, Part]:
    """The handoff parts of ``doc`` keyed as in ``DISPLAY`` (``DELTA_DISPLAY`` with ``judged``); parts with no
    items are absent.

    ``drift``: the reconciliation lines (``pipeline.restore.reconcile``), None to leave the section out.
    ``budget`` (bytes) sets the caps of the workflow, Current and the lost part (``WORKFLOW_SHARE``,
    ``CURRENT_SHARE``, ``LOST_SHARE``).  ``judged``: ``(section, index) -> kept`` for the entries the compaction
    summary was compared with (``pipeline.verify.delta.Delta.refs``; section decisions | facts | remaining);
    None: no summary to compare with, the parts of today.
    """
    if judged is not None:
        return _delta_parts(doc, drift, budget=budget, sizer=sizer, judged=judged)
    constraints, facts = split_facts(doc.facts)
    bullets = lambda values: [f"- {v}" for v in values]  # noqa: E731
    workflow = [line for line in (doc.approved_workflow or "").splitlines() if line.strip()]
    found: dict[str, Part] = {
        "workflow": _part("workflow", workflow, sizer, cut=True, cap=int(budget * WORKFLOW_SHARE)),
        "current": _part("current", [doc.current] if doc.current else [], sizer, cut=True,
                         cap=int(budget * CURRENT_SHARE)),
        "remaining": _part("remaining", bullets(doc.remaining), sizer, cut=True),
        "decisions": _part("decisions", [f"- {d.status}: {d.what} - {d.reasoning}" for d in doc.decisions], sizer,
                           cut=True),
        "constraints": _part("constraints", bullets(constraints), sizer, cut=True),
        "drift": _part("drift", list(drift or []), sizer, cut=True),
        "facts": _part("facts", bullets(facts), sizer, order="any"),
        "done": _part("done", bullets(doc.done), sizer, order="tail"),
        "rederivation": _part("rederivation", bullets(doc.rederivation), sizer, order="any"),
        "skills": _part("skills", bullets(doc.suggested_skills), sizer, order="any"),
    }
    return {key: part for key, part in found.items() if part.items}


def _delta_parts(doc: StateSections, drift: list[str] | None, *, budget: int, sizer: Sizer,
                 judged: dict[tuple[str, int], bool]) -> dict[str, Part]:
    """``build_parts`` with a summary to compare with: kept entries out, lost ones in the ``lost`` part (order:
    Remaining, decisions, constraints, facts — the order of ``PRIORITY``), unjudged ones where they were."""
    def keep(section: str, n: int) -> bool:  # not judged: in its own part as before
        return (section, n) not in judged

    def lost(section: str, n: int) -> bool:
        return judged.get((section, n)) is False

    found = {key: part for key, part in build_parts(doc, drift, budget=budget, sizer=sizer).items()
             if key not in ("remaining", "decisions", "constraints", "facts")}
    decision = lambda d: f"{d.status}: {d.what} - {d.reasoning}"  # noqa: E731
    facts = list(enumerate(doc.facts))
    constraint = [(n, f) for n, f in facts if is_constraint(f)]
    other = [(n, f) for n, f in facts if not is_constraint(f)]
    gone = ([f"- {LOST_LABELS['remaining']}: {v}" for n, v in enumerate(doc.remaining) if lost("remaining", n)]
            + [f"- {decision(d)}" for n, d in enumerate(doc.decisions) if lost("decisions", n)]
            + [f"- {LOST_LABELS['constraint']}: {f}" for n, f in constraint if lost("facts", n)]
            + [f"- {LOST_LABELS['fact']}: {f}" for n, f in other if lost("facts", n)])
    found["lost"] = _part("lost", gone, sizer, cut=True, cap=int(budget * LOST_SHARE))
    found["remaining"] = _part("remaining", [f"- {v}" for n, v in enumerate(doc.remaining) if keep("remaining", n)],
                               sizer, cut=True)
    found["decisions"] = _part("decisions", [f"- {decision(d)}" for n, d in enumerate(doc.decisions)
                                             if keep("decisions", n)], sizer, cut=True)
    found["constraints"] = _part("constraints", [f"- {f}" for n, f in constraint if keep("facts", n)], sizer, cut=True)
    found["facts"] = _part("facts", [f"- {f}" for n, f in other if keep("facts", n)], sizer, order="any")
    return {key: part for key, part in found.items() if part.items}
