"""Atomic overwrites keep the permission bits of the file they replace (``pipeline/fsutil.py``,
``pipeline/context/safewrite.py``).

Bug: ``duck-tape merge`` rewrote a ``0600`` CONTEXT.md through a temporary file created with the umask's
default, so the private file came back ``0644``; its backup (the previous text) was ``0644`` too.  New files
still get the umask's default.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pipeline import fsutil
from pipeline.cli import main
from pipeline.context.safewrite import backup_path
from pipeline.fsutil import atomic_create_text, atomic_write_text, existing_mode
from pipeline.state.marker import Marker, write_marker

ROOT = Path(__file__).resolve().parent.parent
CONTEXT_FIXTURE = ROOT / "fixtures" / "context" / "medium.md"
STATE = ROOT / "fixtures" / "context" / "states" / "2026-03-11-0900.state.md"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test: ``umask(0o022)``; restored afterwards."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_mask(value: int) -> None:
        os.umask(value)

    yield set_mask
    os.umask(saved)


def test_merge_keeps_a_private_context_md_private(tmp_path, monkeypatch, capsys, umask):
    """The review's failing input: CONTEXT.md at 0600, umask 022, one merge."""
    umask(0o022)
    monkeypatch.chdir(tmp_path)
    context = tmp_path / "CONTEXT.md"
    context.write_bytes(CONTEXT_FIXTURE.read_bytes())
    context.chmod(0o600)
    assert main(["merge", str(STATE), "--yes"]) == 0, capsys.readouterr().err
    assert "Merged state file 2026-03-11-0900.state.md" in context.read_text(encoding="utf-8")
    assert mode_of(context) == 0o600
    assert not backup_path(context).exists()


def test_new_context_md_gets_the_umask_default(tmp_path, monkeypatch, capsys, umask):
    umask(0o027)
    monkeypatch.chdir(tmp_path)
    assert main(["merge", str(STATE), "--yes"]) == 0, capsys.readouterr().err
    assert mode_of(tmp_path / "CONTEXT.md") == 0o640


def test_backup_left_by_a_failed_replace_is_as_private_as_the_file(tmp_path, monkeypatch, capsys, umask):
    umask(0o022)
    monkeypatch.chdir(tmp_path)
    context = tmp_path / "CONTEXT.md"
    context.write_bytes(CONTEXT_FIXTURE.read_bytes())
    context.chmod(0o600)
    real_replace = fsutil.os.replace

    def failing_replace(src, dst):
        if Path(dst).resolve() == context.resolve():
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(fsutil.os, "replace", failing_replace)
    assert main(["merge", str(STATE), "--yes"]) == 2  # a full disk is an unusable destination (issue 11 part 6)
    assert "CONTEXT.md: No space left on device" in capsys.readouterr().err
    assert context.read_bytes() == CONTEXT_FIXTURE.read_bytes() and mode_of(context) == 0o600
    assert backup_path(context).read_bytes() == CONTEXT_FIXTURE.read_bytes()
    assert mode_of(backup_path(context)) == 0o600


@pytest.mark.parametrize("old_mode, mask", [(0o600, 0o022), (0o640, 0o077), (0o664, 0o022), (0o400, 0o000)])
def test_overwrite_keeps_the_bits_whatever_the_umask(tmp_path, umask, old_mode, mask):
    target = tmp_path / "x.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(old_mode)
    umask(mask)
    atomic_write_text(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert mode_of(target) == old_mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.md"]


def test_explicit_mode_wins(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "x.md"
    atomic_write_text(target, "a\n", mode=0o660)
    assert mode_of(target) == 0o660
    target.chmod(0o644)
    atomic_write_text(target, "b\n", mode=0o600)
    assert mode_of(target) == 0o600


def test_without_fchmod_the_stricter_umask_mode_stays(tmp_path, monkeypatch, umask):
    """Where the file system refuses chmod, the temporary file keeps its creation mode: the old bits minus
    the umask, never wider than the old file."""
    def no_fchmod(fd, mode):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(fsutil.os, "fchmod", no_fchmod)
    umask(0o022)
    target = tmp_path / "x.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o664)
    atomic_write_text(target, "new\n")
    assert (target.read_text(encoding="utf-8"), mode_of(target)) == ("new\n", 0o644)


def test_a_symlink_is_replaced_by_a_new_file_and_its_target_untouched(tmp_path, umask):
    umask(0o022)
    real = tmp_path / "real.md"
    real.write_text("real\n", encoding="utf-8")
    real.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    assert existing_mode(link) is None and existing_mode(real) == 0o600
    atomic_write_text(link, "new\n")
    assert not link.is_symlink() and mode_of(link) == 0o644
    assert (real.read_text(encoding="utf-8"), mode_of(real)) == ("real\n", 0o600)


def test_existing_mode_of_nothing_and_of_a_directory(tmp_path):
    assert existing_mode(tmp_path / "absent.md") is None
    assert existing_mode(tmp_path) is None


def test_create_still_uses_the_umask_and_never_overwrites(tmp_path, umask):
    umask(0o077)
    target = tmp_path / "2026-11-29-2031.state.md"
    atomic_create_text(target, "first\n")
    assert mode_of(target) == 0o600
    with pytest.raises(FileExistsError):
        atomic_create_text(target, "second\n")
    assert target.read_text(encoding="utf-8") == "first\n"


def test_marker_rewrite_keeps_its_mode(tmp_path, umask):
    """``.last-compact`` is rewritten by every checkpoint through the same helper."""
    umask(0o022)
    path = write_marker(tmp_path, Marker("2026-11-29T22:03:57Z"))
    path.chmod(0o600)
    write_marker(tmp_path, Marker("2026-11-29T23:00:00Z"))
    assert path.read_text(encoding="utf-8").startswith("2026-11-29T23:00:00Z")
    assert mode_of(path) == 0o600
