"""Fuzz the readers and the pre-compact hook with mutated real transcripts (issue 11, bar "fuzz test").

Sources: the bundled fixtures (always) and ``../shared/corpus`` (used by path, never copied; the corpus tests
skip where it is absent).  Mutations: bit flips (half of them in the first line), truncation, inserted garbage
lines, a BOM, numbers out of double range, a dropped or duplicated line.  Properties:

* ``read_transcript`` returns a ``Transcript`` or refuses the file with an ``InputError`` saying why (unknown
  format, nesting too deep); nothing else escapes;
* ``duck-tape checkpoint``, run as the harness runs it (payload JSON on stdin, ``pipeline.entry.main``), exits 0
  without a traceback or an "unexpected" error, and writes the marker;
* a BOM and a bad first line (garbage, torn, dropped) of a JSONL transcript still give its format and a state
  file.

Bounded: few examples, derandomized (the same inputs on every run), a deadline per example; the whole file runs
in a few seconds.  ``DUCK_TAPE_FUZZ_EXAMPLES=2000`` runs more (random) examples locally.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.errors import InputError
from pipeline.transcripts import read_transcript
from pipeline.transcripts.depth import JsonTooDeep
from pipeline.transcripts.detect import detect_format

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
BOM = b"\xef\xbb\xbf"

FIXTURE_FILES = [
    "fixtures/claude-code/checkout-rate-limit.jsonl",
    "fixtures/claude-code/checkout-rate-limit.json",
    "fixtures/copilot/events.jsonl",
    "fixtures/copilot/legacy-session.jsonl",
    "fixtures/opencode/messages.json",
    "fixtures/opencode/export.json",
    "fixtures/gemini/session.jsonl",
    "fixtures/gemini/session-legacy.json",
    "fixtures/gemini/stream.jsonl",
    "fixtures/gemini/checkpoint-units.json",
    "fixtures/gemini/checkpoint-docs.json",
    "fixtures/copilot/history-session.json",
]
CORPUS_FILES = [
    "claude-code-1.0.48-json-array.json",
    "claude-code-2.1.126-new-line-types.jsonl",
    "claude-code-2.1.14-task-todowrite.jsonl",
    "claude-code-2.1.89-main/87cd58f5-2181-4695-a6c0-505ed71ba497.jsonl",
    "codex-0.77-review-subagent-rollout.jsonl",
    "copilot-cli-1.0.59-events.jsonl",
    "copilot-cli-legacy.jsonl",
    "opencode-1.15.7-messages-array.json",
    "opencode-1.2.5-export.json",
    "gemini-cli-chat.jsonl",
]  # claude-code-1.0.45 (1.4 MB) is left out: one read of it costs what twenty of the others do

SCALED = int(os.environ.get("DUCK_TAPE_FUZZ_EXAMPLES", "0"))


def fuzz_settings(examples: int):
    return settings(max_examples=SCALED or examples, derandomize=not SCALED, deadline=timedelta(seconds=5),
                    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@lru_cache(maxsize=None)
def source_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


@lru_cache(maxsize=None)
def source_format(path: str) -> str:
    return detect_format(path)


GARBAGE_LINES = [
    b"garbage", b"{", b"[", b"}", b'{"type":', b"\x00\x00\x00", b"\xff\xfe\xfd", b"null", b"[]", b"{}", b"42",
    b'{"type":["user"]}', b'{"type":{"a":1},"data":{}}', b'{"a":1e400}', b'{"n":' + b"9" * 400 + b"}",
    b"[" * 2000, b'{"a":' * 1100, BOM + b'{"type":"summary"}', b'{"type":"session_meta","payload":[]}',
    b'{"type":"user","message":"not an object"}', b'{"type":"session.start","data":null,"id":1}',
]


@st.composite
def mutations(draw) -> list[tuple]:
    """A list of 1-4 mutations, each a tuple (name, parameters drawn as fractions of the file)."""
    op = st.one_of(
        st.tuples(st.just("flip"), st.booleans(), st.floats(0, 1), st.integers(0, 7)),
        st.tuples(st.just("truncate"), st.floats(0, 1)),
        st.tuples(st.just("garbage"), st.floats(0, 1), st.one_of(st.sampled_from(GARBAGE_LINES),
                                                                   st.binary(max_size=120))),
        st.tuples(st.just("bom")),
        st.tuples(st.just("huge_number"), st.floats(0, 1), st.sampled_from([b"1e400", b"-1e999", b"7" * 400])),
        st.tuples(st.just("drop_line"), st.floats(0, 1)),
        st.tuples(st.just("dup_line"), st.floats(0, 1)),
    )
    return draw(st.lists(op, min_size=1, max_size=4))


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    at = data.find(b"\n")
    while at != -1 and at + 1 < len(data):
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return starts


def mutate(data: bytes, ops: list[tuple]) -> bytes:
    for op in ops:
        name = op[0]
        if not data and name != "bom" and name != "garbage":
            continue
        starts = _line_starts(data)
        if name == "flip":
            _, head, where, bit = op
            end = data.find(b"\n") if head and b"\n" in data else len(data)
            pos = min(int(where * max(end, 1)), len(data) - 1)
            data = data[:pos] + bytes([data[pos] ^ (1 << bit)]) + data[pos + 1:]
        elif name == "truncate":
            data = data[: int(op[1] * len(data))]
        elif name == "garbage":
            at = starts[min(int(op[1] * len(starts)), len(starts) - 1)] if data else 0
            line = op[2].replace(b"\n", b" ")
            data = data[:at] + line + b"\n" + data[at:]
        elif name == "bom":
            data = BOM + data
        elif name == "huge_number":
            at = starts[min(int(op[1] * len(starts)), len(starts) - 1)]
            brace = data.find(b"{", at)
            if brace != -1:
                data = data[: brace + 1] + b'"n":' + op[2] + b"," + data[brace + 1:]
        elif name in ("drop_line", "dup_line"):
            index = min(int(op[1] * len(starts)), len(starts) - 1)
            begin = starts[index]
            end = starts[index + 1] if index + 1 < len(starts) else len(data)
            line = data[begin:end]
            data = data[:begin] + (line + line if name == "dup_line" else b"") + data[end:]
    return data


def check_read(path: str) -> None:
    """The reader's contract on any input: a Transcript, or an InputError that says why."""
    try:
        transcript = read_transcript(path, warn=False)
    except JsonTooDeep:
        return
    except InputError as exc:
        assert "unknown transcript format" in str(exc), str(exc)
        return
    assert [e.index for e in transcript.events] == list(range(len(transcript.events)))


def run_hook(path: str, store: str) -> tuple[int, str, str]:
    """``duck-tape checkpoint --dir STORE`` in-process with a Claude Code PreCompact payload on stdin."""
    from pipeline.entry import main

    payload = json.dumps({"transcript_path": path, "hook_event_name": "PreCompact", "trigger": "auto",
                          "cwd": os.path.dirname(store)})
    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.StringIO(payload)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["checkpoint", "--dir", store])
    finally:
        sys.stdin = stdin
    return code, out.getvalue(), err.getvalue()


def check_hook(path: str, *, expect_state: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, ".duck-tape")
        code, out, err = run_hook(path, store)
        assert code == 0
        assert "Traceback" not in err and "unexpected" not in err, err
        assert os.path.isfile(os.path.join(store, ".last-compact")), (out, err)
        states = [n for n in os.listdir(store) if n.endswith("-auto.state.md")]
        if expect_state:
            assert len(states) == 1 and out.startswith("Wrote ") and "state.md" in out, (out, err)


def fuzz_one(source: str, ops: list[tuple]) -> None:
    data = mutate(source_bytes(source), ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, Path(source).name)
        with open(path, "wb") as handle:
            handle.write(data)
        check_read(path)
        check_hook(path, expect_state=False)


def damage_head(source: str, how: str, garbage: bytes) -> None:
    """BOM and bad-first-line damage of a JSONL source: same format (Copilot legacy may become events: its
    only mark is in ``session.start``), and the hook writes a state file."""
    data = source_bytes(source)
    first_end = data.index(b"\n")
    damaged = {
        "bom": BOM + data,
        "garbage": garbage.replace(b"\n", b" ") + b"\n" + data,
        "replace": garbage.replace(b"\n", b" ") + data[first_end:],
        "torn": data[: first_end // 2] + data[first_end:],
        "drop": data[first_end + 1:],
        "bom+torn": BOM + data[: first_end // 3] + data[first_end:],
    }[how]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, Path(source).name)
        with open(path, "wb") as handle:
            handle.write(damaged)
        expected = source_format(source)
        allowed = {expected, "copilot-events"} if expected == "copilot-legacy" else {expected}
        assert detect_format(path) in allowed
        transcript = read_transcript(path, warn=False)
        assert transcript.events
        check_hook(path, expect_state=True)


HEAD_DAMAGE = st.sampled_from(["bom", "garbage", "replace", "torn", "drop", "bom+torn"])
GARBAGE = st.one_of(st.sampled_from(GARBAGE_LINES), st.binary(min_size=1, max_size=80))


def jsonl(files: list[str]) -> list[str]:
    return [f for f in files if f.endswith(".jsonl")]


FIXTURES = [str(ROOT / f) for f in FIXTURE_FILES]
CORPUS_PATHS = [str(CORPUS / f) for f in CORPUS_FILES]


@fuzz_settings(60)
@given(source=st.sampled_from(FIXTURES), ops=mutations())
def test_fuzz_fixtures(source, ops):
    fuzz_one(source, ops)


@pytest.mark.corpus
@fuzz_settings(60)
@given(source=st.sampled_from(CORPUS_PATHS), ops=mutations())
def test_fuzz_corpus(source, ops):
    fuzz_one(source, ops)


@fuzz_settings(25)
@given(source=st.sampled_from(jsonl(FIXTURES)), how=HEAD_DAMAGE, garbage=GARBAGE)
def test_damaged_head_of_fixtures_still_gives_a_state_file(source, how, garbage):
    damage_head(source, how, garbage)


@pytest.mark.corpus
@fuzz_settings(30)
@given(source=st.sampled_from(jsonl(CORPUS_PATHS)), how=HEAD_DAMAGE, garbage=GARBAGE)
def test_damaged_head_of_real_transcripts_still_gives_a_state_file(source, how, garbage):
    damage_head(source, how, garbage)


@pytest.mark.parametrize("name, damage", [
    ("claude-code/checkout-rate-limit.jsonl", lambda d: BOM + d),
    ("copilot/events.jsonl", lambda d: b"garbage{{\n" + d),
    ("opencode/export.json", lambda d: BOM + d),
    ("gemini/session.jsonl", lambda d: b"garbage{{\n" + d),
    ("claude-code/checkout-rate-limit.jsonl", lambda d: d.replace(b"{", b'{"n":1e400,', 1)),
])
def test_hook_process_on_a_damaged_head_writes_a_state_file(tmp_path, name, damage):
    """The hook as a process, exactly as the harness runs it: payload JSON on stdin, exit 0, a state file."""
    path = tmp_path / Path(name).name
    path.write_bytes(damage((ROOT / "fixtures" / name).read_bytes()))
    store = tmp_path / ".duck-tape"
    payload = json.dumps({"session_id": "fuzz", "transcript_path": str(path), "hook_event_name": "PreCompact",
                          "trigger": "auto", "cwd": str(tmp_path)})
    proc = subprocess.run([sys.executable, "-m", "pipeline", "checkpoint", "--dir", str(store)], input=payload,
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith(f"Wrote {store}/") and "-auto.state.md" in proc.stdout, (proc.stdout, proc.stderr)
    assert "unknown transcript format" not in proc.stderr
