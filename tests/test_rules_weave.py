"""Weave stage (pipeline.stages.weave): header fields and bounds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.stages import weave
from pipeline.stages.models import Distillate
from pipeline.state.model import Decision, Evidence, Fact, Position
from pipeline.transcripts.model import TranscriptMeta

NOW = datetime(2026, 11, 29, 20, 31, 45, 123456, tzinfo=timezone.utc)


def meta(**kw) -> TranscriptMeta:
    base = dict(harness="claude-code", format="claude-code-jsonl", path="/tmp/t.jsonl", cwd="/home/dev/shop",
                git_branch="feature/rate-limit")
    base.update(kw)
    return TranscriptMeta(**base)


def test_header_fields():
    s = weave.run(Distillate(), meta(), now=NOW, trigger="pre-compact (auto)")
    assert (s.stamp, s.created, s.kind) == ("2026-11-29-2031", "2026-11-29T20:31:45Z", "recovered")
    assert (s.cwd, s.repo, s.branch, s.trigger) == ("/home/dev/shop", "shop", "feature/rate-limit", "pre-compact (auto)")


def test_header_defaults_and_conversions():
    local = datetime(2026, 11, 29, 21, 5, 0, tzinfo=timezone(timedelta(hours=2)))
    s = weave.run(Distillate(), meta(cwd=None, git_branch="", path=""), kind="auto", now=local)
    assert (s.stamp, s.created, s.kind) == ("2026-11-29-1905", "2026-11-29T19:05:00Z", "auto")
    assert (s.cwd, s.repo, s.branch, s.trigger) == ("unknown", "unknown", "unknown", None)
    naive = weave.run(Distillate(), meta(cwd="C:\\code\\ledger-cli\\", repo=None), now=datetime(2026, 1, 2, 3, 4))
    assert (naive.stamp, naive.repo) == ("2026-01-02-0304", "ledger-cli")
    assert weave.run(Distillate(), meta(repo="dev/shop"), now=NOW).repo == "dev/shop"


def test_bad_kind_is_refused():
    with pytest.raises(ValueError, match=r"AgentState.kind: 'weird' is not one of 'manual', 'auto', 'recovered'"):
        weave.run(Distillate(), meta(), kind="weird", now=NOW)


def test_models_refuse_values_outside_their_literal_types():
    with pytest.raises(ValueError, match=r"Decision.status: 'MAYBE' is not one of 'APPROVED', 'REJECTED'"):
        Decision(timestamp="2026-01-01T00:00:00Z", status="MAYBE", what="x", reasoning="y")
    with pytest.raises(ValueError, match=r"Fact.kind: 'rumour' is not one of 'fact', 'constraint'"):
        Fact(text="x", kind="rumour")
    assert Fact(text="x").kind == "fact"


def _d(ts: str, status: str, what: str, reasoning: str = "because") -> Decision:
    return Decision(timestamp=ts, status=status, what=what, reasoning=reasoning, evidence=Evidence(event_index=0, quote="x"))


def test_bounds_and_one_line_fields():
    d = Distillate(
        approved_workflow="\n\nAdd rate limiting.   \n\n\n\nRedirected 2026-09-01T10:03:00Z: also /refund\n",
        position=Position(current="  Implement\n the bucket ", done=[f"step {n}" for n in range(20)] + ["step 19"],
                          remaining=["a", "a", "b\nc"]),
        decisions=[
            _d("2026-09-01T10:05:00.000Z", "REJECTED", "fixed\nwindow"),
            _d("2026-09-01T10:01:00Z", "APPROVED", "token bucket", "it survives\nrestarts"),
            _d("2026-09-01T10:01:00Z", "APPROVED", "token bucket", "it survives restarts"),  # exact duplicate
            _d("", "APPROVED", "x" * 300, ""),
        ],
        facts=[Fact(text=f"fact {n}\nline", kind="fact") for n in range(weave.MAX_FACTS + 5)] + [Fact(text="fact 0 line")],
        rederivation=["Run: pytest", "Run: pytest", "Read the transcript: /tmp/t.jsonl"],
    )
    s = weave.run(d, meta(), now=NOW)
    assert s.approved_workflow == "Add rate limiting.\n\nRedirected 2026-09-01T10:03:00Z: also /refund"
    assert s.position.current == "Implement the bucket"
    assert s.position.done == [f"step {n}" for n in range(5, 20)]
    assert s.position.remaining == ["a", "b c"]
    assert [(x.timestamp, x.status, x.what, x.reasoning) for x in s.decisions[:2]] == [
        ("2026-09-01T10:01:00Z", "APPROVED", "token bucket", "it survives restarts"),
        ("2026-09-01T10:05:00Z", "REJECTED", "fixed window", "because"),
    ]
    assert len(s.decisions) == 3
    last = s.decisions[2]
    assert (last.timestamp, len(last.what), last.what.endswith("…"), last.reasoning) == (
        "2026-11-29T20:31:45Z", 160, True, "not stated"
    )
    assert [f.text for f in s.facts] == [f"fact {n} line" for n in range(weave.MAX_FACTS)]
    assert s.rederivation == ["Read the transcript: /tmp/t.jsonl", "Run: pytest"]


def test_empty_sections_stay_empty():
    s = weave.run(Distillate(), meta(path=""), now=NOW)
    assert (s.approved_workflow, s.position.current, s.position.done, s.decisions, s.facts, s.rederivation) == (
        None, None, [], [], [], []
    )
