"""Issue 22 items 2, 3 and 6, issue 24 item 8: each secret form the probe found unmasked, in each harness's format
and each place a secret sits (a user prompt, an assistant message, a tool's output), masked in every output: the
state file, the marker and the checkpoint record, restore, resume, the MCP tools, CONTEXT.md, the batch report,
extract-raw and the llm engine's request bodies.  Values that are not secrets where they stand (``postgres``, a
``3306:3306`` port mapping) stay readable; a token in the transcript's own path is masked where the path is written.

The Claude Code run of every command on a bigger transcript is ``test_secret_suite.py``; here the forms go through
the five formats.  All values are fake.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path

import pytest
from harness_sessions import HARNESSES, precompact, session_id, session_start, write_session
from standin_server import StandIn
from test_secret_suite import echo_step

from pipeline.entry import main
from pipeline.serve import tools

DISCORD_TOKEN = "FAKEdiscordHookToken0123456789abcdefGHIJKLmnopqrstuvwx"
KUBE_KEY = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUZBS0Vr"
KUBE_CERT = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJGQUtFY2VydGlm"
KUBE_TOKEN = "kubeFAKEuserToken0123456789abcdef"
WRAPPED = base64.b64encode(b"ghp_FAKEbase64wrap0123456789abcdefGHIJKLm").decode()
DE, ZH, ES, FR = "Kennwort55Fake", "Mi9FAKEma7Qx", "Clave2026Falsa", "MotDePasse88Faux"
DOP = "dop_v1_FAKEfake9876543210FAKEfake9876543210FAKEfake9876543210FAKEfake98"
SECRETS = [DISCORD_TOKEN, KUBE_KEY, KUBE_CERT, KUBE_TOKEN, WRAPPED, DE, ZH, ES, FR, DOP]
#: each form in a sentence of its own (one per place); the kubeconfig as a tool prints it
SENTENCES = [
    f"Alerts go to https://discord.com/api/webhooks/1234567890123456789/{DISCORD_TOKEN} now.",
    f"users:\n- name: deploy\n  user:\n    client-certificate-data: {KUBE_CERT}\n    client-key-data: {KUBE_KEY}\n"
    f"    token: {KUBE_TOKEN}",
    f"The secret holds {WRAPPED} (base64).",
    f"Das Passwort für die Staging-DB ist {DE}.",
    f"数据库密码是 {ZH}。",
    f"La contraseña es {ES}; le mot de passe est {FR}.",
    f"The droplet token is {DOP}.",
]
#: not secrets where they stand (issue 22 item 3)
KEEP = ["up -d postgres", "-p3306:3306", "docs/postgres.md"]
TASK = ("Set up the staging cluster access for the deploy bot (ticket OPS-77); keep docs/postgres.md current "
        "and start the databases with docker compose up -d postgres.")
PATH_TOKEN = "ghp_FAKEinApath0123456789abcdefGHIJKLmnop"
#: the llm engine talks to the local stand-in only (tests/standin_server.py)
pytestmark = pytest.mark.block_network(allowed_hosts=["127.0.0.1"])


def turns(place: str) -> list[tuple]:
    """The session: the task, then every sentence in ``place`` (user, assistant or tool), and the docker commands."""
    out: list[tuple] = [("user", TASK)]
    for n, sentence in enumerate(SENTENCES):
        if place == "user":
            out += [("user", f"Note {n}: {sentence}"), ("assistant", f"Noted item {n}.")]
        elif place == "assistant":
            out += [("assistant", f"Found item {n}: {sentence}")]
        else:
            out += [("tool", f"cat notes/item{n}.txt", sentence)]
    out += [("tool", "docker run -d --name mysql -e POSTGRES_PASSWORD=postgres -p3306:3306 mysql:8 && "
                     "docker compose up -d postgres", "started"),
            ("assistant", "Next I'll write docs/postgres.md for the staging cluster.")]
    return out


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS + [PATH_TOKEN] if s in text]


def run(*args: str, stdin: str = "") -> tuple[int, str]:
    old = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = io.StringIO(), io.StringIO(), io.StringIO(stdin)
    try:
        code = main(list(args))
        return code, sys.stdout.getvalue() + "\n" + sys.stderr.getvalue()
    finally:
        sys.stdout, sys.stderr, sys.stdin = old


@pytest.fixture(scope="module")
def standin():
    server = StandIn()
    yield server
    server.close()


@pytest.mark.parametrize("place", ["user", "assistant", "tool"])
@pytest.mark.parametrize("harness", HARNESSES)
def test_every_form_is_masked_in_every_output(tmp_path, monkeypatch, standin, harness, place):
    root = tmp_path / "staging"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("DUCK_TAPE_ENGINE", "DUCK_TAPE_MODEL", "DUCK_TAPE_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    sid = session_id(harness, 7)
    # the transcript's own folder holds a token (issue 22 item 6)
    transcript = write_session(harness, tmp_path / PATH_TOKEN, session=sid, cwd=str(root), turns=turns(place))
    printed: dict[str, str] = {}
    printed["extract-raw"] = run("extract-raw", str(transcript))[1]
    code, printed["checkpoint"] = run("checkpoint", "--dir", ".duck-tape",
                                      stdin=precompact(harness, session=sid, transcript=transcript, cwd=str(root)))
    assert code == 0 and "rote .duck-tape/" in printed["checkpoint"]  # Gemini CLI: {"systemMessage": "duck-tape: wrote …"}
    start = session_start(harness, session=sid, transcript=transcript, cwd=str(root))
    printed["restore"] = run("restore", "--dir", ".duck-tape", *([] if start else ["--session", sid]), stdin=start)[1]
    printed["restore-json"] = run("restore", "--json", "--session", sid)[1]
    printed["resume"] = run("resume", "--session", sid, "--dry-run", "--context", "CONTEXT.md")[1]
    code, printed["recover"] = run("recover", str(transcript), "--yes", "--mask", "--merge", "--context", "CONTEXT.md")
    assert code == 0
    standin.script(*([echo_step] * 8))
    before = len(standin.requests)
    printed["recover-llm"] = run("recover", str(transcript), "--dry-run", "--engine", "llm", "--model",
                                 "openai/gpt-4o-mini", "--api-base", standin.url)[1]
    bodies = standin.requests[before:]
    assert bodies, "the llm engine sent nothing"
    code, printed["batch"] = run("batch", str(transcript.parent), "--out", str(tmp_path / "batch"), "--jobs", "1",
                                 "--engine", "rules", "--mask", "--report", str(tmp_path / "report.json"))
    store = root / ".duck-tape"
    printed["mcp-state"] = json.dumps(tools.masked(tools.best_state(store)))
    printed["mcp-decisions"] = json.dumps(tools.masked(tools.find_decisions(store, root / "CONTEXT.md", query="")))
    assert {label: leaks(text) for label, text in printed.items() if leaks(text)} == {}
    assert [leaks(json.dumps(body, ensure_ascii=False)) for body in bodies if leaks(json.dumps(body))] == []
    # every file written, but the transcript itself and batch's internal cache (which keys its memo by the
    # transcripts' real paths, as the folder on disk names them)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.parent.name != PATH_TOKEN
             and PATH_TOKEN not in p.parent.parent.name and ".cache" not in p.parts]
    written = {str(p.relative_to(tmp_path)): leaks(p.read_text(encoding="utf-8", errors="replace")) for p in files}
    assert {name: hits for name, hits in written.items() if hits} == {}
    assert (store / ".last-compact").is_file() and (store / ".last-checkpoint.json").is_file()
    # not secrets where they stand
    assert [k for k in KEEP if k not in printed["extract-raw"]] == []
    [state] = [p for p in store.glob("*-auto.state.md")]
    text = state.read_text(encoding="utf-8")
    assert "docs/postgres.md" in text and "up -d postgres" in text and "POSTGRES_PASSWORD=<REDACTED>" in text


def test_a_token_in_the_transcript_path_is_masked_where_the_path_is_written(tmp_path, monkeypatch):
    root = tmp_path / "staging"
    root.mkdir()
    monkeypatch.chdir(root)
    sid = session_id("claude-code", 8)
    transcript = write_session("claude-code", tmp_path / PATH_TOKEN, session=sid, cwd=str(root),
                               turns=[("user", TASK), ("assistant", "Next I'll start the databases.")])
    code, out = run("checkpoint", stdin=precompact("claude-code", session=sid, transcript=transcript, cwd=str(root)))
    assert code == 0 and leaks(out) == []
    marker = (root / ".duck-tape" / ".last-compact").read_text()
    assert f"transcript: {tmp_path}/<REDACTED>/{sid}.jsonl" in marker
    record = json.loads((root / ".duck-tape" / ".last-checkpoint.json").read_text())
    assert record["transcript"] == f"{tmp_path}/<REDACTED>/{sid}.jsonl" and leaks(json.dumps(record)) == []
    # the restore of a skipped checkpoint cannot open a masked path: the harness's own payload names the transcript
    for state in (root / ".duck-tape").glob("*.state.md"):
        state.unlink()
    start = session_start("claude-code", session=sid, transcript=transcript, cwd=str(root))
    code, out = run("restore", stdin=start)
    assert code == 0 and "Next I'll start the databases" in out and leaks(out) == []
    assert "distilled its transcript" in out


def test_the_batch_report_masks_a_token_in_a_path(tmp_path):
    folder = tmp_path / PATH_TOKEN
    write_session("claude-code", folder, session=session_id("claude-code", 9), cwd="/home/dev/staging",
                  turns=[("user", TASK), ("assistant", "Next I'll start the databases.")])
    code, out = run("batch", str(tmp_path), "--out", str(tmp_path / "out"), "--jobs", "1", "--engine", "rules",
                    "--report", str(tmp_path / "report.json"))
    assert code == 6 and leaks(out) == []  # the state file would name the path: refused without --mask
    code, out = run("batch", str(tmp_path), "--out", str(tmp_path / "out"), "--jobs", "1", "--engine", "rules",
                    "--mask", "--report", str(tmp_path / "report.json"))
    assert code == 0 and leaks(out) == []
    report = (tmp_path / "report.json").read_text()
    assert "<REDACTED>" in report and leaks(report) == []
    assert [p for p in (tmp_path / "out").rglob("*") if p.is_file() and ".cache" not in p.parts
            and leaks(p.read_text(errors="replace"))] == []


def test_extract_raw_masks_what_the_state_file_masks(tmp_path):
    """Issue 24 item 8: the same masking on every path (a DigitalOcean token in an assistant message leaked in
    extract-raw alone)."""
    sid = session_id("claude-code", 10)
    transcript = write_session("claude-code", tmp_path, session=sid, cwd=str(tmp_path),
                               turns=[("user", "Deploy the droplet."), ("assistant", f"Deployed with {DOP}.")])
    code, out = run("extract-raw", str(transcript))
    assert code == 0 and DOP not in out and "Deployed with [REDACTED]." in out
    code, out = run("recover", str(transcript), "--dry-run", "--mask", "--dir", str(tmp_path / "s"))
    assert DOP not in out
    assert os.environ.get("XDG_STATE_HOME")  # the store key of this test session, never the home folder's
