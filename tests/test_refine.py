"""The background refinement (issue 25): the checkpoint starts it only when asked and does not wait for it, it
writes ``<stamp>-recovered.state.md`` for the same session, restore and resume prefer that file, and the tokens
it spent reach ``duck-tape status``.  The model is a fake agent CLI (``tests/fake_agent.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_helpers import ROOT, fake_agents  # noqa: F401
from llm_helpers import good_findings, good_woven, load, write_session
from pipeline.cli import main
from pipeline.llm import ledger
from pipeline.refine import spawn
from pipeline.refine.job import refine
from pipeline.state.parse import parse

SESSION = "3b1e7c55-0a9d-4e2f-8c61-2d4f5a6b7c8d"


def _project(tmp_path: Path, *, refine_on: bool) -> tuple[Path, Path]:
    project = tmp_path / "orders"
    (project / ".duck-tape").mkdir(parents=True)
    path = write_session(project, name=f"{SESSION}.jsonl")
    if refine_on:
        (project / ".duck-tape" / "config.toml").write_text('[llm]\nrefine = true\nmodel = "agent:claude-code"\n')
    return project, path


def _checkpoint(project: Path, path: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    payload = {"session_id": SESSION, "transcript_path": str(path), "cwd": str(project), "trigger": "auto",
               "hook_event_name": "PreCompact"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pipeline", "checkpoint"], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=project, env=env, timeout=60)
    return done, time.perf_counter() - started


def _wait_for(pattern: str, store: Path, seconds: float = 60) -> list[Path]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = sorted(store.glob(pattern))
        if found:
            return found
        time.sleep(0.1)
    return []


def _answers(path: Path) -> tuple[dict, dict]:
    return {"answer": good_findings(load(path))}, {"answer": good_woven()}


def test_checkpoint_starts_the_refinement_and_restore_then_prefers_its_file(fake_agents, tmp_path):
    project, path = _project(tmp_path, refine_on=True)
    store = project / ".duck-tape"
    fake_agents.script({"sleep": 1.5, **_answers(path)[0]}, _answers(path)[1])
    done, seconds = _checkpoint(project, path)
    assert done.returncode == 0
    assert "refining" in done.stderr and "in the background (pid" in done.stderr
    (auto,) = store.glob("*-auto.state.md")
    assert not list(store.glob("*-recovered.state.md"))  # the hook did not wait for the model (it sleeps 1.5 s)
    (refined,) = _wait_for("*-recovered.state.md", store)
    assert refined.name == auto.name.replace("-auto", "-recovered")  # the checkpoint's stamp
    state = parse(refined.read_text(encoding="utf-8"))
    assert state.session_id == SESSION and state.trigger == "background refine, engine: llm"
    assert [d.what for d in state.decisions][-1] == "flask-healthz library"
    # the nested run was the fake claude, told it is nested, in duck-tape's own folder
    calls = fake_agents.calls()
    assert [c["cli"] for c in calls] == ["claude", "claude"] and {c["nested"] for c in calls} == {"1"}
    # restore (the post-compaction hook) and resume both use the refined file now
    restored = subprocess.run([sys.executable, "-m", "pipeline", "restore"], capture_output=True, text=True,
                              cwd=project, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert refined.name in restored.stdout
    from pipeline import resume as resume_mod

    assert resume_mod.plan(store).state_path == refined
    lines = ledger.read(store)
    assert lines and lines[-1]["outcome"] == "written" and lines[-1]["tokens"] > 0
    assert lines[-1]["file"] == refined.name and lines[-1]["model"] == "agent:claude-code"


def test_without_refine_the_checkpoint_starts_nothing(fake_agents, tmp_path):
    project, path = _project(tmp_path, refine_on=False)
    done, _ = _checkpoint(project, path)
    assert done.returncode == 0 and "refining" not in done.stderr
    assert not (project / ".duck-tape" / spawn.LOG).exists()
    assert fake_agents.calls() == []


def test_wanted_reads_no_config_unless_a_file_mentions_refine(tmp_path, monkeypatch):
    store = tmp_path / "p" / ".duck-tape"
    store.mkdir(parents=True)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin"}
    assert spawn.wanted(store, env) is False
    calls = []
    import pipeline.config as config_mod

    monkeypatch.setattr(config_mod, "resolve", lambda *a, **k: calls.append(1) or (None, {}))
    (store / "config.toml").write_text('[llm]\nmodel = "agent:codex"\n')
    (store.parent / "pyproject.toml").write_text('[tool.setuptools]\npackages = ["app", "app.refine"]\n')
    assert spawn.wanted(store, env) is False and calls == []  # no file sets refine: nothing parsed
    monkeypatch.undo()
    (store / "config.toml").write_text('[llm]\nmodel = "agent:codex"\nrefine = true\n')
    assert spawn.wanted(store, env) is True
    assert spawn.wanted(store, {**env, "DUCK_TAPE_NESTED": "1"}) is False
    assert spawn.wanted(store, {**env, "DUCK_TAPE_REFINE": "0"}) is False


def test_a_later_checkpoint_makes_the_refinement_moot(fake_agents, tmp_path):
    project, path = _project(tmp_path, refine_on=False)
    store = project / ".duck-tape"
    header = f"pre-compact auto, engine: rules | Session-Id: {SESSION}"
    for stamp in ("2026-09-01-1007", "2026-09-01-1030"):
        (store / f"{stamp}-auto.state.md").write_text(
            f"# Agent State\n\nSession: {stamp}-auto | Cwd: {project} | Repo/Branch: orders@main | Trigger: {header}\n"
            "Created: 2026-09-01T10:07:00Z\n\n## Approved Workflow\nNone\n\n## Position\n- **Current:** None\n"
            "- **Done:**\n- **Remaining:**\n\n## Decision Log\nNone\n\n## Established Facts\nNone\n\n"
            "## Re-derivation\nNone\n")
    from pipeline.config import Config

    done = refine(store, "2026-09-01-1007-auto.state.md", transcript=str(path),
                  config=Config(model="agent:claude-code", cache=False))
    assert done.outcome == "skipped" and "a later checkpoint of the session exists" in done.notes[0]
    assert fake_agents.calls() == []
    assert ledger.read(store)[-1]["outcome"] == "skipped"


def test_refine_by_hand_falls_back_and_writes_nothing_when_the_cli_fails(fake_agents, tmp_path, capsys,
                                                                         monkeypatch):
    project, path = _project(tmp_path, refine_on=False)
    monkeypatch.chdir(project)
    done, _ = _checkpoint(project, path)
    fake_agents.script({"exit": 1, "stderr": "Error: not logged in"})
    assert main(["refine", "--model", "agent:copilot"]) == 0
    err = capsys.readouterr().err
    assert "not logged in" in err and "nothing written" in err
    assert not list((project / ".duck-tape").glob("*-recovered.state.md"))
    assert ledger.read(project / ".duck-tape")[-1]["outcome"] == "fell back"


def test_status_shows_the_tokens_spent(fake_agents, tmp_path, capsys, monkeypatch):
    project, path = _project(tmp_path, refine_on=False)
    store = project / ".duck-tape"
    monkeypatch.chdir(project)
    _checkpoint(project, path)
    fake_agents.script(*_answers(path))
    assert main(["refine", "--model", "agent:claude-code"]) == 0
    spent = ledger.read(store)[-1]["tokens"]
    capsys.readouterr()
    main(["status", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["llm_usage"]["tokens"] == spent and report["llm_usage"]["last_refine"]["outcome"] == "written"
    main(["status"])
    text = capsys.readouterr().out
    assert f"Model tokens spent here: {spent:,}" in text and "last refinement" in text


@pytest.mark.parametrize("answer", ["y", "n"])
def test_init_asks_about_the_refinement_on_a_terminal(fake_agents, tmp_path, monkeypatch, answer):
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter([True, True, answer == "y"])  # the hook, the resume prompt, the refinement
    monkeypatch.setattr("pipeline.approval.ask", lambda question: next(answers))
    assert main(["init", "--harness", "claude-code", "--root", str(project)]) == 0
    config = project / ".duck-tape" / "config.toml"
    if answer == "y":
        assert config.read_text() == '[llm]\nrefine = true\nmodel = "agent:claude-code"\n'
    else:
        assert not config.exists()


def test_init_refine_flags(fake_agents, tmp_path):
    project = tmp_path / "p"
    (project / ".duck-tape").mkdir(parents=True)
    (project / ".duck-tape" / "config.toml").write_text("# mine\n[llm]\ntimeout = 30  # slow server\n\n[other]\nx = 1\n")
    assert main(["init", "--harness", "codex", "--root", str(project), "--yes", "--refine"]) == 0
    text = (project / ".duck-tape" / "config.toml").read_text()
    assert text == ('# mine\n[llm]\ntimeout = 30  # slow server\nrefine = true\nmodel = "agent:codex"\n\n[other]\n'
                    'x = 1\n')
    assert main(["init", "--harness", "codex", "--root", str(project), "--yes", "--no-refine"]) == 0
    assert "refine = false" in (project / ".duck-tape" / "config.toml").read_text()
