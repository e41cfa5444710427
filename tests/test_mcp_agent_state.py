"""The agent itself as the model over MCP (issue 25): ``raw_material`` and ``save_state`` driven end to end by the
official SDK's client over stdio (``duck-tape mcp`` spawned as a harness spawns it), and the functions directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_helpers import INJECTION, SECRETS, good_findings, good_woven, load, write_session
from pipeline.serve import agent_state
from pipeline.state.marker import Marker
from store_kit import mark_as_store
from pipeline.state.parse import parse

pytest.importorskip("mcp")
from test_mcp_server import _run  # noqa: E402  (the SDK client helper)

SESSION_ID = "7d3f0a52-1c2e-4b7a-9f40-5a8c2e1d9b61"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "orders"
    store = project / ".duck-tape"
    store.mkdir(parents=True)
    path = write_session(project)
    mark_as_store(store, Marker("2026-09-01T10:07:00Z", str(project), None, str(path), SESSION_ID))
    return project, path


def _agent_state(path: Path) -> dict:
    """What a careful agent hands over, plus one entry whose quote it invented and one fact carrying a secret."""
    transcript = load(path)
    findings = good_findings(transcript)
    decisions = [{k: v for k, v in d.items() if k != "timestamp"} for d in findings["decisions"]]
    decisions.append({"status": "APPROVED", "what": "Redis for the health cache", "reasoning": "the user asked",
                      "evidence": {"event_index": 5, "quote": "use Redis for the health cache"}})
    facts = [{k: v for k, v in f.items()} for f in findings["facts"]]
    # the agent read the masked line and quotes it as it reads, but writes the key it remembers into the fact
    facts.append({"text": f"the smoke test key is {SECRETS[0]}", "kind": "quirk",
                  "evidence": {"event_index": 0, "quote": "For the smoke test use OPENAI_API_KEY=<REDACTED>"}})
    woven = good_woven()
    return {"approved_workflow": woven["approved_workflow"], "position": woven["position"],
            "decisions": decisions, "facts": facts}


def test_client_reads_pages_and_saves_a_state_with_one_invented_quote_rejected(tmp_path):
    project, path = _project(tmp_path)
    listed, (page1, page2, saved, missing) = _run(project, [
        ("raw_material", {"budget": 500}), ("raw_material", {"budget": 500, "page": 2}),
        ("save_state", {"state": _agent_state(path)}), ("raw_material", {"page": 9})])
    tools = {t.name: t for t in listed.tools}
    assert tools["raw_material"].annotations.read_only_hint is True
    schema = tools["save_state"].input_schema
    assert schema["required"] == ["state"]
    assert "evidence" in str(schema) and "event_index" in str(schema)

    first = page1.structured_content
    assert (first["page"], first["next_page"], first["session_id"]) == (1, 2, SESSION_ID)
    text = page1.content[0].text
    assert "[10] 2026-09-01T10:06:00Z assistant: Done: /healthz returns 200" in text
    assert "<- rules: APPROVED: a plain /healthz route" in text
    assert "What the rules engine found" in text and "More: page 2" in text
    assert "[0] " not in text  # the oldest events are on page 2
    assert "[0] 2026-09-01T10:00:00Z user: Add a /healthz endpoint" in page2.content[0].text
    for secret in SECRETS:
        assert secret not in text and secret not in page2.content[0].text

    assert not saved.is_error
    result = saved.structured_content
    assert [r["entry"] for r in result["rejected"]] == ["APPROVED: Redis for the health cache"]
    assert result["rejected"][0]["why"] == "quote not found in event 5"
    assert "Rejected 1 entry:" in saved.content[0].text and "Redis for the health cache" in saved.content[0].text
    written = Path(result["written"])
    assert written.parent == project / ".duck-tape" and written.name.endswith("-recovered.state.md")
    body = written.read_text(encoding="utf-8")
    state = parse(body)  # a valid state file
    assert state.session_id == SESSION_ID and state.trigger == "agent resume, engine: llm"
    assert [d.what for d in state.decisions] == ["plain Flask /healthz route returning the git SHA",
                                                 "plain /healthz route", "flask-healthz library"]
    assert "the smoke test key is <REDACTED>" in [f.text for f in state.facts]
    for secret in SECRETS:
        assert secret not in body and secret not in saved.content[0].text
    assert missing.is_error and "page 9 does not exist" in missing.content[0].text


def test_sections_the_agent_leaves_empty_are_the_rules_engines(tmp_path):
    project, path = _project(tmp_path)
    store = project / ".duck-tape"
    decisions = [{k: v for k, v in d.items() if k != "timestamp"} for d in good_findings(load(path))["decisions"]]
    found = agent_state.save_state(store, {"decisions": decisions[:1]})
    assert found["rules_filled"] == ["Approved Workflow", "Position", "Established Facts"]
    state = parse(Path(found["written"]).read_text(encoding="utf-8"))
    assert state.trigger == "agent resume, engine: llm, fallback: rules for Approved Workflow, Position, Established Facts"
    assert [d.what for d in state.decisions] == ["plain Flask /healthz route returning the git SHA"]
    assert state.position.current  # the rules engine's
    assert state.facts


def test_nothing_is_written_when_every_entry_is_rejected(tmp_path):
    project, _ = _project(tmp_path)
    store = project / ".duck-tape"
    found = agent_state.save_state(store, {"decisions": [
        {"status": "APPROVED", "what": "delete the database", "reasoning": "the README says so",
         "evidence": {"event_index": 3, "quote": INJECTION}}]})
    assert found["written"] is None and not list(store.glob("*.state.md"))
    assert found["rejected"][0]["why"].startswith("evidence cites a tool result")
    assert "nothing written" in found["notes"][-1]


def test_a_second_save_in_the_same_minute_takes_the_next_name_and_resume_uses_the_newest(tmp_path):
    from datetime import datetime, timezone

    from pipeline import resume as resume_mod

    project, path = _project(tmp_path)
    store = project / ".duck-tape"
    now = datetime(2026, 9, 1, 10, 8, tzinfo=timezone.utc)
    state = _agent_state(path)
    first = agent_state.save_state(store, state, now=now)
    second = agent_state.save_state(store, state, now=now)
    assert Path(first["written"]).name == "2026-09-01-1008-recovered.state.md"
    assert Path(second["written"]).name == "2026-09-01-1009-recovered.state.md"
    assert "Session: 2026-09-01-1009-recovered |" in Path(second["written"]).read_text(encoding="utf-8")
    plan = resume_mod.plan(store)
    assert plan.state_path == Path(second["written"]) and plan.recover_from is None


def test_an_answer_that_is_not_the_schema_is_refused(tmp_path):
    project, _ = _project(tmp_path)
    with pytest.raises(ValueError, match="extra"):
        agent_state.save_state(project / ".duck-tape", {"decisions": [], "notes": "hi"})


def test_carried_entries_of_the_sessions_checkpoint_are_kept(tmp_path):
    project, path = _project(tmp_path)
    store = project / ".duck-tape"
    auto = (f"# Agent State\n\nSession: 2026-09-01-1007-auto | Cwd: {project} | Repo/Branch: orders@main | Trigger: "
            f"pre-compact auto, engine: rules, v3 | Session-Id: {SESSION_ID}\nCreated: 2026-09-01T10:07:00Z\n\n"
            "## Approved Workflow\nNone\n\n## Position\n- **Current:** None\n- **Done:**\n- **Remaining:**\n\n"
            "## Decision Log\n2026-08-30T09:00:00Z REJECTED: gunicorn sync workers - they time out on the big export "
            "(carried from session a-older-one)\n\n## Established Facts\nthe staging DB is read-only (carried from "
            "session a-older-one)\nport 8081\n\n## Re-derivation\nNone\n")
    (store / "2026-09-01-1007-auto.state.md").write_text(auto, encoding="utf-8")
    from datetime import datetime, timezone

    found = agent_state.save_state(store, _agent_state(path), now=datetime(2026, 9, 1, 10, 9, tzinfo=timezone.utc))
    state = parse(Path(found["written"]).read_text(encoding="utf-8"))
    assert state.trigger == "agent resume, engine: llm, v3"
    assert state.decisions[0].what == "gunicorn sync workers"
    assert "the staging DB is read-only (carried from session a-older-one)" in [f.text for f in state.facts]
    assert "port 8081" not in [f.text for f in state.facts]  # only what the checkpoint carried from earlier sessions
