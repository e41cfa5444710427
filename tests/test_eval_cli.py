"""``duck-tape eval``: table, failing probes, --json/--report, engine selection, exit codes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from evals import engines
from pipeline.cli import main

ROOT = Path(__file__).resolve().parent.parent

SUITE = """
name: small
cases:
  - id: quirk
    harness: claude-code
    failure_mode: an environment quirk found by trial and error
    transcript: fixtures/evals/claude-code/env-quirk.jsonl
    probes:
      - {id: quirk, kind: fact, terms: ["NODE_OPTIONS=--experimental-vm-modules"]}
      - {id: planted-miss, kind: remaining, terms: ["nothing like this was said"]}
      - {id: no-secret, kind: absent, terms: ["sk_live_"]}
"""


def _suite(tmp_path: Path) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(SUITE, encoding="utf-8")
    return str(path)


def test_table_failures_json_and_report(tmp_path, capsys):
    out_json, out_md = tmp_path / "scores.json", tmp_path / "report.md"
    code = main(["eval", "--suite", _suite(tmp_path), "--engine", "all", "--json", str(out_json),
                 "--report", str(out_md)])
    printed = capsys.readouterr()
    assert code == 1  # the rules engine misses its recall bar on this suite (1 of 2 positive probes)
    assert "Not run:" not in printed.out  # the llm engine replays its cassettes when no model is configured
    rows = [line for line in printed.out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| engine | recall | remaining | fact | neg. violations | decision precision")
    assert rows[1].startswith("| baseline | 0.00 (0/2) |") and rows[2].startswith("| rules | 0.50 (1/2) | 0.00 | 1.00 | 0/1 |")
    assert rows[3].startswith("| llm | ")
    assert "`quirk` / `planted-miss` (remaining, Position / Remaining)" in printed.out
    assert "threshold missed: rules: overall recall 0.500 < 0.90" in printed.err
    assert out_md.read_text(encoding="utf-8") == printed.out
    doc = json.loads(out_json.read_text(encoding="utf-8"))
    rules = next(e for e in doc["engines"] if e["engine"] == "rules")
    assert rules["recall"] == 0.5 and rules["kind_recall"] == {"remaining": 0.0, "fact": 1.0}
    probes = {p["id"]: p["passed"] for p in rules["cases"][0]["probes"]}
    assert probes == {"quirk": True, "planted-miss": False, "no-secret": True}
    # both counted (the state names the transcript's path, so on a tiny transcript in a long temporary folder
    # the state can be the longer of the two: fresh-clone-check's mktemp folder once made it so)
    assert rules["cases"][0]["transcript_tokens"] > 0 and rules["cases"][0]["state_tokens"] > 0


def test_baseline_alone_has_no_bar(tmp_path, capsys):
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "baseline"]) == 0
    assert "| baseline |" in capsys.readouterr().out


def test_engine_errors_are_usage_errors(tmp_path, capsys, monkeypatch):
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "nope"]) == 2
    assert "unknown engine 'nope'" in capsys.readouterr().err
    unconfigured = dataclasses.replace(engines.REGISTRY["llm"], available=lambda: "not configured")
    monkeypatch.setitem(engines.REGISTRY, "llm", unconfigured)
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "llm"]) == 2
    assert "cannot run: not configured" in capsys.readouterr().err
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "all"]) in (0, 1)
    assert "Not run: llm: not configured" in capsys.readouterr().out


def test_registry_adds_an_engine_with_one_entry(tmp_path, monkeypatch, capsys):
    def echo(path, now):  # an engine that writes the rules engine's file with every decision dropped
        out = engines.run_rules(path, now)
        return engines.EngineOutput(out.text, dataclasses.replace(out.state, decisions=[]), out.transcript)

    monkeypatch.setitem(engines.REGISTRY, "echo", engines.Engine("echo", echo, "test engine"))
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "echo"]) == 0  # no bar for "echo"
    assert "| echo | 0.50 (1/2) |" in capsys.readouterr().out


def test_an_engine_failing_on_a_case_is_reported(tmp_path, monkeypatch, capsys):
    def broken(path, now):
        raise RuntimeError("model returned garbage")

    monkeypatch.setitem(engines.REGISTRY, "rules", engines.Engine("rules", broken, "broken rules"))
    assert main(["eval", "--suite", _suite(tmp_path), "--engine", "rules"]) == 1
    captured = capsys.readouterr()
    assert "`quirk`: engine error: RuntimeError: model returned garbage" in captured.out
    assert "case quirk failed" in captured.err


@pytest.mark.parametrize("name, content, message", [
    # trial inputs (issue 24, item 4): a package.json crashed with AttributeError, a binary file with
    # UnicodeDecodeError
    ("package.json", b'{"name": "shop", "version": "1.0.0", "scripts": {"test": "jest"}}',
     "'name' holds a str, not a list of probe objects: expected a corpus probes file"),
    ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "a binary file, not a suite YAML"),
    ("probes.json", b"\x89PNG\r\n\x1a\n\x00\x00", "a binary file, not a corpus probes file"),
    ("latin1.yaml", "name: caf\u00e9\n".encode("latin-1"), "not UTF-8 text (byte 9), so not a suite YAML"),
    ("list.yaml", b"- a\n- b\n", "a YAML list, not a suite YAML"),
    ("empty.yaml", b"", "empty, not a suite YAML"),
    ("notes.md", b"# Notes\n\nsome words\n", "a YAML str, not a suite YAML"),
])
def test_a_file_that_is_not_a_suite_is_exit_2_naming_it(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    code = main(["eval", "--suite", str(path), "--engine", "rules"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"duck-tape: error: {path}: ") and message in err, err
    assert "Traceback" not in err and "unexpected error" not in err


def test_a_missing_suite_is_exit_2_naming_it(tmp_path, capsys):
    code = main(["eval", "--suite", str(tmp_path / "nope.yaml"), "--engine", "rules"])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path / 'nope.yaml'}: cannot read it (No such file or directory); expected a suite" in err


def test_real_suite_from_an_installed_copy_needs_duck_tape_corpus(tmp_path, capsys, monkeypatch):
    """Trial input: from an installed copy `--suite real` looked under .../lib/python3.11/shared/corpus."""
    from evals import corpus

    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "evals").mkdir(parents=True)
    monkeypatch.setattr(corpus, "ROOT", site)
    monkeypatch.delenv("DUCK_TAPE_CORPUS", raising=False)
    code = main(["eval", "--suite", "real", "--engine", "rules"])
    err = capsys.readouterr().err
    assert code == 2 and "set DUCK_TAPE_CORPUS to the folder holding its probes.json" in err
    assert "shared" not in err
    monkeypatch.setenv("DUCK_TAPE_CORPUS", str(tmp_path / "corpus"))
    assert corpus.default_path() == tmp_path / "corpus" / "probes.json"
