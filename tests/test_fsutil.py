"""Atomic writes (pipeline/fsutil.py; DESIGN.md "Agent State file": "Writes are atomic (temp file + rename)")."""

from __future__ import annotations

import os
import stat

import pytest

from pipeline import fsutil
from pipeline.fsutil import atomic_create_text, atomic_write_text


def listing(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_atomic_write_creates_and_replaces(tmp_path):
    target = tmp_path / "CONTEXT.md"
    atomic_write_text(target, "one\n")
    atomic_write_text(str(target), "two\r\nthree\n")
    assert target.read_bytes() == b"two\r\nthree\n"
    assert listing(tmp_path) == ["CONTEXT.md"]


def test_atomic_write_keeps_old_file_when_replace_fails(tmp_path, monkeypatch):
    target = tmp_path / "x.state.md"
    target.write_text("old\n", encoding="utf-8")

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, "new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert listing(tmp_path) == ["x.state.md"]


def test_atomic_write_keeps_old_file_when_encoding_fails(tmp_path):
    target = tmp_path / "x.state.md"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "caf\u00e9\n", encoding="ascii")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert listing(tmp_path) == ["x.state.md"]


def test_atomic_write_into_missing_dir_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "absent" / "x.md", "x")


def test_new_file_mode_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "a.md", "a")
        atomic_create_text(tmp_path / "b.md", "b")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "b.md").stat().st_mode) == 0o640


def test_atomic_create_refuses_existing_target(tmp_path):
    target = tmp_path / "2026-11-29-2031.state.md"
    atomic_create_text(target, "first\n")
    with pytest.raises(FileExistsError):
        atomic_create_text(target, "second\n")
    assert target.read_text(encoding="utf-8") == "first\n"
    assert listing(tmp_path) == ["2026-11-29-2031.state.md"]


def test_atomic_create_without_hard_links_falls_back_to_exclusive_create(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(fsutil.os, "link", no_links)
    target = tmp_path / "x.md"
    atomic_create_text(target, "made\n")
    assert target.read_text(encoding="utf-8") == "made\n"
    with pytest.raises(FileExistsError):
        atomic_create_text(target, "again\n")
    assert target.read_text(encoding="utf-8") == "made\n"
    assert listing(tmp_path) == ["x.md"]
