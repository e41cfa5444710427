"""Shape checks for the project's own fixture transcripts (fixtures/README.md, FORMATS.md sections 1-3).

These tests read the committed files under fixtures/ and re-run fixtures/generate.py into a temporary directory.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CC_JSONL = FIXTURES / "claude-code" / "checkout-rate-limit.jsonl"
CC_JSON = FIXTURES / "claude-code" / "checkout-rate-limit.json"
TRUTHS = {
    "claude-code/checkout-rate-limit.jsonl": "claude-code/checkout-rate-limit.truth.json",
    "claude-code/checkout-rate-limit.json": "claude-code/checkout-rate-limit.truth.json",
    "copilot/events.jsonl": "copilot/events.truth.json",
    "copilot/legacy-session.jsonl": "copilot/legacy-session.truth.json",
    "opencode/export.json": "opencode/export.truth.json",
    "opencode/messages.json": "opencode/messages.truth.json",
}
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def load(rel: str) -> object:
    path = FIXTURES / rel
    return load_jsonl(path) if path.suffix == ".jsonl" else json.loads(path.read_text(encoding="utf-8"))


def truth(rel: str) -> dict:
    return json.loads((FIXTURES / TRUTHS[rel]).read_text(encoding="utf-8"))


def strings(obj: object) -> list[str]:
    """Every string value anywhere inside a parsed JSON value."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in strings(v)]
    return []


def count_events(records: list[dict]) -> int:
    """The fixture counting rule: lines with a message; string content = 1, list content = 1 per block."""
    total = 0
    for r in records:
        m = r.get("message")
        if isinstance(m, dict):
            c = m["content"]
            total += 1 if isinstance(c, str) else len(c)
    return total


@pytest.fixture(scope="module")
def cc() -> list[dict]:
    return load_jsonl(CC_JSONL)


# -- all files ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", ["claude-code/checkout-rate-limit.jsonl", "copilot/events.jsonl",
                                 "copilot/legacy-session.jsonl"])
def test_every_jsonl_line_parses_as_an_object(rel):
    lines = (FIXTURES / rel).read_text(encoding="utf-8").splitlines()
    assert lines and all(line.strip() for line in lines)
    assert all(isinstance(json.loads(line), dict) for line in lines)


def test_generator_is_deterministic_and_fixtures_are_current(tmp_path):
    subprocess.run([sys.executable, str(FIXTURES / "generate.py"), str(tmp_path)], check=True, capture_output=True)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(generated) == 19  # 16 + the Copilot history file and the two Gemini checkpoints
    for rel in generated:
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), (
            f"fixtures/{rel} differs from a fresh run: run .venv/bin/python fixtures/generate.py")


@pytest.mark.parametrize("rel", sorted(TRUTHS))
def test_planted_secrets_are_in_the_raw_file(rel):
    raw = (FIXTURES / rel).read_text(encoding="utf-8")
    t = truth(rel)
    assert t["secrets"]
    for secret in t["secrets"] + t.get("secret_parts", []) + t.get("pii", []):
        assert secret in raw, f"{secret!r} missing from {rel}"


@pytest.mark.parametrize("rel", sorted(TRUTHS))
def test_every_ground_truth_string_occurs_in_the_fixture(rel):
    t = truth(rel)
    text = "\n\x00\n".join(strings(load(rel)))
    blocks = t.get("first_prompt_blocks", [])
    prompts = [p for p in t["prompts"] if p != "\n\n".join(blocks)] + blocks  # a block-list prompt: its blocks
    expected = [t["workflow"], t["current"], *t["redirections"], *t["constraints"], *t["remaining"],
                *t["done_todos"], *t["keep"], *prompts]
    expected += [q for d in t["approved"] + t["rejected"] for q in d["quotes"]]
    expected += [f["text"] for f in t["facts"]]
    if t["compaction_summary_start"]:
        expected.append(t["compaction_summary_start"])
    missing = [s for s in expected if s not in text]
    assert not missing


# -- Claude Code ----------------------------------------------------------------------------------------------
def test_cc_has_at_least_300_events_and_matches_recorded_counts(cc):
    t = truth("claude-code/checkout-rate-limit.jsonl")
    assert count_events(cc) >= 300
    assert count_events(cc) == t["counts"]["events"]
    assert len(cc) == t["counts"]["jsonl_lines"]
    assert 350 <= len(cc) <= 450


def test_cc_json_array_holds_the_same_records(cc):
    raw = CC_JSON.read_text(encoding="utf-8")
    assert raw.startswith("[\n  {") and raw.isascii()
    assert json.loads(raw) == cc


def test_cc_starts_with_metadata_lines_without_message(cc):
    assert [r["type"] for r in cc[:4]] == ["summary", "permission-mode", "progress", "file-history-snapshot"]
    assert all("message" not in r for r in cc[:4])
    first = next(r for r in cc if "message" in r)
    blocks = first["message"]["content"]
    assert isinstance(blocks, list) and [b["type"] for b in blocks] == ["text", "text"]
    assert blocks[0]["text"] == truth("claude-code/checkout-rate-limit.jsonl")["workflow"]
    assert first["parentUuid"] is None


def test_cc_envelope_fields_and_parent_chain(cc):
    seen: set[str] = set()
    for r in cc:
        if r["type"] in ("user", "assistant", "system", "progress", "attachment"):
            assert r["cwd"] == "/home/dev/shop" and r["gitBranch"] == "feature/rate-limit"
            assert r["version"] == "2.1.20" and ISO_MS.match(r["timestamp"])
            assert r["parentUuid"] is None or r["parentUuid"] in seen
            seen.add(r["uuid"])
        if r["type"] == "assistant" and not r.get("isApiErrorMessage"):
            assert r["requestId"].startswith("req_") and r["message"]["id"].startswith("msg_")
            assert len(r["message"]["content"]) == 1


def test_cc_assistant_messages_are_split_over_lines(cc):
    by_id: dict[str, list[str]] = {}
    for r in cc:
        if r["type"] == "assistant":
            by_id.setdefault(r["message"]["id"], []).append(r["message"]["content"][0]["type"])
    assert ["thinking", "text", "tool_use"] in by_id.values()
    multi_line_texts = [b["text"] for r in cc if r["type"] == "assistant" for b in r["message"]["content"]
                        if b["type"] == "text" and "\n\n- " in b["text"]]
    assert len(multi_line_texts) >= 3


def test_cc_exactly_one_compaction_followed_by_summary_and_more_work(cc):
    idx = [i for i, r in enumerate(cc) if r.get("subtype") == "compact_boundary"]
    assert len(idx) == 1
    boundary = cc[idx[0]]
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"]
    assert boundary["compactMetadata"] == {"trigger": "auto", "preTokens": 167342}
    summary = cc[idx[0] + 1]
    assert summary["isCompactSummary"] is True and summary["isVisibleInTranscriptOnly"] is True
    assert summary["parentUuid"] == boundary["uuid"]
    assert summary["message"]["content"].startswith(
        "This session is being continued from a previous conversation that ran out of context.")
    assert count_events(cc[idx[0] + 2:]) >= 80


def test_cc_tool_calls_cover_the_expected_tools(cc):
    names = Counter(b["name"] for r in cc if r["type"] == "assistant" for b in r["message"]["content"]
                    if b["type"] == "tool_use")
    for name in ("Bash", "Read", "Edit", "Write", "Grep", "Glob", "WebFetch", "TodoWrite", "Task"):
        assert names[name] >= 1, name
    assert names["TodoWrite"] >= 5


def test_cc_last_todo_list_has_one_in_progress_and_pending_items(cc):
    t = truth("claude-code/checkout-rate-limit.jsonl")
    writes = [b["input"]["todos"] for r in cc if r["type"] == "assistant" for b in r["message"]["content"]
              if b["type"] == "tool_use" and b["name"] == "TodoWrite"]
    last = writes[-1]
    assert all(set(item) == {"content", "status", "activeForm"} for item in last)
    assert [i["content"] for i in last if i["status"] == "in_progress"] == [t["current"]]
    assert [i["content"] for i in last if i["status"] == "pending"] == t["remaining"]
    assert [i["content"] for i in last if i["status"] == "completed"] == t["done_todos"]
    boundary = next(i for i, r in enumerate(cc) if r.get("subtype") == "compact_boundary")
    assert any(b.get("name") == "TodoWrite" for r in cc[boundary:] if r["type"] == "assistant"
               for b in r["message"]["content"])


def test_cc_task_result_names_the_agent_and_states_the_finding(cc):
    t = truth("claude-code/checkout-rate-limit.jsonl")
    results = [r for r in cc if isinstance(r.get("toolUseResult"), dict) and "agentId" in r["toolUseResult"]]
    assert len(results) == 1
    tur = results[0]["toolUseResult"]
    assert tur["status"] == "completed" and tur["agentId"] == "a7c31f9" and tur["totalTokens"] > 0
    content = results[0]["message"]["content"][0]["content"]
    assert content[-1]["text"].startswith("agentId: a7c31f9 (for resuming")
    assert t["facts"][0]["text"] in content[0]["text"] == tur["content"][0]["text"]


def test_cc_error_results(cc):
    results = [(r, b) for r in cc if r["type"] == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b["type"] == "tool_result"]
    errors = [(r, b) for r, b in results if b.get("is_error")]
    texts = [b["content"] for _, b in errors]
    assert any("Exit code 1" in x and "2 failed, 40 passed" in x for x in texts)
    assert "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>" in texts
    assert all(isinstance(r["toolUseResult"], str) and r["toolUseResult"].startswith("Error:") for r, _ in errors)
    rejected = next(i for i, r in enumerate(cc) if r["type"] == "user" and isinstance(r["message"]["content"], list)
                    and "doesn't want to proceed" in str(r["message"]["content"][0].get("content")))
    assert cc[rejected + 1]["message"]["content"] == [
        {"type": "text", "text": "[Request interrupted by user for tool use]"}]


def test_cc_meta_lines_commands_and_api_error(cc):
    user_strings = [r for r in cc if r["type"] == "user" and isinstance(r["message"]["content"], str)]
    caveat = [r for r in user_strings if r["message"]["content"].startswith("Caveat: ")]
    assert len(caveat) == 1 and caveat[0]["isMeta"] is True
    review = next(i for i, r in enumerate(cc) if r["type"] == "user" and
                  r["message"]["content"] == "<command-message>review</command-message>\n"
                                             "<command-name>/review</command-name>\n"
                                             "<command-args>src/shop/api</command-args>")
    assert cc[review + 1]["isMeta"] is True
    api = [r for r in cc if r.get("isApiErrorMessage")]
    assert len(api) == 1 and api[0]["message"]["model"] == "<synthetic>"
    assert {r["type"] for r in cc} >= {"summary", "progress", "attachment", "file-history-snapshot"}


# -- Copilot --------------------------------------------------------------------------------------------------
def test_copilot_events_shape():
    ev = load("copilot/events.jsonl")
    assert 80 <= len(ev) <= 150
    start = ev[0]["data"]
    assert ev[0]["type"] == "session.start" and start["copilotVersion"] == "1.0.59"
    assert start["context"]["cwd"] == "/home/dev/ledger-cli" and start["context"]["branch"] == "export-streaming"
    assert ev[-1]["type"] == "session.shutdown"
    assert all(ev[i]["parentId"] == ev[i - 1]["id"] for i in range(1, len(ev)))
    reqs = [q for e in ev if e["type"] == "assistant.message" for q in e["data"]["toolRequests"]]
    assert reqs and all(isinstance(q["arguments"], dict) and q["type"] == "function" for q in reqs)
    failed = [e["data"] for e in ev if e["type"] == "tool.execution_complete" and not e["data"]["success"]]
    assert any(f["error"]["message"].startswith("No match found") for f in failed)
    types = Counter(e["type"] for e in ev)
    for kind in ("subagent.started", "subagent.completed", "abort", "session.compaction_start",
                 "session.compaction_complete", "session.model_change"):
        assert types[kind] == 1, kind
    assert any(e["data"].get("parentToolCallId") for e in ev if e["type"] == "assistant.message")
    users = [e["data"] for e in ev if e["type"] == "user.message"]
    assert all(u["transformedContent"].startswith("<current_datetime>") for u in users)
    summary = next(e["data"]["summaryContent"] for e in ev if e["type"] == "session.compaction_complete")
    assert summary.startswith("<overview>")


def test_copilot_legacy_shape():
    ev = load("copilot/legacy-session.jsonl")
    assert 40 <= len(ev) <= 80
    assert ev[0]["data"]["copilotVersion"] == "unknown" and "context" not in ev[0]["data"]
    users = [e["data"]["content"] for e in ev if e["type"] == "user.message"]
    assert all(re.search(r"\n\n<current_datetime>[^<]+</current_datetime>$", u) for u in users)
    systems = [e["data"]["content"] for e in ev if e["type"] == "system.message"]
    assert systems and all("* Current working directory: C:\\Users\\dev\\src\\invoice-tool\n" in s for s in systems)
    reqs = [q for e in ev if e["type"] == "assistant.message" for q in e["data"]["toolRequests"]]
    assert {q["name"] for q in reqs} >= {"str_replace_editor", "powershell"} and all("type" not in q for q in reqs)
    assert sum(1 for e in ev if e["type"] == "tool.execution_complete" and not e["data"]["success"]) == 2
    assert [e["data"]["performedBy"] for e in ev if e["type"] == "session.truncation"] == ["BasicTruncator"]


# -- opencode -------------------------------------------------------------------------------------------------
def test_opencode_export_shape():
    doc = load("opencode/export.json")
    assert set(doc) == {"info", "messages"} and doc["info"]["directory"] == "/home/dev/notes-api"
    msgs = doc["messages"]
    assert 30 <= len(msgs) <= 60
    assert all(list(m["info"])[-2:] == ["id", "sessionID"] for m in msgs)
    assert all(isinstance(m["info"]["time"]["created"], int) and m["info"]["time"]["created"] > 1.7e12 for m in msgs)
    parts = [p for m in msgs for p in m["parts"]]
    assert any(p["type"] == "text" and p.get("synthetic") is True for p in parts)
    assert any(p["type"] == "reasoning" for p in parts)
    tools = [p for p in parts if p["type"] == "tool"]
    assert [p["state"]["status"] for p in tools].count("error") == 1
    assert {p["state"]["status"] for p in tools} == {"completed", "error"}
    task = next(p for p in tools if p["tool"] == "task")
    assert task["state"]["output"].startswith("task_id: ses_") and "<task_result>" in task["state"]["output"]
    todos = [p["state"]["input"]["todos"] for p in tools if p["tool"] == "todowrite"]
    assert todos and all(set(t) == {"content", "status", "priority", "id"} for t in todos[-1])
    comp = next(i for i, m in enumerate(msgs) if any(p["type"] == "compaction" for p in m["parts"]))
    after = msgs[comp + 1]["info"]
    assert after["agent"] == "compaction" and after["mode"] == "compaction" and after["summary"] is True


def test_opencode_messages_array_shape():
    msgs = load("opencode/messages.json")
    assert isinstance(msgs, list) and 15 <= len(msgs) <= 30
    assert all(list(m["info"])[:3] == ["id", "sessionID", "role"] for m in msgs)
    assert all(list(p)[:4] == ["id", "sessionID", "messageID", "type"] for m in msgs for p in m["parts"])
    assert {m["info"]["role"] for m in msgs} == {"user", "assistant"}
