"""The compaction marker .duck-tape/.last-compact (pipeline/state/marker.py; DESIGN.md "Agent State file")."""

from __future__ import annotations

import pytest

from pipeline.errors import InputError
from pipeline.state.marker import MAX_MARKER_BYTES, Marker, format_marker, parse_marker, read_marker, write_marker

FULL = Marker(
    time="2026-11-29T20:31:00Z",
    cwd="/home/dev/my shop",
    latest_state="2026-11-29-2031-auto.state.md",
    transcript="/home/dev/.claude/projects/my shop/4f1c 2.jsonl",
)


def test_format_full_marker():
    assert format_marker(FULL) == (
        "2026-11-29T20:31:00Z | cwd: /home/dev/my shop | latest-state: 2026-11-29-2031-auto.state.md"
        " | transcript: /home/dev/.claude/projects/my shop/4f1c 2.jsonl\n"
    )


@pytest.mark.parametrize(
    "marker",
    [
        FULL,
        Marker(time="2026-11-29T20:31:00Z"),
        Marker(time="2026-11-29T20:31:00Z", cwd="/srv/a b"),
        Marker(time="2026-11-29T20:31:00Z", cwd="/srv/a b", transcript="/t/x.jsonl"),
        Marker(time="2026-11-29T20:31:00Z", latest_state="2026-11-29-2031.state.md"),
        Marker(time="2026-11-29T20:31:00+01:00", cwd=" /lead and trail ", transcript="/a | b/c |"),
        Marker(time="2026-11-29T20:31:00Z", cwd="/x | cwd: y", transcript="/t | latest-state: z | transcript: w"),
        Marker(time="2026-11-29T20:31:00Z", cwd="/pipes | | and |", latest_state="a|b.state.md"),
    ],
)
def test_marker_round_trip(marker):
    assert parse_marker(format_marker(marker)) == marker


def test_empty_values_are_absent():
    line = format_marker(Marker(time="2026-11-29T20:31:00Z", cwd="", latest_state="", transcript="/t.jsonl"))
    assert line == "2026-11-29T20:31:00Z | transcript: /t.jsonl\n"
    assert parse_marker("2026-11-29T20:31:00Z | cwd:  | transcript: /t.jsonl").cwd is None


def test_parse_marker_written_by_the_shell_hooks():
    """The shape today's bash/PowerShell hooks write: no transcript, CRLF or no final newline."""
    expected = Marker(time="2026-07-31T18:33:03Z", cwd="/project", latest_state="2026-07-31-1200.state.md")
    line = "2026-07-31T18:33:03Z | cwd: /project | latest-state: 2026-07-31-1200.state.md"
    assert parse_marker(line + "\n") == expected
    assert parse_marker(line + "\r\n") == expected
    assert parse_marker(line) == expected
    assert parse_marker("\ufeff" + line) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "2026-11-29 20:31 | cwd: /x",
        "2026-13-29T20:31:00Z | cwd: /x",
        "2026-11-29T20:31:00Z cwd: /x",
        "2026-11-29T20:31:00Z | cwd:/x",
        "2026-11-29T20:31:00Z | branch: main",
        "2026-11-29T20:31:00Z | cwd: /x\n2026-11-29T20:32:00Z | cwd: /y\n",
    ],
)
def test_parse_marker_refuses_garbage_naming_the_file(text):
    with pytest.raises(InputError) as info:
        parse_marker(text, path=".duck-tape/.last-compact")
    assert (info.value.path, info.value.line) == (".duck-tape/.last-compact", 1)
    assert str(info.value).startswith(".duck-tape/.last-compact:1: expected '<ISO-8601> | cwd: <path>")


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (Marker(time="yesterday", cwd="/x"), "not ISO-8601"),
        (Marker(time="2026-11-29T20:31:00Z", cwd="/x\ny"), "line break"),
        (Marker(time="2026-11-29T20:31:00Z", transcript="/t\r"), "line break"),
        (Marker(time="2026-11-29T20:31:00Z", cwd="/x | transcript: /y", transcript="/t"), "would not read back"),
        (Marker(time="2026-11-29T20:31:00Z", cwd="/x | latest-state:", latest_state="f.state.md"), "would not read back"),
    ],
)
def test_format_marker_refuses_unrepresentable_values(marker, message):
    with pytest.raises(ValueError, match=message):
        format_marker(marker)


def test_read_marker_absent_is_none(tmp_path):
    assert read_marker(tmp_path) is None
    assert read_marker(tmp_path / "missing") is None


def test_write_then_read_marker(tmp_path):
    store = tmp_path / ".duck-tape"
    path = write_marker(store, FULL)
    assert path == store / ".last-compact"
    assert (store / ".gitignore").read_text(encoding="utf-8") == "*\n"
    assert path.read_text(encoding="utf-8") == format_marker(FULL)
    assert read_marker(store) == FULL
    newer = Marker(time="2026-11-29T21:00:00Z", cwd="/home/dev/my shop")
    write_marker(store, newer)
    assert read_marker(store) == newer
    assert sorted(p.name for p in store.iterdir()) == [".gitignore", ".last-compact"]


def test_read_marker_garbage_names_the_file(tmp_path):
    (tmp_path / ".last-compact").write_text("not a marker\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"\.last-compact:1: expected") as info:
        read_marker(tmp_path)
    assert info.value.path == str(tmp_path / ".last-compact")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"2026-11-29T20:31:00Z | cwd: /\xff\n", "not UTF-8"),
        (b"2026-11-29T20:31:00Z | cwd: /" + b"a" * MAX_MARKER_BYTES + b"\n", "over 65536 bytes"),
    ],
)
def test_read_marker_refuses_bad_files(tmp_path, content, message):
    (tmp_path / ".last-compact").write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_marker(tmp_path)


def test_read_marker_refuses_a_directory(tmp_path):
    (tmp_path / ".last-compact").mkdir()
    with pytest.raises(InputError, match="directory"):
        read_marker(tmp_path)
