"""A record whose ``type`` (or ``role``) is a list or an object is a malformed record: skipped as an unknown type,
never a crash of the read (found by a fuzz that nested every field of every fixture record; before the fix
``extract-raw`` printed "unhashable type: 'list'" and ``recover`` exited 1)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.transcripts import read_transcript

ROOT = Path(__file__).resolve().parents[1]
BAD_TAGS = (["user"], {"kind": "user"})


def _append(source: Path, tmp_path: Path, extra: list[dict]) -> Path:
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes().rstrip(b"\n") + b"\n" + b"\n".join(orjson.dumps(r) for r in extra) + b"\n")
    return path


@pytest.mark.parametrize("tag", BAD_TAGS, ids=["list", "object"])
@pytest.mark.parametrize("source", ["claude-code/checkout-rate-limit.jsonl", "copilot/events.jsonl",
                                    "copilot/legacy-session.jsonl"])
def test_jsonl_record_with_an_unhashable_type(tmp_path, source, tag):
    original = read_transcript(str(ROOT / "fixtures" / source), warn=False)
    first = orjson.loads((ROOT / "fixtures" / source).read_bytes().split(b"\n", 1)[0])
    bad = _append(ROOT / "fixtures" / source, tmp_path, [{**first, "type": tag}])
    t = read_transcript(str(bad), warn=False)
    assert t.meta.format == original.meta.format
    assert [e.text for e in t.events] == [e.text for e in original.events]
    assert t.report.records == original.report.records + 1


@pytest.mark.parametrize("tag", BAD_TAGS, ids=["list", "object"])
def test_codex_and_generic_records_with_an_unhashable_tag(tmp_path, tag):
    meta = {"timestamp": "2026-01-05T10:00:00.000Z", "type": "session_meta",
            "payload": {"id": "019b-test", "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/home/dev/api"}}
    said = {"timestamp": "2026-01-05T10:00:01.000Z", "type": "event_msg",
            "payload": {"type": "user_message", "message": "add a /healthz endpoint"}}
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_bytes(b"\n".join(orjson.dumps(r) for r in [
        meta, said, {**said, "type": tag}, {**said, "payload": {"type": tag, "message": "x"}},
        {"timestamp": "2026-01-05T10:00:02.000Z", "type": "response_item", "payload": {"type": tag}}]) + b"\n")
    t = read_transcript(str(rollout), warn=False)
    assert t.meta.format == "codex-rollout"
    assert [e.text for e in t.events] == ["add a /healthz endpoint"]

    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(b"\n".join(orjson.dumps(r) for r in [
        {"role": "user", "content": "add a /healthz endpoint"}, {"role": tag, "content": "x"},
        {"role": "assistant", "content": "Added it."}]) + b"\n")
    t = read_transcript(str(chat), warn=False)
    assert [e.text for e in t.events] == ["add a /healthz endpoint", "Added it."]


@pytest.mark.parametrize("tag", BAD_TAGS, ids=["list", "object"])
def test_opencode_message_role_and_part_type_unhashable(tmp_path, tag):
    source = ROOT / "fixtures" / "opencode" / "export.json"
    original = read_transcript(str(source), warn=False)
    doc = orjson.loads(source.read_bytes())
    extra = orjson.loads(orjson.dumps(doc["messages"][0]))
    extra["info"]["role"] = tag
    doc["messages"].append(extra)
    odd_part = orjson.loads(orjson.dumps(doc["messages"][0]))
    for part in odd_part["parts"]:
        part["type"] = tag
    doc["messages"].append(odd_part)
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(doc))
    t = read_transcript(str(path), warn=False)
    assert t.meta.format == "opencode-export"
    assert [e.text for e in t.events] == [e.text for e in original.events]


@pytest.mark.parametrize("tag", BAD_TAGS, ids=["list", "object"])
def test_unhashable_type_in_the_lines_that_decide_the_format(tmp_path, tag):
    """Review finding: format detection still tested such a tag against a set (TypeError before the reader ran)."""
    source = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    path = tmp_path / "t.jsonl"
    path.write_bytes(orjson.dumps({"type": tag}) + b"\n" + source.read_bytes())
    t = read_transcript(str(path), warn=False)
    assert t.meta.format == "claude-code-jsonl"
    assert len(t.events) == len(read_transcript(str(source), warn=False).events)
