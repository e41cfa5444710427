"""What a killed write leaves behind (issue 11 part 7; ``pipeline/fsutil.py``, ``pipeline/context/safewrite.py``).

Bug: a SIGKILL while ``merge`` fsynced its temporary file left ``.CONTEXT.md.<pid>.<hex>.tmp`` in the project root,
not git-ignored and never removed; a stale ``.duck-tape/CONTEXT.md.bak`` stayed forever.  Now the temp file is
made inside ``.duck-tape/`` (``*`` in its ``.gitignore``) when that is on the same file system, and the next merge
removes temp files of processes that are gone and a stale backup, naming them on stderr.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import fsutil
from pipeline.cli import main
from pipeline.context.safewrite import backup_path
from pipeline.fsutil import atomic_write_text, remove_stale_temps
from pipeline.state.store import write_state

ROOT = Path(__file__).resolve().parent.parent
CONTEXT = ROOT / "fixtures" / "context" / "medium.md"
STATE = ROOT / "fixtures" / "context" / "states" / "2026-03-11-0900.state.md"

KILL_DURING_FSYNC = """
import os, signal, sys
real_fsync = os.fsync
def fsync(fd):
    name = os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1]
    if name.startswith(".CONTEXT.md.") and not name.startswith(".CONTEXT.md.bak."):  # after the backup is written
        os.kill(os.getpid(), signal.SIGKILL)
    return real_fsync(fd)
os.fsync = fsync
from pipeline.cli import main
sys.exit(main(["merge", sys.argv[1], "--yes"]))
"""


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(CONTEXT, tmp_path / "CONTEXT.md")
    return tmp_path


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux /proc to find the temp file's name")
def test_a_merge_killed_during_fsync_leaves_nothing_in_the_project_and_the_next_merge_cleans_up(project, capsys):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    killed = subprocess.run([sys.executable, "-c", KILL_DURING_FSYNC, str(STATE)], cwd=project, env=env,
                            capture_output=True, text=True)
    assert killed.returncode == -9
    store = project / ".duck-tape"
    assert temps(project) == []  # nothing beside CONTEXT.md, where git would see it
    left = temps(store)
    assert len(left) == 1 and left[0].startswith(".CONTEXT.md.") and (store / ".gitignore").read_text() == "*\n"
    assert (project / "CONTEXT.md").read_bytes() == CONTEXT.read_bytes()  # never torn
    assert backup_path(project / "CONTEXT.md").is_file()  # the kill came after the backup was written

    assert main(["merge", str(STATE), "--yes"]) == 0
    err = capsys.readouterr().err
    assert f"removed {Path('.duck-tape', left[0])}, the temporary file of an interrupted write" in err
    assert f"removed {Path('.duck-tape/CONTEXT.md.bak')}, a backup left by an interrupted write" in err
    assert temps(store) == [] and not backup_path(project / "CONTEXT.md").exists()
    assert "redis-for-locks" in (project / "CONTEXT.md").read_text()


def test_a_temp_file_of_an_older_version_beside_context_md_is_removed(project, capsys):
    old = project / f".CONTEXT.md.{dead_pid()}.0badcafe.tmp"
    old.write_text("half a file")
    assert main(["merge", str(STATE), "--yes"]) == 0
    assert not old.exists()
    assert f"removed {old.name}, the temporary file of an interrupted write" in capsys.readouterr().err


def test_a_stale_backup_is_removed_by_a_merge_that_changes_nothing(project, capsys):
    assert main(["merge", str(STATE), "--yes"]) == 0
    capsys.readouterr()
    backup = backup_path(project / "CONTEXT.md")
    backup.write_text("the text before an interrupted write\n")
    after = (project / "CONTEXT.md").read_bytes()
    assert main(["merge", str(STATE), "--yes"]) == 0
    captured = capsys.readouterr()
    assert "No changes to CONTEXT.md." in captured.out
    assert f"removed {Path('.duck-tape/CONTEXT.md.bak')}, a backup left by an interrupted write" in captured.err
    assert not backup.exists() and (project / "CONTEXT.md").read_bytes() == after


def test_a_dry_run_removes_nothing(project, capsys):
    (project / ".duck-tape").mkdir()
    backup = backup_path(project / "CONTEXT.md")
    backup.write_text("old\n")
    stale = project / ".duck-tape" / f".CONTEXT.md.{dead_pid()}.0badcafe.tmp"
    stale.write_text("x")
    assert main(["merge", str(STATE), "--dry-run"]) == 0
    assert backup.exists() and stale.exists()


def test_remove_stale_temps_keeps_live_writers_and_other_files(tmp_path):
    dead = dead_pid()
    gone = tmp_path / f".CONTEXT.md.{dead}.0123abcd.tmp"
    other_target = tmp_path / f".2026-01-01-0000-auto.state.md.{dead}.0123abcd.tmp"
    live = tmp_path / f".CONTEXT.md.{os.getpid()}.0123abcd.tmp"
    parent = tmp_path / f".CONTEXT.md.{os.getppid()}.0123abcd.tmp"
    unrelated = [tmp_path / "notes.tmp", tmp_path / f".CONTEXT.md.{dead}.tmp", tmp_path / f".x.{dead}.XYZ12345.tmp"]
    for path in [gone, other_target, live, parent, *unrelated]:
        path.write_text("x")
    (tmp_path / f".dir.{dead}.0123abcd.tmp").mkdir()
    assert remove_stale_temps(tmp_path, name="CONTEXT.md") == [gone]
    assert remove_stale_temps(tmp_path) == [other_target]
    assert live.exists() and parent.exists() and all(p.exists() for p in unrelated)
    assert remove_stale_temps(tmp_path / "missing") == []


def test_a_state_write_removes_stale_temps_in_the_store(tmp_path):
    stale = tmp_path / f".2026-01-01-0000-auto.state.md.{dead_pid()}.0123abcd.tmp"
    tmp_path.joinpath(".gitignore").write_text("*\n")
    stale.write_text("half")
    write_state(tmp_path, "text\n", stamp="2026-01-01-0001", kind="auto")
    assert not stale.exists()


def test_temp_dir_on_another_file_system_falls_back_beside_the_target(tmp_path, monkeypatch):
    target, elsewhere = tmp_path / "CONTEXT.md", tmp_path / "store"
    elsewhere.mkdir()
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(Path(src).parent)
        return real_replace(src, dst)

    monkeypatch.setattr(fsutil.os, "replace", spy)
    monkeypatch.setattr(fsutil, "_same_device", lambda a, b: False)
    atomic_write_text(target, "one\n", temp_dir=elsewhere)
    assert seen == [tmp_path] and target.read_text() == "one\n"


def test_a_rename_refused_across_mounts_is_redone_beside_the_target(tmp_path, monkeypatch):
    target, store = tmp_path / "CONTEXT.md", tmp_path / ".duck-tape"
    store.mkdir()
    target.write_text("old\n")
    real_replace = os.replace
    tried = []

    def replace(src, dst):
        tried.append(Path(src).parent)
        if Path(src).parent == store:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_replace(src, dst)

    monkeypatch.setattr(fsutil.os, "replace", replace)
    atomic_write_text(target, "new\n", temp_dir=store)
    assert tried == [store, tmp_path]
    assert target.read_text() == "new\n" and temps(store) == [] and temps(tmp_path) == []
