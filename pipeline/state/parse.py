"""Parse an Agent State file back into an ``AgentState`` (DESIGN.md "Agent State file (Tier 2)").

The inverse of ``pipeline.state.render.render`` (format described there): for every state render accepts,
``render(parse(render(s))) == render(s)``.  Evidence, origin and fact kinds are not in the file, so they come
back as None / ``"fact"``.

The reading itself — what is tolerated on input, and every ``InputError`` (exit 2, naming the path and the
1-based line) — is ``pipeline.state.sections.read_sections``, the one reader of the format, which the restore hook uses
directly (issue 7).  This module only builds the models from it.
"""

from __future__ import annotations

from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.sections import read_sections


def parse(text: str, *, path: str | None = None) -> AgentState:
    """Parse Agent State file ``text`` into an ``AgentState``.

    ``path`` is only used in error messages (``<path>:<line>: <what was expected>``; ``<string>`` when None).
    Raises ``InputError`` (the cases are listed in ``pipeline.state.sections``).
    """
    doc = read_sections(text, path=path)
    return AgentState(
        stamp=doc.stamp,
        kind=doc.kind,
        cwd=doc.cwd,
        repo=doc.repo,
        branch=doc.branch,
        trigger=doc.trigger,
        created=doc.created,
        session_id=doc.session_id,
        approved_workflow=doc.approved_workflow,
        position=Position(current=doc.current, done=doc.done, remaining=doc.remaining),
        decisions=[
            Decision(timestamp=d.timestamp, status=d.status, what=d.what, reasoning=d.reasoning) for d in doc.decisions
        ],
        facts=[Fact(text=text) for text in doc.facts],
        rederivation=doc.rederivation,
        suggested_skills=doc.suggested_skills,
    )
