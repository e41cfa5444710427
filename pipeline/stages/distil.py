"""Distil stage, rules engine: ``Transcript`` -> ``Distillate`` (DESIGN.md "Stages", engine **rules**).

Deterministic, no network, no I/O.  Each section comes from its own module under ``pipeline.stages.rules``
(module docstrings there state each rule and its source):

* Approved Workflow — ``rules.workflow``  (the user's tasks in order, approved plans)
* Position          — ``rules.position``  (the episodes' states at the end: ``rules.episodes``, ``rules.current``,
  ``rules.done``, ``rules.remaining``; the latest todo list)
* Decision Log      — ``rules.decisions`` (explicit, implicit, user approvals/rejections, dead ends)
* Established Facts — ``rules.facts``     (constraints, sub-agent findings, root causes, quirks)
* Re-derivation     — ``rules.rederive``  (transcript path, files, test/build commands), ``rules.session``
  (resumable sub-agent sessions)
* header branch     — ``rules.session``   (git's own output, when the metadata names no branch)

Every decision and fact carries ``Evidence`` whose quote is a verbatim substring of the cited event's text.
Bounds (Done <= 15, facts <= 25, one-line fields) are applied here and again by ``weave``.
"""

from __future__ import annotations

from pipeline.stages.models import Distillate
from pipeline.stages.rules import decisions, facts, position, rederive, session, workflow
from pipeline.stages.rules.scan import scan
from pipeline.state.model import Position
from pipeline.transcripts.model import Transcript

RULES_SECTIONS = ("Approved Workflow", "Position", "Decision Log", "Established Facts", "Re-derivation")


def run(transcript: Transcript) -> Distillate:
    """Distil ``transcript`` with the rules engine.

    Returns a ``Distillate`` whose ``engines`` maps each section it filled to ``"rules"``.  Pure: reads only
    ``transcript``; raises nothing for odd input (an empty transcript gives empty sections).
    """
    s = scan(transcript)
    current, done, remaining = position.build(s)
    log = decisions.build(s)
    return Distillate(
        approved_workflow=workflow.build(s),
        position=Position(current=current, done=done, remaining=remaining),
        decisions=log,
        facts=facts.build(s, log),
        rederivation=rederive.build(s) + session.resume_lines(s),
        engines={name: "rules" for name in RULES_SECTIONS},
        screened=list(s.screened),
        branch=None if transcript.meta.git_branch else session.branch(s),
    )
