"""evals.sections + evals.score: views of a state file and probe verdicts."""

from __future__ import annotations

from evals.score import CaseScore, EngineScore, check, occurs
from evals.sections import views
from evals.suite import Probe

STATE = """# Agent State

Session: 2026-01-01-1200-recovered | Cwd: /home/dev/x | Repo/Branch: x@main
Created: 2026-01-01T12:00:00Z

## Approved Workflow
make the export stream rows (LEDG-881)
Redirected 2026-01-01T10:00:00Z: actually, also the json export

## Position
- **Current:** Add a CHANGELOG entry
- **Done:**
  - Edited ledger/export.py
  - Ran `pytest -q` (passed)
- **Remaining:** None

## Decision Log
2026-01-01T10:00:00Z APPROVED: Celery - retries out of the box
2026-01-01T10:05:00Z APPROVED: Argon2id over bcrypt - memory-hard
2026-01-01T10:06:00Z APPROVED: Argon2id over bcrypt - memory-hard, replayed
2026-01-01T10:10:00Z REJECTED: Celery - user said "use RQ, nobody wants a second worker framework"
2026-01-01T10:10:00Z APPROVED: RQ - user's instruction

## Established Facts
Redis listens on port 6380, not 6379.

## Re-derivation
- Read the transcript: /tmp/t.jsonl
"""


def _p(kind: str, terms: list[str], **kw) -> Probe:
    return Probe(id="p", kind=kind, terms=terms, **kw)


def test_occurs_is_case_and_space_insensitive_at_word_boundaries():
    assert occurs("Port  6380", "redis listens on PORT 6380, not 6379")
    assert not occurs("6380", "port 63800")
    assert not occurs("rq", "requests")
    assert occurs("/v1/orders", "keep /v1/orders alive")  # a term starting with punctuation
    assert occurs("--dry-run", "add a `--dry-run` flag")


def test_views_cut_the_sections():
    v = views(STATE)
    assert v.get("workflow") == ["make the export stream rows (LEDG-881)\nRedirected 2026-01-01T10:00:00Z: actually, also the json export"]
    assert v.get("current") == ["Add a CHANGELOG entry"]
    assert v.get("done") == ["Edited ledger/export.py", "Ran `pytest -q` (passed)"]
    assert v.get("remaining") == []
    assert [d.status for d in v.decisions] == ["APPROVED", "APPROVED", "APPROVED", "REJECTED", "APPROVED"]
    assert v.decisions[1].what == "Argon2id over bcrypt"
    assert v.get("facts") == ["Redis listens on port 6380, not 6379."]
    assert v.get("rederivation") == ["Read the transcript: /tmp/t.jsonl"]


def test_terms_must_share_one_entry():
    v = views(STATE)
    assert check("c", _p("done", ["ledger/export.py"]), v).passed
    assert not check("c", _p("done", ["ledger/export.py", "pytest"]), v).passed  # two different items
    assert check("c", _p("workflow", ["LEDG-881", "json export"]), v).passed  # the workflow is one entry


def test_final_state_wins_for_decisions():
    v = views(STATE)
    assert not check("c", _p("approved", ["Celery"]), v).passed  # later rejected
    assert check("c", _p("rejected", ["Celery"]), v).passed
    assert check("c", _p("absent", ["Celery"], section="approved"), v).passed  # no longer standing
    assert check("c", _p("approved", ["RQ"]), v).passed  # "use RQ" in the rejection's reasoning does not reverse it
    # an absent probe on a decision view looks at the option only: RQ in a reasoning approves nothing
    assert check("c", _p("absent", ["second worker framework"], section="rejected"), v).passed


def test_max_entries_counts_duplicates():
    v = views(STATE)
    r = check("c", _p("approved", ["Argon2id"], max_entries=1), v)
    assert not r.passed and "2 entries" in r.reason and len(r.checked) == 2
    assert check("c", _p("approved", ["Argon2id"], max_entries=2), v).passed


def test_negative_kinds():
    v = views(STATE)
    leak = check("c", _p("absent", ["6380"]), v)
    assert not leak.passed and leak.violation
    assert check("c", _p("absent", ["sk_live_abc"]), v).passed
    assert check("c", _p("keep", ["LEDG-881"]), v).passed
    lost = check("c", _p("keep", ["PAY-2291"]), v)
    assert not lost.passed and lost.violation
    assert not check("c", _p("done", ["nothing"]), v).violation  # a missed positive is not a violation


def test_engine_score_aggregates():
    v = views(STATE)
    results = [check("c", _p("done", ["ledger/export.py"]), v), check("c", _p("fact", ["6379"]), v),
               check("c", _p("fact", ["nope"]), v), check("c", _p("absent", ["6380"]), v)]
    s = EngineScore("rules", [CaseScore("c", "rules", results, decisions=4, grounded=3, state_tokens=100,
                                        transcript_tokens=1000, seconds=0.5)])
    assert s.recall == 2 / 3
    assert s.kind_recall() == {"done": 1.0, "fact": 0.5}
    assert s.section_recall() == {"done": 1.0, "facts": 0.5}
    assert (s.violations, s.negatives) == (1, 1)
    assert s.decision_precision == 0.75
    assert s.compression == 10.0
    assert EngineScore("x").decision_precision is None and EngineScore("x").recall is None
