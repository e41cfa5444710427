"""Claude Code reader (pipeline/transcripts/claude_code.py) against FORMATS.md §1 and §6.

Two parts: the real public transcripts of ../shared/corpus (counts below were verified by reading the files
line by line), then small hand-written transcripts, one per rule.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.common import Caps

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
CC_1045 = CORPUS / "claude-code-1.0.45-four-compactions.jsonl"
CC_1048_ARRAY = CORPUS / "claude-code-1.0.48-json-array.json"
CC_2114 = CORPUS / "claude-code-2.1.14-task-todowrite.jsonl"
CC_2126 = CORPUS / "claude-code-2.1.126-new-line-types.jsonl"
CC_2189 = CORPUS / "claude-code-2.1.89-main" / "87cd58f5-2181-4695-a6c0-505ed71ba497.jsonl"
CC_2189_AGENT = (
    CORPUS / "claude-code-2.1.89-main" / "87cd58f5-2181-4695-a6c0-505ed71ba497" / "subagents"
    / "agent-affbe948c37a575c2.jsonl"
)
ALL_CORPUS = [CC_1045, CC_1048_ARRAY, CC_2114, CC_2126, CC_2189, CC_2189_AGENT]

needs_corpus = pytest.mark.skipif(not CC_1045.exists(), reason="../shared/corpus not present")

NOT_PROMPT_STARTS = ("This session is being continued", "Caveat:", "<command-", "[Request interrupted",
                     "<local-command", "<bash-", "<task-notification>")


def kinds(transcript, kind):
    return [e for e in transcript.events if e.kind == kind]


def prompts(transcript):
    return [e.text for e in transcript.events if e.kind == "user_prompt"]


# ---------------------------------------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("path", ALL_CORPUS, ids=lambda p: p.name)
def test_corpus_file_reads_cleanly(path):
    t = read_transcript(str(path), warn=False)
    assert t.meta.harness == "claude-code"
    assert t.report.skipped_lines == [] and t.report.repaired_lines == []
    assert t.report.unknown_types == Counter()
    assert t.events, "no events"
    assert [e.index for e in t.events] == list(range(len(t.events)))
    lines = [e.line for e in t.events]
    assert all(n > 0 for n in lines) and lines == sorted(lines)
    assert all(e.timestamp and e.timestamp.endswith("Z") for e in t.events)
    assert all(e.session_id in t.meta.session_ids for e in t.events)
    for text in prompts(t):
        assert text and not text.startswith(NOT_PROMPT_STARTS), text[:80]
    for e in t.events:
        if e.kind == "tool_call":
            # the rendering of the input is empty only when the call had no argument at all
            assert e.target != "unknown" or e.text == "", (e.tool_name, e.text[:80])
        if e.kind in ("tool_call", "subagent_call", "todo_list"):
            assert e.tool_name and e.call_id and e.call_id.startswith("toolu_")
        if e.kind == "assistant_text":
            assert e.text.strip()


@needs_corpus
def test_corpus_1045_prompts_compactions_and_two_sessions():
    t = read_transcript(str(CC_1045), warn=False)
    p = prompts(t)
    assert len(p) == 21
    assert p[:3] == ["/compact", p[1], p[2]]
    assert p[1].startswith("how is this possible? read the reports of the other agents")
    assert p[2].startswith("/write-linear-issue on the remaining work that needs to be accomplished")
    assert p.count("/model") == 3
    assert "/agent-commit /Users/dev/Projects/dev-utils/paralell-development-claude-work-trees" in p
    assert p[-1] == "so can i test it myself locally before publishing?"
    comps = kinds(t, "compaction")
    assert [c.line for c in comps] == [1, 432, 592, 858]
    assert all(c.text.startswith("This session is being continued") and c.target is None for c in comps)
    assert t.meta.session_ids == ["e46eddde-fd6d-4d35-9ae9-bb1726103b0d", "a806d921-2aab-43b2-9f61-48a7325b088e"]
    assert t.meta.session_id == "e46eddde-fd6d-4d35-9ae9-bb1726103b0d"
    assert t.meta.git_branch is None  # 1.0.45 has no gitBranch
    assert t.meta.cwd == "/Users/dev/Projects/dev-utils/paralell-development-claude"
    assert t.meta.model == "claude-sonnet-4-20250514" and t.meta.version == "1.0.45"
    assert t.meta.start_time == "2025-07-10T02:18:50.927Z"
    counts = Counter(e.kind for e in t.events)
    assert counts["tool_call"] == 162 and counts["todo_list"] == 13 and counts["tool_result"] == 175
    assert counts["assistant_text"] == 114 and counts["reasoning"] == 2
    assert sum(e.is_error for e in kinds(t, "tool_result")) == 37
    by_id = {e.call_id: e.tool_name for e in t.events if e.kind in ("tool_call", "todo_list")}
    assert all(r.tool_name == by_id[r.call_id] for r in kinds(t, "tool_result"))
    mcp = [e for e in kinds(t, "tool_call") if e.tool_name == "mcp__linear__list_teams"]
    assert [e.target for e in mcp] == ["limit=10"]  # only a non-string argument: was "unknown"


@needs_corpus
def test_corpus_2114_task_subagent_and_todowrite():
    t = read_transcript(str(CC_2114), warn=False)
    assert len(prompts(t)) == 1 and prompts(t)[0].startswith("Port this Python project to Rust.")
    (call,) = kinds(t, "subagent_call")
    (result,) = kinds(t, "subagent_result")
    assert (call.tool_name, call.target, call.agent) == ("Task", "Explore Python project structure", "Explore")
    assert call.text.startswith("Explore this Python project thoroughly.")
    assert result.call_id == call.call_id and result.agent == "Explore" and not result.is_error
    assert result.text.startswith("Excellent! Now I have a complete picture.")
    assert "agentId:" not in result.text and result.text.endswith("every line of code is tested.")
    todos = kinds(t, "todo_list")
    assert len(todos) == 10 and all(e.tool_name == "TodoWrite" for e in todos)
    assert todos[0].target == "10 todos" and todos[0].todos[0].status == "in_progress"
    final = todos[-1].todos
    assert len(final) == 9 and todos[-1].target == "9 todos"
    assert final[0].content == "Initialize Rust library project structure"
    assert final[-1].content == "Delete Python source files"
    assert {i.status for i in final} == {"completed"}
    assert t.meta.git_branch == "master" and t.meta.model == "claude-opus-4-5-20251101"
    assert Counter(e.kind for e in t.events)["tool_call"] == 28


@needs_corpus
def test_corpus_2189_main_and_its_subagent_file():
    t = read_transcript(str(CC_2189), warn=False)
    assert prompts(t) == [
        "check the folder and the whole project",
        "fine tune the reflectance",
        "run the code to generate the results for the finetuned outputs",
        "i need to compare earlier r low and enhanced r low",
        "give me proper comparision between more r low and r enhanced image and make me understand how you "
        "have fine tuned it",
        "open the images",
        "sync the outputs locally",
        "1",
    ]
    (call,) = kinds(t, "subagent_call")
    (result,) = kinds(t, "subagent_result")
    assert (call.tool_name, call.agent, result.call_id) == ("Agent", "Explore", call.call_id)
    assert kinds(t, "reasoning") == []  # 2.1.89 thinking blocks are empty
    assert t.meta.git_branch == "HEAD"  # the only value in the file (detached)
    assert t.meta.cwd == "/home/dev/asip_lab/UG/VIVEK/bs_thesis_low_light"  # first of two
    assert sum(e.is_error for e in kinds(t, "tool_result")) == 2

    sub = read_transcript(str(CC_2189_AGENT), warn=False)
    assert len(prompts(sub)) == 1 and prompts(sub)[0].startswith("Explore the project at /home/dev/")
    counts = Counter(e.kind for e in sub.events)
    assert counts["tool_call"] == 47 and counts["tool_result"] == 47 and counts["assistant_text"] == 10
    assert sub.report.ignored["sidechain"] == 0
    assert sub.meta.session_id == t.meta.session_id  # sub-agent files carry the parent's session id
    assert sub.meta.model == "claude-haiku-4-5-20251001"


@needs_corpus
def test_corpus_2126_new_line_types_are_not_unknown():
    t = read_transcript(str(CC_2126), warn=False)
    assert len(prompts(t)) == 2 and prompts(t)[1].startswith("So I can't have an entire .claude/ directory")
    assert Counter(e.kind for e in t.events) == Counter({"user_prompt": 2, "assistant_text": 2})
    assert t.meta.model == "claude-sonnet-4-6" and t.meta.git_branch == "main"


@needs_corpus
def test_corpus_json_array_equals_its_jsonl_twin(tmp_path):
    array = read_transcript(str(CC_1048_ARRAY), warn=False)
    twin = tmp_path / "twin.jsonl"
    elements = orjson.loads(CC_1048_ARRAY.read_bytes())
    twin.write_bytes(b"\n".join(orjson.dumps(e) for e in elements) + b"\n")
    jsonl = read_transcript(str(twin), warn=False)
    assert array.meta.format == "claude-code-json-array" and jsonl.meta.format == "claude-code-jsonl"
    assert array.events == jsonl.events  # element numbers equal line numbers here
    assert prompts(array) == ["/ai-commit"]
    assert len(kinds(array, "todo_list")) == 4
    assert array.report.records == 68


# ---------------------------------------------------------------------------------------------------------
# hand-written transcripts
# ---------------------------------------------------------------------------------------------------------

SID = "0b6f1c2e-0000-4000-8000-000000000001"
SID2 = "0b6f1c2e-0000-4000-8000-000000000002"
_clock = itertools.count()


def env(**extra) -> dict:
    n = next(_clock)
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
        "sessionId": SID, "version": "2.0.55", "gitBranch": "main", "uuid": f"u{n}",
        "timestamp": f"2026-09-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
    }
    record.update(extra)
    return record


def user(content, **extra) -> dict:
    return env(type="user", message={"role": "user", "content": content}, **extra)


def assistant(blocks, msg_id="msg_01A", model="claude-sonnet-4-5-20250929", **extra) -> dict:
    return env(type="assistant", requestId="req_1",
               message={"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": blocks},
               **extra)


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(call_id: str, name: str, args: dict) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def tool_result(call_id: str, content, is_error=None, **extra) -> dict:
    block = {"tool_use_id": call_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return user([block], toolUseResult={"stdout": ""}, **extra)


def write(tmp_path: Path, records: list, name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def read(tmp_path: Path, records: list, caps: Caps | None = None):
    path = write(tmp_path, records)
    if caps is None:
        return read_transcript(str(path), warn=False)
    return read_transcript(str(path), warn=False, caps=caps)


def test_split_message_text_blocks_are_joined_at_first_position(tmp_path):
    t = read(tmp_path, [
        user("Add rate limiting to the checkout API"),
        assistant([{"type": "thinking", "thinking": "Look at the router first.", "signature": "s"}]),
        assistant([text("I will read the router.")]),
        assistant([tool_use("toolu_01", "Read", {"file_path": "/home/dev/shop/api.py"})]),
        assistant([text("Then run the tests.")]),
        tool_result("toolu_01", "def checkout(): ..."),
        assistant([text("Done reading.")], msg_id="msg_01B"),
        assistant([{"type": "thinking", "thinking": "", "signature": "s"}], msg_id="msg_01C"),
    ])
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "Add rate limiting to the checkout API"),
        ("reasoning", "Look at the router first."),
        ("assistant_text", "I will read the router.\n\nThen run the tests."),
        ("tool_call", "file_path: /home/dev/shop/api.py"),
        ("tool_result", "def checkout(): ..."),
        ("assistant_text", "Done reading."),
    ]
    assert t.events[2].line == 3 and t.events[3].target == "/home/dev/shop/api.py"
    assert t.events[4].tool_name == "Read" and t.events[4].call_id == "toolu_01"


def test_lines_without_message_id_are_not_joined(tmp_path):
    t = read(tmp_path, [assistant([text("one")], msg_id=None), assistant([text("two")], msg_id=None)])
    assert [e.text for e in t.events] == ["one", "two"]


@pytest.mark.parametrize(
    "content, expected",
    [
        ("<command-name>/review</command-name>\n<command-message>review</command-message>\n"
         "<command-args>src/api</command-args>", "/review src/api"),
        ("<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n"
         "<command-args>src/api</command-args>", "/review src/api"),
        ("<command-args>src/api</command-args><command-name>/review</command-name>", "/review src/api"),
        ("<command-message>agent-status is running…</command-message>\n<command-name>/agent-status</command-name>",
         "/agent-status"),
        ("<command-name>/compact</command-name>\n          <command-message>compact</command-message>\n"
         "          <command-args></command-args>", "/compact"),
        ([text("<command-name>/model</command-name><command-args>opus</command-args>")], "/model opus"),
        ("<bash-input>git status --short</bash-input>", "!git status --short"),
    ],
)
def test_slash_commands_and_bash_mode(tmp_path, content, expected):
    t = read(tmp_path, [user(content)])
    assert prompts(t) == [expected]


def test_ide_context_blocks_are_stripped(tmp_path):
    t = read(tmp_path, [
        user([
            text("<ide_opened_file>The user opened the file /home/dev/shop/api.py in the IDE.</ide_opened_file>"),
            text("<ide_selection>The user selected lines 3 to 9:\ndef checkout(): ...</ide_selection>"),
            text("Why does this return 500?"),
        ]),
        user("<ide_opened_file>The user opened /home/dev/shop/db.py</ide_opened_file>Add an index here"),
        user([text("<ide_opened_file>only context, no prompt</ide_opened_file>")]),
    ])
    assert prompts(t) == ["Why does this return 500?", "Add an index here"]


def test_list_form_prompt_joins_text_and_drops_images(tmp_path):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 50}}
    t = read(tmp_path, [user([text("Look at this screenshot"), image, text("and fix the layout")])])
    assert prompts(t) == ["Look at this screenshot\n\nand fix the layout"]


def test_harness_written_user_lines_are_not_prompts(tmp_path):
    t = read(tmp_path, [
        user("Caveat: The messages below were generated by the user while running local commands.", isMeta=True),
        user("Caveat: The messages below were generated by the user while running local commands."),
        user("<local-command-caveat>Caveat: …</local-command-caveat>"),
        user("<local-command-stdout>Set model to opus</local-command-stdout>"),
        user("<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>"),
        user("<task-notification><task-id>b1</task-id></task-notification>"),
        user("The background task finished.", origin={"kind": "task-notification"}),
        user("# Review command\nExpanded body of the slash command", isMeta=True),
        user("Stop hook feedback: tests failing", isMeta=True),
        user("[Request interrupted by user]"),
        user([text("[Request interrupted by user for tool use]")]),
        user("The screen shows only the summary", isVisibleInTranscriptOnly=True),
        user("Keep the old API working", origin={"kind": "human"}),
    ])
    assert prompts(t) == ["Keep the old API working"]


def test_sidechain_lines_are_skipped_and_counted(tmp_path):
    t = read(tmp_path, [
        user("Find the slow query"),
        user("Search the codebase for SQL", isSidechain=True),
        assistant([text("Searching…"), tool_use("toolu_s1", "Grep", {"pattern": "SELECT"})], isSidechain=True),
        tool_result("toolu_s1", "db.py:3", isSidechain=True),
        assistant([text("It is the report query.")]),
    ])
    assert [(e.kind, e.text) for e in t.events] == [
        ("user_prompt", "Find the slow query"), ("assistant_text", "It is the report query.")]
    assert t.report.ignored["sidechain"] == 3


def test_subagent_file_is_read_as_its_own_conversation(tmp_path):
    t = read(tmp_path, [
        user("Explore the repository layout", isSidechain=True, agentId="a1b2c3d4"),
        assistant([tool_use("toolu_s1", "Glob", {"pattern": "**/*.py"})], isSidechain=True, agentId="a1b2c3d4"),
        tool_result("toolu_s1", "api.py\ndb.py", isSidechain=True, agentId="a1b2c3d4"),
    ])
    assert [e.kind for e in t.events] == ["user_prompt", "tool_call", "tool_result"]
    assert t.events[1].target == "**/*.py"
    assert t.report.ignored["sidechain"] == 0


def test_tool_results_error_flag_images_and_names(tmp_path):
    screenshot = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA" * 100}}
    t = read(tmp_path, [
        assistant([tool_use("toolu_01", "Bash", {"command": "pytest -q tests/api", "description": "Run API tests"})]),
        tool_result("toolu_01", "Exit code 1\n2 failed, 40 passed", is_error=True),
        assistant([tool_use("toolu_02", "mcp__browser__screenshot", {"url": "http://localhost:3000"})], msg_id="m2"),
        tool_result("toolu_02", [text("Screenshot taken"), screenshot], is_error=False),
        tool_result("toolu_99", "result of a call made before this file starts"),
    ])
    call, failed, shot_call, shot, orphan = t.events
    assert call.target == "pytest -q tests/api"
    assert call.text == "command: pytest -q tests/api\ndescription: Run API tests"
    assert (failed.kind, failed.tool_name, failed.is_error, failed.text) == (
        "tool_result", "Bash", True, "Exit code 1\n2 failed, 40 passed")
    assert shot_call.target == "http://localhost:3000"
    assert (shot.tool_name, shot.is_error, shot.text) == ("mcp__browser__screenshot", False, "Screenshot taken")
    assert (orphan.tool_name, orphan.call_id, orphan.is_error) == (None, "toolu_99", False)
    assert prompts(t) == []


def test_non_string_only_arguments_are_a_target_not_unknown(tmp_path):
    t = read(tmp_path, [assistant([tool_use("toolu_01", "mcp__linear__list_teams", {"limit": 10}),
                                   tool_use("toolu_02", "mcp__linear__whoami", {})])])
    assert [(e.target, e.text) for e in t.events] == [("limit=10", "limit: 10"), ("unknown", "")]


def test_subagent_call_and_result(tmp_path):
    answer = ("The slow query is in reports.py line 40.\n"
              "agentId: a1b2c3d (for resuming to continue this agent's work if needed)")
    t = read(tmp_path, [
        assistant([tool_use("toolu_01", "Task", {"description": "Find slow query", "prompt": "Look for N+1 queries",
                                                 "subagent_type": "Explore"})]),
        tool_result("toolu_01", [text(answer)]),
        assistant([tool_use("toolu_02", "Agent", {"description": "Check migrations", "prompt": "List migrations"})],
                  msg_id="m2"),
        tool_result("toolu_02", [text("No migration touches reports."),
                                 text("agentId: f00 (for resuming to continue this agent's work if needed)\n"
                                      "<usage>total_tokens: 10\ntool_uses: 1</usage>")], is_error=True),
    ])
    call, result, call2, result2 = t.events
    assert (call.kind, call.target, call.agent, call.text) == (
        "subagent_call", "Find slow query", "Explore", "Look for N+1 queries")
    assert (result.kind, result.agent, result.text, result.tool_name) == (
        "subagent_result", "Explore", "The slow query is in reports.py line 40.", "Task")
    assert (call2.agent, result2.agent, result2.is_error) == (None, "Check migrations", True)
    assert result2.text == "No migration touches reports."


def test_todowrite_list_drops_deleted_items(tmp_path):
    todos = [{"content": "Add limiter", "status": "completed", "activeForm": "Adding"},
             {"content": "Write tests", "status": "in_progress", "activeForm": "Writing"},
             {"content": "Old idea", "status": "deleted"}]
    t = read(tmp_path, [assistant([tool_use("toolu_01", "TodoWrite", {"todos": todos})])])
    (event,) = t.events
    assert (event.kind, event.tool_name, event.target) == ("todo_list", "TodoWrite", "2 todos")
    assert [(i.content, i.status) for i in event.todos] == [
        ("Add limiter", "completed"), ("Write tests", "in_progress")]
    assert event.text == "[completed] Add limiter\n[in_progress] Write tests"


def test_taskcreate_taskupdate_keep_a_running_list(tmp_path):
    calls = [
        ("TaskCreate", {"subject": "Add limiter", "description": "…", "activeForm": "Adding limiter"}),
        ("TaskCreate", {"subject": "Write tests", "description": "…"}),
        ("TaskCreate", {"subject": "Update docs", "description": "…"}),
        ("TaskUpdate", {"taskId": "1", "status": "in_progress"}),
        ("TaskUpdate", {"taskId": "2", "status": "completed"}),
        ("TaskUpdate", {"taskId": "3", "status": "deleted"}),
    ]
    records = [assistant([tool_use(f"toolu_0{i}", name, args)], msg_id=f"m{i}")
               for i, (name, args) in enumerate(calls)]
    t = read(tmp_path, records)
    assert [e.kind for e in t.events] == ["todo_list"] * 6
    assert [e.tool_name for e in t.events] == [name for name, _ in calls]
    snapshot = [[(i.id, i.content, i.status) for i in e.todos] for e in t.events]
    assert snapshot[0] == [("1", "Add limiter", "pending")]
    assert snapshot[2] == [
        ("1", "Add limiter", "pending"), ("2", "Write tests", "pending"), ("3", "Update docs", "pending")]
    assert snapshot[-1] == [("1", "Add limiter", "in_progress"), ("2", "Write tests", "completed")]
    assert t.events[0].target == "Add limiter" and t.events[3].target == "task 1 -> in_progress"


def test_compact_boundary_and_summary_make_one_compaction(tmp_path):
    summary = "This session is being continued from a previous conversation that ran out of context. Rate limiting…"
    t = read(tmp_path, [
        {"type": "summary", "summary": "Checkout rate limiting", "leafUuid": "u1"},
        user("Add rate limiting"),
        env(type="system", subtype="compact_boundary", content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 168000}, logicalParentUuid="u1"),
        user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True),
        user("<command-name>/compact</command-name><command-message>compact</command-message>"),
        env(type="system", subtype="compact_boundary", compactMetadata={"trigger": "manual"}),
        user([text("This session is being continued… second")], isCompactSummary=True),
        user("This session is being continued… 1.0.x style", isCompactSummary=True),
    ])
    assert [(e.kind, e.target, e.text, e.line) for e in t.events] == [
        ("user_prompt", None, "Add rate limiting", 2),
        ("compaction", "auto", summary, 4),
        ("user_prompt", None, "/compact", 5),
        ("compaction", "manual", "This session is being continued… second", 7),
        ("compaction", None, "This session is being continued… 1.0.x style", 8),
    ]
    assert t.report.unknown_types == Counter()


def test_compact_boundary_without_summary_still_marks_the_compaction(tmp_path):
    boundary = env(type="system", subtype="compact_boundary", compactMetadata={"trigger": "auto"})
    t = read(tmp_path, [user("go"), boundary])
    assert [(e.kind, e.target, e.text) for e in t.events] == [("user_prompt", None, "go"), ("compaction", "auto", "")]


def test_api_errors_and_synthetic_lines_are_skipped_and_counted(tmp_path):
    t = read(tmp_path, [
        assistant([text("API Error: 529 Overloaded")], model="<synthetic>", isApiErrorMessage=True, msg_id="e1"),
        assistant([text("No response requested.")], model="<synthetic>", msg_id="e2"),
        assistant([text("Real answer")], msg_id="m1"),
    ])
    assert [e.text for e in t.events] == ["Real answer"]
    assert t.report.unknown_types["api-error"] == 2
    assert t.meta.model == "claude-sonnet-4-5-20250929"


def test_unknown_and_metadata_line_types(tmp_path):
    t = read(tmp_path, [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SID},
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SID},
        {"type": "ai-title", "aiTitle": "Rate limiting"},
        env(type="system", subtype="turn_duration", durationMs=5),
        env(type="system", content="Running PostToolUse hook", level="info"),
        user("hello"),
        {"type": "hologram", "sessionId": SID},
        {"no_type": True},
    ])
    assert prompts(t) == ["hello"]
    assert t.report.unknown_types == Counter({"hologram": 1, "(no type)": 1})


def test_meta_fields(tmp_path):
    t = read(tmp_path, [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": SID},
        user("first", gitBranch="HEAD", cwd="/home/dev/shop"),
        assistant([text("a")], model="<synthetic>", msg_id="e", gitBranch="HEAD"),
        assistant([text("b")], model="claude-opus-4-5", msg_id="m1", gitBranch=""),
        user("second", gitBranch="feature/limits", cwd="/home/dev/shop/api", sessionId=SID2, version="2.0.60"),
        assistant([text("c")], model="claude-haiku-4-5", msg_id="m2", gitBranch="main"),
    ])
    m = t.meta
    assert (m.session_id, m.session_ids) == (SID, [SID, SID2])
    assert (m.cwd, m.git_branch, m.model, m.version) == (
        "/home/dev/shop", "feature/limits", "claude-opus-4-5", "2.0.55")
    assert m.start_time == t.events[0].timestamp and m.end_time == t.events[-1].timestamp
    assert [e.session_id for e in t.events] == [SID, SID, SID2, SID]
    assert (m.harness, m.format) == ("claude-code", "claude-code-jsonl")


def test_branch_empty_and_missing_give_none(tmp_path):
    t = read(tmp_path, [user("x", gitBranch=""), user("y", gitBranch=None)])
    assert t.meta.git_branch is None


def test_over_long_fields_are_capped_and_counted(tmp_path):
    caps = Caps(text=100, tool_output=50, subagent=60, target=40)
    long_command = "echo " + "x" * 200
    t = read(tmp_path, [
        user("p" * 150),
        assistant([text("a" * 30), text("b" * 80)]),
        assistant([tool_use("toolu_01", "Bash", {"command": long_command})], msg_id="m2"),
        tool_result("toolu_01", "o" * 70),
    ], caps=caps)
    prompt, answer, call, output = t.events
    assert prompt.text == "p" * 100 + "...[+50 chars]"
    assert answer.text == ("a" * 30 + "\n\n" + "b" * 80)[:100] + "...[+12 chars]"
    assert len(call.target) == 40 and call.target.endswith("…")
    assert call.text.startswith("command: echo xxx") and call.text.endswith(" chars]")
    assert output.text == "o" * 50 + "...[+20 chars]"
    assert t.report.capped_fields == 5


def test_stream_json_capture_shape(tmp_path):
    t = read(tmp_path, [
        {"type": "system", "subtype": "init", "session_id": SID, "cwd": "/home/dev/tool", "model": "claude-x",
         "claude_code_version": "2.1.20", "tools": ["Bash"]},
        {"type": "assistant", "session_id": SID, "parent_tool_use_id": None,
         "message": {"id": "m1", "model": "claude-sonnet-4-5", "role": "assistant",
                     "content": [tool_use("toolu_01", "Bash", {"command": "ls"})]}},
        {"type": "assistant", "session_id": SID, "parent_tool_use_id": "toolu_01",
         "message": {"id": "m2", "model": "claude-sonnet-4-5", "content": [text("sub-agent chatter")]}},
        {"type": "user", "session_id": SID, "parent_tool_use_id": None,
         "message": {"role": "user",
                     "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.py"}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": "done", "session_id": SID},
    ])
    assert [(e.kind, e.tool_name) for e in t.events] == [("tool_call", "Bash"), ("tool_result", "Bash")]
    assert (t.meta.session_id, t.meta.cwd, t.meta.version) == (SID, "/home/dev/tool", "2.1.20")
    assert t.report.ignored["sidechain"] == 1 and t.report.unknown_types == Counter()


def test_hand_written_json_array_matches_jsonl(tmp_path):
    records = [user("Add rate limiting"),
               assistant([text("Reading."), tool_use("toolu_01", "Read", {"file_path": "a.py"})]),
               tool_result("toolu_01", "x = 1")]
    jsonl = read(tmp_path, records)
    array_path = tmp_path / "chat.json"
    array_path.write_bytes(orjson.dumps(records, option=orjson.OPT_INDENT_2))
    array = read_transcript(str(array_path), warn=False)
    assert array.meta.format == "claude-code-json-array"
    assert [(e.kind, e.text, e.line, e.call_id) for e in array.events] == [
        (e.kind, e.text, e.line, e.call_id) for e in jsonl.events]


MINIMAL_LINES = [
    {"type": "user", "message": {"role": "user", "content": "Add a --json flag to the export command."},
     "timestamp": "2026-05-02T10:00:00Z"},
    {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -q tests/test_export.py"}}]},
     "timestamp": "2026-05-02T10:00:10Z"},
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 passed in 0.2s"}]},
     "timestamp": "2026-05-02T10:00:12Z"},
    {"type": "assistant", "message": {"role": "assistant", "content": "Tests pass; documenting the flag next."},
     "timestamp": "2026-05-02T10:00:20Z"},
]


def test_minimal_lines_without_uuid_or_session_id_are_claude_code(tmp_path):
    """Issue 24, item 5: lines {type, message, timestamp} (the duck-tape skill's own test fixtures write these)
    were refused as an unknown format."""
    from pipeline.transcripts.detect import detect_format

    path = tmp_path / "minimal.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in MINIMAL_LINES))
    assert detect_format(str(path)) == "claude-code-jsonl"
    t = read_transcript(str(path))
    assert t.meta.harness == "claude-code"
    assert [(e.kind, e.text) for e in t.events if e.kind in ("user_prompt", "assistant_text")] == [
        ("user_prompt", "Add a --json flag to the export command."),
        ("assistant_text", "Tests pass; documenting the flag next.")]
    [call] = kinds(t, "tool_call")
    [result] = kinds(t, "tool_result")
    assert (call.tool_name, call.target, result.is_error) == ("Bash", "pytest -q tests/test_export.py", False)
