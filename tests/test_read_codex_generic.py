"""Codex rollout reader (FORMATS.md §4, §6) and the generic {role, content} JSONL reader."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.codex import exit_code_error

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
ROLLOUT = CORPUS / "codex-0.77-review-subagent-rollout.jsonl"
REPO = "/home/dev/misc/local-voice-assistant-codex"


def _write(tmp_path: Path, records: list[dict], name: str = "rollout.jsonl", tail: bytes = b"") -> str:
    path = tmp_path / name
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n" + tail)
    return str(path)


def _line(n: int, rtype: str, payload: dict) -> dict:
    return {"timestamp": f"2026-01-05T10:00:{n:02d}.000Z", "type": rtype, "payload": payload}


def _meta(n: int = 0, **extra) -> dict:
    payload = {"id": "019b-test", "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/home/dev/api",
               "originator": "codex_cli_rs", "cli_version": "0.77.0", "source": "cli",
               "git": {"branch": "feat/limits", "commit_hash": "abc", "repository_url": "https://example.com/dev/api"}}
    payload.update(extra)
    return _line(n, "session_meta", payload)


def _call(n: int, name: str, args: dict, call_id: str) -> dict:
    return _line(n, "response_item", {"type": "function_call", "name": name, "arguments": orjson.dumps(args).decode(),
                                      "call_id": call_id})


def _out(n: int, call_id: str, output, kind: str = "function_call_output") -> dict:
    return _line(n, "response_item", {"type": kind, "call_id": call_id, "output": output})


# --- Codex corpus -------------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_review_subagent_rollout():
    t = read_transcript(str(ROLLOUT))
    assert t.meta.format == "codex-rollout" and t.meta.harness == "codex"
    assert t.report.skipped_lines == [] and t.report.records == 38
    assert t.report.unknown_types == Counter()
    assert t.meta.session_id == "019b5669-8da8-7bc3-bed8-e1c1b805dad5"
    assert t.meta.cwd == REPO
    assert t.meta.git_branch == "001-stt-api"
    assert t.meta.model == "gpt-5.1-codex-max"
    assert t.meta.version == "0.77.0 (subagent: review)"  # source {"subagent": "review"}
    assert (t.meta.start_time, t.meta.end_time) == ("2025-12-25T16:48:36.776Z", "2025-12-25T16:49:20.251Z")
    assert Counter(e.kind for e in t.events) == Counter(
        {"tool_call": 4, "tool_result": 4, "reasoning": 3, "user_prompt": 1, "assistant_text": 1})
    # the one prompt comes from event_msg user_message, not the AGENTS.md / environment_context items
    (prompt,) = [e for e in t.events if e.kind == "user_prompt"]
    assert prompt.line == 5
    assert prompt.text.startswith("Review the code changes against the base branch 'main'.")
    calls = [e for e in t.events if e.kind == "tool_call"]
    assert [e.tool_name for e in calls] == ["shell_command"] * 4
    assert calls[0].target == f"cd {REPO} && git diff 5c2031e347e42f8eefde569db2d1ad513c0a5564"
    assert calls[3].target == f"cd {REPO} && nl -ba backend/tests/test_errors.py"
    results = [e for e in t.events if e.kind == "tool_result"]
    assert [e.call_id for e in results] == [e.call_id for e in calls]
    assert not any(e.is_error for e in results)  # all "Exit code: 0"
    assert results[0].text.startswith("Exit code: 0\nWall time: 0 seconds\nTotal output lines: 1487\n")
    assert results[0].text.endswith("...[+35808 chars]")  # 39,808-character output capped at 4,000
    (answer,) = [e for e in t.events if e.kind == "assistant_text"]  # not also the event_msg agent_message
    assert answer.line == 37 and answer.text.startswith('{\n  "findings": [')
    assert [e.line for e in t.events if e.kind == "reasoning"] == [16, 28, 35]  # line 9 has an empty summary


# --- Codex hand-written -------------------------------------------------------------------------------------------


def test_first_session_meta_wins_and_context_items_are_not_prompts(tmp_path):
    path = _write(tmp_path, [
        _meta(0),
        _line(1, "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context><cwd>/home/dev/api</cwd></environment_context>"}]}),
        _line(2, "response_item", {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>"}]}),
        _line(3, "event_msg", {"type": "user_message", "message": "Add rate limiting", "images": []}),
        _line(4, "turn_context", {"cwd": "/home/dev/api", "model": "gpt-5.2-codex"}),
        _line(5, "response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": "Adding a token bucket."}]}),
        _line(6, "event_msg", {"type": "agent_message", "message": "Adding a token bucket."}),
        _line(7, "event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        _meta(8, cwd="/elsewhere", cli_version="0.80.0"),
        _line(9, "turn_context", {"cwd": "/elsewhere", "model": "other-model"}),
        _line(10, "event_msg", {"type": "brand_new_event"}),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "Add rate limiting"), ("assistant_text", "Adding a token bucket.")]
    assert (t.meta.cwd, t.meta.version, t.meta.model) == ("/home/dev/api", "0.77.0", "gpt-5.2-codex")
    assert (t.meta.git_branch, t.meta.repo) == ("feat/limits", "https://example.com/dev/api")
    assert t.meta.session_ids == ["019b-test"]
    assert t.report.ignored["turn_aborted"] == 1
    assert t.report.unknown_types == Counter({"event_msg:brand_new_event": 1})


def test_function_call_arguments_and_exit_codes(tmp_path):
    path = _write(tmp_path, [
        _meta(0),
        _call(1, "shell", {"command": ["bash", "-lc", "pytest -q tests/api"], "workdir": "/home/dev/api"}, "c1"),
        _out(2, "c1", orjson.dumps({"output": "2 failed, 40 passed",
                                     "metadata": {"exit_code": 1, "duration_seconds": 3.2}}).decode()),
        _call(3, "shell_command", {"command": "ruff check ."}, "c2"),
        _out(4, "c2", "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nAll checks passed!"),
        _call(5, "exec_command", {"cmd": "cargo build"}, "c3"),
        _out(6, "c3", "Chunk ID: 1\nWall time: 2.0 seconds\nProcess exited with code 101\nOutput:\nerror[E0425]"),
        _call(7, "shell_command", {"command": "false"}, "c4"),
        _out(8, "c4", "Exit code: 1\nWall time: 0 seconds\nOutput:\n"),
        _line(9, "response_item", {"type": "custom_tool_call", "name": "exec", "call_id": "c5", "status": "completed",
                                   "input": "await tools.exec_command({cmd: 'ls'})"}),
        _out(10, "c5", [{"type": "input_text", "text": "src\ntests"}], kind="custom_tool_call_output"),
    ])
    t = read_transcript(path)
    calls = [(e.tool_name, e.target) for e in t.events if e.kind == "tool_call"]
    assert calls == [("shell", "pytest -q tests/api"), ("shell_command", "ruff check ."),
                     ("exec_command", "cargo build"), ("shell_command", "false"),
                     ("exec", "await tools.exec_command({cmd: 'ls'})")]
    results = [(e.call_id, e.tool_name, e.is_error, e.text) for e in t.events if e.kind == "tool_result"]
    assert results == [
        ("c1", "shell", True, "Exit code: 1\n2 failed, 40 passed"),
        ("c2", "shell_command", False, "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nAll checks passed!"),
        ("c3", "exec_command", True,
         "Chunk ID: 1\nWall time: 2.0 seconds\nProcess exited with code 101\nOutput:\nerror[E0425]"),
        ("c4", "shell_command", True, "Exit code: 1\nWall time: 0 seconds\nOutput:\n"),
        ("c5", "exec", False, "src\ntests"),
    ]
    assert t.events[0].text == 'command: ["bash","-lc","pytest -q tests/api"]\nworkdir: /home/dev/api'


@pytest.mark.parametrize("patch_end_first", [True, False])
def test_apply_patch_failure_from_patch_apply_end_in_either_order(tmp_path, patch_end_first):
    patch = "*** Begin Patch\n*** Update File: src/limits.py\n@@\n-a\n+b\n*** End Patch"
    patch_end = _line(2, "event_msg", {"type": "patch_apply_end", "call_id": "p1", "success": False,
                                       "stdout": "", "stderr": "context not found", "changes": {}})
    output = _out(3, "p1", "apply_patch verification failed", kind="custom_tool_call_output")
    path = _write(tmp_path, [
        _meta(0),
        _line(1, "response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p1",
                                   "status": "completed", "input": patch}),
        *([patch_end, output] if patch_end_first else [output, patch_end]),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.target, e.is_error) for e in t.events] == [
        ("tool_call", "src/limits.py", False), ("tool_result", None, True)]
    assert t.events[0].text == patch


def test_update_plan_is_a_todo_list(tmp_path):
    plan = {"explanation": "Rate limiting", "plan": [{"step": "Add token bucket", "status": "completed"},
                                                     {"step": "Wire middleware", "status": "in_progress"},
                                                     {"step": "Write tests", "status": "pending"}]}
    path = _write(tmp_path, [_meta(0), _call(1, "update_plan", plan, "u1"), _out(2, "u1", "Plan updated")])
    t = read_transcript(path)
    assert len(t.events) == 1
    todo = t.events[0]
    assert (todo.kind, todo.tool_name, todo.target, todo.call_id) == ("todo_list", "update_plan", "3 todos", "u1")
    assert [(i.content, i.status) for i in todo.todos] == [
        ("Add token bucket", "completed"), ("Wire middleware", "in_progress"), ("Write tests", "pending")]


def test_compacted_lines_and_review_findings(tmp_path):
    path = _write(tmp_path, [
        _meta(0),
        _line(1, "compacted", {"message": "Summary: rate limiting half done", "replacement_history": []}),
        _line(2, "event_msg", {"type": "context_compacted"}),
        _line(3, "compacted", {"message": "", "replacement_history": [{"type": "message"}] * 3}),
        _line(4, "event_msg", {"type": "exited_review_mode", "review_output": {
            "findings": [{"title": "[P1] Missing await", "body": "limiter.take() is not awaited"}],
            "overall_explanation": "One bug."}}),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text, e.agent) for e in t.events] == [
        ("compaction", "Summary: rate limiting half done", None),
        ("compaction", "", None),  # issue 14: an empty summary is no content
        ("subagent_result", "One bug.\n- [P1] Missing await — limiter.take() is not awaited", "review"),
    ]


def test_torn_last_line_is_skipped_and_counted(tmp_path):
    path = _write(tmp_path, [_meta(0), _line(1, "event_msg", {"type": "user_message", "message": "hi"})],
                  tail=b'{"timestamp":"2026-01-05T10:00:02.000Z","type":"response_item","payl')
    t = read_transcript(path, warn=False)
    assert [(e.kind, e.text) for e in t.events] == [("user_prompt", "hi")]
    assert t.report.skipped_lines == [3]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Exit code: 0\nWall time: 1 seconds\nOutput:\nExit code: 1", False),  # the first code decides
        ('{"output":"x","metadata":{"exit_code":2}}', True),
        ("Process exited with code 0\n", False),
        ("bwrap: Failed to make / slave: Operation not permitted", False),  # no exit code: no flag
    ],
)
def test_exit_code_error(output, expected):
    assert exit_code_error(output) is expected


# --- generic {role, content} JSONL --------------------------------------------------------------------------------


def test_generic_roles_content_forms_and_tool_calls(tmp_path):
    path = _write(tmp_path, [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Why is CI red?", "timestamp": "2026-01-05T10:00:00+00:00"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, {"type": "image", "url": "x"}],
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "bash", "arguments": '{"command": "gh run view --log"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "error: lint failed", "is_error": True},
        {"role": "assistant", "content": "Lint fails on unused imports."},
        {"role": "user", "content": "   "},
        {"role": "critic", "content": "n/a"},
    ], name="chat.jsonl")
    t = read_transcript(path)
    assert t.meta.format == "generic-jsonl" and t.meta.harness == "generic"
    assert [(e.kind, e.text, e.tool_name, e.target, e.call_id, e.is_error) for e in t.events] == [
        ("user_prompt", "Why is CI red?", None, None, None, False),
        ("assistant_text", "Let me look.", None, None, None, False),
        ("tool_call", "command: gh run view --log", "bash", "gh run view --log", "call_1", False),
        ("tool_result", "error: lint failed", "bash", None, "call_1", True),
        ("assistant_text", "Lint fails on unused imports.", None, None, None, False),
    ]
    assert t.events[0].timestamp == "2026-01-05T10:00:00Z"
    assert t.report.unknown_types == Counter({"role:critic": 1})
    assert t.report.skipped_lines == []


def test_generic_torn_line_and_session_id(tmp_path):
    path = _write(tmp_path, [{"role": "user", "content": "hello", "session_id": "s-1", "created_at": 1754000000}],
                  name="chat.jsonl", tail=b'{"role": "assistant", "content": "cut')
    t = read_transcript(path, warn=False)
    assert [(e.kind, e.text, e.timestamp) for e in t.events] == [("user_prompt", "hello", "2025-07-31T22:13:20.000Z")]
    assert t.meta.session_id == "s-1"
    assert t.report.skipped_lines == [2]


def _msg(n: int, role: str, text: str, **extra) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return _line(n, "response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra})


def test_newest_layout_resumes_phases_exec_parts_and_summary_in_replacement_history(tmp_path):
    """Codex 0.13x: a resumed rollout repeats session_meta, assistant messages carry phase, the code-mode
    ``exec`` custom tool returns a list of parts, and a local compaction keeps its summary only inside
    replacement_history (after Codex's handoff prefix)."""
    summary = ("Another language model started to solve this problem and produced a summary of its thinking "
               "process. Here is the summary produced by the other language model:\n"
               "Added the --units flag; tests for imperial still failing.")
    path = _write(tmp_path, [
        _meta(0),
        _line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        _line(2, "event_msg", {"type": "user_message", "message": "add --units to the forecast command"}),
        _msg(3, "assistant", "Reading cli.py first.", phase="commentary"),
        _line(4, "response_item", {"type": "custom_tool_call", "name": "exec", "call_id": "c1",
                                   "input": "const r = await tools.exec_command({cmd: 'pytest -q'}); text(r.output)"}),
        _out(5, "c1", [{"type": "input_text", "text": "2 failed, 40 passed\nProcess exited with code 1"}],
             kind="custom_tool_call_output"),
        _msg(6, "assistant", "Two imperial tests fail.", phase="final_answer"),
        _line(7, "event_msg", {"type": "task_complete", "turn_id": "t1"}),
        _meta(8, timestamp="2026-01-05T11:00:00.000Z", cli_version="0.131.0"),
        _line(9, "compacted", {"message": "", "replacement_history": [
            _msg(9, "user", "add --units to the forecast command")["payload"],
            _msg(9, "user", summary)["payload"]]}),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "add --units to the forecast command"),
        ("assistant_text", "Reading cli.py first."),
        ("tool_call", "const r = await tools.exec_command({cmd: 'pytest -q'}); text(r.output)"),
        ("tool_result", "2 failed, 40 passed\nProcess exited with code 1"),
        ("assistant_text", "Two imperial tests fail."),
        ("compaction", "Added the --units flag; tests for imperial still failing."),
    ]
    assert t.events[3].is_error and t.events[3].tool_name == "exec"
    assert t.meta.version == "0.77.0" and t.meta.start_time == "2026-01-05T10:00:00.000Z"
    assert not t.report.unknown_types


def test_spawned_subagent_rollout_names_its_parent(tmp_path):
    parent = "019e0000-aaaa-7bbb-8ccc-000000000001"
    path = _write(tmp_path, [_meta(0, cli_version="0.131.0", source={"subagent": {"thread_spawn": {
        "parent_thread_id": parent, "depth": 1, "agent_nickname": "Euler", "agent_role": "worker"}}})])
    assert read_transcript(path).meta.version == f"0.131.0 (subagent: worker, parent {parent})"
