"""The ``extract-raw`` hook path after its start-up work was cut (issue 2: ~80 ms with process start).

What made it faster must not change what it does: redaction rules skipped by their literals still find
everything the eager rules find, decision cues match the same texts in any letter case, the input checks
without pathlib name and refuse the same paths, events are built with the same fields, and the console
entry still prints everything and exits 0.  No timing here (speed is measured by ``make bench``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from test_redact import LOOKALIKES, SECRETS

from pipeline.errors import InputError
from pipeline.redact import scan
from pipeline.redact.lazy import guarded_pattern, lazy_pattern
from pipeline.redact.rules import FORMAT_RULES, candidates, latin1_view
from pipeline.stages.extract import DECISION_CUES_SOURCE, extract_raw_text, has_decision_cue
from pipeline.transcripts.common import EventSink
from pipeline.transcripts.model import EVENT_KINDS, Event, ReadReport, TodoItem, TranscriptMeta
from pipeline.transcripts.records import READ_BUFFER, iter_jsonl
from pipeline.transcripts.safety import check_transcript_path

CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"

#: Format rules SECRETS has no sample of (all fake).
MORE_TOKENS = [
    "SLACK_APP_TOKEN=xapp-1-A0FAKE0123-4567890123-fakefakefake",
    "signing secret whsec_FAKEfake0123456789abcdefGH",
    "DO_OAUTH=doo_v1_FAKEfake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01",
    "refresh with dor_v1_FAKEfake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01",
]
TEXTS = [text for _, text, _ in SECRETS] + LOOKALIKES + MORE_TOKENS


def _eager_candidates(text: str) -> list[tuple[int, int, int, str]]:
    """``candidates`` as it was before the literal test: every format rule runs on every text."""
    raw = latin1_view(text)
    out = []
    for priority, rule in enumerate(FORMAT_RULES):
        for m in re.compile(rule.source).finditer(raw):
            start, end = m.span("v") if rule.has_value_group else m.span()
            if rule.check is None or rule.check(text, m, text[start:end]):
                out.append((start, end, priority, rule.kind))
    return out


def test_every_format_rule_match_holds_one_of_its_literals():
    matched = set()
    for text in TEXTS:
        raw = latin1_view(text)
        for rule in FORMAT_RULES:
            for m in re.compile(rule.source).finditer(raw):
                matched.add(rule.source)
                assert any(lit in raw[m.start() : m.end()] for lit in rule.literals), (rule, text)
    assert matched == {rule.source for rule in FORMAT_RULES}  # every rule was exercised


def test_literal_test_drops_no_format_hit():
    for text in TEXTS:
        format_hits = sorted(c for c in candidates(text) if c[2] < len(FORMAT_RULES))
        assert format_hits == sorted(_eager_candidates(text)), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TEXTS + [" ", "\n", "x", "Bearer ", "://u:", "@", "eyJ", "AK", "IA"]), max_size=8))
def test_literal_test_drops_no_hit_in_spliced_text(parts):
    text = "".join(parts)
    format_hits = sorted(c for c in candidates(text) if c[2] < len(FORMAT_RULES))
    assert format_hits == sorted(_eager_candidates(text))


def test_guarded_pattern_compiles_only_when_a_literal_is_there():
    pattern_for = guarded_pattern((b"sk-", b"xy"), rb"(?:sk-|xy)[0-9]+")
    assert pattern_for(b"nothing to see") is None
    pattern = pattern_for(b"key xy12")
    assert pattern is not None and pattern.findall(b"a sk-1 b xy22") == [b"sk-1", b"xy22"]
    assert pattern_for(b"nothing to see") is pattern  # once compiled, no more literal tests
    lazy = lazy_pattern(r"[a-z]+\d")
    assert lazy() is lazy() and lazy().fullmatch("abc1")


def test_scan_still_finds_each_type_in_one_text():
    text = "\n".join(TEXTS[: len(SECRETS)])
    assert {f.type for f in scan(text)} == {kind for kind, _, _ in SECRETS}


CUE_WORDS = ["APPROVED", "rejected", "Decided to", "decision", "chose X over", "We're going with", "I am going with",
             "let's go with", "we'll use", "I'll Use", "settled on", "Switched to", "opting for", "ruled out",
             "didn't work because", "did not work because", "instead of", "Rather than", "going", "use", "with"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CUE_WORDS + [" ", "\n", ".", "x", "é", "ſ", "K", "İ", "-", "'", "un"]), max_size=10))
def test_decision_cue_matches_like_the_case_insensitive_pattern(parts):
    text = "".join(parts)
    reference = re.compile(DECISION_CUES_SOURCE, re.IGNORECASE | re.VERBOSE)
    assert has_decision_cue(text) == (reference.search(text) is not None)


def test_decision_cue_unicode_case_folding():
    assert has_decision_cue("We ruled out the cache")
    assert has_decision_cue("WE RULED OUT THE CACHE")
    assert has_decision_cue("we'll uſe redis")  # "ſ" folds to "s" under re.IGNORECASE, not in str.lower()
    assert not has_decision_cue("we'll reuse redis")


def test_event_sink_builds_the_same_event_as_keywords():
    fields = dict(text="t", timestamp="2026-09-01T10:00:00.000Z", tool_name="Bash", target="pytest -q",
                  call_id="toolu_1", is_error=True, todos=[TodoItem("a")], agent="explore", line=7,
                  session_id="s-1")
    sink = EventSink(TranscriptMeta("claude-code", "claude-code-jsonl", "x.jsonl"), ReadReport())
    sink.add("tool_call")
    assert sink.add("tool_result", **fields) == Event(index=1, kind="tool_result", **fields)
    assert sink.events[0] == Event(index=0, kind="tool_call")


def test_literal_aliases_are_still_there():
    from typing import get_args

    from pipeline.transcripts.model import EventKind, Harness, TodoStatus

    assert get_args(EventKind) == EVENT_KINDS
    assert "claude-code" in get_args(Harness) and get_args(TodoStatus) == ("pending", "in_progress", "completed")


def test_whitespace_lines_are_not_records(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n \t\x0b\x0c\r\n\n{"b": 2}\n   ')
    report = ReadReport()
    assert [n for n, _ in iter_jsonl(str(path), report)] == [1, 4]
    assert report.skipped_lines == [] and report.records == 2


def test_a_line_longer_than_the_read_buffer_is_one_record(tmp_path):
    path = tmp_path / "t.jsonl"
    big = "x" * (3 * READ_BUFFER)
    path.write_text(f'{{"a": "{big}"}}\n{{"b": 2}}\n')
    assert [(n, len(r.get("a", ""))) for n, r in iter_jsonl(str(path), ReadReport())] == [(1, len(big)), (2, 0)]


@pytest.mark.parametrize("spelling", ["{d}/t.jsonl", "{d}//t.jsonl", "{d}/./t.jsonl", "{d}/sub/../t.jsonl"])
def test_input_check_resolves_like_pathlib(tmp_path, spelling):
    (tmp_path / "sub").mkdir()
    (tmp_path / "t.jsonl").write_text('{"a": 1}\n')
    path = spelling.format(d=tmp_path)
    assert check_transcript_path(path, max_bytes=100) == str(Path(path).resolve())
    with pytest.raises(InputError) as info:
        check_transcript_path(path, max_bytes=3)
    assert str(info.value).startswith(f"{Path(path)}: transcript is 9 bytes")  # named as pathlib spells it


def test_input_check_refuses_a_path_through_a_symlink_in_the_trusted_root(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (real / "t.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(InputError, match="goes through a symlink"):
        check_transcript_path(str(tmp_path / "link" / "t.jsonl"), max_bytes=100, trusted_root=str(tmp_path))
    monkeypatch.chdir(tmp_path)
    resolved = str((real / "t.jsonl").resolve())
    assert check_transcript_path("./real//t.jsonl", max_bytes=100, trusted_root=str(tmp_path)) == resolved
    with pytest.raises(InputError, match="outside the trusted root"):
        check_transcript_path("real/t.jsonl", max_bytes=100, trusted_root=str(tmp_path / "link2"))


def test_console_entry_prints_everything_and_exits_0(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for target, expected in ((str(CC), extract_raw_text(str(CC))),
                             (str(tmp_path / "none.jsonl"), extract_raw_text(str(tmp_path / "none.jsonl")))):
        proc = subprocess.run([sys.executable, "-m", "pipeline", "extract-raw", target], capture_output=True,
                              text=True, env=env, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout == expected


def test_hook_path_imports_neither_pathlib_nor_typing():
    # typing is allowed once the secret-scanner library is loaded: it imports it (issue 11: extract-raw masks
    # with the same detector as every other output, the project rules and the library)
    code = (
        "import sys; from pipeline.entry import main; main(['extract-raw', sys.argv[1]]); "
        "bad = [m for m in ('pathlib', 'typing', 'click', 'pydantic') if m in sys.modules]; "
        "bad = [m for m in bad if m != 'typing' or 'betterleaks' not in sys.modules]; "
        "print(*sorted(bad), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(CC)], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stderr.strip().splitlines() == []  # each costs 2.5-80 ms of the hook's start
