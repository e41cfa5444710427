"""``duck-tape checkpoint``, the pre-compact hook: every payload shape, the lookup of a stale or empty
transcript path, and every failure that must still exit 0 with a marker-only write (issue 6, item 2)."""

from __future__ import annotations

import hashlib

import io
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.hooks.checkpoint import hook_main, run_checkpoint
from pipeline.hooks.locate import candidates, find_transcript, safe_session_id
from pipeline.hooks.payload import HookInput, parse_payload
from pipeline.state.marker import read_marker
from pipeline.state.parse import parse
from pipeline.state.store import list_states, state_filename

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
COPILOT = ROOT / "fixtures" / "copilot" / "events.jsonl"
OPENCODE = ROOT / "fixtures" / "opencode" / "messages.json"
TRUTH = json.loads((ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.truth.json").read_text())
SID = TRUTH["meta"]["session_id"]


def hook(payload: object, store: Path, transcript: str | None = None) -> tuple[int, str, str]:
    """Run the hook in-process with ``payload`` (a dict is JSON-encoded) on stdin."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    out, err = io.StringIO(), io.StringIO()
    code = hook_main(transcript, str(store), stdin=io.StringIO(text), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def autos(store: Path) -> list[str]:
    return [s.path.name for s in list_states(store) if s.kind == "auto"]


# --- payload shapes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload, expected", [
    ({"session_id": "abc", "transcript_path": "/h/.claude/projects/-p/abc.jsonl", "cwd": "/p",
      "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
     ("claude-code", "abc", "/h/.claude/projects/-p/abc.jsonl", "/p", "auto")),
    ({"sessionId": "c1", "timestamp": 1767261600000, "cwd": "/r", "transcriptPath": "/h/.copilot/session-state/c1/events.jsonl",
      "trigger": "manual", "customInstructions": "keep the todo list"},
     ("copilot", "c1", "/h/.copilot/session-state/c1/events.jsonl", "/r", "manual")),
    ({"hook_event_name": "PreCompact", "session_id": "c2", "timestamp": "2026-01-01T10:00:00Z", "cwd": "/r",
      "transcript_path": "/tmp/t.jsonl", "trigger": "auto", "custom_instructions": ""},
     ("copilot", "c2", "/tmp/t.jsonl", "/r", "auto")),
    ({"harness": "opencode", "sessionID": "ses_x1", "snapshotPath": "/p/.duck-tape/opencode/ses_x1.json", "cwd": "/p"},
     ("opencode", "ses_x1", "/p/.duck-tape/opencode/ses_x1.json", "/p", None)),
])
def test_payload_shapes(payload, expected):
    got = parse_payload(json.dumps(payload))
    assert (got.harness, got.session_id, got.transcript_path, got.cwd, got.trigger) == expected
    assert got.problems == []


@pytest.mark.parametrize("text, problem", [
    ("not json at all", "hook stdin is not JSON"),
    ("[1, 2]", "not an object (got list)"),
])
def test_payload_problems_are_reported_not_raised(text, problem):
    got = parse_payload(text)
    assert got.session_id is None and got.transcript_path is None
    assert len(got.problems) == 1 and problem in got.problems[0]


def test_empty_stdin_is_a_manual_run():
    assert parse_payload("") == HookInput()


# --- writes --------------------------------------------------------------------------------------------


def test_claude_code_payload_writes_auto_state_and_marker(tmp_path):
    store = tmp_path / ".duck-tape"
    code, out, err = hook({"session_id": SID, "transcript_path": str(CC), "cwd": "/home/dev/shop",
                           "hook_event_name": "PreCompact", "trigger": "auto"}, store)
    assert code == 0
    [name] = autos(store)
    assert out == f"Wrote {store / name} and {store / '.last-compact'}\n"
    text = (store / name).read_text()
    state = parse(text)
    assert state.kind == "auto" and state.trigger == "pre-compact auto, engine: rules"
    assert state.cwd == "/home/dev/shop" and state.branch == "feature/rate-limit"
    assert len(state.decisions) >= 3 and state.facts and state.position.current
    for secret in TRUTH["secrets"]:
        assert secret not in text
    marker = read_marker(store)
    assert marker.latest_state == name and marker.transcript == str(CC) and marker.cwd == "/home/dev/shop"
    assert (store / ".gitignore").read_text() == "*\n"


def test_secrets_are_masked_not_refused(tmp_path):
    key = "sk-proj-Zx9FAKEq7Lm2Vb8Nc4Rt6Yh1Jk3Pw5Sd0"
    lines = [
        {"type": "user", "parentUuid": None, "sessionId": "s-secret", "cwd": "/home/dev/api", "gitBranch": "main",
         "timestamp": "2026-09-01T10:00:00.000Z",
         "message": {"role": "user", "content": f"Run the staging smoke test with OPENAI_API_KEY={key} and report "
                                                "back to ops-lead@example.com, then fix what fails"}},
        {"type": "assistant", "parentUuid": "u1", "sessionId": "s-secret", "timestamp": "2026-09-01T10:00:09.000Z",
         "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "Running it now."}]}},
    ]
    path = tmp_path / "secret.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = tmp_path / "store"
    code, out, err = hook({"transcript_path": str(path)}, store)
    assert code == 0 and out.startswith("Wrote ")
    [name] = autos(store)
    text = (store / name).read_text()
    assert key not in text and "ops-lead@example.com" not in text
    assert text.count("<REDACTED>") == 3  # the key in the Approved Workflow and in Current (which names the task)
    assert "masked 3 potential secret(s) with <REDACTED> (email, openai-api-key)" in err


def test_copilot_payload(tmp_path):
    store = tmp_path / "store"
    code, out, err = hook({"sessionId": "22a9f29f", "timestamp": 1767261600000, "cwd": "/home/dev/ledger-cli",
                           "transcriptPath": str(COPILOT), "trigger": "manual", "customInstructions": ""}, store)
    assert code == 0 and out.startswith("Wrote ")
    [name] = autos(store)
    state = parse((store / name).read_text())
    assert state.trigger == "pre-compact manual, engine: rules" and state.cwd == "/home/dev/ledger-cli"
    assert read_marker(store).transcript == str(COPILOT)


def test_opencode_plugin_payload(tmp_path):
    store = tmp_path / "store"
    code, _, _ = hook({"harness": "opencode", "sessionID": "ses_b3f25744", "snapshotPath": str(OPENCODE),
                       "cwd": str(tmp_path)}, store)
    assert code == 0 and len(autos(store)) == 1
    marker = read_marker(store)
    assert marker.transcript == str(OPENCODE) and marker.cwd == str(tmp_path)


def test_transcript_flag_wins_and_bad_stdin_is_one_line(tmp_path):
    store = tmp_path / "store"
    code, out, err = hook("{broken", store, transcript=str(COPILOT))
    assert code == 0 and len(autos(store)) == 1
    assert err.count("\n") == 1 and err.startswith("duck-tape: checkpoint: hook stdin is not JSON (")
    assert read_marker(store).transcript == str(COPILOT)


# --- lookup by session id --------------------------------------------------------------------------------


def test_empty_path_found_by_session_id_in_claude_project_folder(tmp_path, monkeypatch):
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    project = config / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(CC, project / f"{SID}.jsonl")
    store = tmp_path / "store"
    code, out, err = hook({"session_id": SID, "transcript_path": "", "cwd": "/home/dev/shop"}, store)
    assert code == 0 and len(autos(store)) == 1
    assert "no transcript path; found the session's transcript by id" in err
    assert read_marker(store).transcript == str(project / f"{SID}.jsonl")


def test_stale_path_found_by_session_id(tmp_path, monkeypatch):
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    other = config / "projects" / "-somewhere-else"  # not the cwd's folder: found by the projects scan
    other.mkdir(parents=True)
    shutil.copy(CC, other / f"{SID}.jsonl")
    stale = tmp_path / "gone" / f"{SID}.jsonl"
    store = tmp_path / "store"
    code, _, err = hook({"session_id": SID, "transcript_path": str(stale), "cwd": "/not/this/one"}, store)
    assert code == 0 and len(autos(store)) == 1
    assert f"stale transcript path {stale}" in err
    assert read_marker(store).transcript == str(other / f"{SID}.jsonl")


def test_copilot_session_found_by_id(tmp_path, monkeypatch):
    home = tmp_path / "copilot"
    monkeypatch.setenv("COPILOT_HOME", str(home))
    sid = "22a9f29f-c810-4a24-9190-c1e3dbd964c6"
    (home / "session-state" / sid).mkdir(parents=True)
    shutil.copy(COPILOT, home / "session-state" / sid / "events.jsonl")
    assert find_transcript(sid, harness="copilot") == home / "session-state" / sid / "events.jsonl"
    store = tmp_path / "store"
    code, _, _ = hook({"sessionId": sid, "transcriptPath": "", "cwd": "/r", "timestamp": 1}, store)
    assert code == 0 and len(autos(store)) == 1


@pytest.mark.parametrize("sid", ["../../etc/passwd", "a/b", "..", "", "x" * 300, ".hidden"])
def test_unsafe_session_ids_are_never_used_in_paths(sid):
    assert safe_session_id(sid) is None
    assert candidates(sid) == []
    assert find_transcript(sid) is None


# --- failures: marker-only, exit 0 -----------------------------------------------------------------------


def test_missing_file_gives_marker_only(tmp_path):
    store = tmp_path / "store"
    missing = tmp_path / "nope.jsonl"
    code, out, err = hook({"transcript_path": str(missing), "cwd": "/w"}, store)
    assert code == 0 and autos(store) == []
    assert out == f"Wrote {store / '.last-compact'} (marker only)\n"
    assert err == f"duck-tape: checkpoint: no such transcript {missing}\n"
    marker = read_marker(store)
    assert marker.transcript is None and marker.latest_state is None and marker.cwd == "/w"


def test_no_payload_no_flag_gives_marker_only(tmp_path):
    store = tmp_path / "store"
    code, _, err = hook("", store)
    assert code == 0 and autos(store) == [] and read_marker(store) is not None
    assert "no transcript path (pass --transcript or pipe the hook's JSON on stdin)" in err


def test_oversized_file_gives_marker_only_but_records_the_transcript(tmp_path, monkeypatch):
    monkeypatch.setenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "1000")
    store = tmp_path / "store"
    code, _, err = hook({"transcript_path": str(CC)}, store)
    assert code == 0 and autos(store) == []
    assert "no state file written" in err and "over the cap of 1000 bytes" in err
    assert err.count("\n") == 1
    assert read_marker(store).transcript == str(CC)  # resume can still recover it with a bigger cap


def test_bad_size_cap_variable_falls_back_to_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "lots")
    store = tmp_path / "store"
    code, _, err = hook({"transcript_path": str(COPILOT)}, store)
    assert code == 0 and len(autos(store)) == 1 and "DUCK_TAPE_MAX_TRANSCRIPT_BYTES" in err


def test_symlink_is_refused_and_not_recorded(tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(CC)
    store = tmp_path / "store"
    code, _, err = hook({"transcript_path": str(link)}, store)
    assert code == 0 and autos(store) == []
    assert "symlink" in err
    assert read_marker(store).transcript is None


def test_unknown_format_gives_marker_only(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage\n")
    store = tmp_path / "store"
    code, _, err = hook({"transcript_path": str(bad)}, store)
    assert code == 0 and autos(store) == [] and "unknown transcript format" in err
    assert read_marker(store).transcript == str(bad)


def test_same_minute_file_of_another_session_is_kept_and_this_one_gets_its_own_name(tmp_path):
    """Issue 23 item 5: the second session of a minute used to find the name taken, keep the other's file and write
    only the marker, whose latest-state then named the other session's file."""
    store = tmp_path / "store"
    now = datetime(2026, 3, 10, 11, 0, 5, tzinfo=timezone.utc)
    first = run_checkpoint(HookInput(transcript_path=str(CC)), store=store, now=now)
    assert first.written and first.state_path.name == state_filename("2026-03-10-1100", "auto")
    before = first.state_path.read_bytes()
    second = run_checkpoint(HookInput(transcript_path=str(COPILOT)), store=store, now=now.replace(second=50))
    assert second.written and second.state_path != first.state_path
    assert first.state_path.read_bytes() == before
    tag = hashlib.sha256(second.session_id.encode()).hexdigest()[:6]
    assert second.state_path.name == f"2026-03-10-1100-auto-{tag}.state.md"
    assert second.state_path.read_text().splitlines()[2].startswith("Session: 2026-03-10-1100-auto | Cwd: ")
    marker = read_marker(store)
    assert marker.latest_state == second.state_path.name and marker.transcript == str(COPILOT)
    assert marker.time == "2026-03-10T11:00:50Z"


def test_a_second_checkpoint_of_the_same_session_in_the_same_minute_replaces_its_own_file(tmp_path):
    store = tmp_path / "store"
    now = datetime(2026, 3, 10, 11, 0, 5, tzinfo=timezone.utc)
    first = run_checkpoint(HookInput(transcript_path=str(COPILOT)), store=store, now=now)
    second = run_checkpoint(HookInput(transcript_path=str(COPILOT), trigger="manual"), store=store,
                            now=now.replace(second=40))
    assert second.written and second.state_path == first.state_path
    assert "pre-compact manual" in second.state_path.read_text()  # the newer state, not the first one kept
    assert any("replaced" in m and "same minute" in m for m in second.messages)
    assert [p.name for p in store.glob("*.state.md")] == [first.state_path.name]
    assert read_marker(store).latest_state == first.state_path.name


def test_rotation_keeps_ten_and_evicts_the_oldest_auto(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    for day in range(1, 11):
        (store / state_filename(f"2026-01-{day:02d}-0900", "auto")).write_text("old\n")
    result = run_checkpoint(HookInput(transcript_path=str(COPILOT)), store=store,
                            now=datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc))
    names = autos(store)
    assert len(names) == 10 and result.state_path.name in names
    assert state_filename("2026-01-01-0900", "auto") not in names


def test_unwritable_store_still_exits_zero(tmp_path):
    store = tmp_path / "store"
    store.write_text("a file where the folder should be")
    code, out, err = hook({"transcript_path": str(COPILOT)}, store)
    assert code == 0 and out == ""
    assert "could not write the state file" in err and "could not write the marker" in err


def test_marker_only_write_names_no_state_file_but_the_session(tmp_path):
    """Issue 14: the newest file in the store may be another session's; a marker-only write used to name it as
    latest-state, and the restore then handed it over.  Now the marker names no file, and the session that compacted."""
    store = tmp_path / "store"
    store.mkdir()
    (store / state_filename("2026-01-02-0900", "manual")).write_text("x\n")
    (store / state_filename("2026-01-01-0900", "auto")).write_text("x\n")
    code, _, _ = hook({"session_id": "new-session-1", "transcript_path": str(tmp_path / "missing.jsonl")}, store)
    marker = read_marker(store)
    assert code == 0 and marker.latest_state is None and marker.session_id == "new-session-1"


def test_a_written_checkpoint_records_the_session_in_the_state_file_and_the_marker(tmp_path):
    store = tmp_path / "store"
    code, _, _ = hook({"session_id": SID, "transcript_path": str(CC), "trigger": "auto"}, store)
    marker = read_marker(store)
    state = parse((store / marker.latest_state).read_text())
    assert code == 0 and marker.session_id == SID and state.session_id == SID
    assert f" | Trigger: pre-compact auto, engine: rules | Session-Id: {SID}\n" in (store / marker.latest_state).read_text()


def test_without_a_session_id_in_the_payload_the_transcripts_own_is_recorded(tmp_path):
    store = tmp_path / "store"
    code, _, _ = hook({"transcript_path": str(CC)}, store)
    marker = read_marker(store)
    assert code == 0 and marker.session_id == SID
    assert parse((store / marker.latest_state).read_text()).session_id == SID


# --- command line: fast lane and click -------------------------------------------------------------------


def run_process(args: list[str], stdin: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})}, timeout=60)


def test_process_writes_into_dot_duck_tape_of_the_current_folder(tmp_path):
    proc = run_process(["checkpoint"], json.dumps({"transcript_path": str(COPILOT), "cwd": str(tmp_path)}), tmp_path)
    assert proc.returncode == 0, proc.stderr
    [name] = autos(tmp_path / ".duck-tape")
    assert proc.stdout == f"Wrote .duck-tape/{name} and .duck-tape/.last-compact\n"


def test_process_fast_lane_imports_neither_click_nor_litellm_nor_pydantic(tmp_path):
    """The hook's start-up budget (issue 6): pydantic alone costs ~120 ms here, tomllib (config files) ~4 ms."""
    code = ("import sys; from pipeline.entry import main; main(['checkpoint', '--dir', sys.argv[1]]); "
            "print([m for m in ('click', 'litellm', 'pydantic', 'tomllib') if m in sys.modules], file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True,
                          input=json.dumps({"transcript_path": str(CC)}), timeout=60)
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert len(autos(tmp_path / "s")) == 1


def test_process_with_an_unexpected_argument_still_exits_zero(tmp_path):
    proc = run_process(["checkpoint", "--dir", str(tmp_path / "s"), "--bogus"], json.dumps({"transcript_path": str(COPILOT)}), tmp_path)
    assert proc.returncode == 0
    assert "ignoring unexpected argument(s): --bogus" in proc.stderr
    assert len(autos(tmp_path / "s")) == 1


def test_help_goes_to_click():
    proc = subprocess.run([sys.executable, "-m", "pipeline", "checkpoint", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Usage: duck-tape checkpoint" in proc.stdout and "--transcript" in proc.stdout


def test_fast_lane_leaves_help_to_click(monkeypatch):
    from pipeline import cli, entry

    seen = []
    monkeypatch.setattr(cli, "main", lambda a: seen.append(a) or 7)
    assert entry.main(["checkpoint", "--help"]) == 7 and entry.main(["checkpoint", "-h"]) == 7
    assert seen == [["checkpoint", "--help"], ["checkpoint", "-h"]]


@pytest.mark.parametrize(
    ("args", "expected", "warning"),
    [(["--dir"], (None, None, None), "--dir (no value)"),
     (["--dir", "a", "--dir", "b"], (None, "a", None), "--dir b"),
     (["stray"], (None, None, None), "stray"),
     (["--transcript="], (None, None, None), "--transcript (no value)"),
     (["--dir", "a", "--bogus"], (None, "a", None), "--bogus"),
     (["--max-bytes", "12k", "--dir", "a"], (None, "a", None), "--max-bytes 12k (not a positive number of bytes)")],
)
def test_fast_lane_ignores_odd_arguments_and_still_runs(args, expected, warning, monkeypatch, capsys):
    """Bug: a dangling option ('checkpoint --dir') went to click and exited 2; a hook must never fail."""
    from pipeline import entry
    from pipeline.hooks import checkpoint

    seen = []
    monkeypatch.setattr(checkpoint, "hook_main", lambda t, d, max_bytes=None: seen.append((t, d, max_bytes)) or 0)
    assert entry.main(["checkpoint", *args]) == 0
    assert seen == [expected]
    assert f"ignoring unexpected argument(s): {warning}" in capsys.readouterr().err


def test_fast_lane_shapes(monkeypatch):
    from pipeline import entry
    from pipeline.hooks import checkpoint

    seen = []
    monkeypatch.setattr(checkpoint, "hook_main", lambda t, d, max_bytes=None: seen.append((t, d, max_bytes)) or 0)
    assert entry.main(["checkpoint"]) == 0
    assert entry.main(["checkpoint", "--dir=/s", "--transcript", "/t.jsonl"]) == 0
    assert entry.main(["checkpoint", "--max-bytes", "9000000", "--dir", "/s"]) == 0
    assert seen == [(None, None, None), ("/t.jsonl", "/s", None), (None, "/s", 9000000)]


def test_closed_output_streams_do_not_fail_the_hook(tmp_path):
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError("the harness went away")

    store = tmp_path / "store"
    code = hook_main(None, str(store), stdin=io.StringIO(json.dumps({"transcript_path": str(COPILOT)})),
                     stdout=Closed(), stderr=Closed())
    assert code == 0 and len(autos(store)) == 1 and read_marker(store).transcript == str(COPILOT)


def test_checkpoint_masks_what_only_the_scanner_library_knows(tmp_path):
    """Bug: the hook masked with the project rules only, so a Shopify token (a library rule) reached the auto
    state file and then restore's output; every state-file write now uses the same deep detector."""
    transcript = tmp_path / "s.jsonl"
    token = "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"
    transcript.write_text(
        json.dumps({"role": "user", "content": f"configure the shop with token {token} please"}) + "\n"
        + json.dumps({"role": "assistant", "content": f"Decision: we will use {token} because it is the shop token."}) + "\n")
    store = tmp_path / "store"
    code, out, err = hook({"transcript_path": str(transcript)}, store)
    assert code == 0
    [name] = autos(store)
    text = (store / name).read_text()
    assert token not in text and "<REDACTED>" in text
    assert "masked" in err


def test_max_bytes_raises_the_cap_the_size_error_points_to(tmp_path):
    """New-user finding: the over-the-cap message says "raise it with --max-bytes", which checkpoint ignored."""
    payload = json.dumps({"transcript_path": str(CC)})
    small = {"DUCK_TAPE_MAX_TRANSCRIPT_BYTES": "1000"}
    refused = run_process(["checkpoint", "--dir", str(tmp_path / "a")], payload, tmp_path, small)
    assert refused.returncode == 0 and autos(tmp_path / "a") == []
    assert "over the cap of 1000 bytes (raise it with --max-bytes" in refused.stderr
    raised = run_process(["checkpoint", "--dir", str(tmp_path / "b"), "--max-bytes", str(CC.stat().st_size)], payload,
                         tmp_path, small)
    assert raised.returncode == 0 and raised.stderr == "" and len(autos(tmp_path / "b")) == 1
    bad = run_process(["checkpoint", "--dir", str(tmp_path / "c"), "--max-bytes=-5"], payload, tmp_path)
    assert bad.returncode == 0 and len(autos(tmp_path / "c")) == 1  # the default cap applies
    assert "ignoring unexpected argument(s): --max-bytes -5 (not a positive number of bytes)" in bad.stderr


def test_temp_files_a_killed_writer_left_are_removed_by_the_next_checkpoint(tmp_path):
    """Issue 22 item 6: a killed checkpoint's ``.<name>.<pid>.<hex>.tmp`` files stayed until a ``merge``; the next
    checkpoint removes those of processes that are gone, even one that writes only the marker."""
    store = tmp_path / "store"
    (store / ".markers").mkdir(parents=True)
    (store / ".owned").mkdir()
    dead = 2**22 + 12345  # above the default pid_max: no such process
    left = [store / f".2026-03-10-1100-auto.state.md.{dead}.0badc0de.tmp", store / f".last-compact.{dead}.1234abcd.tmp",
            store / ".markers" / f".s-1.json.{dead}.5678abcd.tmp", store / ".owned" / f".x.state.md.{dead}.9abcdef0.tmp"]
    for path in left:
        path.write_text("half written")
    result = run_checkpoint(HookInput(transcript_path=str(tmp_path / "missing.jsonl")), store=store)
    assert not result.written and result.marker_path is not None  # a marker-only write
    assert [p for p in left if p.exists()] == []
