"""Issue 14 item 6: inputs from public bug reports (``tests/report_inputs.py`` writes each), read and distilled."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import report_inputs as ri

from pipeline.hooks.checkpoint import hook_main, run_checkpoint
from pipeline.hooks.payload import HookInput, parse_payload
from pipeline.recovery import recover
from pipeline.stages.extract import extract_raw_text
from pipeline.state.marker import read_marker
from pipeline.state.parse import parse
from pipeline.state.store import list_states
from pipeline.transcripts import read_transcript
from pipeline.transcripts.summaries import useless_summary

NOW = datetime(2026, 5, 4, 10, 0, tzinfo=timezone.utc)


def kinds(t) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in t.events]


def state_of(path: Path):
    return parse(recover(str(path), now=NOW, mask=True).text)


def decisions(state) -> list[str]:
    return [f"{d.status}: {d.what}" for d in state.decisions]


# --- Claude Code -------------------------------------------------------------------------------------------------


def test_claude_code_spaced_json_boundary_with_newer_metadata_fields(tmp_path):
    path = ri.claude_code_spaced_boundary(tmp_path)
    assert '"type": "system", "subtype": "compact_boundary"' in path.read_text()  # the spaced form
    t = read_transcript(str(path))
    assert t.report.skipped_lines == [] and not t.report.unknown_types
    [compaction] = [e for e in t.events if e.kind == "compaction"]
    assert compaction.target == "auto" and compaction.text.startswith("This session is being continued")
    assert [k for k, _ in kinds(t)] == ["user_prompt", "assistant_text", "user_prompt", "assistant_text",
                                        "compaction", "assistant_text"]
    state = state_of(path)
    assert state.session_id == ri.CC_SESSION and state.approved_workflow == ri.TASK
    assert any("csv.writer" in d and d.startswith("APPROVED") for d in decisions(state))
    assert any("pandas" in d and d.startswith("REJECTED") for d in decisions(state))


def test_claude_code_stream_json_boundary_reads_the_sdk_metadata(tmp_path):
    t = read_transcript(str(ri.claude_code_stream_json(tmp_path)))
    assert t.meta.harness == "claude-code" and t.report.skipped_lines == []
    [compaction] = [e for e in t.events if e.kind == "compaction"]
    assert compaction.target == "manual"  # compact_metadata.trigger (snake_case SDK form)
    assert ("user_prompt", ri.TASK) in kinds(t)


def test_subagent_payload_resolves_the_subagents_own_transcript(tmp_path):
    parent, sub = ri.claude_code_with_subagent(tmp_path / "projects")
    payload = {"session_id": ri.CC_SESSION, "transcript_path": str(parent), "cwd": ri.CWD,
               "hook_event_name": "PreCompact", "trigger": "auto", "agent_id": ri.SUBAGENT_ID,
               "agent_type": "general-purpose"}
    assert parse_payload(json.dumps(payload)).agent_id == ri.SUBAGENT_ID
    store = tmp_path / ".duck-tape"
    out, err = io.StringIO(), io.StringIO()
    assert hook_main(None, str(store), stdin=io.StringIO(json.dumps(payload)), stdout=out, stderr=err) == 0
    assert f"sub-agent {ri.SUBAGENT_ID}: using its transcript {sub}" in err.getvalue()
    [state_file] = list_states(store)
    state = parse(state_file.path.read_text())
    assert state.approved_workflow == ri.SUBAGENT_TASK
    assert state.session_id == f"{ri.CC_SESSION}.agent-{ri.SUBAGENT_ID}"  # not handed over as the session's own
    marker = read_marker(store)
    assert marker.transcript == str(sub) and marker.session_id == state.session_id


def test_subagent_payload_without_the_file_falls_back_to_the_parent(tmp_path):
    parent = ri.claude_code_spaced_boundary(tmp_path)
    result = run_checkpoint(HookInput(session_id=ri.CC_SESSION, transcript_path=str(parent), agent_id="ffff0000"),
                            store=tmp_path / "s", now=NOW)
    assert result.written and result.transcript == str(parent) and result.session_id == ri.CC_SESSION
    assert any("no transcript of it beside" in m for m in result.messages)


# --- Copilot CLI -------------------------------------------------------------------------------------------------


def test_copilot_raw_line_separators_never_split_a_record(tmp_path):
    path = ri.copilot_line_separators(tmp_path)
    raw = path.read_bytes()
    assert "\u2028".encode() in raw and "\u2029".encode() in raw and raw.count(b"\n") == 6
    t = read_transcript(str(path))
    assert t.report.skipped_lines == [] and t.report.repaired_lines == [] and t.report.records == 6
    assert ("user_prompt", ri.SEPARATOR_PROMPT) in kinds(t)
    raw_md = extract_raw_text(str(path))
    assert "Date,Account,Amount" in raw_md and "Unreadable" not in raw_md
    state = state_of(path)  # a valid state file: the separators do not break its lines either
    assert "Date,Account,Amount" in (state.approved_workflow or "")


def test_copilot_20_mb_events_with_many_resume_segments_checkpoint_with_no_variable_set(tmp_path, monkeypatch):
    monkeypatch.delenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", raising=False)
    path = ri.copilot_many_segments(tmp_path / "session-state", 20 * 1024 * 1024)
    text = path.read_text()
    assert path.stat().st_size > 20 * 1024 * 1024 and text.count('"type":"session.resume"') >= 9
    store = tmp_path / ".duck-tape"
    payload = {"sessionId": ri.COPILOT_SESSION, "timestamp": 1777885200000, "cwd": ri.CWD,
               "transcriptPath": str(path), "trigger": "auto"}
    out, err = io.StringIO(), io.StringIO()
    assert hook_main(None, str(store), stdin=io.StringIO(json.dumps(payload)), stdout=out, stderr=err) == 0
    [state_file] = list_states(store)
    state = parse(state_file.path.read_text())
    assert state.session_id == ri.COPILOT_SESSION and state.cwd == ri.CWD
    assert (state.approved_workflow or "").startswith(ri.TASK)
    assert any("csv.writer" in d for d in decisions(state)) and any("pandas" in d for d in decisions(state))


def test_copilot_decision_before_the_first_compaction_survives_two_cycles(tmp_path):
    path = ri.copilot_two_compactions(tmp_path)
    t = read_transcript(str(path))
    assert [e.kind for e in t.events].count("compaction") == 2
    state = state_of(path)
    assert any(d.startswith("APPROVED") and "csv.writer" in d for d in decisions(state))
    assert any(d.startswith("REJECTED") and "pandas" in d for d in decisions(state))
    assert (state.approved_workflow or "").startswith(ri.TASK)


# --- useless compaction summaries --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, why", [
    ("", "empty"), ("  \n", "empty"), (ri.OPENCODE_TEMPLATE, "template"),
    ("Goal - (none)\nInstructions - (none)\nNext Steps - (none)", "template"),
    ("**Goal:** n/a\n**Next Steps:** none", "template"),
    ("Another model worked on this task before you. Here is the summary it produced:\n", "preface"),
    ("compacted (no summary text; 3 history items kept)", "empty"),
])
def test_useless_summaries_are_detected(text, why):
    assert useless_summary(text) == why


@pytest.mark.parametrize("text", [
    "## Goal\nSpeed up the build", "<overview>Work on the ledger report continues.</overview>",
    "## Goal\n- Add a CSV export\n\n## Next Steps\n- (none)", "Summary: rate limiting half done",
    "Goal: ship the export\nNext Steps: none",
])
def test_real_summaries_are_content(text):
    assert useless_summary(text) is None


def test_codex_instant_and_remote_compactions_are_not_content(tmp_path):
    path = ri.codex_empty_compactions(tmp_path)
    t = read_transcript(str(path))
    assert [(k, x) for k, x in kinds(t) if k == "compaction"] == [("compaction", ""), ("compaction", "")]
    assert t.report.ignored["useless_compaction_summary"] == 2
    assert [x for k, x in kinds(t) if k == "user_prompt"] == [ri.TASK, "keep going"]  # replacement_history unread
    state = state_of(path)
    text = recover(str(path), now=NOW, mask=True).text
    assert (state.approved_workflow or "").startswith(ri.TASK) and "compacted" not in text
    assert any("csv.writer" in d for d in decisions(state))


def test_opencode_bare_template_summary_is_not_content(tmp_path):
    path = ri.opencode_bare_template(tmp_path)
    t = read_transcript(str(path))
    assert ("compaction", "") in kinds(t) and t.report.ignored["useless_compaction_summary"] == 1
    text = recover(str(path), now=NOW, mask=True).text
    assert "(none)" not in text and "From the compaction summary" not in text
    assert parse(text).approved_workflow.startswith(ri.TASK)


def test_claude_code_template_summary_is_not_content(tmp_path):
    path = ri.claude_code_spaced_boundary(tmp_path)
    lines = path.read_text().splitlines()
    summary = json.loads(lines[5])
    summary["message"]["content"] = "Goal - (none)\nNext Steps - (none)"
    lines[5] = json.dumps(summary)
    path.write_text("\n".join(lines) + "\n")
    t = read_transcript(str(path))
    assert ("compaction", "") in kinds(t) and t.report.ignored["useless_compaction_summary"] == 1
    assert "(none)" not in recover(str(path), now=NOW, mask=True).text
