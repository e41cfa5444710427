"""The rules engine's reading window (pipeline/stages/rules/scan.py): a session whose messages hold more than
``READ_CHARS`` characters is read at its start and its end; the middle is counted and named, never silently lost."""

from __future__ import annotations

from pipeline.stages import distil
from pipeline.stages.rules import scan as scan_mod
from pipeline.stages.rules.scan import scan
from rules_builder import B

FILLER = ("The export job reads the ledger in pages of five hundred rows and the dashboard shows the totals an hour "
          "later than the payments team expects. ")


def _long_session(rounds: int) -> B:
    b = B()
    b.user("Add a retry budget to the payout exporter; keep the public API unchanged.")
    b.asst("I'll start with the exporter's HTTP client.")
    for n in range(rounds):
        b.user(f"Notes from review round {n}: " + FILLER * 12)
        b.asst(f"Round {n} read. " + FILLER * 12)
    b.user("Now wire the budget into the scheduler and run the exporter tests.")
    return b


def test_a_session_within_the_window_is_read_whole():
    s = scan(_long_session(5).build())
    assert s.unread is None
    assert len(s.users) == 7 and len(s.assistants) == 6


def test_a_longer_session_is_read_at_its_start_and_its_end_and_says_what_it_skipped(monkeypatch):
    monkeypatch.setattr(scan_mod, "READ_CHARS", 60_000)
    t = _long_session(40).build()
    s = scan(t)
    total = sum(len(e.text) for e in t.events if e.kind in ("user_prompt", "assistant_text"))
    assert total > 60_000
    count, chars, first, last = s.unread
    assert count > 0 and chars > total - 60_000 - 3_000  # only what is past the window is skipped
    read = sum(len(t.events[i].text) for i in s.users + s.assistants)
    assert read <= 60_000 and read + chars == total
    assert s.users[0] == 0 and s.users[-1] == len(t.events) - 1  # the task and the latest request are read
    assert all(not first <= i + 1 <= last for i in s.users + s.assistants)  # events without lines: numbers
    lines = distil.run(t).rederivation
    assert any("were past the reading window" in ln and f"{count} messages" in ln for ln in lines)


def test_a_window_of_zero_reads_everything():
    t = _long_session(40).build()
    assert scan(t, read_chars=0).unread is None
    assert scan(t, read_chars=10_000).unread is not None


def test_the_transcript_window_takes_the_unread_messages_out_before_masking(monkeypatch):
    from datetime import datetime, timezone

    from pipeline.engines import build_state
    from pipeline.stages.rules.scan import windowed

    monkeypatch.setattr(scan_mod, "READ_CHARS", 60_000)
    t = _long_session(40).build()
    w = windowed(t)
    assert w is not t and len(w.events) < len(t.events)
    assert [ev.index for ev in w.events] == list(range(len(w.events)))  # renumbered: evidence indexes stay valid
    count, chars, first, last = w.report.unread
    assert len(t.events) - len(w.events) == count
    assert sum(len(e.text) for e in w.events) + chars == sum(len(e.text) for e in t.events)
    assert w.events[0].text == t.events[0].text and w.events[-1].text == t.events[-1].text
    assert windowed(_long_session(5).build()).report.unread is None
    built = build_state(t, kind="auto", now=datetime(2026, 9, 2, tzinfo=timezone.utc))
    assert f"{count} messages" in built.text and "past the reading window" in built.text
    assert "retry budget" in built.text  # the task, from the opening window
