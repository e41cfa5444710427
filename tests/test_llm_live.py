"""The llm engine live against the local stand-in (127.0.0.1 only) and through the CLI: the cases a cassette cannot
replay (a timeout leaves nothing to record; a refused connection never reaches a server), the done-when commands of
issue 4, and the promise that the rules and hook paths never import litellm.

Network access is blocked in these tests except for 127.0.0.1 (pytest-recording's ``block_network`` mark).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from store_kit import mark_as_store
from llm_helpers import (
    MODEL,
    good_findings,
    good_woven,
    llm_config,
    load,
    standin,  # noqa: F401 - fixture
    write_session,
)
from standin_server import answer, delay

from pipeline.cli import main
from pipeline.recovery import recover
from pipeline.state.marker import Marker
from pipeline.state.parse import parse

pytestmark = pytest.mark.block_network(allowed_hosts=["127.0.0.1"])
NOW = datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)
ROOT = Path(__file__).resolve().parent.parent
UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there, the connection is refused


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No DUCK_TAPE_* from the developer's shell; the cache in tmp; no backoff wait."""
    for name in list(os.environ):
        if name.startswith("DUCK_TAPE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DUCK_TAPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DUCK_TAPE_RETRY_WAIT", "0")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_timeout_is_retried(standin, tmp_path):
    path = write_session(tmp_path)
    t = load(path)
    standin.script(delay(6.0, answer(good_findings(t))), answer(good_findings(t)), answer(good_woven()))
    result = recover(str(path), config=llm_config(standin.url, timeout=1.5), mask=True, now=NOW)
    assert len(standin.requests) == 3
    assert standin.requests[0] == standin.requests[1]  # the same request, sent again after the timeout
    assert parse(result.text).trigger == "recover, engine: llm"
    assert result.run.usage.failed == 1 and result.run.usage.requests == 2


def test_timeouts_exhausted_fall_back(standin, tmp_path):
    path = write_session(tmp_path)
    t = load(path)
    standin.script(*[delay(2.0, answer(good_findings(t)))] * 2)
    result = recover(str(path), config=llm_config(standin.url, timeout=0.3, retries=1), mask=True, now=NOW)
    assert len(standin.requests) == 2
    assert parse(result.text).trigger == "recover, engine: rules"
    assert "timed out after retries" in result.notes[0]


def test_backoff_is_exponential_between_transport_retries(standin):
    from pipeline.llm.client import LiteLLMClient
    from pipeline.stages.llm.schemas import WovenSections
    from standin_server import error

    waits: list[float] = []
    standin.script(error(500), error(503), error(429), answer(good_woven()))
    client = LiteLLMClient(llm_config(standin.url, retry_wait=1.5, retries=3), sleep=waits.append)
    woven = client.complete([{"role": "user", "content": "where do we stand?"}], WovenSections, stage="weave_state")
    assert woven.position.current == "Add the test for /healthz"
    assert waits == [1.5, 3.0, 6.0]
    assert client.usage.failed == 3 and client.usage.requests == 1


def test_recover_unreachable_prints_the_rules_state_and_says_so(capsys, tmp_path, clean_env):
    path = write_session(tmp_path)
    code, out, err = cli(capsys, "recover", str(path), "--engine", "llm", "--model", MODEL, "--api-base", UNREACHABLE,
                         "--dry-run")
    assert code == 0
    state = parse(out)
    assert state.trigger == "recover, engine: rules"
    assert len(state.decisions) >= 2
    lines = [line for line in err.splitlines() if line.startswith("duck-tape: llm")]
    assert len(lines) == 1  # the rest of stderr is the preview's redaction report
    assert "API call failed" not in err and "Traceback" not in err
    assert lines[0].startswith(f"duck-tape: llm: provider unreachable ({MODEL} at {UNREACHABLE}): ")
    assert lines[0].endswith("; using the rules engine")


def test_recover_llm_without_a_model_says_so(capsys, tmp_path, clean_env):
    path = write_session(tmp_path)
    code, out, err = cli(capsys, "recover", str(path), "--engine", "llm", "--dry-run")
    assert code == 0 and parse(out).trigger == "recover, engine: rules"
    assert [line for line in err.splitlines() if "llm" in line] == ["duck-tape: llm: no model configured: set DUCK_TAPE_MODEL or pass --model; "
                                "using the rules engine"]


def test_recover_against_the_standin_writes_grounded_entries(capsys, tmp_path, clean_env, standin):
    path = write_session(tmp_path)
    t = load(path)
    standin.script(answer(good_findings(t)), answer(good_woven()))
    store = tmp_path / "store"
    code, out, err = cli(capsys, "recover", str(path), "--engine", "llm", "--model", MODEL, "--api-base", standin.url,
                         "--dir", str(store), "--yes", "--mask")
    assert code == 0
    written = Path(out.splitlines()[-1])
    state = parse(written.read_text(encoding="utf-8"))
    assert state.trigger == "recover, engine: llm"
    assert [d.what for d in state.decisions] == ["plain Flask /healthz route returning the git SHA",
                                                 "plain /healthz route", "flask-healthz library"]
    for d in state.decisions:  # every entry is grounded in the transcript it came from
        assert " ".join(d.what.split()) and d.timestamp.startswith("2026-09-01T10:0")
    # the usage line closes the llm's report; recover then says how to continue (issue 14)
    assert err.splitlines()[-2].startswith(f"duck-tape: llm: {MODEL}: 2 request(s), 0 cached, ")
    assert err.splitlines()[-1] == f"duck-tape: to continue from it, run: duck-tape resume --dir {store}"
    assert "est. cost $" in err
    code, out, err = cli(capsys, "recover", str(path), "--engine", "llm", "--model", MODEL, "--api-base", standin.url,
                         "--dry-run")
    assert len(standin.requests) == 2  # the rerun came from the cache
    assert f"duck-tape: llm: {MODEL}: 0 request(s), 2 cached" in err


def test_max_tokens_flag_caps_the_run(capsys, tmp_path, clean_env, standin):
    path = write_session(tmp_path)
    code, out, err = cli(capsys, "recover", str(path), "--model", MODEL, "--api-base", standin.url,
                         "--max-tokens", "100", "--dry-run")
    assert code == 0
    assert standin.requests == []
    assert parse(out).trigger == "recover, engine: rules"
    assert "--max-tokens 100 reached" in err


def test_resume_recovers_with_the_llm_engine(capsys, tmp_path, clean_env, standin):
    path = write_session(tmp_path)
    t = load(path)
    standin.script(answer(good_findings(t)), answer(good_woven()))
    store = tmp_path / ".duck-tape"
    mark_as_store(store, Marker(time="2026-09-01T10:07:00Z", cwd="/srv/orders", transcript=str(path)))
    code, out, err = cli(capsys, "resume", "--dir", str(store), "--context", str(tmp_path / "none.md"),
                         "--engine", "llm", "--model", MODEL, "--api-base", standin.url, "--dry-run")
    assert code == 0
    assert "Trigger: recover, engine: llm" in out
    assert "Current: Add the test for /healthz" in out
    assert len(standin.requests) == 2


PROBE = (
    "import sys; from pipeline.entry import main; code = main(sys.argv[1:]); "
    "print('\\nIMPORTED:', sorted(m for m in ('litellm', 'instructor', 'openai', 'tiktoken', 'diskcache', 'jinja2') "
    "if m in sys.modules))"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["recover", "{cc}", "--engine", "rules", "--dry-run"],
        ["recover", "{cc}", "--dry-run"],  # auto without a model
        ["recover", "{cc}", "--engine", "rules", "--model", MODEL, "--dry-run"],
        ["extract-raw", "{cc}"],
    ],
)
def test_rules_and_hook_paths_never_import_litellm(argv, tmp_path):
    cc = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_TAPE_")}
    env["DUCK_TAPE_CACHE_DIR"] = str(tmp_path / "cache")
    args = [a.format(cc=cc) for a in argv]
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "IMPORTED: []"
    assert "litellm" not in proc.stderr
