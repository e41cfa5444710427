"""Nesting-depth guard before ijson (``pipeline/transcripts/depth.py``), and deeply nested JSONL lines.

Bug: a ~100 KB JSON document nested 100,000 levels deep made ijson use memory quadratic in the depth, so
the OOM killer ended ``extract-raw`` and ``checkpoint``.  The crafted inputs here are the review's (``[`` *
100000, ``{"a":`` repeated); the command tests run in a child process with a 300 MB data limit
(``RLIMIT_DATA``), so a regression fails with a MemoryError instead of taking the machine's memory.
Bug found on the way: a JSONL line nested 255–1024 levels (orjson parses up to 1024) made the readers' tool
target text call ``orjson.dumps``, which stops at 254, and the whole read failed.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import ijson
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import InputError
from pipeline.transcripts import read_transcript
from pipeline.transcripts.common import TOO_DEEP_TEXT, json_text
from pipeline.transcripts.depth import CHUNK_BYTES, MAX_DEPTH, DepthScanner, GuardedReader, JsonTooDeep
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.model import ReadReport
from pipeline.transcripts.records import iter_json_items, read_json_object_head

ROOT = Path(__file__).resolve().parent.parent
CC_JSONL = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
CC_ARRAY = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.json"
DEEP = 100_000
DATA_LIMIT = 300 * 1024 * 1024  # bytes of heap for a child process


def reference(data: bytes) -> tuple[int, int, bool]:
    """(deepest nesting, nesting at the end, ends inside a string) of JSON bytes, read byte by byte."""
    depth = peak = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            peak = max(peak, depth)
        elif byte in b"]}":
            depth -= 1
    return peak, depth, in_string


def scan(data: bytes, chunk: int, limit: int) -> DepthScanner:
    scanner = DepthScanner(limit)
    for start in range(0, len(data), chunk):
        scanner.feed(data[start:start + chunk])
    return scanner


def nested(levels: int, leaf: object = "x") -> object:
    """``leaf`` inside ``levels`` arrays/objects, alternating (arrays first)."""
    value = leaf
    for level in range(levels):
        value = [value] if level % 2 == 0 else {"k": value}
    return value


def dumps_deep(value: object) -> bytes:
    """Compact JSON of a value nested deeper than orjson.dumps (254 levels) allows."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        return json.dumps(value, separators=(",", ":")).encode()
    finally:
        sys.setrecursionlimit(limit)


def cc_lines() -> list[bytes]:
    return CC_JSONL.read_bytes().splitlines()


# --- the scanner ------------------------------------------------------------------------------------------

TRICKY = st.text(alphabet=st.sampled_from(list('ab"\\[]{}/\n\t\u00e9\u2028 ')), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]), slash=st.booleans(),
       chunk=st.integers(1, 40), limit=st.integers(1, 8), cut=st.floats(0, 1))
def test_scanner_matches_a_byte_by_byte_reading(value, ascii_only, indent, slash, chunk, limit, cut):
    """Exact on any valid JSON, split anywhere (escapes, quotes and brackets in strings), and on prefixes."""
    data = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()
    if slash:  # the optional \/ escape; json.dumps writes "/" only inside strings, never escaped
        data = data.replace(b"/", b"\\/")
    for part in (data, data[: int(len(data) * cut)]):
        peak, depth, in_string = reference(part)
        scanner = scan(part, chunk, limit)
        assert scanner.exceeded == (peak > limit)
        assert scanner.offset == len(part)
        if not scanner.exceeded:
            assert (scanner.depth, scanner.in_string) == (depth, in_string)


@pytest.mark.parametrize("text", [
    rb'["a\\", [["]"]], "\"[[[", "\\\"{{", "\\\\", {"k\"[": [[["\\u005b"]]]}]',
    rb'[["\\\\\\\"]]]]", "\n\t\/\b\f\r\\/"], [[[["x"]]]]]',
])
def test_escapes_across_every_chunk_boundary(text):
    peak, depth, _ = reference(text)
    assert peak == 5 and depth == 0  # the brackets in strings do not count
    for chunk in range(1, len(text) + 1):
        assert not scan(text, chunk, peak).exceeded, chunk
        assert scan(text, chunk, peak - 1).exceeded, chunk


# --- the guarded reader: refusals -------------------------------------------------------------------------


@pytest.mark.parametrize("name, data", [
    ("arrays", b"[" * DEEP),
    ("objects", b'{"a":' * DEEP),
    ("closed arrays", b"[" * DEEP + b"]" * DEEP),
])
def test_review_inputs_are_refused_by_every_reader_path(tmp_path, name, data):
    path = tmp_path / "deep.json"
    path.write_bytes(data)
    with pytest.raises(JsonTooDeep) as info:
        read_transcript(str(path))
    assert info.value.exit_code == 2
    assert str(path) in str(info.value) and f"nested deeper than {MAX_DEPTH} levels" in str(info.value)
    with pytest.raises(JsonTooDeep):
        list(iter_json_items(str(path), "item", ReadReport()))
    with pytest.raises(JsonTooDeep):
        read_json_object_head(str(path), ("info",))


def test_deep_element_after_real_records_is_refused(tmp_path):
    """The items before it settle the cheap bound; the nest in the same read must still be caught."""
    body = b",".join(cc_lines()[:50])
    path = tmp_path / "array.json"
    path.write_bytes(b"[" + body + b"," + b"[" * DEEP + b"]" * DEEP + b"]")
    with pytest.raises(JsonTooDeep):
        read_transcript(str(path))


def test_exactly_the_limit_is_read_one_more_level_is_refused(tmp_path):
    ok, deep = tmp_path / "ok.json", tmp_path / "deep.json"
    ok.write_bytes(b"[" + dumps_deep(nested(MAX_DEPTH - 1)) + b"]")  # the top-level array is level 1
    deep.write_bytes(b"[" + dumps_deep(nested(MAX_DEPTH)) + b"]")
    report = ReadReport()
    assert [n for n, _ in iter_json_items(str(ok), "item", report)] == []
    assert report.skipped_lines == [1]  # read to the end: the one element is not an object
    with pytest.raises(JsonTooDeep):
        list(iter_json_items(str(deep), "item", ReadReport()))


def test_depth_hidden_by_closers_in_strings_is_refused(tmp_path):
    """["]",["]",… counts as balanced if strings are ignored; the real nesting is 5,000."""
    path = tmp_path / "hidden.json"
    path.write_bytes(b'["]",' * 5000 + b"0" + b"]" * 5000)
    assert reference(path.read_bytes())[0] == 5000
    with pytest.raises(JsonTooDeep):
        list(iter_json_items(str(path), "item", ReadReport()))


def test_opencode_export_with_a_deep_info_is_refused(tmp_path):
    path = tmp_path / "export.json"
    path.write_bytes(b'{"info": ' + b'{"a":' * DEEP)
    with pytest.raises(JsonTooDeep):
        read_transcript(str(path))


# --- the guarded reader: real documents ----------------------------------------------------------------------


def test_brackets_in_strings_switch_to_the_exact_scan_and_read_everything(tmp_path):
    """One record holding 3,000 unbalanced openers in a string (a big code listing) is a real transcript:
    the cheap bound passes the limit, the exact scan checks that part, and the read equals the JSONL one."""
    lines = cc_lines()
    record = orjson.loads(lines[5])
    record["message"]["content"] = "[{ " * 1500 + "listing"
    lines[5] = orjson.dumps(record)
    jsonl, array = tmp_path / "t.jsonl", tmp_path / "t.json"
    jsonl.write_bytes(b"\n".join(lines) + b"\n")
    array.write_bytes(b"[" + b",\n".join(lines) + b"]")
    with open(array, "rb") as fh:  # the cheap bound alone would refuse it: the exact scan takes that chunk
        guarded = GuardedReader(fh, str(array))
        for _ in ijson.items(guarded, "item", buf_size=CHUNK_BYTES):
            guarded.settled(1)
    assert 0 < guarded.exact_bytes <= 2 * CHUNK_BYTES < array.stat().st_size  # then the cheap bound again
    from_array, from_jsonl = read_transcript(str(array)), read_transcript(str(jsonl))
    assert [(e.kind, e.text) for e in from_array.events] == [(e.kind, e.text) for e in from_jsonl.events]
    assert any(e.text.startswith("[{ [{ ") for e in from_array.events)


@pytest.mark.parametrize("hidden", [False, True])
def test_exact_scan_catches_up_from_where_it_stopped(tmp_path, hidden):
    """A listing early on runs the exact scan for one chunk; the cheap bound then carries on; a nest hidden
    by closers in strings far later makes the scan catch up over the bytes read since, and refuse."""
    lines = cc_lines()
    listing = orjson.dumps({"type": "user", "message": {"role": "user", "content": "[{ " * 1500}})
    tail = [b'["]",' * 3000 + b"0" + b"]" * 3000] if hidden else []
    path = tmp_path / "t.json"
    path.write_bytes(b"[" + b",\n".join(lines[:3] + [listing] + lines[3:] + lines + tail) + b"]")
    with open(path, "rb") as fh:
        guarded = GuardedReader(fh, str(path))
        items = ijson.items(guarded, "item", buf_size=CHUNK_BYTES)
        if hidden:
            with pytest.raises(JsonTooDeep):
                for _ in items:
                    guarded.settled(1)
            assert guarded.exact_bytes <= path.stat().st_size  # each byte scanned exactly at most once
            assert guarded.exact_bytes > path.stat().st_size - 2 * CHUNK_BYTES - 3000 * 6
        else:
            count = 0
            for _ in items:
                guarded.settled(1)
                count += 1
            assert count == 2 * len(lines) + 1
            assert guarded.exact_bytes <= 2 * CHUNK_BYTES  # only the listing's chunk(s)


@pytest.mark.parametrize("path, prefix", [
    (CC_ARRAY, "item"),
    (ROOT / "fixtures" / "opencode" / "export.json", "messages.item"),
    (ROOT / "fixtures" / "opencode" / "messages.json", "item"),
])
def test_guarded_items_equal_plain_ijson_items(path, prefix):
    with open(path, "rb") as fh:
        plain = list(ijson.items(fh, prefix, use_float=True))
    assert [item for _, item in iter_json_items(str(path), prefix, ReadReport())] == plain


def test_guard_reads_through_a_file_object_only_by_read():
    data = b'[{"a": [1, {"b": "]]]"}]}, {"c": []}]'
    guarded = GuardedReader(io.BytesIO(data), "mem.json")
    assert list(ijson.items(guarded, "item", buf_size=7)) == json.loads(data)


# --- JSONL lines ----------------------------------------------------------------------------------------------


def test_jsonl_line_deeper_than_orjson_allows_is_skipped_and_counted(tmp_path, capsys):
    lines = cc_lines()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines[:20] + [b"[" * DEEP + b"]" * DEEP] + lines[20:]) + b"\n")
    transcript = read_transcript(str(path))
    assert transcript.report.skipped_lines == [21]
    assert len(transcript.events) == len(read_transcript(str(CC_JSONL), warn=False).events)
    assert f"{path}: skipped 1 record(s) at line(s) 21" in capsys.readouterr().err


def test_jsonl_whose_first_line_is_deep_is_read_from_its_second_line(tmp_path):
    """A first line orjson cannot parse sends detection to ijson (guarded: refused before it is streamed); the
    head is then tried as JSONL, so the one deep line is skipped, not the session (issue 11, part 5)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n" + CC_JSONL.read_bytes())
    assert detect_format(str(path)) == "claude-code-jsonl"
    transcript = read_transcript(str(path), warn=False)
    assert transcript.report.skipped_lines == [1]
    assert len(transcript.events) == len(read_transcript(str(CC_JSONL), warn=False).events)


def test_deep_document_with_nothing_else_is_still_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n")
    with pytest.raises(JsonTooDeep):
        detect_format(str(path))


@pytest.mark.parametrize("levels", [300, MAX_DEPTH - 1])
@pytest.mark.parametrize("fmt", ["jsonl", "array"])
def test_tool_input_nested_past_orjson_dumps_is_read(tmp_path, levels, fmt):
    """Bug: a Bash input nested 255..1024 levels deep parsed, then the tool target's orjson.dumps raised
    TypeError ("Recursion limit reached") and the whole read failed."""
    lines = cc_lines()
    index = next(i for i, raw in enumerate(lines) if b'"name":"Bash"' in raw)
    record = orjson.loads(lines[index])
    block = next(b for b in record["message"]["content"] if b.get("name") == "Bash")
    block["input"]["command"] = {"k": nested(levels - 6)}  # record, message, content, block, input: 5 levels
    lines[index] = dumps_deep(record)
    assert reference(lines[index])[0] == levels
    path = tmp_path / ("t.jsonl" if fmt == "jsonl" else "t.json")
    path.write_bytes(b"\n".join(lines) + b"\n" if fmt == "jsonl" else b"[" + b",".join(lines) + b"]")
    transcript = read_transcript(str(path), warn=False)
    assert transcript.report.skipped_lines == []
    call = next(e for e in transcript.events if e.kind == "tool_call" and e.line == index + 1)
    assert call.tool_name == "Bash"
    assert "description: Show git status" in call.text  # the record's other arguments are kept
    if levels < 900:
        assert call.target.startswith("{'k': {'k': ") and call.text.startswith("command: {'k': {'k': ")
    else:  # repr itself gives up near the interpreter's recursion limit, which depends on the caller's stack
        assert call.target == TOO_DEEP_TEXT or call.target.startswith("{'k': {'k': ")


def test_json_text_never_raises():
    assert json_text({"a": [1, "b"]}) == '{"a":[1,"b"]}'
    assert json_text(2**70) == str(2**70)  # beyond orjson's 64-bit integers
    assert json_text(nested(300)).startswith("{'k': [{'k': ")  # beyond orjson's 254 levels: Python's repr
    assert json_text(nested(50_000)) == TOO_DEEP_TEXT  # beyond repr's recursion limit


# --- the commands, in a child process with a memory limit ------------------------------------------------------


def run_limited(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))

    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_TAPE_")}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=env, preexec_fn=limit,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


@pytest.fixture
def deep_document(tmp_path) -> Path:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * DEEP)
    return path


def test_extract_raw_prints_the_reason_and_exits_0(deep_document, tmp_path):
    proc = run_limited("extract-raw", str(deep_document), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Transcript Raw Material")
    assert f"Unavailable: {deep_document}: JSON nested deeper than {MAX_DEPTH} levels" in proc.stdout


def test_checkpoint_writes_the_marker_only_and_exits_0(deep_document, tmp_path):
    store = tmp_path / "store"
    proc = run_limited("checkpoint", "--transcript", str(deep_document), "--dir", str(store), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (store / ".last-compact").is_file()
    assert not list(store.glob("*.state.md"))
    assert f"{deep_document}: JSON nested deeper than {MAX_DEPTH} levels" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_recover_exits_2_naming_the_file(deep_document, tmp_path):
    proc = run_limited("recover", str(deep_document), "--dry-run", "--engine", "rules", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{deep_document}: JSON nested deeper than {MAX_DEPTH} levels" in proc.stderr


def test_input_error_is_the_usual_reader_error():
    assert issubclass(JsonTooDeep, InputError)
