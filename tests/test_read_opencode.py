"""opencode reader (FORMATS.md §3, §6, §7): the real export and messages array, and one input per rule."""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.opencode import task_result_text

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
EXPORT = CORPUS / "opencode-1.2.5-export.json"
ARRAY = CORPUS / "opencode-1.15.7-messages-array.json"

T0 = 1754000000000  # 2025-07-31T22:13:20.000Z (FORMATS.md §7)
SESSION = {"id": "ses_test", "slug": "calm-otter", "directory": "/home/dev/web", "title": "Build speed",
           "version": "1.2.5", "time": {"created": T0, "updated": T0 + 60_000}}


def _user(n: int, *parts: dict) -> dict:
    return {"info": {"id": f"msg_u{n}", "sessionID": "ses_test", "role": "user", "time": {"created": T0 + n * 1000},
                     "agent": "build", "model": {"providerID": "openai", "modelID": "gpt-5.3-codex"}},
            "parts": list(parts)}


def _assistant(n: int, *parts: dict, **info) -> dict:
    base = {"id": f"msg_a{n}", "sessionID": "ses_test", "role": "assistant",
            "time": {"created": T0 + n * 1000, "completed": T0 + n * 1000 + 500}, "parentID": "msg_u1",
            "modelID": "gpt-5.3-codex", "providerID": "openai", "mode": "build", "agent": "build",
            "path": {"cwd": "/home/dev/web", "root": "/home/dev/web"}}
    base.update(info)
    return {"info": base, "parts": list(parts)}


def _text(text: str, **extra) -> dict:
    return {"id": "prt_t", "type": "text", "text": text, **extra}


def _tool(call_id: str, tool: str, status: str, inp: dict, **state) -> dict:
    return {"id": f"prt_{call_id}", "type": "tool", "callID": call_id, "tool": tool,
            "state": {"status": status, "input": inp, **state}}


def _write_export(tmp_path: Path, messages: list[dict], name: str = "export.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"info": SESSION, "messages": messages}, indent=2), encoding="utf-8")
    return str(path)


def _write_array(tmp_path: Path, messages: list[dict], name: str = "messages.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(messages, indent=2), encoding="utf-8")
    return str(path)


def _shape(t) -> list[tuple]:
    return [(e.kind, e.text, e.tool_name, e.target, e.call_id, e.is_error, e.agent, e.timestamp, e.line)
            for e in t.events]


# --- corpus ---------------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_export():
    t = read_transcript(str(EXPORT))
    assert t.meta.format == "opencode-export" and t.meta.harness == "opencode"
    assert t.report.skipped_lines == [] and t.report.records == 4
    assert t.report.unknown_types == Counter()
    assert t.meta.session_id == "ses_39b5d713cffeRgAoxPIwS3Plus"
    assert t.meta.cwd == "/Users/dev/repos/vfp/dark-factory"
    assert t.meta.version == "1.2.5"
    assert t.meta.model == "openai/gpt-5.3-codex"
    assert t.meta.start_time == "2026-02-16T04:08:20.931Z"  # info.time.created 1771214900931
    assert t.meta.end_time == "2026-02-16T04:09:35.193Z"
    assert [(e.kind, e.line) for e in t.events] == [
        ("user_prompt", 1), ("reasoning", 2), ("tool_call", 2), ("tool_result", 2),
        ("subagent_call", 3), ("subagent_result", 3), ("assistant_text", 4),
    ]  # the two empty reasoning parts give no event
    prompt, _, skill, _, task, answer, final = t.events
    assert prompt.text.startswith("Use the `gitter-commit` skill from `.opencode/skills/gitter-commit/SKILL.md`")
    assert prompt.timestamp == "2026-02-16T04:08:20.942Z"
    assert (skill.tool_name, skill.target, skill.call_id) == ("skill", "gitter-commit", "call_ZcWu1OzVJNFr3Ya5C6bplCm5")
    assert (task.tool_name, task.target, task.agent) == ("task", "Commit changes via gitter", "gitter")
    assert task.text.startswith("Goal: Turn current working tree into a clean set of meaningful commits")
    assert answer.call_id == task.call_id == "call_JV2AfZQdyiUa2gcwxGFvJ1FF" and answer.agent == "gitter"
    assert answer.text.startswith("- **Commits in order**\n- `b934703`")
    assert answer.text.endswith("so both commits were titled to match that style.")
    assert "task_id:" not in answer.text and "task_result" not in answer.text
    assert final.text.startswith("Done — I loaded `gitter-commit` and routed the commit work through `@gitter`.")
    assert all(e.session_id == "ses_39b5d713cffeRgAoxPIwS3Plus" for e in t.events)


@pytest.mark.corpus
def test_corpus_messages_array():
    t = read_transcript(str(ARRAY))
    assert t.meta.format == "opencode-messages"
    assert t.report.skipped_lines == [] and t.report.records == 3
    assert t.meta.session_id == "ses_18684d584ffe1JuGPUt8v6Igr8"
    assert t.meta.cwd == "/home/dev/Projects/opencode-local-share"
    assert t.meta.model == "opencode-go/deepseek-v4-pro"
    assert t.meta.version is None  # the bare array carries no session info
    assert t.meta.start_time == "2026-05-30T15:22:55.515Z"
    assert [(e.kind, e.text if e.kind != "tool_call" else e.target) for e in t.events] == [
        ("user_prompt", "Write a sample file `TEST_EDITS.md` containing a poem"),
        ("reasoning", "The user wants me to create a file called `TEST_EDITS.md` containing a poem."),
        ("tool_call", "/home/dev/Projects/opencode-local-share/TEST_EDITS.md"),
        ("tool_result", "Wrote file successfully."),
        ("reasoning", "Done. Created the file with a short nature-themed poem."),
        ("assistant_text", "Created `TEST_EDITS.md` with a nature-themed poem."),
    ]
    assert t.events[2].tool_name == "write" and t.events[2].text.startswith(
        "filePath: /home/dev/Projects/opencode-local-share/TEST_EDITS.md\ncontent: # A Poem\n")


# --- hand-written inputs ----------------------------------------------------------------------------------------


def test_synthetic_text_parts_are_not_the_prompt(tmp_path):
    path = _write_export(tmp_path, [_user(
        1,
        _text("Explain @src/build.ts"),
        _text('Called the Read tool with the following input: {"filePath":"/home/dev/web/src/build.ts"}',
              synthetic=True),
        _text("<path>/home/dev/web/src/build.ts</path>\n<type>file</type>\n<content>…", synthetic=True),
        {"id": "prt_f", "type": "file", "mime": "text/plain", "filename": "build.ts", "url": "file:///x"},
    )])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [("user_prompt", "Explain @src/build.ts")]
    assert t.report.ignored["synthetic_text"] == 2


def test_error_and_running_status(tmp_path):
    path = _write_export(tmp_path, [_assistant(
        2,
        _tool("c1", "webfetch", "error", {"url": "https://example.com/docs"},
              error="Error: Request failed with status code: 403", time={"start": T0 + 2100, "end": T0 + 2200}),
        _tool("c2", "bash", "running", {"command": "npm run build", "description": "Build"}, time={"start": T0 + 2300}),
    )])
    t = read_transcript(path)
    assert [(e.kind, e.tool_name, e.target, e.is_error, e.text if e.kind == "tool_result" else None)
            for e in t.events] == [
        ("tool_call", "webfetch", "https://example.com/docs", False, None),
        ("tool_result", "webfetch", None, True, "Error: Request failed with status code: 403"),
        ("tool_call", "bash", "npm run build", False, None),  # running: no result yet
    ]
    assert [e.timestamp for e in t.events] == [
        "2025-07-31T22:13:22.100Z", "2025-07-31T22:13:22.200Z", "2025-07-31T22:13:22.300Z"]


def test_todowrite_is_a_todo_list(tmp_path):
    todos = [{"content": "Profile the build", "status": "completed", "priority": "high", "id": "1"},
             {"content": "Cache type checking", "status": "in_progress", "priority": "medium", "id": "2"},
             {"content": "Split vendor chunk", "status": "pending", "priority": "low", "id": "3"}]
    path = _write_export(tmp_path, [_assistant(
        2, _tool("c1", "todowrite", "completed", {"todos": todos}, output=json.dumps(todos), title="3 todos"))])
    t = read_transcript(path)
    assert len(t.events) == 1  # the output only echoes the list
    event = t.events[0]
    assert (event.kind, event.tool_name, event.target, event.call_id) == ("todo_list", "todowrite", "3 todos", "c1")
    assert [(i.content, i.status, i.id) for i in event.todos] == [
        ("Profile the build", "completed", "1"), ("Cache type checking", "in_progress", "2"),
        ("Split vendor chunk", "pending", "3")]
    assert event.text == (
        "[completed] Profile the build\n[in_progress] Cache type checking\n[pending] Split vendor chunk")


def test_task_result_content_and_running_task(tmp_path):
    output = ("task_id: ses_child1 (for resuming to continue this task if needed)\n\n"
              "<task_result>\nThe slow step is tsc --noEmit (41 s).\n</task_result>")
    path = _write_export(tmp_path, [_assistant(
        2,
        _tool("t1", "task", "completed", {"description": "Profile build", "subagent_type": "explore",
                                          "prompt": "Time each build step"}, output=output,
              metadata={"sessionId": "ses_child1"}),
        _tool("t2", "task", "running", {"description": "Check cache", "subagent_type": "general",
                                        "prompt": "Is the cache used?"}),
        _tool("t3", "task", "error", {"description": "Lint", "subagent_type": "general", "prompt": "Lint"},
              error="Tool execution aborted"),
    )])
    t = read_transcript(path)
    assert [(e.kind, e.call_id, e.agent, e.target, e.is_error, e.text) for e in t.events] == [
        ("subagent_call", "t1", "explore", "Profile build", False, "Time each build step"),
        ("subagent_result", "t1", "explore", "ses_child1", False, "The slow step is tsc --noEmit (41 s)."),
        ("subagent_call", "t2", "general", "Check cache", False, "Is the cache used?"),
        ("subagent_call", "t3", "general", "Lint", False, "Lint"),
        ("subagent_result", "t3", "general", None, True, "Tool execution aborted"),
    ]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("task_id: ses_1\n\n<task_result>\nanswer\n</task_result>", "answer"),
        ("task_id: ses_1\n\n<task_result>\ncut short", "cut short"),
        ("plain output", "plain output"),
    ],
)
def test_task_result_text(output, expected):
    assert task_result_text(output) == expected


def test_compact_command_and_compaction_summary(tmp_path):
    path = _write_export(tmp_path, [
        _user(1, _text("Why is the build slow?")),
        _assistant(2, _text("Type checking dominates.")),
        _user(3, {"id": "prt_c", "type": "compaction", "auto": False}),
        _assistant(4, _text("## Goal\nSpeed up the build"), agent="compaction", mode="compaction", summary=True),
        _user(5, {"id": "prt_c2", "type": "compaction", "auto": True}),
        _assistant(6, _text("## Goal\nStill the build"), summary=True),
        _user(7, _text("Continue")),
    ])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "Why is the build slow?"),
        ("assistant_text", "Type checking dominates."),
        ("user_prompt", "/compact"),
        ("compaction", "## Goal\nSpeed up the build"),
        ("compaction", "## Goal\nStill the build"),
        ("user_prompt", "Continue"),
    ]


def test_text_parts_are_joined_per_message_at_the_first_text(tmp_path):
    path = _write_export(tmp_path, [_assistant(
        2,
        {"id": "prt_s", "type": "step-start", "snapshot": "abc"},
        {"id": "prt_r", "type": "reasoning", "text": "", "time": {"start": T0}},
        _text("I'll build it."),
        _tool("c1", "bash", "completed", {"command": "npm run build"}, output="done in 52 s"),
        _text("Build takes 52 s."),
        {"id": "prt_x", "type": "brand-new-part"},
    )])
    t = read_transcript(path)
    assert [(e.kind, e.text) for e in t.events] == [
        ("assistant_text", "I'll build it.\n\nBuild takes 52 s."),
        ("tool_call", "command: npm run build"),
        ("tool_result", "done in 52 s"),
    ]
    assert t.report.unknown_types == Counter({"part:brand-new-part": 1})


def test_export_and_array_give_the_same_events(tmp_path):
    messages = [
        _user(1, _text("Why is the build slow?")),
        _assistant(2, {"id": "prt_r", "type": "reasoning", "text": "Check tsc", "time": {"start": T0 + 2050}},
                   _tool("c1", "bash", "completed", {"command": "npm run build"}, output="52 s",
                         time={"start": T0 + 2100, "end": T0 + 2900}),
                   _text("Type checking dominates.")),
    ]
    export = read_transcript(_write_export(tmp_path, messages))
    array = read_transcript(_write_array(tmp_path, messages))
    assert (export.meta.format, array.meta.format) == ("opencode-export", "opencode-messages")
    assert _shape(export) == _shape(array)
    assert len(export.events) == 5
    assert export.meta.session_id == array.meta.session_id == "ses_test"
    assert export.meta.cwd == array.meta.cwd == "/home/dev/web"
    assert export.meta.version == "1.2.5" and array.meta.version is None


def test_epoch_milliseconds_become_iso_utc(tmp_path):
    path = _write_array(tmp_path, [_user(0, _text("hello"))])
    t = read_transcript(path)
    assert t.events[0].timestamp == "2025-07-31T22:13:20.000Z"
    assert t.meta.start_time == "2025-07-31T22:13:20.000Z"


def test_truncated_export_keeps_the_messages_before_the_cut(tmp_path):
    full = _write_export(tmp_path, [
        _user(1, _text("first prompt")),
        _assistant(2, _text("first answer")),
        _user(3, _text("second prompt that will be cut somewhere in the middle")),
        _assistant(4, _text("never read")),
    ])
    data = Path(full).read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(data[: data.index("somewhere")], encoding="utf-8")
    t = read_transcript(str(cut), warn=False)
    assert t.meta.format == "opencode-export"
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "first prompt"), ("assistant_text", "first answer")]
    assert t.report.skipped_lines == [3]
    assert t.meta.session_id == "ses_test"  # the export info came before the cut


def test_detecting_an_export_does_not_build_the_messages_array(tmp_path):
    """Bug fixed in detect.py: asking read_json_object_head for "messages" too made ijson build the whole array."""
    import ijson  # noqa: F401  (import cost outside the measurement)

    messages = [_user(n, _text("x" * 1000)) for n in range(4000)]
    path = _write_export(tmp_path, messages, name="big.json")
    assert Path(path).stat().st_size > 4_000_000
    tracemalloc.start()
    try:
        fmt = detect_format(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert fmt == "opencode-export"
    assert peak < 2_000_000  # bytes; building the messages array took ~10 MB here


def test_automatic_compaction_request_is_not_a_user_prompt(tmp_path):
    """Bug: a user message made only of {type: compaction, auto: true} was listed as a typed '/compact'."""
    import json

    from pipeline.transcripts import read_transcript

    messages = [
        {"info": {"id": "msg_1", "sessionID": "ses_a", "role": "user", "time": {"created": 1767261600000}},
         "parts": [{"id": "prt_1", "type": "text", "text": "Speed up the build"}]},
        {"info": {"id": "msg_2", "sessionID": "ses_a", "role": "user", "time": {"created": 1767261700000}},
         "parts": [{"id": "prt_2", "type": "compaction", "auto": True}]},
        {"info": {"id": "msg_3", "sessionID": "ses_a", "role": "user", "time": {"created": 1767261800000}},
         "parts": [{"id": "prt_3", "type": "compaction", "auto": False}]},
    ]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(messages))
    t = read_transcript(str(path))
    assert [e.text for e in t.events if e.kind == "user_prompt"] == ["Speed up the build", "/compact"]
    assert t.report.ignored["auto_compaction_request"] == 1
