"""``duck-tape restore`` as a command and a hook process (issue 7, items 1 and 4): the done-when path
(checkpoint a fixture transcript, then restore as hook JSON under the budget), the state file it picks, and
every case that must print nothing and still exit 0 (no marker, no state file, corrupt files)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.hooks.checkpoint import hook_main
from pipeline.restore.handoff import DEFAULT_BUDGET, FORMATS, MAX_BUDGET, MIN_BUDGET
from pipeline.restore.run import render_restore, restore_main
from pipeline.state.marker import Marker, write_marker
from pipeline.state.sections import read_sections
from pipeline.state.store import list_states, session_label

from conftest import GOLDEN, ROOT
from store_kit import mark_as_store, own

CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
STATE = GOLDEN / "recover" / "claude-code.state.md"
OTHER = GOLDEN / "recover" / "copilot-events.state.md"
SID = "3c36e3d9-43a0-4c66-9eb2-68a99f5c9fb0"
"""The session of ``STATE`` (its ``Session-Id``); the markers of these tests name it."""


def duck_tape(*args: str, cwd: Path | None = None, payload: str = "") -> subprocess.CompletedProcess:
    """Run ``python -m pipeline`` (the console entry, fast lane included) as a child process, ``payload`` on its
    stdin (the harness's JSON; "" as a person's run)."""
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, cwd=cwd, timeout=60,
                          input=payload.encode())


def put_state(store: Path, stamp: str, kind: str, source: Path = STATE, session: str | None = SID) -> Path:
    """A copy of ``source`` in ``store`` as ``<stamp>[-kind].state.md`` with its Session label set to match, its
    ``Session-Id`` set to ``session`` (None: no Session-Id field, as files before issue 14) and its Cwd the store's
    folder, recorded as written by the store (what a checkpoint in that folder writes)."""
    label = session_label(stamp, kind)
    text = re.sub(r"^Session: \S+ \| Cwd: .*? \| ", f"Session: {label} | Cwd: {store.parent.absolute()} | ",
                  source.read_text(encoding="utf-8"), count=1, flags=re.M)
    tail = f" | Session-Id: {session}" if session else ""
    text = re.sub(r"^(Session: .*?)(?: \| Session-Id: .*)?$", lambda m: m[1] + tail, text, count=1, flags=re.M)
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{label}.state.md"
    path.write_text(text, encoding="utf-8")
    own(store, path)  # as if this store had written it
    return path


def mark(store: Path, when: str = "2026-03-10T10:05:00Z", session: str | None = SID) -> None:
    mark_as_store(store, Marker(when, "/home/dev/shop", None, None, session))


#: The SessionStart payload of the fixtures' session after its compaction.
PAYLOAD = json.dumps({"session_id": SID, "hook_event_name": "SessionStart", "source": "compact"})
#: The fixture transcript's own folder: a checkpoint of it writes this Cwd, so a restore runs as if there.
SHOP = json.dumps({"cwd": "/home/dev/shop"})


def restore(store: Path, payload: str = PAYLOAD, **options) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8")
    code = restore_main(str(store), stdin=io.StringIO(payload), stdout=wrapper, stderr=err, **options)
    wrapper.flush()
    return code, out.getvalue(), err.getvalue()


def test_done_when_checkpoint_then_restore_prints_valid_hook_json_under_the_budget(tmp_path):
    assert hook_main(str(CC), str(tmp_path / ".duck-tape"), stdin=io.StringIO(""), stdout=io.StringIO(),
                     stderr=io.StringIO()) == 0
    proc = duck_tape("restore", "--format", "claude-code", cwd=tmp_path, payload=SHOP)
    assert proc.returncode == 0 and proc.stderr == b""
    assert len(proc.stdout) <= DEFAULT_BUDGET
    hook = json.loads(proc.stdout)
    assert list(hook) == ["hookSpecificOutput"]
    assert hook["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = hook["hookSpecificOutput"]["additionalContext"]
    [auto] = list_states(tmp_path / ".duck-tape")
    doc = read_sections(auto.path.read_text(encoding="utf-8"))
    assert f"## Current\n{doc.current}\n" in context
    assert f"From .duck-tape/{auto.path.name} (auto state file, created {doc.created}" in context
    assert "## Since the state file (read-only check of the workspace)" in context
    assert f"- Git: {tmp_path} is not in a git repository; commits not checked." in context


@pytest.mark.parametrize("budget", [MIN_BUDGET, 2345, MAX_BUDGET])
@pytest.mark.parametrize("fmt", FORMATS)
def test_process_respects_the_budget_flag(tmp_path, budget, fmt):
    put_state(tmp_path / ".duck-tape", "2026-03-10-1000", "recovered")
    mark(tmp_path / ".duck-tape")
    proc = duck_tape("restore", f"--budget={budget}", "--format", fmt, cwd=tmp_path)
    assert proc.returncode == 0 and 0 < len(proc.stdout) <= budget


def test_picks_the_state_file_by_resume_precedence(tmp_path):
    store = tmp_path / "s"
    for n in range(8):  # the session's checkpoints: only those at or after the compaction (10:05) count
        put_state(store, f"2026-03-10-10{n:02d}", "auto", OTHER)
    manual = put_state(store, "2026-03-10-1010", "manual")
    put_state(store, "2026-03-10-1005", "recovered", OTHER)
    mark(store)
    assert len(list_states(store)) == 10
    output, note = render_restore(str(store), budget=DEFAULT_BUDGET, fmt="plain", reconcile=False)
    assert note is None and f"From {manual} (manual state file" in output.decode()
    manual.unlink()  # now the recovered one is older than the newest auto: the newest auto is used, no recovery
    output, _ = render_restore(str(store), budget=DEFAULT_BUDGET, fmt="plain", reconcile=False)
    assert f"From {store / '2026-03-10-1007-auto.state.md'} (auto state file" in output.decode()


def test_no_reconcile_leaves_the_section_out(tmp_path):
    put_state(tmp_path / ".duck-tape", "2026-03-10-1000", "recovered")
    mark(tmp_path / ".duck-tape")
    code, out, err = restore(tmp_path / ".duck-tape", reconcile=False)
    assert code == 0 and err == "" and b"## Current\n" in out and b"Since the state file" not in out


@pytest.mark.parametrize("setup, message", [
    ("nothing", "no compaction marker in {store}; nothing to restore"),
    ("marker-only", "no fresh state for session " + SID + " (compaction at 2026-03-10T10:00:00Z): its checkpoint "
                    "wrote no state file and the marker names no transcript to distil; nothing restored"),
    ("state-only", "no compaction marker in {store}; nothing to restore"),
    # a file this store did not write is never read, corrupt or not: named, and left out
    ("corrupt-state", "not handing over 1 file(s) not written by this store; ignored 1 state file(s) not written by "
                      "this store (planted, copied or hand-written): 2026-03-10-1000.state.md; nothing restored"),
    ("corrupt-marker", "nothing restored: {store}/.last-compact:1: expected '<ISO-8601> | cwd: <path>"),
    ("binary-state", "not handing over 1 file(s) not written by this store; ignored 1 state file(s) not written by "
                     "this store (planted, copied or hand-written): 2026-03-10-1000.state.md; nothing restored"),
])
@pytest.mark.parametrize("fmt", FORMATS)
def test_nothing_to_restore_prints_nothing_and_exits_zero(tmp_path, setup, message, fmt):
    store = tmp_path / ".duck-tape"
    store.mkdir()
    if setup in ("marker-only", "corrupt-state", "binary-state"):
        mark(store, "2026-03-10T10:00:00Z")
    if setup == "state-only":
        put_state(store, "2026-03-10-1000", "manual")
    if setup == "corrupt-state":
        (store / "2026-03-10-1000.state.md").write_text("# Agent State\n\nSession broken\n", encoding="utf-8")
    if setup == "binary-state":
        (store / "2026-03-10-1000.state.md").write_bytes(b"\x00\xff\xfe garbage \x89PNG")
    if setup == "corrupt-marker":
        put_state(store, "2026-03-10-1000", "manual")
        (store / ".last-compact").write_text("yesterday-ish | cwd: /x\n", encoding="utf-8")
    proc = duck_tape("restore", "--dir", str(store), "--format", fmt, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == (b"{}\n" if fmt == "gemini" else b"")  # Gemini reads stdout as JSON, and stderr if it is empty
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("duck-tape: restore: ")
    assert message.format(store=store) in lines[0]


def test_a_missing_store_folder_is_nothing_to_restore(tmp_path):
    code, out, err = restore(tmp_path / "nowhere")
    assert (code, out) == (0, b"") and f"no checkpoint of session {SID} in {tmp_path / 'nowhere'}" in err
    code, out, err = restore(tmp_path / "nowhere", payload="")  # a person's run: no session named
    assert (code, out) == (0, b"") and "no compaction marker" in err


def test_closed_output_streams_do_not_fail_the_hook(tmp_path):
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError("the harness went away")

    store = tmp_path / "s"
    put_state(store, "2026-03-10-1000", "recovered")
    mark(store)
    assert restore_main(str(store), stdout=Closed(), stderr=Closed()) == 0


def test_fast_lane_imports_neither_click_nor_pydantic_nor_litellm(tmp_path):
    store = tmp_path / "s"
    put_state(store, "2026-03-10-1000", "recovered")
    mark(store)
    code = ("import sys; from pipeline.entry import main; main(['restore', '--dir', sys.argv[1], '--format', "
            "'claude-code']); print(sorted(m for m in ('click', 'pydantic', 'litellm', 'yaml') if m in sys.modules), "
            "file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


@pytest.mark.parametrize("args", [["--help"], ["--dir"], ["--dir", "a", "--dir", "b"], ["stray"], ["--budget", "999"],
                                  ["--budget", "9501"], ["--budget", "6k"], ["--format", "json"], ["--bogus"],
                                  ["--no-reconcile=1"], ["--no-reconcile", "--no-reconcile"], ["--budget="]])
def test_fast_lane_leaves_other_shapes_to_click(args, monkeypatch):
    from pipeline import cli, entry

    seen = []
    monkeypatch.setattr(cli, "main", lambda a: seen.append(a) or 7)
    assert entry.main(["restore", *args]) == 7
    assert seen == [["restore", *args]]


def test_fast_lane_shapes(monkeypatch):
    from pipeline import entry
    from pipeline.restore import run

    seen = []
    monkeypatch.setattr(run, "restore_main",
                        lambda d, b, f, reconcile, session: seen.append((d, b, f, reconcile, session)) or 0)
    assert entry.main(["restore"]) == 0
    assert entry.main(["restore", "--dir=/s", "--budget", "1000", "--format", "claude-code", "--no-reconcile"]) == 0
    assert entry.main(["restore", "--format=plain", "--budget=9500", "--session", "ses_1"]) == 0
    assert seen == [(None, None, "plain", True, None), ("/s", 1000, "claude-code", False, None),
                    (None, 9500, "plain", True, "ses_1")]


@pytest.mark.parametrize("args", [["--budget", "999"], ["--budget", "9501"], ["--format", "json"], ["--bogus"]])
def test_bad_usage_is_exit_2_from_click(args):
    proc = duck_tape("restore", *args)
    assert proc.returncode == 2 and proc.stdout == b""


def test_help_and_click_path_match_the_fast_lane(tmp_path, capsys):
    from pipeline.cli import main as click_main
    from pipeline.commands.restore import restore as command

    proc = duck_tape("restore", "--help")
    assert proc.returncode == 0 and b"Usage: duck-tape restore" in proc.stdout and b"--budget BYTES" in proc.stdout
    budget = next(p for p in command.params if p.name == "budget")
    assert (budget.type.min, budget.type.max, budget.default) == (MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET)
    store = tmp_path / "s"
    put_state(store, "2026-03-10-1000", "recovered")
    mark(store)
    fast = duck_tape("restore", "--dir", str(store), "--budget", "3000", "--no-reconcile").stdout
    assert click_main(["restore", "--dir", str(store), "--budget", "3000", "--no-reconcile"]) == 0
    assert capsys.readouterr().out.encode() == fast and len(fast) <= 3000


def test_restore_never_writes(tmp_path):
    store = tmp_path / ".duck-tape"
    put_state(store, "2026-03-10-1000", "recovered")
    mark(store)

    def snapshot() -> dict:
        return {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else sorted(os.listdir(p)))
                for p in [tmp_path, *tmp_path.rglob("*")]}

    before = snapshot()
    proc = duck_tape("restore", "--format", "claude-code", cwd=tmp_path)
    assert proc.returncode == 0 and b"additionalContext" in proc.stdout
    assert snapshot() == before
