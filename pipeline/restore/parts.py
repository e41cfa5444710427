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


def build_parts(doc: StateSections, drift: list[str] | None, *, budget: int, sizer: Sizer) -> dict[str, Part]:
    """The handoff parts of ``doc`` keyed as in ``DISPLAY``; parts with no items are absent.

    ``drift``: the reconciliation lines (``pipeline.restore.reconcile``), None to leave the section out.
    ``budget`` (bytes) sets the caps of the workflow and Current (``WORKFLOW_SHARE``, ``CURRENT_SHARE``).
    """
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
