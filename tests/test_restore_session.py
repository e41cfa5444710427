"""Issue 14 item 4 (state belongs to a session) and item 5 (recover <-> resume).

The bug as a new user met it: the pre-compact checkpoint of today's session was skipped (then: over the 5 MiB cap),
so it wrote only the marker; the store still held yesterday's auto file of another session; ``restore`` handed that
over as "session state restored after compaction".  Here the skip is forced with a small cap, as any skip or failure
of the checkpoint looks the same to the restore.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.hooks.checkpoint import run_checkpoint
from pipeline.hooks.payload import HookInput
from pipeline.restore.run import Starting, render_restore, restore_main
from pipeline.state.marker import Marker, format_marker, parse_marker, read_marker
from pipeline.state.owner import pick_for_marker
from pipeline.state.sections import read_sections
from pipeline.state.store import list_states
from store_kit import mark_as_store, own

ROOT = Path(__file__).resolve().parent.parent
YESTERDAY_TRANSCRIPT = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"  # rate limiting, session A
TODAY_TRANSCRIPT = ROOT / "fixtures" / "copilot" / "events.jsonl"  # ledger-cli export streaming, session B
A = "3c36e3d9-43a0-4c66-9eb2-68a99f5c9fb0"
B = "22a9f29f-c810-4a24-9190-c1e3dbd964c6"
YESTERDAY = datetime(2026, 4, 1, 17, 30, tzinfo=timezone.utc)
TODAY = datetime(2026, 4, 2, 14, 10, tzinfo=timezone.utc)


LEDGER = "/home/dev/ledger-cli"
"""Session B's folder (its transcript's cwd): what its SessionStart payload names."""
PAYLOAD_B = json.dumps({"session_id": B, "cwd": LEDGER, "hook_event_name": "SessionStart", "source": "compact"})


def handoff(store: Path, starting: Starting | None = Starting(B, LEDGER)) -> tuple[str, str | None]:
    """The restore session B's SessionStart gets (``starting``: what its payload says)."""
    output, note = render_restore(str(store), budget=6000, fmt="plain", reconcile=False, starting=starting)
    return output.decode(), note


def yesterday_and_a_skipped_checkpoint(store: Path, monkeypatch, *, legacy: bool = False) -> None:
    """Yesterday's auto file of session A, then today's checkpoint of session B skipped (marker only)."""
    done = run_checkpoint(HookInput(session_id=A, transcript_path=str(YESTERDAY_TRANSCRIPT)), store=store, now=YESTERDAY)
    assert done.written
    if legacy:  # a file written before issue 14: no Session-Id field
        text = done.state_path.read_text()
        done.state_path.write_text(re.sub(r" \| Session-Id: \S+", "", text, count=1))
    monkeypatch.setenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "1000")
    skipped = run_checkpoint(HookInput(session_id=B, transcript_path=str(TODAY_TRANSCRIPT), trigger="auto"),
                             store=store, now=TODAY)
    monkeypatch.delenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES")
    assert not skipped.written and any("over the cap of 1000 bytes" in m for m in skipped.messages)
    assert [s.kind for s in list_states(store)] == ["auto"]  # only yesterday's file


@pytest.mark.parametrize("legacy", [False, True], ids=["labelled", "pre-issue-14-file"])
def test_restore_never_hands_over_yesterdays_file_of_another_session(tmp_path, monkeypatch, legacy):
    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch, legacy=legacy)
    marker = read_marker(store)
    assert marker.session_id == B and marker.latest_state is None  # it used to name yesterday's file
    text, note = handoff(store)
    assert "ledger" in text.lower() and "rate limit" not in text.lower() and "token bucket" not in text.lower()
    states = list_states(store)
    assert [s.kind for s in states] == ["auto", "auto"]
    fresh = states[-1].path
    assert f"From {fresh} (auto state file" in text
    doc = read_sections(fresh.read_text())
    assert doc.session_id == B and doc.trigger == "post-compact restore, engine: rules" and doc.stamp >= "2026-04-02-1410"
    assert read_marker(store).latest_state == fresh.name
    assert note is not None and f"no state file of session {B}" in note and "1 file(s)" in note


def test_a_second_restore_of_the_same_compaction_returns_the_same_handoff(tmp_path, monkeypatch):
    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    first, _ = handoff(store)
    files = sorted(p.name for p in store.iterdir())
    second, note = handoff(store)  # Codex may fire SessionStart again: nothing new is distilled or written
    third, _ = handoff(store)
    assert first == second == third and note is None
    assert sorted(p.name for p in store.iterdir()) == files


def test_restore_as_a_hook_process_prints_the_fresh_state_as_hook_json(tmp_path, monkeypatch):
    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8")
    assert restore_main(str(store), fmt="claude-code", reconcile=False, stdin=io.StringIO(PAYLOAD_B), stdout=wrapper,
                        stderr=err) == 0
    wrapper.flush()
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "ledger" in context.lower() and "token bucket" not in context.lower()


def test_with_nothing_to_distil_restore_says_plainly_there_is_no_fresh_state(tmp_path):
    store = tmp_path / ".duck-tape"
    run_checkpoint(HookInput(session_id=A, transcript_path=str(YESTERDAY_TRANSCRIPT)), store=store, now=YESTERDAY)
    mark_as_store(store, Marker("2026-04-02T14:10:00Z", LEDGER, None, None, B))
    out, err = io.StringIO(), io.StringIO()
    assert restore_main(str(store), stdin=io.StringIO(json.dumps({"session_id": B})), stdout=out, stderr=err) == 0
    assert out.getvalue() == ""
    assert err.getvalue() == (
        f"duck-tape: restore: no fresh state for session {B} (compaction at 2026-04-02T14:10:00Z): its checkpoint "
        "wrote no state file and the marker names no transcript to distil; not handing over 1 file(s) of other "
        "sessions; nothing restored\n")


def test_an_unreadable_transcript_is_no_fresh_state_not_a_fallback(tmp_path):
    store = tmp_path / ".duck-tape"
    run_checkpoint(HookInput(session_id=A, transcript_path=str(YESTERDAY_TRANSCRIPT)), store=store, now=YESTERDAY)
    gone = tmp_path / f"{B}.jsonl"
    mark_as_store(store, Marker("2026-04-02T14:10:00Z", None, None, str(gone), None))  # session named by the path
    text, note = handoff(store, None)  # a person's run: the store's newest compaction
    assert text == "" and f"no fresh state for session {B}" in note and "could not be distilled" in note


def test_ownership_rules(tmp_path):
    """Usable: this session's manual/recovered files whenever written, its auto files from the compaction minute on,
    unlabelled files from the compaction minute on.  Never: another session's, an earlier compaction's auto."""
    store = tmp_path / "s"
    store.mkdir()

    def put(name: str, session: str | None, *, cwd: str = str(tmp_path), record: bool = True) -> None:
        label = name.removesuffix(".state.md")
        sid = f" | Session-Id: {session}" if session else ""
        (store / name).write_text(
            f"# Agent State\n\nSession: {label} | Cwd: {cwd} | Repo/Branch: w@main{sid}\n"
            "Created: 2026-04-02T10:00:00Z\n\n"
            "## Approved Workflow\nNone\n\n## Position\n- **Current:** None\n- **Done:** None\n- **Remaining:** None\n\n"
            "## Decision Log\nNone\n\n## Established Facts\nNone\n\n## Re-derivation\nNone\n")
        if record:
            own(store, store / name)

    put("2026-04-02-0900-auto.state.md", B)  # an earlier compaction of B
    put("2026-04-02-0930.state.md", B)  # a manual save of B
    put("2026-04-02-0940.state.md", None)  # a hand-written file, session unknown, before the compaction
    put("2026-04-02-1000-auto.state.md", A)  # another session, same minute
    put("2026-04-02-1000-recovered.state.md", None)  # unlabelled, at the compaction minute
    put("2026-04-02-1001.state.md", B, record=False)  # planted: claims to be B's, the store never wrote it
    put("2026-04-02-1002.state.md", B, cwd="/home/dev/other")  # written by this store for another folder (a copy)
    choice, owned = pick_for_marker(store, Marker("2026-04-02T10:00:30Z", session_id=B))
    assert [s.path.name for s in owned.usable] == ["2026-04-02-0930.state.md", "2026-04-02-1000-recovered.state.md"]
    assert [s.path.name for s in owned.foreign] == ["2026-04-02-1000-auto.state.md"]
    assert [s.path.name for s in owned.stale] == ["2026-04-02-0900-auto.state.md", "2026-04-02-0940.state.md"]
    assert [s.path.name for s in owned.untrusted] == ["2026-04-02-1001.state.md"]
    assert [s.path.name for s in owned.elsewhere] == ["2026-04-02-1002.state.md"]
    assert choice.info.path.name == "2026-04-02-0930.state.md" and choice.use_as_is  # manual > recovered


def test_resume_does_not_resume_from_another_sessions_file(tmp_path, monkeypatch, capsys):
    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    code = main(["resume", "--dir", str(store), "--yes", "--mask", "--context", str(tmp_path / "none.md")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Not using 1 file(s) of other sessions: only state files of session " + B in out
    assert "Found no state file of this compaction; recovering from the transcript" in out
    [recovered] = [s for s in list_states(store) if s.kind == "recovered"]
    assert read_sections(recovered.path.read_text()).session_id == B
    assert "token bucket" not in out.lower()


def test_recover_then_resume_reports_the_recovered_file(tmp_path, monkeypatch, capsys):
    """Item 5: resume used to say 'no compaction marker found, nothing to resume' beside a recovered file."""
    monkeypatch.chdir(tmp_path)
    from cc_jsonl import rate_limit_session

    transcript = rate_limit_session(A, cwd=str(tmp_path)).write(tmp_path / f"{A}.jsonl")  # a session of this folder
    assert main(["recover", str(transcript), "--yes", "--mask"]) == 0
    out, err = capsys.readouterr()
    written = Path(out.splitlines()[-1])
    assert written.name.endswith("-recovered.state.md")
    assert err.splitlines()[-1] == "duck-tape: to continue from it, run: duck-tape resume"
    assert main(["resume", "--context", "none.md"]) == 0
    out = capsys.readouterr().out
    assert (f"No compaction marker found (.duck-tape/.last-compact); reporting the newest state file of this workspace, "
            f"recovered {written.name}.") in out
    assert "Compaction: none recorded (no compaction marker)" in out and "Current: " in out


def test_resume_without_marker_prefers_this_workspaces_file(tmp_path, capsys):
    store = tmp_path / ".duck-tape"
    store.mkdir()
    body = ("\nCreated: 2026-04-02T10:00:00Z\n\n## Approved Workflow\nNone\n\n## Position\n- **Current:** {cur}\n"
            "- **Done:** None\n- **Remaining:** None\n\n## Decision Log\nNone\n\n## Established Facts\nNone\n\n"
            "## Re-derivation\nNone\n")
    (store / "2026-04-02-1000-recovered.state.md").write_text(
        f"# Agent State\n\nSession: 2026-04-02-1000-recovered | Cwd: {tmp_path} | Repo/Branch: w@main" + body.format(cur="mine"))
    (store / "2026-04-02-1100-recovered.state.md").write_text(
        "# Agent State\n\nSession: 2026-04-02-1100-recovered | Cwd: /elsewhere | Repo/Branch: w@main" + body.format(cur="theirs"))
    (store / "2026-04-02-1200-recovered.state.md").write_text(
        f"# Agent State\n\nSession: 2026-04-02-1200-recovered | Cwd: {tmp_path} | Repo/Branch: w@main" + body.format(cur="planted"))
    own(store, store / "2026-04-02-1000-recovered.state.md", store / "2026-04-02-1100-recovered.state.md")
    assert main(["resume", "--dir", str(store), "--context", str(tmp_path / "none.md")]) == 0
    out = capsys.readouterr().out
    assert "recovered 2026-04-02-1000-recovered.state.md." in out and "Current: mine" in out
    assert ("Not using 1 state file(s) not written by this store (planted, copied or hand-written): "
            "2026-04-02-1200-recovered.state.md; 1 state file(s) whose Cwd is another folder: "
            "2026-04-02-1100-recovered.state.md.") in out


# --- formats: the new fields keep the fixed ones byte-compatible ------------------------------------------------


OLD_HEADER_RE = re.compile(  # the header reader before issue 14
    r"Session: (?P<session>\S+) \| Cwd: (?P<cwd>.*) \| Repo/Branch: (?P<rb>.*?)(?: \| Trigger: (?P<trigger>.*))?")
OLD_MARKER_RE = re.compile(  # the marker reader before issue 14
    r"(?P<time>[^ ]+)(?: \| cwd: (?P<cwd>.*?))?(?: \| latest-state: (?P<latest_state>.*?))?"
    r"(?: \| transcript: (?P<transcript>.*))?", re.DOTALL)


def test_state_header_gains_session_id_last_and_old_readers_keep_the_fixed_fields(tmp_path):
    run = run_checkpoint(HookInput(session_id=A, transcript_path=str(YESTERDAY_TRANSCRIPT), trigger="auto"),
                         store=tmp_path, now=YESTERDAY)
    header = run.state_path.read_text().splitlines()[2]
    assert header == ("Session: 2026-04-01-1730-auto | Cwd: /home/dev/shop | Repo/Branch: shop@feature/rate-limit | "
                      f"Trigger: pre-compact auto, engine: rules | Session-Id: {A}")
    old = OLD_HEADER_RE.fullmatch(header)
    assert (old["session"], old["cwd"], old["rb"]) == ("2026-04-01-1730-auto", "/home/dev/shop", "shop@feature/rate-limit")
    assert read_sections(run.state_path.read_text()).trigger == "pre-compact auto, engine: rules"


def test_marker_session_id_sits_after_cwd_so_old_readers_keep_latest_state_and_transcript():
    m = Marker("2026-04-02T14:10:00Z", "/home/dev/my proj", "2026-04-02-1410-auto.state.md", "/t/x y.jsonl", B)
    line = format_marker(m)
    assert line == (f"2026-04-02T14:10:00Z | cwd: /home/dev/my proj | session-id: {B} | latest-state: "
                    "2026-04-02-1410-auto.state.md | transcript: /t/x y.jsonl\n")
    assert parse_marker(line) == m
    old = OLD_MARKER_RE.fullmatch(line.rstrip("\n"))
    assert (old["latest_state"], old["transcript"]) == ("2026-04-02-1410-auto.state.md", "/t/x y.jsonl")
    assert parse_marker("2026-04-02T14:10:00Z | cwd: /p | transcript: /t.jsonl\n").session_id is None  # old markers


def test_distilling_restore_stays_in_the_fast_lane(tmp_path, monkeypatch):
    import subprocess
    import sys

    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    code = ("import sys; from pipeline.entry import main; main(['restore', '--dir', sys.argv[1], '--no-reconcile']); "
            "print(sorted(m for m in ('click', 'pydantic', 'litellm') if m in sys.modules), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr.strip().splitlines()[-1] == "[]"
    assert "ledger" in proc.stdout.lower()


def test_a_transcript_too_big_to_distil_in_the_hooks_time_is_said_plainly(tmp_path, monkeypatch):
    from pipeline.restore import fresh

    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    monkeypatch.setattr(fresh, "DISTIL_MAX_BYTES", 1000)
    text, note = handoff(store)
    size = TODAY_TRANSCRIPT.stat().st_size
    assert text == "" and f"the transcript is {size} bytes, more than the restore distils within the hook's time" in note
    assert "run `duck-tape resume`" in note and len(list_states(store)) == 1


def test_another_sessions_file_of_the_same_minute_does_not_block_the_distilled_one(tmp_path, monkeypatch):
    """Found by hand: session A's checkpoint and session B's skipped one in the same minute; the distilled state
    could not take the minute's name, was never written, and every restore distilled again."""
    store = tmp_path / ".duck-tape"
    run_checkpoint(HookInput(session_id=A, transcript_path=str(YESTERDAY_TRANSCRIPT)), store=store, now=TODAY)
    monkeypatch.setenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES", "1000")
    run_checkpoint(HookInput(session_id=B, transcript_path=str(TODAY_TRANSCRIPT)), store=store, now=TODAY)
    monkeypatch.delenv("DUCK_TAPE_MAX_TRANSCRIPT_BYTES")
    from pipeline.restore import fresh

    first = fresh.fresh_state(str(store), read_marker(store), now=TODAY, cwd=LEDGER)
    tag = hashlib.sha256(B.encode()).hexdigest()[:6]
    assert first.path is not None and first.path.name == f"2026-04-02-1410-auto-{tag}.state.md"  # issue 23 item 5
    doc = read_sections(first.path.read_text())
    assert (doc.stamp, doc.kind, doc.session_id) == ("2026-04-02-1410", "auto", B)
    again = fresh.fresh_state(str(store), read_marker(store), now=TODAY, cwd=LEDGER)
    assert again.path == first.path and not again.distilled
    assert handoff(store)[0] == handoff(store)[0] and "ledger" in handoff(store)[0].lower()


@pytest.mark.parametrize("payload", ['{"session_id":', '["not", "an object"]'])
def test_a_payload_that_cannot_be_read_restores_nothing_and_says_why(tmp_path, monkeypatch, payload):
    """A SessionStart payload the hook cannot read names no session: the store's newest compaction may be another
    session's (found trying the hook as a new user would: it handed over another session's state)."""
    store = tmp_path / ".duck-tape"
    yesterday_and_a_skipped_checkpoint(store, monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    assert restore_main(str(store), fmt="claude-code", reconcile=False, stdin=io.StringIO(payload), stdout=out,
                        stderr=err) == 0
    assert out.getvalue() == ""
    assert err.getvalue().startswith("duck-tape: restore: nothing restored: hook stdin is ")
    assert "the session that starts is unknown; run `duck-tape restore --session <id>`" in err.getvalue()
    # the same store, read with a valid payload, restores: the refusal is about the payload only
    out2 = io.StringIO()
    assert restore_main(str(store), reconcile=False, stdin=io.StringIO(PAYLOAD_B), stdout=out2, stderr=io.StringIO()) == 0
    assert "ledger" in out2.getvalue().lower()


def test_recover_of_another_folders_session_does_not_promise_a_resume_here(tmp_path, monkeypatch, capsys):
    """`make run` recovered a bundled session of /home/dev/shop and told the user to run `resume`, which then found
    nothing (resume uses only this folder's sessions; found trying the README as a new user would)."""
    monkeypatch.chdir(tmp_path)
    from cc_jsonl import rate_limit_session

    elsewhere = tmp_path / "elsewhere"
    transcript = rate_limit_session(A, cwd=str(elsewhere)).write(tmp_path / f"{A}.jsonl")
    assert main(["recover", str(transcript), "--yes", "--mask"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"duck-tape: the session ran in {elsewhere}, not here: `duck-tape resume` there "
                                    "picks up its state; here, read the file itself")
    assert "to continue from it" not in err
