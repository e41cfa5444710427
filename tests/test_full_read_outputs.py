"""extract-raw, verify and masking over a transcript read segment by segment (issue 23): the same output as a read
of the whole file, in bounded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.redact import LIBRARY_CHUNK, library_pieces
from pipeline.redact.source import compact, mask_texts, merge
from pipeline.stages import extract
from pipeline.transcripts import read_transcript
from pipeline.redact.source import mask_transcript
from pipeline.verify import render
from pipeline.verify.compare import verify, verify_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = [ROOT / "fixtures" / p for p in ("claude-code/checkout-rate-limit.jsonl", "copilot/events.jsonl",
                                             "opencode/export.json", "gemini/session.jsonl",
                                             "secrets/secret-suite.jsonl")]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parent.name)
def test_extract_raw_streamed_is_the_whole_read_rendered(path, monkeypatch):
    whole, _ = mask_transcript(read_transcript(str(path), warn=False), placeholder="[REDACTED]")
    expected = extract.render(extract.run(whole))
    assert extract.extract_raw_text(str(path)) == expected
    # small segments, small masking runs, a section spooled to its file: the same bytes
    monkeypatch.setattr(extract, "EXTRACT_POLICY_KW", dict(prompts=1, min_events=0, compaction_share=0.0))
    monkeypatch.setattr(extract, "MASK_CHUNK", 300)
    monkeypatch.setattr(extract, "SPOOL_MEMORY", 200)
    assert extract.extract_raw_text(str(path)) == expected


def test_verify_streamed_matches_the_whole_read_on_the_fixture():
    path = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    whole = render.text(verify(read_transcript(str(path), warn=False)))
    assert render.text(verify_path(str(path), max_bytes=1 << 30)) == whole
    last = verify_path(str(path), only="last", max_bytes=1 << 30)
    assert [c.number for c in last.checks] == [last.compactions]
    with pytest.raises(ValueError, match="does not exist"):
        verify_path(str(path), only=9, max_bytes=1 << 30)


def test_a_text_seen_twice_is_masked_alike_and_scanned_once():
    secret = "password = 'hunter22-abc9'"
    texts = [f"config: {secret}", "nothing here", f"config: {secret}", "log in with hunter22-abc9"]
    seen: set = set()
    out, mask = mask_texts(texts, seen=seen)
    assert out[0] == out[2] and "hunter22-abc9" not in "".join(out)
    assert out[1] is texts[1] and len(seen) == 3
    later, _ = mask_texts(["she typed hunter22-abc9 again"], known=mask.values, seen=seen)
    assert "hunter22-abc9" not in later[0]  # a value found in an earlier segment is masked in a later one


def test_a_compacted_mask_locates_the_placeholders_it_put_in():
    texts = ["x " * 500 + "token: ghp_" + "a1B2" * 9 + " end", "the previous file said <REDACTED> here"]
    out, full = mask_texts(texts)
    small = merge([compact(full)])
    assert len(small.masked) < len(full.masked) / 4
    rendered = "Facts:\n" + out[0][-80:] + "\n" + out[1]
    assert [f.type for f in full.locate(rendered)] == [f.type for f in small.locate(rendered)] == ["github-token"]


def test_the_library_reads_a_long_text_in_overlapping_pieces_and_a_key_cut_by_one_is_whole_in_the_next():
    line = "filler line of a long tool output\n"
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n" * 4 + \
          "-----END OPENSSH PRIVATE KEY-----\n"
    head = line * ((LIBRARY_CHUNK - 100) // len(line))
    text = head + key + line * 100
    start, end = len(head), len(head) + len(key)
    spans = library_pieces(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(b[0] < a[1] and text[b[0] - 1] == "\n" for a, b in zip(spans, spans[1:]))
    assert start < spans[0][1] < end  # the first piece ends inside the key block
    assert any(a <= start and end <= b for a, b in spans)  # the next one holds it whole


def test_the_progress_bar_shows_only_on_a_terminal_for_a_long_read(tmp_path, capsys):
    from pipeline.readprogress import MIN_BYTES, reading

    small = tmp_path / "small.jsonl"
    small.write_bytes(b"{}\n" * 10)
    with reading(str(small), "reading") as update:  # off a terminal (pytest captures stderr): no bar
        update(10)
    assert capsys.readouterr().err == ""
    with reading(str(small), "reading", force=True) as update:
        update(15)
        update(None)
    assert "reading" in capsys.readouterr().err
    assert MIN_BYTES >= 10_000_000  # a read that short finishes before a bar would help
