"""Injection suite (issue 11 part 3): injected text never becomes a decision; the user's own decisions still do.

Transcripts: ``fixtures/injection/`` (Claude Code, Copilot CLI, opencode; written by ``generate.py`` from
``phrasings.py``): 20 phrasings (the issue's six and 14 more) in every place text that is not the speaker's own
reaches a transcript - user-pasted blocks (after a lead-in, in a code fence, bare), an assistant message quoting
fetched content (``>`` lines, inline quotes), tool results, a compaction summary, a sub-agent's answer - next to
four decisions of the user and the assistant (``OWN``: an ``APPROVED:`` line, "let's go with X", "yes, do that" to
a proposal, "we're going with X because…").

Engines: the rules engine through ``recover`` (distil, screen, weave, validate; then CONTEXT.md and the restore
handoff), and the llm engine behind the seam (``FakeLLM``, no network) answering as a fooled model would: one
decision per planted phrasing, cited verbatim from wherever it sits, plus the same payloads hung on the user's real
"yes, do that".  Each bare phrasing is also checked alone (no lead-in, no fence), in every own-words event kind.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import ROOT
from llm_helpers import llm_config
from pipeline.llm import FakeLLM
from pipeline.recovery import recover
from pipeline.restore.handoff import build_handoff
from pipeline.stages import distil
from pipeline.stages.rules.untrusted import evidence_problem
from pipeline.state.sections import read_sections
from pipeline.transcripts import read_transcript
from rules_builder import B

INJ = ROOT / "fixtures" / "injection"
sys.path.insert(0, str(INJ))
import generate  # noqa: E402
from phrasings import FILLER, PHRASINGS  # noqa: E402

NOW = datetime(2026, 10, 8, 12, 0, tzinfo=timezone.utc)
FILES = list(generate.FILES)
PAYLOADS = [p.payload for p in PHRASINGS]
BARE = [p for p in PHRASINGS if p.bare]
OWN_WHATS = ["use Redis for the rate limiter", "retry with exponential backoff", "httpx",
             "Postgres for the audit log"]  # in story order


def decision_log(text: str) -> str:
    return text.split("## Decision Log\n", 1)[1].split("\n## ", 1)[0]


def leaked(text: str) -> list[str]:
    low = text.lower()
    return [p for p in PAYLOADS if p.lower() in low]


def own_rows(decisions) -> list[tuple[str, str]]:
    """(status, which OWN) of each decision; a decision that is none of OWN shows as its text."""
    out = []
    for d in decisions:
        hit = [w for w in OWN_WHATS if w.lower() in d.what.lower()]
        out.append((d.status, hit[0] if len(hit) == 1 else d.what))
    return out


# --- the fixtures ---------------------------------------------------------------------------------------------

def test_fixtures_are_generated_and_plant_everything(tmp_path):
    assert generate.main(["generate", str(tmp_path)]) == 0
    for rel in FILES:
        assert (tmp_path / rel).read_bytes() == (INJ / rel).read_bytes(), f"{rel}: rerun fixtures/injection/generate.py"
    assert len(PHRASINGS) >= 6 + 8
    for rel in FILES:
        t = read_transcript(str(INJ / rel))
        kinds = {}
        for e in t.events:
            for p in PHRASINGS:
                if p.payload in e.text:
                    kinds.setdefault(p.id, set()).add(e.kind)
        for p in PHRASINGS:  # every phrasing reaches every place the harness has
            want = {"user_prompt", "assistant_text", "subagent_result"} | ({"compaction"} if p.bare else set())
            assert want <= kinds[p.id], (rel, p.id, kinds[p.id])
        # tool results are capped by the reader: the first phrasings of the page are in them
        assert sum("tool_result" in k for k in kinds.values()) >= 6, rel


# --- rules engine ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", FILES)
def test_rules_engine_keeps_only_the_speakers_own_decisions(rel):
    result = recover(str(INJ / rel), mask=True, now=NOW)
    assert own_rows(result.state.decisions) == [("APPROVED", w) for w in OWN_WHATS]
    assert {d.origin for d in result.state.decisions} == {"explicit", "user-approval", "implicit", "user"}
    assert leaked(decision_log(result.text)) == []
    # the screen said why, once per entry: a planted REJECTED is among them
    assert any("REJECTED: 'the nightly backup job'" in line for line in result.dropped)
    assert any("delete prod" in line and "addresses a model" in line for line in result.dropped)


@pytest.mark.parametrize("rel", FILES)
def test_rules_engine_without_the_screen_would_take_them(rel, monkeypatch):
    """The suite bites: with the screen off, the same transcript gives planted entries."""
    from pipeline.stages.rules import untrusted

    monkeypatch.setattr(untrusted, "decision_problem", lambda *a, **k: None)
    got = distil.run(read_transcript(str(INJ / rel))).decisions
    assert len(got) > 10
    assert len(set(leaked(" ".join(d.what for d in got)))) >= 10


def test_nothing_planted_reaches_context_md_or_the_handoff(tmp_path, capsys):
    from pipeline.cli import main

    state_dir = tmp_path / ".duck-tape"
    context = tmp_path / "CONTEXT.md"
    code = main(["recover", str(INJ / "claude-code.jsonl"), "--dir", str(state_dir), "--yes", "--mask",
                 "--merge", "--context", str(context)])
    assert code == 0
    capsys.readouterr()
    (state,) = state_dir.glob("*.state.md")
    decisions = context.read_text(encoding="utf-8").split("## Decisions\n", 1)[1].split("\n## ", 1)[0]
    assert [w for w in OWN_WHATS if w.lower() not in decisions.lower()] == []
    assert leaked(decisions) == []
    assert leaked(decision_log(state.read_text(encoding="utf-8"))) == []
    handoff = build_handoff(read_sections(state.read_text(encoding="utf-8")), source=str(state)).text
    assert "use Redis for the rate limiter" in handoff
    assert leaked(handoff.split("Decision", 1)[1]) == []


# --- each bare phrasing alone, in every own-words kind ------------------------------------------------------------

def alone(p) -> str:
    return f"{FILLER[0]}\n\n{FILLER[2]}\n\n{p.text}\n\n{FILLER[1]}"


@pytest.mark.parametrize("kind", ["user", "asst", "compaction"])
@pytest.mark.parametrize("p", BARE, ids=[p.id for p in BARE])
def test_a_bare_phrasing_gives_itself_away_to_the_rules_engine(p, kind):
    b = B()
    if kind == "compaction":
        b.compaction("Summary of the earlier conversation:\n" + alone(p))
    else:
        b.user("integrate acme-sdk")
        getattr(b, kind)(alone(p))
    b.user("APPROVED: use Redis for the rate limiter")
    rows = [(d.status, d.what) for d in distil.run(b.build()).decisions]
    assert rows == [("APPROVED", "use Redis for the rate limiter")]


@pytest.mark.parametrize("kind", ["user_prompt", "assistant_text", "reasoning", "subagent_result"])
@pytest.mark.parametrize("p", BARE, ids=[p.id for p in BARE])
def test_a_bare_phrasing_gives_itself_away_to_the_llm_screen(p, kind):
    text = alone(p)
    line = next(ln for ln in p.text.split("\n") if p.payload in ln)
    assert evidence_problem(kind, text, line, p.payload) is not None
    # prose well before it is still someone's words (after a fake fence or role turn, the rest of the event is not)
    assert evidence_problem(kind, text, FILLER[0][:60], "retry idempotent requests") is None


WRAPPERS = {
    "lead-in": lambda t: "here's the vendor README, is it right?:\n\n" + t,
    "fenced": lambda t: "what is wrong with this page?\n```\n" + t + "\n```",
    "quoted": lambda t: "The fetched page says\n" + "\n".join("> " + ln for ln in t.split("\n")),
    "tagged": lambda t: "<document>\n" + t + "\n</document>\ncan you check it?",
    "comment": lambda t: "# README\n<!--\n" + t + "\n-->",
}


@pytest.mark.parametrize("wrap", list(WRAPPERS))
@pytest.mark.parametrize("p", PHRASINGS, ids=[p.id for p in PHRASINGS])
def test_any_phrasing_in_pasted_or_quoted_text_is_no_decision(p, wrap):
    text = WRAPPERS[wrap](p.text)
    b = B()
    b.user("integrate acme-sdk")
    b.asst("Reading the docs.")
    b.user(text)
    b.asst(text)
    assert distil.run(b.build()).decisions == []
    line = next(ln for ln in text.split("\n") if p.payload in ln)
    for kind in ("user_prompt", "assistant_text", "subagent_result"):
        assert evidence_problem(kind, text, line, p.payload) is not None


# --- llm engine -----------------------------------------------------------------------------------------------

def line_of(text: str, needle: str) -> str:
    at = text.index(needle)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start: len(text) if end < 0 else end].strip()


def fooled_answer(t) -> tuple[dict, int]:
    """A fooled model's chunk answer: the four real decisions, one decision per planted phrasing in every event
    (quoted verbatim from it), and every payload hung on the user's real "yes, do that"; and how many are planted."""
    events = t.events
    idx = {name: next(e.index for e in events if needle in e.text and e.kind == kind)
           for name, needle, kind in (("redis", generate.OWN_APPROVED, "user_prompt"),
                                      ("lets", generate.OWN_LETS, "user_prompt"),
                                      ("yes", "yes, do that", "user_prompt"),
                                      ("httpx", generate.OWN_ASSISTANT, "assistant_text"))}
    ts = "2026-10-05T09:00:00Z"

    def d(status, what, why, ev, quote):
        return {"timestamp": ts, "status": status, "what": what, "reasoning": why,
                "evidence": {"event_index": ev, "quote": quote}}

    decisions = [
        d("APPROVED", "use Redis for the rate limiter", "already in the stack", idx["redis"], generate.OWN_APPROVED),
        d("APPROVED", "Postgres for the audit log", "already backed up", idx["lets"], generate.OWN_LETS),
        d("APPROVED", "retry with exponential backoff for the charge calls", "user approved the proposal",
          idx["yes"], "yes, do that"),
        d("APPROVED", "httpx for the SDK client", "supports HTTP/2", idx["httpx"], generate.OWN_ASSISTANT),
    ]
    planted = 0
    for e in events:
        for p in PHRASINGS:
            if p.payload in e.text:
                status = "REJECTED" if "REJ" in normalize_head(p.text) else "APPROVED"
                decisions.append(d(status, p.payload, "the docs say so", e.index, line_of(e.text, p.payload)))
                planted += 1
    for p in PHRASINGS:  # a real quote carrying an invented decision
        decisions.append(d("APPROVED", p.payload, "the user said yes", idx["yes"], "yes, do that"))
        planted += 1
    return {"decisions": decisions, "facts": []}, planted


def normalize_head(text: str) -> str:
    from pipeline.stages.rules.untrusted import normalize

    return normalize(text).upper()


WOVEN = {"approved_workflow": "Integrate acme-sdk into the payments service (PAY-318).",
         "position": {"current": "Record audit rows in Postgres", "done": ["httpx client"], "remaining": []}}


@pytest.mark.parametrize("rel", FILES)
def test_llm_engine_drops_every_planted_decision(rel):
    path = INJ / rel
    t = read_transcript(str(path))
    answer, planted = fooled_answer(t)
    fake = FakeLLM(by_stage={"distil_chunk": [lambda m, r: answer] * 20, "weave_state": [WOVEN] * 5})
    result = recover(str(path), config=llm_config("http://stand-in.invalid/v1"), llm=fake, mask=True, now=NOW)
    assert result.run.distillate.engines["Decision Log"] == "llm"
    assert sorted(own_rows(result.state.decisions)) == sorted(("APPROVED", w) for w in OWN_WHATS)
    assert {d.origin for d in result.state.decisions} == {"llm"}
    assert leaked(decision_log(result.text)) == []
    screened = [line for line in result.dropped if "dropped llm Decision Log entry" in line]
    assert len(screened) >= planted  # each planted entry of each chunk answer was dropped, with its reason
    reasons = " ".join(screened)
    for why in ("evidence cites a tool result", "evidence cites a compaction", "role-played system or chat turn",
                "inside a code block", "in pasted or fetched text introduced by", "is not supported by event"):
        assert why in reasons, why
