"""Bugs a new-user trial of ``duck-tape batch`` found, each with its failing input: unusable ``--report``,
``--out`` and ``--cache-dir`` targets refused before any work (exit 2); ``--since`` older than every transcript
is "nothing to do" (exit 0), not "no transcripts found"; cached rows name the transcript as this run found it;
``--merge`` Notes lines name the state files batch wrote."""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path

import pytest
from batch_helpers import A, B, C, D, archive, by_session, run  # noqa: F401 (archive: a fixture)

from pipeline.batch.runner import BatchOptions, renames, respell, run_batch
from pipeline.batch.targets import check_folder, check_report, check_targets
from pipeline.errors import InputError

UPLOAD = "upload-2026-02-28.jsonl"


# 1. Targets that cannot be written: a usage error before any work.

def test_report_that_is_a_directory_is_refused_before_any_work(capsys, archive, tmp_path):
    somedir = tmp_path / "somedir"
    somedir.mkdir()
    out = tmp_path / "o"
    code, stdout, err = run(capsys, "batch", str(archive), "--out", str(out), "--report", str(somedir))
    assert code == 2
    assert err == f"duck-tape: error: --report FILE: {somedir} is a directory\n"  # was IsADirectoryError, exit 1
    assert stdout == "" and not out.exists() and list(somedir.iterdir()) == []


def test_report_whose_json_companion_is_a_directory_is_refused(capsys, archive, tmp_path):
    (tmp_path / "r.json").mkdir()
    code, _, err = run(capsys, "batch", str(archive), "--out", str(tmp_path / "o"), "--report", str(tmp_path / "r.md"))
    assert code == 2 and f"--report FILE: {tmp_path / 'r.json'} is a directory" in err
    assert not (tmp_path / "o").exists()


def test_report_in_a_missing_folder_is_refused_and_the_folder_not_made(capsys, archive, tmp_path):
    report = tmp_path / "nope" / "r.md"
    code, _, err = run(capsys, "batch", str(archive), "--out", str(tmp_path / "o"), "--report", str(report))
    assert code == 2
    assert f"--report FILE: the folder {tmp_path / 'nope'} of {report} does not exist" in err
    assert not (tmp_path / "nope").exists() and not (tmp_path / "o").exists()  # was: created, then the batch ran


def test_report_in_a_new_folder_inside_out_is_written(capsys, archive, tmp_path):
    out = tmp_path / "o"
    code, stdout, _ = run(capsys, "batch", str(archive / "copilot"), "--out", str(out), "--jobs", "1",
                          "--report", str(out / "reports" / "batch.md"))
    assert code == 0 and f"Report: {out / 'reports' / 'batch.md'} and {out / 'reports' / 'batch.json'}" in stdout
    assert json.loads((out / "reports" / "batch.json").read_text())["sessions"][0]["session_id"] == C


def test_report_under_a_file_or_onto_a_fifo_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "o"
    blocked = re.escape(f"--report FILE: {tmp_path / 'file'} (the folder of {tmp_path / 'file' / 'r.md'}) is not a folder")
    with pytest.raises(InputError, match=blocked):
        check_targets(out, None, str(tmp_path / "file" / "r.md"))
    out.mkdir()
    (out / "file").write_text("x")
    with pytest.raises(InputError, match=re.escape(f"--report FILE: {out / 'file'} is a file, not a folder")):
        check_report((out / "file" / "r.md", out / "file" / "r.json"), out, option="--report FILE")
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=re.escape(f"--report FILE: {fifo} is not a regular file")):
        check_targets(out, None, str(fifo))


def test_out_that_is_a_file_is_a_usage_error(capsys, archive, tmp_path):
    target = tmp_path / "file"
    target.write_text("keep me")
    code, stdout, err = run(capsys, "batch", str(archive), "--out", str(target))
    assert code == 2 and "Invalid value for '--out'" in err and f"'{target}' is a file" in err  # click's check
    assert stdout == "" and target.read_text() == "keep me"


def test_out_or_cache_dir_under_a_file_is_refused_before_any_work(capsys, archive, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "batch", str(archive), "--out", str(tmp_path / "file" / "sub"))
    assert code == 2  # was NotADirectoryError (exit 1) after every session had been processed
    assert err == (f"duck-tape: error: --out DIR: cannot create {tmp_path / 'file' / 'sub'}: {tmp_path / 'file'} "
                   "is not a folder\n")
    out = tmp_path / "o"
    code, _, err = run(capsys, "batch", str(archive), "--out", str(out), "--cache-dir", str(tmp_path / "file" / "c"))
    assert code == 2 and f"--cache-dir: cannot create {tmp_path / 'file' / 'c'}: {tmp_path / 'file'}" in err
    assert not out.exists()  # was: ran, and cached nothing


def test_check_folder_accepts_existing_and_creatable_folders(tmp_path):
    check_folder("--out DIR", tmp_path)
    check_folder("--out DIR", tmp_path / "a" / "b" / "c")
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match=re.escape(f"--out DIR: {tmp_path / 'f'} is a file, not a folder")):
        check_folder("--out DIR", tmp_path / "f")


def test_default_report_that_is_a_directory_names_out(tmp_path):
    (tmp_path / "o" / "report.md").mkdir(parents=True)
    with pytest.raises(InputError, match=r"--out DIR \(default report\): .*report.md is a directory"):
        check_targets(tmp_path / "o", None, None)


# 2. --since older than every transcript: nothing to do, exit 0.

def test_since_after_every_transcript_is_nothing_to_do(capsys, archive, tmp_path):
    out = tmp_path / "o"
    context = tmp_path / "CONTEXT.md"
    code, stdout, err = run(capsys, "batch", str(archive), "--out", str(out), "--since", "2030-01-01",
                            "--merge", str(context), "--yes")
    assert code == 0  # was exit 2: "no transcripts found under … (looked for *.jsonl and *.json files)"
    assert stdout.splitlines() == [
        f"Nothing to do: 6 transcript file(s) found under {archive}, all last modified before --since 2030-01-01.",
        f"Report: {out / 'report.md'} and {out / 'report.json'}",
        f"Nothing to merge into {context}.",
    ]
    assert "no transcripts found" not in err and not context.exists() and list(out.glob("*.state.md")) == []
    report = json.loads((out / "report.json").read_text())
    assert report["sessions"] == [] and report["idle"].startswith("6 transcript file(s) found under ")
    reasons = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert reasons[f"{A}.jsonl"] == reasons[UPLOAD] == "last modified before --since 2030-01-01"
    assert reasons["agent-a3f9c2d17b8e4f6a1.jsonl"] == "sub-agent file of a session last modified before --since"
    md = (out / "report.md").read_text()
    assert "\n\nNothing to do: 6 transcript file(s) found under " in md and "| cached 0 |" in md


def test_since_with_a_time_is_shown_with_its_time(archive, tmp_path):
    from datetime import datetime, timezone

    result = run_batch([str(archive / "copilot")], BatchOptions(
        out=tmp_path / "o", jobs=1, since=datetime(2030, 1, 1, 9, 30, tzinfo=timezone.utc)))
    assert result.rows == [] and result.idle.endswith("all last modified before --since 2030-01-01T09:30:00Z")


def test_an_empty_folder_is_still_no_transcripts_found(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "batch", str(tmp_path / "empty"), "--out", str(tmp_path / "o"), "--since", "2030-01-01")
    assert code == 2 and f"no transcripts found under {tmp_path / 'empty'}" in err


# 3. Cached rows name the transcript as this run found it.

def test_cached_errors_name_the_transcript_as_this_run_found_it(capsys, archive, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "batch", "archive", "--out", "o", "--jobs", "1")
    first = by_session(json.loads((tmp_path / "o" / "report.json").read_text())["sessions"])
    assert code == 6 and first[UPLOAD]["errors"][0].startswith(f"archive/misc/{UPLOAD}: unknown transcript format")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    upload, opencode = archive / "misc" / UPLOAD, archive / "opencode" / f"{D}.json"
    for again in range(2):  # from the index, then from the record files (as an index of an older version is)
        code, _, _ = run(capsys, "batch", str(archive), "--out", str(tmp_path / "o"), "--jobs", "1")
        rows = by_session(json.loads((tmp_path / "o" / "report.json").read_text())["sessions"])
        assert code == 6 and rows[UPLOAD]["cached"] and rows[D]["cached"]
        assert rows[UPLOAD]["errors"][0].startswith(f"{upload}: unknown transcript format")  # was archive/misc/…
        assert rows[D]["errors"][-1].startswith(f"{opencode}: refusing to write: 2 potential secret(s)")
        md = (tmp_path / "o" / "report.md").read_text()
        assert f"| failed (cached) | {upload}: unknown transcript format" in md and " archive/misc/" not in md
        (tmp_path / "o" / ".cache" / "index.json").unlink()
    record = next(p for p in (tmp_path / "o" / ".cache").rglob("*.json")
                  if json.loads(p.read_text()).get("status") == "failed")
    assert json.loads(record.read_text())["path"] == f"archive/misc/{UPLOAD}"  # the record stays as stored


def test_renames_and_respell_replace_whole_paths_only():
    stored = {"path": "a/x.json", "subagent_files": ["a/x/subagents/agent-1234abcd.jsonl", "a/agent-9999aaaa.jsonl"]}
    names = renames(stored, "/w/a/x.json", ["/w/a/x/subagents/agent-1234abcd.jsonl"])
    assert names == {"a/x.json": "/w/a/x.json",
                     "a/x/subagents/agent-1234abcd.jsonl": "/w/a/x/subagents/agent-1234abcd.jsonl"}
    texts = ["a/x.json: unknown transcript format", "sub-agent file a/x/subagents/agent-1234abcd.jsonl not read: bad",
             "see /old/a/x.json and a/x.jsonl and a/x.json.bak, then a/x.json.", 3]
    assert respell(texts, names) == [
        "/w/a/x.json: unknown transcript format", "sub-agent file /w/a/x/subagents/agent-1234abcd.jsonl not read: bad",
        "see /old/a/x.json and a/x.jsonl and a/x.json.bak, then /w/a/x.json.", 3]
    assert renames(stored, "a/x.json", []) == {} and respell(texts, {}) == texts


# 4. --merge Notes name the state files batch wrote.

def test_merge_notes_name_the_state_files_batch_wrote(capsys, archive, tmp_path):
    out = tmp_path / "o"
    context = tmp_path / "CONTEXT.md"
    code, _, _ = run(capsys, "batch", str(archive / "claude-code"), str(archive / "copilot"), "--out", str(out),
                     "--jobs", "1", "--merge", str(context), "--yes")
    assert code == 0
    named = [line.split()[3] for line in context.read_text().splitlines() if line.startswith("Merged state file ")]
    assert named == [f"{C}.state.md", f"{B}.state.md", f"{A}.state.md"]  # was 2026-02-03-0816-recovered.state.md, …
    assert all((out / name).is_file() for name in named)


def test_plan_merge_names_survive_a_replan(archive, tmp_path):
    from pipeline.batch import merge
    from pipeline.context.api import apply_merge, plan_merge
    from pipeline.context.bootstrap import skeleton
    from pipeline.context.render import render

    result = run_batch([str(archive / "copilot")], BatchOptions(out=tmp_path / "o", jobs=1, texts=True))
    states, names = merge.states_and_names(result.rows)
    assert names == [f"{C}.state.md"]
    context = tmp_path / "CONTEXT.md"
    outcome = plan_merge(context, states, names=names, today=date(2026, 3, 1))
    assert f"Merged state file {C}.state.md (" in outcome.after
    context.write_text(render(skeleton("weather")))  # another writer got there first: apply_merge plans again
    apply_merge(context, outcome)
    text = context.read_text()
    assert outcome.before is not None and f"Merged state file {C}.state.md (" in text
    default = plan_merge(tmp_path / "other.md", states, today=date(2026, 3, 1))
    assert "Merged state file 2026-02-03-0816-recovered.state.md (" in default.after  # the store's name by default
