"""Translate an Agent State into a ``ContextDelta`` with the rigid map (DESIGN.md "Translation (rigid map)", revised
2026-12-04: persistent granularity, "decision-level, not commit-level"; issue 26).

* Decision Log -> Decisions, only lasting choices: one entry per decision, key = slug of *what* (``assign_keys``),
  text ``<STATUS>: <what> - <reasoning>`` (status kept), date = the decision's UTC date.  Procedural approvals of
  the session ("commit these changes", "fix that error", "run it", "go ahead"), declined tool calls, plan approvals
  and option labels are left out (``classify.decision``);
* Approved Workflow -> not translated (a task list), except the goals the user states explicitly in it ("the goal
  is …") -> Goals;
* Established Facts -> a user rule to Conventions, a term the session defined to Glossary, a fact that will still
  hold next session (environment trap, port, version, root cause) to the merge's Notes block (one bullet each);
  one-off failures, pasted output, progress reports and requests of the session are left out (``classify.fact``);
  facts that are lines of a fenced block (pasted output) are left out;
* Position.Remaining -> Deferred-Debt (``TODO(<type>): <date> <what> [status: open]``), a question the user was
  asked and never answered -> Open-Questions; procedural steps and the assistant's offers are left out
  (``classify.remaining``);
* Position.Current, Position.Done, Re-derivation, Suggested Skills: not translated.  Done items are carried in
  ``ContextDelta.done`` only to resolve Open-Questions and Deferred-Debt they match; they are never written.

Everything left out is listed in ``ContextDelta.skipped`` with its reason (the merge preview's ``Skipped:`` lines).
Every text goes through ``reduce_text`` (no fenced output, commit hashes or long path prefixes).  Keys depend only
on the state's own text, so merging the same state twice gives the same keys.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from pipeline.context import classify, lexicon
from pipeline.context.delta import ContextDelta, DeltaDebt, DeltaEntry, DeltaFact, DeltaQuestion, DeltaSkip
from pipeline.context.keys import assign_keys
from pipeline.context.reduce import outside_fences, reduce_text
from pipeline.state.model import AgentState
from pipeline.state.store import session_label

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

    ``masker`` (``--mask``) is applied to every state text before it is classified, reduced and keyed, so no secret
    reaches a key or a text; the number masked goes into each entry's ``redacted``.
    """
    clean = masker or _unmasked
    moment = created_moment(state.created)
    day = moment.strftime("%Y-%m-%d")
    delta = ContextDelta(
        session=session_label(state.stamp, state.kind),
        origin=f"{state.repo}@{state.branch}",
        repo=state.repo,
        stamp=moment.strftime("%Y-%m-%d %H:%M"),
        done=[text for text in (reduce_text(clean(item)[0]) for item in state.position.done) if text],
    )
    facts = _fact_rows(state, clean)
    templated = sum(1 for _, _, verdict in facts if verdict.reason == classify.PROMPT_TEXT) >= PROMPT_LINES
    _workflow(state, clean, delta)
    _decisions(state, day, clean, delta, templated)
    _facts(facts, templated, delta)
    _remaining(state, day, clean, delta)
    return delta


def _skip(delta: ContextDelta, source: str, text: str, reason: str) -> None:
    delta.skipped.append(DeltaSkip(source=source, text=reduce_text(text) or text.strip(), reason=reason))


def _workflow(state: AgentState, clean: Masker, delta: ContextDelta) -> None:
    """Goals the user states in the Approved Workflow; the workflow itself is a task list, not translated."""
    workflow, hidden = clean(state.approved_workflow or "")
    lines = workflow.splitlines()
    text = "\n".join(line for line, keep in zip(lines, outside_fences(lines)) if keep)
    if not text.strip():
        return
    found = [reduce_text(goal) for goal in classify.goals(text)]
    found = [goal for goal in found if goal]
    for goal, key in zip(found, assign_keys(found)):
        delta.entries.append(DeltaEntry(section="Goals", key=key, text=goal, redacted=hidden))
    _skip(delta, "Approved Workflow", text, classify.TASK_LIST)


def _decisions(state: AgentState, day: str, clean: Masker, delta: ContextDelta, templated: bool) -> None:
    """Lasting choices to Decisions; in a state that took in a prompt template (``PROMPT_LINES``), a decision whose
    reasoning is an instruction ("Ensure coverage balance: …") is the template's."""
    kept: list[tuple[str, str, str, int, str]] = []  # status, what, reasoning, masked, date
    for decision in state.decisions:
        what, n = clean(decision.what)
        reasoning, m = clean(decision.reasoning)
        what, reasoning = reduce_text(what), reduce_text(reasoning)
        if not what:
            continue
        verdict = classify.decision(decision.status, what, reasoning)
        if verdict.target and templated and classify.instruction(reasoning):
            verdict = classify.skip(classify.PROMPT_TEXT, what)
        if verdict.target is None:
            _skip(delta, "Decision Log", f"{decision.status}: {what}", verdict.reason or "")
            continue
        date = decision.timestamp[:10] if len(decision.timestamp) >= 10 and decision.timestamp[4] == "-" else day
        kept.append((decision.status, verdict.text, reasoning, n + m, date))
    for (status, what, reasoning, hidden, date), key in zip(kept, assign_keys([row[1] for row in kept])):
        text = f"{status}: {what}" + (f" - {reasoning}" if reasoning else "")
        delta.entries.append(DeltaEntry(section="Decisions", key=key, text=text, date=date, redacted=hidden))


PROMPT_LINES = 3
"""A state with this many Established Facts in a prompt's words (RFC 2119 MUST/SHOULD, "the user") took in a
pasted prompt or command template: its rule-like lines, and the lines that speak of "the user", are the
template's, not the user's (``_facts``)."""


def _fact_rows(state: AgentState, clean: Masker) -> list[tuple[str, int, classify.Verdict]]:
    """``(text, secrets masked, verdict)`` per Established Facts line (masked, reduced; pasted lines left out)."""
    facts = [f.text for f in state.facts]
    rows = []
    for raw, keep in zip(facts, outside_fences(facts)):
        text, hidden = clean(raw)
        text = reduce_text(text)
        if text:
            rows.append((text, hidden, classify.fact(text) if keep else classify.skip(classify.PASTED, text)))
    return rows


def _facts(rows: list[tuple[str, int, classify.Verdict]], templated: bool, delta: ContextDelta) -> None:
    rules: list[tuple[str, int]] = []
    for text, hidden, verdict in rows:
        if templated and verdict.target and (verdict.target == "Conventions" or lexicon.THE_USER.search(text)):
            _skip(delta, "Established Facts", text, classify.PROMPT_TEXT)
        elif verdict.target == "Conventions":
            rules.append((verdict.text, hidden))
        elif verdict.target == "Glossary" and verdict.term:
            delta.entries.append(DeltaEntry(section="Glossary", key=verdict.term, text=verdict.text, redacted=hidden))
        elif verdict.target == "Notes":
            if all(f.text != verdict.text for f in delta.facts):
                delta.facts.append(DeltaFact(text=verdict.text, redacted=hidden))
        else:
            _skip(delta, "Established Facts", text, verdict.reason or "")
    for (text, hidden), key in zip(rules, assign_keys([text for text, _ in rules])):
        delta.entries.append(DeltaEntry(section="Conventions", key=key, text=text, redacted=hidden))


def _remaining(state: AgentState, day: str, clean: Masker, delta: ContextDelta) -> None:
    for item in state.position.remaining:
        text, hidden = clean(item)
        text = reduce_text(text)
        if not text:
            continue
        verdict = classify.remaining(text)
        if verdict.target == "Open-Questions":
            delta.questions.append(DeltaQuestion(text=verdict.text, date=day, redacted=hidden))
        elif verdict.target == "Deferred-Debt":
            delta.debts.append(DeltaDebt(type=verdict.type or "todo", date=day, what=verdict.text, redacted=hidden))
        else:
            _skip(delta, "Position.Remaining", text, verdict.reason or "")
