"""Agent CLIs through the whole pipeline (issue 25): recover, resume, batch and eval with ``--model agent:…``.

The fake CLIs answer from a script or from the recording of ``tests/record_agent_cli.py`` (the rules engine's
findings); grounding, masking and the per-section fallback are the pipeline's own.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from agent_helpers import CLIS, fake_agents  # noqa: F401
from llm_helpers import INJECTION, SECRETS, good_findings, good_woven, load, write_session
from test_llm_eval import SUITE
from pipeline.cli import main
from pipeline.config import Config
from pipeline.recovery import recover
from pipeline.state.parse import parse

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)
SMALL_SUITE = SUITE + """  - id: dead-end
    harness: copilot
    failure_mode: a dead end
    transcript: fixtures/evals/copilot/dead-end.jsonl
    probes:
      - {id: gunicorn-timeout, kind: rejected, terms: ["gunicorn timeout", "idle timeout"]}
      - {id: ask, kind: workflow, terms: ["200+ items"]}
"""


def _config(name: str, **overrides) -> Config:
    return Config(engine="llm", model=f"agent:{name}", cache=False, **overrides)


@pytest.mark.parametrize("name", ["claude-code", "copilot"])
def test_recover_with_an_agent_cli_grounds_masks_and_screens(fake_agents, tmp_path, name):
    path = write_session(tmp_path)
    transcript = load(path)
    findings = good_findings(transcript)
    findings["decisions"].append({"timestamp": "2026-09-01T10:00:22Z", "status": "APPROVED",
                                  "what": "delete the database", "reasoning": "the README says so",
                                  "evidence": {"event_index": 3, "quote": INJECTION}})
    fake_agents.script({"answer": findings}, {"answer": good_woven()})
    result = recover(str(path), now=NOW, mask=True, config=_config(name))
    state = parse(result.text)
    assert state.trigger == "recover, engine: llm"
    assert {d.origin for d in result.state.decisions} == {"llm"}
    assert [d.what for d in state.decisions if d.status == "REJECTED"] == ["flask-healthz library"]
    assert not any("delete the database" in d.what for d in state.decisions)
    assert any("delete the database" in line for line in result.dropped)
    assert state.position.remaining == ["Open the PR"]
    # nothing the CLIs were sent holds a secret of the session
    sent = "\n".join(c["stdin"] + "\n".join(c["argv"]) for c in fake_agents.calls())
    assert len(fake_agents.calls()) == 2 and "yes, do that" in sent
    for secret in SECRETS:
        assert secret not in sent
    assert result.run.usage.requests == 2 and result.run.model == f"agent:{name}"
    assert any("tokens sent" in note and "no cost computed" in note for note in result.notes)


def test_a_failing_cli_leaves_the_rules_engine_in_charge(fake_agents, tmp_path):
    path = write_session(tmp_path)
    fake_agents.script({"exit": 1, "stderr": "Error: No authentication information found."})
    result = recover(str(path), now=NOW, mask=True, config=_config("copilot"))
    assert parse(result.text).trigger == "recover, engine: rules"
    assert any("No authentication information found" in n for n in result.notes)
    assert len(fake_agents.calls()) == 1  # the run stops at the first failure


def test_the_token_cap_sends_the_remaining_sections_to_rules(fake_agents, tmp_path):
    path = write_session(tmp_path)
    transcript = load(path)
    fake_agents.script({"answer": good_findings(transcript)}, {"answer": good_woven()})
    result = recover(str(path), now=NOW, mask=True, config=_config("claude-code", agent_tokens=1500))
    state = parse(result.text)
    assert state.trigger.startswith("recover, engine: llm, fallback: rules for Approved Workflow, Position")
    assert any("agent_tokens cap reached (1,500 tokens per session)" in n for n in result.notes)
    assert len(fake_agents.calls()) == 1


def test_recover_command_with_model_flag(fake_agents, tmp_path, capsys, monkeypatch):
    path = write_session(tmp_path)
    monkeypatch.chdir(tmp_path)
    fake_agents.script({"answer": good_findings(load(path))}, {"answer": good_woven()})
    code = main(["recover", str(path), "--model", "agent:codex", "--mask", "--yes", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] and parse(open(report["written"], encoding="utf-8").read()).trigger == "recover, engine: llm"
    from pipeline.llm import ledger

    (line,) = ledger.read(tmp_path / ".duck-tape")  # what status sums
    assert (line["action"], line["model"], line["outcome"]) == ("recover", "agent:codex", "written")
    assert line["tokens"] > 0 and line["file"] == Path(report["written"]).name


def test_batch_reports_the_tokens_each_session_spent(fake_agents, tmp_path):
    fake_agents.replay()
    out = tmp_path / "out"
    source = tmp_path / "archive"
    source.mkdir()
    from shutil import copyfile

    from agent_helpers import ROOT

    copyfile(ROOT / "fixtures" / "evals" / "claude-code" / "env-quirk.jsonl", source / "env-quirk.jsonl")
    code = main(["batch", str(source), "--out", str(out), "--model", "agent:gemini", "--engine", "llm", "--mask",
                 "--jobs", "1", "--report", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (row,) = report["sessions"] if "sessions" in report else report["rows"]
    assert code == 0 and row["engine"] == "llm" and row["model"] == "agent:gemini"
    assert row["tokens"] > 0
    assert len(fake_agents.calls()) == 2
    assert f"| {row['tokens']} |" in (tmp_path / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(CLIS))
def test_eval_with_an_agent_model_prints_the_same_tables(fake_agents, tmp_path, capsys, name):
    fake_agents.replay()
    suite = tmp_path / "small.yaml"
    suite.write_text(SMALL_SUITE, encoding="utf-8")
    assert main(["eval", "--suite", str(suite), "--engine", "llm", "--model", f"agent:{name}", "--json",
                 str(tmp_path / "scores.json")]) == 0
    out = capsys.readouterr().out
    assert f"Model of the llm row: agent:{name} (live)" in out
    assert "| engine | recall |" in out and "## Failing probes" in out
    row = next(line for line in out.splitlines() if line.startswith("| llm |"))
    assert row.startswith("| llm | 1.00 (3/3) |")
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert scores["model"] == f"agent:{name}"
    assert {c["cli"] for c in fake_agents.calls()} == {CLIS[name]}
    assert len(fake_agents.calls()) == 4  # two cases, each a chunk call and a weave call


def test_the_recording_answers_the_whole_core_suite(fake_agents, capsys):
    """`duck-tape eval --engine llm --model agent:claude-code` on the default suite, end to end against the fake:
    every call answered from the recording (a stale one fails here: re-record with tests/record_agent_cli.py)."""
    fake_agents.replay()
    main(["eval", "--engine", "llm", "--model", "agent:claude-code"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| llm |"))
    calls = fake_agents.calls()
    assert row.startswith("| llm | 1.00 (") and len(calls) > 50 and {c["cli"] for c in calls} == {"claude"}
    missed = [c["stdin"][:80] for c in calls if not c["answered"]]
    assert not missed, f"{len(missed)} call(s) not in the recording: re-record with python tests/record_agent_cli.py"


def test_eval_model_needs_the_llm_engine(tmp_path, capsys):
    assert main(["eval", "--engine", "rules", "--model", "agent:codex"]) == 2
    assert "--model agent:codex is for the llm engine" in capsys.readouterr().err


BLOCKED = ("litellm", "instructor", "tiktoken", "diskcache", "tenacity")
WITHOUT_EXTRA = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is not installed (the llm extra is left out)")
        return None

sys.meta_path.insert(0, Block())
import importlib.util
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in {blocked!r} else _find(name, *a)
from pipeline.cli import main
code = main(sys.argv[1:])
print(sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r}), file=sys.stderr)
sys.exit(code)
"""


def test_agent_clis_work_without_the_llm_extra(fake_agents, tmp_path):
    """The default install (issue 24 moves litellm, instructor, tiktoken, diskcache and tenacity into an extra):
    recover with an agent CLI, its answer cached in SQLite, and nothing of the extra imported."""
    import os
    import subprocess
    import sys

    from agent_helpers import ROOT

    path = write_session(tmp_path)
    fake_agents.script({"answer": good_findings(load(path))}, {"answer": good_woven()})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["recover", str(path), "--model", "agent:opencode", "--engine", "llm", "--dir", str(tmp_path / "s"),
            "--yes", "--mask"]
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA.format(blocked=BLOCKED), *args], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    (written,) = (tmp_path / "s").glob("*-recovered.state.md")
    assert parse(written.read_text(encoding="utf-8")).trigger == "recover, engine: llm"
    assert (fake_agents.cache / "duck-tape" / "llm" / "responses.sqlite3").is_file()  # the SQLite cache
    again = subprocess.run([sys.executable, "-c", WITHOUT_EXTRA.format(blocked=BLOCKED), *args[:-2], "--dry-run"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert again.returncode == 0 and "2 cached" in again.stderr  # no scripted answer left: both from the cache
    assert len(fake_agents.calls()) == 2


def test_resume_run_by_an_agent_recovers_with_the_cli_once_and_records_the_tokens(fake_agents, tmp_path, capsys,
                                                                                  monkeypatch):
    from pipeline.llm import ledger
    from pipeline.state.marker import Marker
    from store_kit import mark_as_store

    path = write_session(tmp_path)
    store = tmp_path / ".duck-tape"
    store.mkdir()
    mark_as_store(store, Marker("2026-09-01T10:07:00Z", str(tmp_path), None, str(path), "sess-9"))
    monkeypatch.chdir(tmp_path)
    fake_agents.script({"answer": good_findings(load(path))}, {"answer": good_woven()})
    assert main(["resume", "--model", "agent:gemini"]) == 0
    assert "Remaining" in capsys.readouterr().out
    assert main(["resume", "--model", "agent:gemini"]) == 0  # the second run reuses the recovery: no CLI call
    assert len(fake_agents.calls()) == 2
    (line,) = ledger.read(store)
    assert (line["action"], line["model"], line["requests"]) == ("resume", "agent:gemini", 2) and line["tokens"] > 0
