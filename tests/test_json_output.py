"""``--json`` output (issue 15, item 5): one JSON object on stdout, documented in docs/json.md."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"


def test_recover_json_writes_and_reports(capsys, tmp_path):
    code = main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--yes", "--mask", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert set(report) == {"command", "transcript", "written", "dry_run", "stamp", "trigger", "sections", "counts",
                           "notes", "dropped", "redaction"}
    assert report["command"] == "recover" and report["transcript"] == str(CC)
    written = Path(report["written"])
    assert written.is_file() and written.name == f"{report['stamp']}-recovered.state.md"
    assert report["trigger"] == "recover, engine: rules"
    assert set(report["sections"].values()) == {"rules"} and "Decision Log" in report["sections"]
    assert report["counts"]["decisions"] > 0 and report["counts"]["facts"] > 0


def test_recover_json_never_asks(capsys, tmp_path):
    code = main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--mask", "--json"])
    out, err = capsys.readouterr()
    assert code == 4 and "--json never asks" in err
    error = json.loads(out)  # the error object: same exit code, same message as stderr
    assert set(error) == {"command", "error", "exit_code"}
    assert error["command"] == "recover" and error["exit_code"] == 4
    assert error["error"].startswith("--json never asks, so nothing was written to ") and error["error"] in err
    assert not (tmp_path / "st").exists()
    assert main(["recover", str(CC), "--dir", str(tmp_path / "st"), "--json", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] is None
