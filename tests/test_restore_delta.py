"""Issue 17 item 2: restore the delta — what the compaction summary lost first, what it kept left out and named.

The state file is ``tests/golden/restore/rate-limit.state.md`` (a checkpoint of ``cc_jsonl.rate_limit_session``);
the goldens beside it are what the restore printed before the delta existed, so "no summary to compare with" is
checked byte for byte against the code of before, not against itself.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipeline.hooks.checkpoint import run_checkpoint
from pipeline.hooks.payload import HookInput
from pipeline.restore.run import Starting, render_restore, restore_main
from pipeline.state.marker import Marker
from pipeline.state.sections import read_sections
from pipeline.verify.delta import LastSummary, last_compaction_delta, split
from pipeline.verify.tail import last_summary_in_file
from tests.cc_jsonl import CC, SUMMARY, rate_limit_session
from tests.rules_builder import B
from tests.store_kit import mark_as_store, own

GOLDEN = Path(__file__).resolve().parent / "golden" / "restore"
S = "5f0c2a71-8d3e-4b19-a6c2-0e9d7b4f1a36"
STATE = "2026-09-01-1002-auto.state.md"
MARKER_TIME = "2026-09-01T10:02:00Z"
CASES = [("plain", 6000, "txt"), ("plain", 1200, "txt"), ("claude-code", 1200, "json")]
#: What the harness's SessionStart payload says: the session and its folder (the one its state files name).
SESSION = Starting(S, "/home/dev/shop")
PAYLOAD = json.dumps({"session_id": S, "cwd": "/home/dev/shop", "hook_event_name": "SessionStart",
                      "source": "compact"})


def store_with(tmp_path: Path, monkeypatch, cc: CC | None) -> str:
    """The golden state file and a marker naming ``cc`` written as the session's transcript (None: a path that
    does not exist); cwd is ``tmp_path`` so that the handoff names the state file by a relative path."""
    monkeypatch.chdir(tmp_path)
    store = tmp_path / ".duck-tape"
    store.mkdir()
    (store / STATE).write_text((GOLDEN / "rate-limit.state.md").read_text())
    own(store, store / STATE)
    transcript = tmp_path / f"{S}.jsonl"
    if cc is not None:
        cc.write(transcript)
    mark_as_store(store, Marker(MARKER_TIME, "/home/dev/shop", STATE, str(transcript), S))
    return ".duck-tape"


def compacted(summary: str | None, *, at: str = "2026-09-01T10:02:30") -> CC:
    cc = rate_limit_session(S)
    cc.t = datetime.fromisoformat(at).replace(tzinfo=timezone.utc)
    cc.compact(summary)
    return cc


def without_summary() -> dict[str, CC | None]:
    older = rate_limit_session(S)
    older.t = datetime(2026, 9, 1, 10, 1, 50, tzinfo=timezone.utc)
    older.compact(SUMMARY)  # an earlier compaction's summary: not what this compaction's context holds
    useless = compacted("")  # the preface and nothing after it (transcripts.summaries: "preface")
    return {"no compaction": rate_limit_session(S), "ends before the summary": compacted(None),
            "earlier summary": older, "useless summary": useless, "no transcript": None}


@pytest.mark.parametrize("case", list(without_summary()))
def test_with_no_summary_to_compare_the_output_is_byte_identical_to_before(tmp_path, monkeypatch, case):
    store = store_with(tmp_path, monkeypatch, without_summary()[case])
    for fmt, budget, ext in CASES:
        output, note = render_restore(store, budget=budget, fmt=fmt, reconcile=False, starting=SESSION)
        assert note is None
        assert output == (GOLDEN / f"rate-limit.{fmt}-{budget}.{ext}").read_bytes(), (case, fmt, budget)


def test_lost_entries_come_first_and_the_last_line_names_the_kept_ones(tmp_path, monkeypatch):
    store = store_with(tmp_path, monkeypatch, compacted(SUMMARY))
    output, note = render_restore(store, budget=6000, fmt="plain", reconcile=False, starting=SESSION)
    text = output.decode()
    assert note is None
    lines = text.rstrip("\n").split("\n")
    lost = lines.index("## Lost by the compaction summary (not in your context; REJECTED ones: do not retry them)")
    assert lost == 4  # the first section, right after the header
    assert lines[lost + 1:lost + 4] == [
        "- Constraint: Never push to main directly.",
        "- Fact: `redis-cli ping` failed (Could not connect to Redis at 127.0.0.1:6379: Connection refused); "
        "`redis-cli -p 6380 ping` worked",
        "- Fact: Found it: redis-server in this container listens on port 6380, not 6379.",
    ]
    # the kept ones are not repeated in the body: the summary the new context holds carries them
    assert "## Decisions" not in text and "## Remaining" not in text and "## Constraints" not in text
    assert "- Add refund rate-limit tests" not in text and "token bucket in Redis -" not in text
    assert lines[-1] == ('Already in the compaction summary, so left out: 3 entries (approved 1, rejected 1, '
                         'remaining 1): "fixed window counter", "a token bucket in Redis", "Add refund rate-limit tests".')
    # a lost entry comes before the kept one it sits beside in the state file
    assert text.index("6380") < text.index('"fixed window counter"')
    # Current, the workflow, Done and Re-derivation are handed over as before
    for heading in ("## Approved Workflow", "## Current", "## Done (oldest first)", "## Re-derivation"):
        assert heading in text
    assert text.index("## Lost by") < text.index("## Approved Workflow") < text.index("## Current")


def test_on_a_tight_budget_lost_entries_are_fitted_before_everything_else(tmp_path, monkeypatch):
    store = store_with(tmp_path, monkeypatch, compacted(SUMMARY))
    output, _ = render_restore(store, budget=1000, fmt="claude-code", reconcile=False, starting=SESSION)
    assert len(output) <= 1000
    text = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    assert text.split("\n")[5] == "- Constraint: Never push to main directly."
    last = text.rstrip("\n").split("\n")[-1]
    assert last.startswith("Left out to fit 1000 bytes (read the state file for them): Lost by the compaction "
                           "summary (1 of 3), Approved Workflow (all 1 lines), Current (all 1), Done (all 2)")
    # the names of the kept entries take at most 8 % of the budget; their count is always there
    assert last.endswith('Already in the compaction summary, so left out: 3 entries (approved 1, rejected 1, '
                         'remaining 1): "fixed window counter", "a token bucket in Redis" and 1 more.')
    roomier, _ = render_restore(store, budget=1400, fmt="claude-code", reconcile=False, starting=SESSION)
    text = json.loads(roomier)["hookSpecificOutput"]["additionalContext"]
    assert len(roomier) <= 1400 and "## Current\nRunning: /home/dev/shop/src/shop/ratelimit.py" in text
    assert text.index("## Lost by") < text.index("## Current")


def test_a_summary_that_keeps_nothing_says_so(tmp_path, monkeypatch):
    store = store_with(tmp_path, monkeypatch, compacted("Summary:\n- The user works on the shop service.\n"))
    text = render_restore(store, budget=6000, fmt="plain", reconcile=False, starting=SESSION)[0].decode()
    assert text.rstrip("\n").split("\n")[-1] == \
        "The compaction summary kept none of the 6 entries checked: all of them are above."
    assert "- REJECTED: fixed window counter" in text and "- Remaining: Add refund rate-limit tests" in text


def test_after_a_skipped_checkpoint_the_distilled_transcript_is_reused_not_read_again(tmp_path, monkeypatch):
    """The restore distils the marker's transcript itself; the delta comes from that same read."""
    monkeypatch.chdir(tmp_path)
    store = tmp_path / ".duck-tape"
    transcript = compacted(SUMMARY).write(tmp_path / f"{S}.jsonl")
    mark_as_store(store, Marker(MARKER_TIME, "/home/dev/shop", None, str(transcript), S))  # marker only
    import pipeline.transcripts as transcripts
    import pipeline.verify.tail as tail

    reads = []
    real = transcripts.read_transcript
    monkeypatch.setattr(transcripts, "read_transcript", lambda *a, **k: reads.append(a) or real(*a, **k))
    monkeypatch.setattr(tail, "last_summary_in_file", lambda *a: pytest.fail("the transcript was read twice"))
    text, note = render_restore(".duck-tape", budget=6000, fmt="plain", reconcile=False, starting=SESSION)
    text = text.decode()
    assert len(reads) == 1 and "distilled its transcript" in note
    assert text.split("\n")[4].startswith("## Lost by the compaction summary")
    assert "- Constraint: Never push to main directly." in text
    assert text.rstrip("\n").split("\n")[-1].startswith("Already in the compaction summary, so left out: ")


def test_the_hook_process_prints_the_delta_as_hook_json(tmp_path, monkeypatch):
    store = store_with(tmp_path, monkeypatch, compacted(SUMMARY))
    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8")
    assert restore_main(store, fmt="claude-code", reconcile=False, stdin=io.StringIO(PAYLOAD), stdout=wrapper,
                        stderr=err) == 0
    wrapper.flush()
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "## Lost by the compaction summary" in context and err.getvalue() == ""


# -- the pure function and the cheap summary read -----------------------------------------------------------

def test_last_compaction_delta_of_a_transcript_and_a_state():
    b = B()
    b.user("Add rate limiting to POST /api/checkout (ticket SHOP-1234).")
    b.compaction("Summary:\n- an earlier summary that mentions port 6380\n")
    b.asst("Going with a token bucket in Redis.")
    b.compaction(SUMMARY)
    doc = read_sections((GOLDEN / "rate-limit.state.md").read_text())
    delta = last_compaction_delta(b.build(), doc)
    assert [e.text for e in delta.kept] == [
        'REJECTED: fixed window counter - user said "no fixed window counter. use a token bucket in Redis."',
        'APPROVED: a token bucket in Redis - user\'s instruction ("no fixed window counter. use a token bucket in '
        'Redis.")',
        "Add refund rate-limit tests",
    ]
    assert [(e.kind, e.extra["ref"]) for e in delta.lost] == [("fact", ("facts", 0)), ("fact", ("facts", 1)),
                                                            ("fact", ("facts", 2))]
    # the last compaction's summary only, and only when it is not older than the marker
    assert last_compaction_delta(b.build(), doc, since="2026-09-01T10:00:15Z") is not None
    assert last_compaction_delta(b.build(), doc, since="2026-09-01T11:00:00Z") is None
    b.compaction("")  # the newest compaction holds no summary: an earlier one does not stand in for it
    assert last_compaction_delta(b.build(), doc) is None
    assert split(doc, LastSummary("nothing relevant")).kept == []


def test_the_cheap_read_finds_the_last_summary_of_each_jsonl_harness(tmp_path):
    cc = compacted(SUMMARY)
    cc.bash("grep -r isCompactSummary .", 'x.jsonl: {"isCompactSummary": true, "message": {"content": "decoy"}}')
    found = last_summary_in_file(str(cc.write(tmp_path / "cc.jsonl")))
    assert found.harness == "claude-code" and found.timestamp == "2026-09-01T10:02:35.000Z"
    assert "Rejected: a fixed window counter" in found.text
    assert last_summary_in_file(str(compacted(None).write(tmp_path / "ends.jsonl"))) is None
    codex = tmp_path / "rollout.jsonl"
    codex.write_text("\n".join(json.dumps(r) for r in [
        {"timestamp": "2026-09-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": S, "cwd": "/w"}},
        {"timestamp": "2026-09-01T10:03:00.000Z", "type": "compacted", "payload": {"message": SUMMARY}},
        {"timestamp": "2026-09-01T10:03:01.000Z", "type": "event_msg", "payload": {"type": "context_compacted"}},
    ]) + "\n")
    assert last_summary_in_file(str(codex)) == LastSummary(SUMMARY.strip(), "2026-09-01T10:03:00.000Z",
                                                           harness="codex")
    copilot = tmp_path / "events.jsonl"
    records = [{"type": "session.compaction_complete", "timestamp": "2026-09-01T10:03:00.000Z",
                "data": {"summaryContent": SUMMARY}}]
    copilot.write_text(json.dumps(records[0]) + "\n")
    assert last_summary_in_file(str(copilot)).harness == "copilot"
    records.append({"type": "session.truncation", "timestamp": "2026-09-01T10:09:00.000Z",
                    "data": {"messagesRemovedDuringTruncation": 12}})
    copilot.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert last_summary_in_file(str(copilot)) is None  # the newest compaction keeps no summary
    for nothing in (tmp_path / "missing.jsonl", tmp_path):
        assert last_summary_in_file(str(nothing)) is None
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert last_summary_in_file(str(tmp_path / "empty.jsonl")) is None


def test_the_restore_hook_stays_off_the_heavy_imports(tmp_path, monkeypatch):
    """The delta runs in the fast lane: no click, pydantic or litellm (AGENTS.md)."""
    import subprocess
    import sys

    store = store_with(tmp_path, monkeypatch, compacted(SUMMARY))
    code = ("import sys; from pipeline.entry import main; main(['restore', '--dir', %r, '--no-reconcile']); "
            "print(sorted(m for m in ('click', 'pydantic', 'litellm') if m in sys.modules), file=sys.stderr)" % store)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert "## Lost by the compaction summary" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"
