"""A transcript read as segments (pipeline/transcripts/segments.py, issue 23): where they end, what they carry,
how their events map to a whole read, and where a read can go on."""

from __future__ import annotations

import json

import pytest

from pipeline.transcripts import read_transcript
from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.records import iter_jsonl
from pipeline.transcripts.segments import Policy, StopStream, stream
from cc_jsonl import CC

SMALL = Policy(prompts=2, min_events=0)


def _session(path, rounds: int = 6):
    cc = CC("seg-1111-2222")
    cc.user("Add rate limiting to the checkout API.")
    cc.asst("I'll start with the checkout handler.")
    for n in range(rounds):
        cc.bash(f"pytest -q tests/test_{n}.py", f"{n + 3} passed")
        cc.asst(f"Round {n} done: should I go on with the refund endpoint?")
        cc.user("yes, do that" if n % 2 else f"also cover handler {n}")
        if n == 2:
            cc.compact("Summary: rate limiting added to checkout; refunds pending.")
    cc.asst("All done. Next step: open the pull request.")
    cc.write(path)
    return path


def _segments(path, policy=SMALL, **kw):
    got = []
    result = stream(str(path), got.append, max_bytes=1 << 30, policy=policy, **kw)
    return got, result


def test_segments_end_before_prompts_and_at_compactions_and_number_events_as_a_whole_read(tmp_path):
    path = _session(tmp_path / "s.jsonl")
    whole = read_transcript(str(path), warn=False).events
    segments, result = _segments(path)
    assert not result.stopped and result.offsets and len(segments) > 3 and segments[-1].last
    own = []
    for seg in segments:
        events = seg.transcript.events
        first = events[len(seg.seeds)]
        assert first.kind in ("user_prompt", "compaction") or seg.number == 1
        for i, ev in enumerate(events):
            w = whole[seg.global_index(i)]
            assert (w.kind, w.text, w.line) == (ev.kind, ev.text, ev.line)
        own.extend(events[len(seg.seeds):])
    assert [e.text for e in own] == [e.text for e in whole]  # every event once
    after = [s for s in segments if s.transcript.events[len(s.seeds)].kind == "compaction"]
    assert len(after) == 1 and after[0].seeds == ()  # a compaction carries nothing over
    assert segments[after[0].number - 2].before_compaction


def test_a_segment_cut_before_a_prompt_carries_the_last_prompt_and_the_answer_after_it(tmp_path):
    path = _session(tmp_path / "s.jsonl")
    segments, _ = _segments(path)
    seg = next(s for s in segments if len(s.seeds) == 2)
    prompt, answer = seg.transcript.events[:2]
    before = segments[seg.number - 2].transcript.events
    assert prompt.kind == "user_prompt" and answer.kind == "assistant_text"
    assert prompt.text == [e for e in before if e.kind == "user_prompt"][-1].text
    assert answer.text == [e for e in before if e.kind == "assistant_text"][-1].text
    assert "should I go on" in answer.text  # what the next prompt ("yes, do that") answers


def test_a_read_goes_on_from_a_segment_end_with_the_lines_numbered_on(tmp_path):
    path = _session(tmp_path / "s.jsonl")
    whole = read_transcript(str(path), warn=False).events
    segments, _ = _segments(path)
    cut = segments[1]
    rest, result = _segments(path, start_at=(cut.end_offset, cut.end_line))
    got = [e for s in rest for e in s.transcript.events[len(s.seeds):]]
    assert [(e.text, e.line) for e in got] == [(e.text, e.line) for e in whole[cut.base + cut.own_events:]]
    assert result.report.covered == path.stat().st_size


def test_a_stop_ends_the_read_after_the_segment(tmp_path):
    path = _session(tmp_path / "s.jsonl")
    seen = []

    def consume(seg):
        seen.append(seg)
        if seg.number == 2:
            raise StopStream

    result = stream(str(path), consume, max_bytes=1 << 30, policy=SMALL)
    assert result.stopped and len(seen) == 2 and not seen[-1].last


def test_a_json_document_has_no_offsets_and_is_read_whole(tmp_path):
    path = _session(tmp_path / "s.jsonl")
    doc = tmp_path / "s.json"
    doc.write_text(json.dumps([json.loads(line) for line in path.read_text().splitlines()]))
    segments, result = _segments(doc, start_at=(100, 3))  # no resuming a rewritten document
    assert not result.offsets and all(s.end_offset is None for s in segments)
    assert sum(s.own_events for s in segments) == len(read_transcript(str(doc), warn=False).events)


@pytest.mark.parametrize("tail, covered", [(b'{"n": 3}\n', 3), (b'{"n": 3}', 3), (b'{"n": ', 2), (b"", 2)])
def test_a_torn_last_line_is_not_covered(tmp_path, tail, covered):
    path = tmp_path / "t.jsonl"
    lines = [b'{"n": 1}\n', b'{"n": 2}\n']
    path.write_bytes(b"".join(lines) + tail)
    report = ReadReport()
    list(iter_jsonl(str(path), report))
    assert report.lines == covered
    assert report.covered == sum(map(len, lines)) + (len(tail) if covered == 3 else 0)


def test_end_at_ends_a_read_before_a_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % n for n in range(1, 6)))
    report = ReadReport(start_at=(9, 1), end_at=27)
    assert [n for n, _ in iter_jsonl(str(path), report)] == [2, 3]
    assert (report.covered, report.lines) == (27, 3)


def test_a_prompt_said_again_counts_once_toward_a_full_segment(tmp_path):
    def session(prompts):
        cc = CC("seg-3333-4444")
        for text in prompts:
            cc.user(text)
            cc.asst("ok")
        return cc.write(tmp_path / f"{len(set(prompts))}.jsonl")

    policy = Policy(prompts=3, min_events=0)
    same, _ = _segments(session(["continue"] * 12), policy)
    different, _ = _segments(session([f"task number {n}" for n in range(12)]), policy)
    assert len(same) == 1 and len(different) == 4


def test_a_session_under_the_default_sizes_is_one_segment_whatever_its_prompts_and_compactions(tmp_path):
    """The default policy cuts for size only: a reply stays with the question it answers, a compaction in a small
    session is read with what came before it (every cut below the sizes cost probes on the development sets)."""
    path = _session(tmp_path / "s.jsonl", rounds=20)
    segments, _ = _segments(path, policy=Policy())
    assert len(segments) == 1 and segments[0].last
    assert len(segments[0].transcript.events) == len(read_transcript(str(path), warn=False).events)


@pytest.mark.parametrize("share, cuts_at_compaction", [(0.0, True), (0.25, True), (0.9, False)])
def test_a_compaction_ends_a_segment_once_it_is_a_share_full(tmp_path, share, cuts_at_compaction):
    path = _session(tmp_path / "s.jsonl", rounds=6)
    whole = read_transcript(str(path), warn=False)
    before = next(i for i, e in enumerate(whole.events) if e.kind == "compaction")
    chars = sum(len(e.text) for e in whole.events[:before])
    segments, _ = _segments(path, policy=Policy(text_chars=int(chars / 0.5), compaction_share=share))
    starts = [s.transcript.events[len(s.seeds)].kind for s in segments]
    assert (starts[1:2] == ["compaction"]) is cuts_at_compaction
