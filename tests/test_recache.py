"""pipeline.recache: compiled patterns kept beside the bytecode answer exactly as re.compile's, and a cache that is
missing, damaged or not writable only costs time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import recache

PATTERNS = [
    (r"\b(?P<verb>use|go\s+with)\s+(?P<x>\w+)", re.I),
    (r"^#{1,4}\s+\S", re.M),
    (r"(?x) a \s+ b  # a comment", 0),
    (rb"AKIA[0-9A-Z]{16}", 0),
    (r"[\u3040-\u30ff]+|\d{2,}", 0),
]
TEXTS = ["Let's go with Redis for now", "## Heading\ntext", "a   b", "key AKIAABCDEFGHIJKLMNOP end", "テスト 123"]


@pytest.fixture()
def fresh(monkeypatch, tmp_path):
    """An empty table written under tmp_path."""
    target = tmp_path / "recache.marshal"
    monkeypatch.setattr(recache, "_path", lambda: str(target))
    monkeypatch.setattr(recache, "_table", None)
    monkeypatch.setattr(recache, "_dirty", False)
    monkeypatch.setattr(recache, "_force", True)
    return target


def _same(a: re.Pattern, b: re.Pattern) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    for text in TEXTS:
        data = text.encode() if isinstance(a.pattern, bytes) else text
        assert [m.span() for m in a.finditer(data)] == [m.span() for m in b.finditer(data)]
        assert [m.groups() for m in a.finditer(data)] == [m.groups() for m in b.finditer(data)]


def test_a_pattern_built_from_the_table_is_the_one_re_compiles(fresh, monkeypatch):
    for source, flags in PATTERNS:
        _same(recache.compile(source, flags), re.compile(source, flags))
    recache.save()
    assert fresh.stat().st_size > 0
    monkeypatch.setattr(recache, "_table", None)  # a later run: everything comes from the saved table
    for source, flags in PATTERNS:
        assert (source, int(flags)) in recache._load()
        _same(recache.compile(source, flags), re.compile(source, flags))


def test_a_damaged_table_or_a_foreign_entry_falls_back_to_re(fresh, monkeypatch):
    fresh.write_bytes(b"\x00not marshal")
    monkeypatch.setattr(recache, "_table", None)
    _same(recache.compile(*PATTERNS[0]), re.compile(*PATTERNS[0]))
    recache._table[(PATTERNS[1][0], int(PATTERNS[1][1]))] = (0, b"\xff\xff\xff\xff", 0, {}, (None,))
    _same(recache.compile(*PATTERNS[1]), re.compile(*PATTERNS[1]))
    with pytest.raises(re.error):
        recache.compile(r"(unclosed")


def test_nothing_is_written_where_python_writes_no_bytecode(fresh, monkeypatch):
    monkeypatch.setattr(recache, "_force", False)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    recache.compile(r"\bnever\s+written\b")
    recache.save()
    assert not fresh.exists()


def test_filling_the_table_covers_the_rules_engine(tmp_path):
    prefix = tmp_path / "pycache"
    root = Path(__file__).resolve().parent.parent
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "pipeline.recache"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, check=True).stdout
    count = int(out.split(":")[1].split()[0])
    assert count > 200
    assert list(prefix.rglob("recache.*.marshal"))
