"""A damaged head never loses the session (issue 11, part 5): a UTF-8 BOM, a torn, garbage or bit-flipped first
line, a damaged Codex ``session_meta``, numbers out of double range; and detection reads a bounded head."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.transcripts import detect, read_transcript
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.records import iter_jsonl

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"
BOM = b"\xef\xbb\xbf"

JSONL_FIXTURES = {
    "claude-code/checkout-rate-limit.jsonl": "claude-code-jsonl",
    "copilot/events.jsonl": "copilot-events",
    "copilot/legacy-session.jsonl": "copilot-legacy",
}
DOCUMENT_FIXTURES = {
    "claude-code/checkout-rate-limit.json": "claude-code-json-array",
    "opencode/messages.json": "opencode-messages",
    "opencode/export.json": "opencode-export",
}
CORPUS_FILES = {
    "claude-code-1.0.45-four-compactions.jsonl": "claude-code-jsonl",
    "claude-code-1.0.48-json-array.json": "claude-code-json-array",
    "claude-code-2.1.126-new-line-types.jsonl": "claude-code-jsonl",
    "claude-code-2.1.14-task-todowrite.jsonl": "claude-code-jsonl",
    "claude-code-2.1.89-main/87cd58f5-2181-4695-a6c0-505ed71ba497.jsonl": "claude-code-jsonl",
    "codex-0.77-review-subagent-rollout.jsonl": "codex-rollout",
    "copilot-cli-1.0.59-events.jsonl": "copilot-events",
    "copilot-cli-legacy.jsonl": "copilot-legacy",
    "opencode-1.15.7-messages-array.json": "opencode-messages",
    "opencode-1.2.5-export.json": "opencode-export",
}


def events(path) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in read_transcript(str(path), warn=False).events]


def write(tmp_path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def first_line_replaced(data: bytes, new: bytes) -> bytes:
    return new + data[data.index(b"\n"):]


# --- BOM ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, fmt", sorted({**JSONL_FIXTURES, **DOCUMENT_FIXTURES}.items()))
def test_bom_is_skipped_for_every_format(tmp_path, name, fmt):
    """Bug: a BOM made every file "unknown transcript format" (37/37 files)."""
    source = FIXTURES / name
    path = write(tmp_path, Path(name).name, BOM + source.read_bytes())
    assert detect_format(str(path)) == fmt
    got = read_transcript(str(path), warn=False)
    assert [(e.kind, e.text, e.line) for e in got.events] == [
        (e.kind, e.text, e.line) for e in read_transcript(str(source), warn=False).events]
    assert got.report.skipped_lines == [] and got.report.repaired_lines == []
    assert got.events


@pytest.mark.corpus
@pytest.mark.parametrize("name, fmt", sorted(CORPUS_FILES.items()))
def test_bom_on_real_transcripts(tmp_path, name, fmt):
    source = CORPUS / name
    path = write(tmp_path, Path(name).name, BOM + source.read_bytes())
    assert detect_format(str(path)) == fmt
    assert events(path) == events(source)


def test_a_bom_inside_a_jsonl_file_is_repaired(tmp_path):
    """Two files concatenated: the second one's BOM starts a line."""
    data = (FIXTURES / "claude-code/checkout-rate-limit.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    path = write(tmp_path, "cat.jsonl", b"".join(lines[:5]) + BOM + b"".join(lines[5:]))
    got = read_transcript(str(path), warn=False)
    assert got.report.repaired_lines == [6] and got.report.skipped_lines == []
    assert [(e.kind, e.text) for e in got.events] == events(FIXTURES / "claude-code/checkout-rate-limit.jsonl")


# --- bad first line ---------------------------------------------------------------------------------------------


def _without_line_1(source: Path) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in read_transcript(str(source), warn=False).events if e.line != 1]


@pytest.mark.parametrize("name, fmt", sorted(JSONL_FIXTURES.items()))
@pytest.mark.parametrize("damage", ["garbage", "torn", "syntax-flip", "binary", "bracket"])
def test_bad_first_line_is_skipped_not_the_session(tmp_path, name, fmt, damage):
    """Bug: a torn, garbage or bit-flipped first line made the file "unknown transcript format"."""
    source = FIXTURES / name
    data = source.read_bytes()
    line1 = data[: data.index(b"\n")]
    new = {
        "garbage": b"garbage{{ not json",
        "torn": line1[: len(line1) // 2],
        "syntax-flip": line1.replace(b'":', b'";', 1),
        "binary": bytes(range(256)).replace(b"\n", b""),
        "bracket": b"[",  # found by the fuzz test: ijson yielded line 2 as the first element of an "array"
    }[damage]
    path = write(tmp_path, Path(name).name, first_line_replaced(data, new))
    assert detect_format(str(path)) in ({fmt, "copilot-events"} if fmt == "copilot-legacy" else {fmt})
    got = read_transcript(str(path), warn=False)
    assert got.report.skipped_lines == [1]
    assert [(e.kind, e.text) for e in got.events] == _without_line_1(source)


@pytest.mark.parametrize("name, fmt", sorted(JSONL_FIXTURES.items()))
def test_invalid_utf8_in_first_line_is_repaired(tmp_path, name, fmt):
    """Bug (9/27 bit flips in line 1): detection parsed the head with plain orjson, which refuses invalid UTF-8
    the readers repair."""
    source = FIXTURES / name
    data = source.read_bytes()
    at = data[: data.index(b"\n")].rindex(b'"')  # inside the last string of line 1 (not the type tag)
    path = write(tmp_path, Path(name).name, data[:at] + b"\xff" + data[at:])
    assert detect_format(str(path)) == fmt
    got = read_transcript(str(path), warn=False)
    assert got.report.repaired_lines == [1] and got.report.skipped_lines == []
    assert len(got.events) == len(read_transcript(str(source), warn=False).events)


@pytest.mark.parametrize("line1", [b'{"type":"session_meta","payload":[]}', b'{"type":"session.start","data":null,"id":1}'])
def test_an_envelope_without_an_object_inside_decides_nothing(tmp_path, line1):
    """Found by the fuzz test: a damaged Codex or Copilot envelope in line 1 (payload/data not an object) made a
    Claude Code file a Codex rollout or Copilot session."""
    source = FIXTURES / "claude-code/checkout-rate-limit.jsonl"
    path = write(tmp_path, "t.jsonl", line1 + b"\n" + source.read_bytes())
    assert detect_format(str(path)) == "claude-code-jsonl"
    assert events(path) == events(source)


def codex_rollout() -> list[dict]:
    ts = "2026-05-01T10:00:0{}.000Z"
    return [
        {"timestamp": ts.format(0), "type": "session_meta",
         "payload": {"id": "0199aa00-0000-7000-8000-000000000001", "cwd": "/home/dev/api", "cli_version": "0.77.0",
                     "git": {"branch": "main"}}},
        {"timestamp": ts.format(1), "type": "turn_context", "payload": {"cwd": "/home/dev/api", "model": "gpt-5-codex"}},
        {"timestamp": ts.format(2), "type": "event_msg",
         "payload": {"type": "user_message", "message": "Add pagination to the orders endpoint"}},
        {"timestamp": ts.format(3), "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "Pagination uses a cursor on the order id."}]}},
    ]


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_codex_rollout_with_a_damaged_session_meta(tmp_path, damage):
    """Bug: a Codex rollout was recognised only by its first line, ``session_meta``."""
    records = codex_rollout()
    lines = [orjson.dumps(r) for r in records]
    lines[0] = lines[0][:40] if damage is None else damage  # torn, emptied or garbage
    path = write(tmp_path, "rollout.jsonl", b"\n".join(lines) + b"\n")
    assert detect_format(str(path)) == "codex-rollout"
    got = read_transcript(str(path), warn=False)
    assert [(e.kind, e.text) for e in got.events] == [
        ("user_prompt", "Add pagination to the orders endpoint"),
        ("assistant_text", "Pagination uses a cursor on the order id.")]
    assert (got.meta.model, got.meta.cwd) == ("gpt-5-codex", "/home/dev/api")


@pytest.mark.corpus
def test_real_codex_rollout_with_a_flipped_session_meta(tmp_path):
    source = CORPUS / "codex-0.77-review-subagent-rollout.jsonl"
    data = source.read_bytes()
    path = write(tmp_path, "rollout.jsonl", first_line_replaced(data, data[: data.index(b"\n")].replace(b"{", b"[", 2)))
    assert detect_format(str(path)) == "codex-rollout"
    assert events(path) == _without_line_1(source)


# --- numbers out of double range --------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"9" * 400, b"-" + b"9" * 5000])
@pytest.mark.parametrize("where", [0, 3])
def test_number_out_of_double_range_keeps_its_record(tmp_path, number, where):
    """orjson refuses ``1e400`` and a 400-digit integer ("number is infinity when parsed as double"): the whole
    line was skipped, and in line 1 the whole file was unknown.  The line is now read by the tolerant parser."""
    source = FIXTURES / "claude-code/checkout-rate-limit.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    prompts = [e for e in read_transcript(str(source), warn=False).events if e.kind == "user_prompt"]
    prompt = prompts[0] if where == 0 else prompts[where]
    index = prompt.line - 1
    if where == 0:  # the damaged line is the file's first line
        lines = lines[index:]
        index = 0
        source = write(tmp_path, "source.jsonl", b"".join(lines))
    record = orjson.loads(lines[index])
    lines[index] = orjson.dumps(record)[:-1] + b',"tokens":' + number + b"}\n"
    path = write(tmp_path, "t.jsonl", b"".join(lines))
    assert detect_format(str(path)) == "claude-code-jsonl"
    got = read_transcript(str(path), warn=False)
    assert got.report.repaired_lines == [index + 1] and got.report.skipped_lines == []
    assert [(e.kind, e.text) for e in got.events] == events(source)
    assert any(e.kind == "user_prompt" and e.text == prompt.text and e.line == index + 1 for e in got.events)


def test_huge_number_value_is_kept_as_inf_or_int(tmp_path):
    path = write(tmp_path, "t.jsonl", b'{"a":1e400,"b":' + b"7" * 400 + b',"c":"kept"}\n')
    [(number, record)] = list(iter_jsonl(str(path), ReadReport()))
    assert (number, record["a"], record["b"], record["c"]) == (1, float("inf"), int("7" * 400), "kept")


def test_nesting_past_the_limit_is_still_refused_by_the_fallback(tmp_path):
    path = write(tmp_path, "t.jsonl", b'{"a":' + b"[" * 1100 + b"]" * 1100 + b"}\n")
    report = ReadReport()
    assert list(iter_jsonl(str(path), report)) == [] and report.skipped_lines == [1]


# --- bounded head ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [b'{"a":"%s', b"%s", b'{"type":"summary","summary":"%s"}', b'{"a":' + b'{"b":1,' * 4000])
def test_detection_parses_a_bounded_head(tmp_path, monkeypatch, shape):
    """Bug: a 50 MB first line cost ~11 s (measured: 10.7 s for a torn 50 MB string, then "unknown") before the
    refusal.  A line longer than what is left of ``HEAD_BYTES`` is now passed over unparsed; the next lines
    decide.  Here ``HEAD_BYTES`` is 64 KiB and the first line 1 MB."""
    monkeypatch.setattr(detect, "HEAD_BYTES", 64 * 1024)
    seen: list[int] = []
    real = detect.parse_line
    monkeypatch.setattr(detect, "parse_line", lambda raw: seen.append(len(raw)) or real(raw))
    source = FIXTURES / "claude-code/checkout-rate-limit.jsonl"
    line1 = shape.replace(b"%s", b"x" * 1_000_000) if b"%s" in shape else shape
    path = write(tmp_path, "t.jsonl", line1 + b"\n" + source.read_bytes())
    assert detect_format(str(path)) == "claude-code-jsonl"
    assert seen and max(seen) <= 64 * 1024
    assert sum(seen) <= 64 * 1024


def test_a_scan_budget_bounds_a_line_without_end(tmp_path, monkeypatch):
    monkeypatch.setattr(detect, "HEAD_BYTES", 4096)
    monkeypatch.setattr(detect, "SCAN_BYTES", 100_000)
    source = FIXTURES / "claude-code/checkout-rate-limit.jsonl"
    path = write(tmp_path, "t.jsonl", b'{"a":"' + b"x" * 200_000 + b"\n" + source.read_bytes())
    assert detect_format(str(path)) == "unknown"  # the good lines lie past the scan budget


def test_array_whose_first_element_has_a_list_type_tag(tmp_path):
    """Found by the fuzz test: ``_detect_array`` looked a list type tag up in a set (TypeError, a traceback)."""
    source = FIXTURES / "claude-code/checkout-rate-limit.json"
    path = write(tmp_path, "t.json", b'[{"type":["user"]},' + source.read_bytes().lstrip()[1:])
    assert detect_format(str(path)) == "claude-code-json-array"
    got = read_transcript(str(path), warn=False)
    assert [(e.kind, e.text) for e in got.events] == events(source)
