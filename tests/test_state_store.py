"""The .duck-tape store (pipeline/state/store.py): names, listing, writing, rotation, pick_best.

Rules from DESIGN.md "Agent State file (Tier 2)" and "Resume" step 4.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipeline.errors import InputError
from pipeline.state.store import (
    STATE_RE,
    StateFileInfo,
    ensure_store,
    list_states,
    make_stamp,
    pick_best,
    rotate,
    split_session_label,
    state_filename,
    write_state,
)


def touch(store: Path, *names: str) -> None:
    store.mkdir(parents=True, exist_ok=True)
    for name in names:
        (store / name).write_text(f"state {name}\n", encoding="utf-8")


def names(store: Path) -> list[str]:
    return sorted(p.name for p in store.iterdir() if p.name.endswith(".state.md"))


# --- names ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("manual", "2026-11-29-2031.state.md"),
        ("auto", "2026-11-29-2031-auto.state.md"),
        ("recovered", "2026-11-29-2031-recovered.state.md"),
    ],
)
def test_state_filename_and_back(kind, name):
    assert state_filename("2026-11-29-2031", kind) == name
    match = STATE_RE.fullmatch(name)
    assert match is not None and match["stamp"] == "2026-11-29-2031"
    assert split_session_label(name.removesuffix(".state.md")) == ("2026-11-29-2031", kind)


@pytest.mark.parametrize(("stamp", "kind"), [("2026-11-29 2031", "manual"), ("2026-11-29-203", "auto"), ("2026-11-29-2031", "checkpoint")])
def test_state_filename_refuses_bad_stamp_or_kind(stamp, kind):
    with pytest.raises(ValueError):
        state_filename(stamp, kind)


def test_make_stamp_is_utc_minutes():
    assert make_stamp(datetime(2026, 11, 29, 20, 31, 59, tzinfo=timezone.utc)) == "2026-11-29-2031"
    assert make_stamp(datetime(2026, 11, 30, 1, 5, tzinfo=timezone(timedelta(hours=5)))) == "2026-11-29-2005"


def test_make_stamp_refuses_naive_datetimes():
    with pytest.raises(ValueError, match="timezone-aware"):
        make_stamp(datetime(2026, 11, 29, 20, 31))


def test_list_states_sorts_by_stamp_and_ignores_other_names(tmp_path):
    touch(
        tmp_path,
        "2026-11-29-2031.state.md",
        "2026-11-28-0900-auto.state.md",
        "2026-11-29-2031-auto.state.md",
        "2026-11-30-0000-recovered.state.md",
        "notes.state.md",
        "2026-11-29-2031-bogus.state.md",
        "2026-11-29-2031.state.md.bak",
        ".2026-11-29-2031.state.md.123.ab12cd34.tmp",
        ".gitignore",
    )
    (tmp_path / "2026-01-01-0000.state.md").mkdir()
    assert list_states(tmp_path) == [
        StateFileInfo(tmp_path / "2026-11-28-0900-auto.state.md", "2026-11-28-0900", "auto"),
        StateFileInfo(tmp_path / "2026-11-29-2031-auto.state.md", "2026-11-29-2031", "auto"),
        StateFileInfo(tmp_path / "2026-11-29-2031.state.md", "2026-11-29-2031", "manual"),
        StateFileInfo(tmp_path / "2026-11-30-0000-recovered.state.md", "2026-11-30-0000", "recovered"),
    ]


def test_list_states_of_a_missing_dir_is_empty(tmp_path):
    assert list_states(tmp_path / "absent") == []


# --- ensure_store / write_state ------------------------------------------------------------------------------


def test_ensure_store_creates_dir_and_gitignore(tmp_path):
    store = tmp_path / "project" / ".duck-tape"
    assert ensure_store(store) == store
    assert (store / ".gitignore").read_bytes() == b"*\n"


def test_ensure_store_keeps_an_existing_gitignore(tmp_path):
    (tmp_path / ".gitignore").write_text("*.state.md\n!keep.md\n", encoding="utf-8")
    ensure_store(tmp_path)
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "*.state.md\n!keep.md\n"


def test_write_state_writes_the_named_file_and_the_gitignore(tmp_path):
    store = tmp_path / ".duck-tape"
    path = write_state(store, "# Agent State\n", stamp="2026-11-29-2031", kind="recovered")
    assert path == store / "2026-11-29-2031-recovered.state.md"
    assert path.read_text(encoding="utf-8") == "# Agent State\n"
    assert (store / ".gitignore").read_text(encoding="utf-8") == "*\n"
    assert sorted(p.name for p in store.iterdir()) == [".gitignore", ".owned", "2026-11-29-2031-recovered.state.md"]
    assert [p.name for p in (store / ".owned").iterdir()] == ["2026-11-29-2031-recovered.state.md"]  # its record


def test_write_state_never_overwrites(tmp_path):
    write_state(tmp_path, "first\n", stamp="2026-11-29-2031", kind="auto")
    with pytest.raises(InputError, match="already exists; not overwriting") as info:
        write_state(tmp_path, "second\n", stamp="2026-11-29-2031", kind="auto")
    assert info.value.path == str(tmp_path / "2026-11-29-2031-auto.state.md")
    assert info.value.exit_code == 2
    assert (tmp_path / "2026-11-29-2031-auto.state.md").read_text(encoding="utf-8") == "first\n"
    assert names(tmp_path) == ["2026-11-29-2031-auto.state.md"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_state_same_stamp_other_kind_is_a_different_file(tmp_path):
    write_state(tmp_path, "auto\n", stamp="2026-11-29-2031", kind="auto")
    write_state(tmp_path, "manual\n", stamp="2026-11-29-2031", kind="manual")
    assert names(tmp_path) == ["2026-11-29-2031-auto.state.md", "2026-11-29-2031.state.md"]


# --- rotation ------------------------------------------------------------------------------------------------

# 12 files of mixed kinds, stamps 01..12 minutes past midnight.
TWELVE = [
    "2026-01-01-0001.state.md",
    "2026-01-01-0002-auto.state.md",
    "2026-01-01-0003-recovered.state.md",
    "2026-01-01-0004-auto.state.md",
    "2026-01-01-0005.state.md",
    "2026-01-01-0006-recovered.state.md",
    "2026-01-01-0007-auto.state.md",
    "2026-01-01-0008.state.md",
    "2026-01-01-0009-recovered.state.md",
    "2026-01-01-0010.state.md",
    "2026-01-01-0011-recovered.state.md",
    "2026-01-01-0012.state.md",
]


@pytest.mark.parametrize(
    ("keep", "evicted"),
    [
        (12, []),
        (10, ["2026-01-01-0002-auto.state.md", "2026-01-01-0004-auto.state.md"]),
        (
            5,
            [
                "2026-01-01-0002-auto.state.md",
                "2026-01-01-0004-auto.state.md",
                "2026-01-01-0007-auto.state.md",
                "2026-01-01-0003-recovered.state.md",
                "2026-01-01-0006-recovered.state.md",
                "2026-01-01-0009-recovered.state.md",
                "2026-01-01-0011-recovered.state.md",
            ],
        ),
        (
            3,
            [
                "2026-01-01-0002-auto.state.md",
                "2026-01-01-0004-auto.state.md",
                "2026-01-01-0007-auto.state.md",
                "2026-01-01-0003-recovered.state.md",
                "2026-01-01-0006-recovered.state.md",
                "2026-01-01-0009-recovered.state.md",
                "2026-01-01-0011-recovered.state.md",
                "2026-01-01-0001.state.md",
                "2026-01-01-0005.state.md",
            ],
        ),
    ],
)
def test_rotate_evicts_auto_then_recovered_then_manual_oldest_first(tmp_path, keep, evicted):
    touch(tmp_path, *TWELVE, "notes.state.md")
    removed = rotate(tmp_path, keep=keep)
    assert [p.name for p in removed] == evicted
    assert names(tmp_path) == sorted(set(TWELVE) - set(evicted)) + ["notes.state.md"]


def test_rotate_default_keeps_ten(tmp_path):
    touch(tmp_path, *TWELVE)
    assert [p.name for p in rotate(tmp_path)] == ["2026-01-01-0002-auto.state.md", "2026-01-01-0004-auto.state.md"]


def test_write_state_rotates_but_never_evicts_the_file_just_written(tmp_path):
    touch(tmp_path, *TWELVE[2:])  # 10 files: autos 0004, 0007
    path = write_state(tmp_path, "late auto\n", stamp="2025-12-31-2359", kind="auto")  # the oldest auto of all
    assert path.exists()
    assert "2026-01-01-0004-auto.state.md" not in names(tmp_path)
    assert len(names(tmp_path)) == 10


def test_rotate_protects_even_when_only_the_protected_file_is_old(tmp_path):
    touch(tmp_path, "2026-01-01-0001.state.md", "2026-01-01-0002-auto.state.md", "2026-01-01-0003.state.md")
    removed = rotate(tmp_path, keep=1, protect=tmp_path / "2026-01-01-0001.state.md")
    assert [p.name for p in removed] == ["2026-01-01-0002-auto.state.md", "2026-01-01-0003.state.md"]
    assert names(tmp_path) == ["2026-01-01-0001.state.md"]


def test_an_auto_write_never_evicts_manual_or_recovered_files(tmp_path):
    # issue 11 part 8: a store full of manual and recovered files lost the oldest of them to every auto checkpoint
    kept = [f"2026-01-01-00{n:02d}.state.md" for n in range(1, 6)]
    kept += [f"2026-01-01-00{n:02d}-recovered.state.md" for n in range(6, 11)]
    touch(tmp_path, *kept)
    first = write_state(tmp_path, "auto\n", stamp="2026-01-01-0011", kind="auto")
    assert names(tmp_path) == sorted(kept + [first.name])  # one auto over the cap, nothing else lost
    second = write_state(tmp_path, "auto\n", stamp="2026-01-01-0012", kind="auto")
    assert names(tmp_path) == sorted(kept + [second.name])  # the older auto made room, not a manual file
    assert rotate(tmp_path, protect=second) == []


def test_a_recovered_write_still_rotates_as_designed(tmp_path):
    touch(tmp_path, *[f"2026-01-01-00{n:02d}.state.md" for n in range(1, 11)])
    path = write_state(tmp_path, "recovered\n", stamp="2026-01-01-0011", kind="recovered")
    assert "2026-01-01-0001.state.md" not in names(tmp_path) and path.exists()
    assert len(names(tmp_path)) == 10


def test_a_manual_write_evicts_the_auto_kept_over_the_cap(tmp_path):
    touch(tmp_path, *[f"2026-01-01-00{n:02d}.state.md" for n in range(1, 11)], "2026-01-01-0011-auto.state.md")
    write_state(tmp_path, "manual\n", stamp="2026-01-01-0012", kind="manual")
    assert names(tmp_path) == [f"2026-01-01-00{n:02d}.state.md" for n in range(2, 11)] + ["2026-01-01-0012.state.md"]


def test_rotate_refuses_negative_keep(tmp_path):
    with pytest.raises(ValueError):
        rotate(tmp_path, keep=-1)


# --- pick_best (DESIGN.md "Resume" step 4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param([], None, id="none"),
        pytest.param(["2026-01-01-0900-auto", "2026-01-01-1000-auto"], ("2026-01-01-1000-auto", False), id="only-autos"),
        pytest.param(["2026-01-01-0900-auto", "2026-01-01-0930", "2026-01-01-1000"], ("2026-01-01-1000", True), id="fresh-manual"),
        pytest.param(["2026-01-01-0800", "2026-01-01-0900"], ("2026-01-01-0900", True), id="manual-no-auto"),
        pytest.param(
            ["2026-01-01-0900-auto", "2026-01-01-1000", "2026-01-01-1100-recovered"],
            ("2026-01-01-1000", True),
            id="fresh-manual-beats-newer-fresh-recovered",
        ),
        pytest.param(
            ["2026-01-01-0800", "2026-01-01-0900-auto", "2026-01-01-1000-recovered"],
            ("2026-01-01-1000-recovered", True),
            id="stale-manual-fresh-recovered",
        ),
        pytest.param(
            ["2026-01-01-0800-recovered", "2026-01-01-0850-recovered"],
            ("2026-01-01-0850-recovered", True),
            id="recovered-no-auto",
        ),
        pytest.param(
            ["2026-01-01-0800", "2026-01-01-0830-recovered", "2026-01-01-0900-auto"],
            ("2026-01-01-0900-auto", False),
            id="all-older-than-newest-auto",
        ),
        pytest.param(
            ["2026-01-01-0800-auto", "2026-01-01-0830", "2026-01-01-0900-auto"],
            ("2026-01-01-0900-auto", False),
            id="manual-between-autos",
        ),
        pytest.param(["2026-01-01-0900", "2026-01-01-0900-auto"], ("2026-01-01-0900", True), id="same-minute-manual"),
        pytest.param(
            ["2026-01-01-0900-recovered", "2026-01-01-0900-auto"], ("2026-01-01-0900-recovered", True), id="same-minute-recovered"
        ),
    ],
)
def test_pick_best(tmp_path, files, expected):
    touch(tmp_path, *(f"{stem}.state.md" for stem in files), "notes.state.md")
    best = pick_best(tmp_path)
    if expected is None:
        assert best is None
        return
    stem, use_as_is = expected
    assert best is not None
    assert (best.info.path.name, best.use_as_is) == (f"{stem}.state.md", use_as_is)
    assert best.info.stamp == stem[:15]
    assert best.reason


def test_pick_best_of_a_missing_store_is_none(tmp_path):
    assert pick_best(tmp_path / ".duck-tape") is None


# --- a symlinked store (issue 11 part 8) -------------------------------------------------------------------


def test_a_store_that_is_a_symlink_is_never_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / ".duck-tape"
    link.symlink_to(elsewhere)
    with pytest.raises(InputError, match="the state store is a symlink") as caught:
        write_state(link, "text\n", stamp="2026-01-01-0000", kind="manual")
    assert str(link) in str(caught.value)
    with pytest.raises(InputError, match="symlink"):
        ensure_store(link)
    assert list(elsewhere.iterdir()) == []


def test_hooks_and_commands_refuse_a_symlinked_store(tmp_path, monkeypatch, capsys):
    import io
    import shutil

    from pipeline.cli import main
    from pipeline.hooks.checkpoint import hook_main

    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / ".duck-tape").symlink_to(elsewhere)
    shutil.copy(root / "fixtures" / "context" / "medium.md", tmp_path / "CONTEXT.md")
    out, err = io.StringIO(), io.StringIO()
    transcript = str(root / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl")
    assert hook_main(transcript, ".duck-tape", stdin=io.StringIO(""), stdout=out, stderr=err) == 0
    lines = err.getvalue().splitlines()
    assert len(lines) == 2 and all("the state store is a symlink" in line for line in lines)
    assert main(["recover", transcript, "--yes", "--mask"]) == 2
    assert main(["merge", str(root / "fixtures" / "context" / "states" / "2026-03-11-0900.state.md"), "--yes"]) == 2
    assert "the state store is a symlink" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


# --- stamps in the future (clock skew, issue 11 part 8) ------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def set_mtime(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_a_future_stamp_ranks_by_its_modification_time(tmp_path):
    touch(tmp_path, "2027-01-01-0000.state.md", "2026-03-01-1000.state.md", "2026-03-01-1100-auto.state.md")
    set_mtime(tmp_path / "2027-01-01-0000.state.md", datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc))
    found = list_states(tmp_path, now=NOW)
    assert [(s.path.name, s.order) for s in found] == [
        ("2027-01-01-0000.state.md", "2026-03-01-0900"),
        ("2026-03-01-1000.state.md", "2026-03-01-1000"),
        ("2026-03-01-1100-auto.state.md", "2026-03-01-1100"),
    ]
    assert found[0].stamp == "2027-01-01-0000"  # the name is kept as it is


def test_a_future_stamp_and_mtime_rank_oldest(tmp_path):
    touch(tmp_path, "2027-01-01-0000.state.md", "2026-03-01-1000.state.md")
    set_mtime(tmp_path / "2027-01-01-0000.state.md", datetime(2027, 1, 1, 0, 0, tzinfo=timezone.utc))
    assert [s.path.name for s in list_states(tmp_path, now=NOW)] == ["2027-01-01-0000.state.md", "2026-03-01-1000.state.md"]


def test_a_stamp_within_the_tolerance_is_not_skew(tmp_path):
    touch(tmp_path, "2026-03-01-1204.state.md", "2026-03-01-1100.state.md")
    set_mtime(tmp_path / "2026-03-01-1204.state.md", datetime(2020, 1, 1, tzinfo=timezone.utc))
    assert [s.order for s in list_states(tmp_path, now=NOW)] == ["2026-03-01-1100", "2026-03-01-1204"]


def test_pick_best_is_not_stuck_on_a_file_from_the_future(tmp_path):
    # bug: a manual file stamped 2099 stayed "fresh" over every later auto checkpoint, so resume never recovered
    touch(tmp_path, "2099-01-01-0000.state.md", "2026-01-01-0900-auto.state.md")
    set_mtime(tmp_path / "2099-01-01-0000.state.md", datetime(2025, 12, 31, tzinfo=timezone.utc))
    best = pick_best(tmp_path)
    assert best is not None and best.info.path.name == "2026-01-01-0900-auto.state.md" and not best.use_as_is


def test_rotation_evicts_a_file_from_the_future_by_its_real_age(tmp_path):
    autos = [f"2026-01-01-00{n:02d}-auto.state.md" for n in range(1, 11)]
    touch(tmp_path, "2099-01-01-0000-auto.state.md", *autos)
    set_mtime(tmp_path / "2099-01-01-0000-auto.state.md", datetime(2025, 1, 1, tzinfo=timezone.utc))
    assert [p.name for p in rotate(tmp_path)] == ["2099-01-01-0000-auto.state.md"]
