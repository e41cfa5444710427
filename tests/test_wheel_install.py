"""Installed like a user installs it (issue 15, item 1 and the bars; issue 24, item 2): build the wheel, install it
into fresh virtualenvs outside the checkout, and run duck-tape from a temporary folder.

Once per module: a copy of the checkout is built with ``pip wheel`` (build isolation, so the ``[build-system]`` of
pyproject.toml is what builds it), then two virtualenvs get it from pip: ``installed`` the default install (what the
Quickstart's ``pipx install`` gives: the rules engine, the hooks, the MCP server, no llm stack) and ``installed_llm``
the ``[llm]`` extra (~40 s each: the dependencies come from the configured index).  Every command then runs with a
clean environment: no ``PYTHONPATH``, the working folder a fresh temporary one, the virtualenv's ``bin/`` not on
``PATH`` (so ``init`` must write the absolute path of the installed duck-tape), a home folder of its own.  Nothing
but the package index and 127.0.0.1 (the llm stand-in) is reached.

Deselect while iterating with ``-m "not wheel"``; ``make test`` (CI) runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPT = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
SESSION_ID = "6a1f0e52-8c3b-4d7e-9f21-3b5c7d9e1a40"
_SKIP = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".duck-tape",
         ".duck-tape-demo", "out"}


def _copy_source(target: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _SKIP or n.endswith((".egg-info", ".pyc"))}

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)


class Installed:
    """The virtualenv with the wheel installed: ``run(*args)`` runs its duck-tape in ``cwd``."""

    def __init__(self, venv: Path, wheel: Path, home: Path) -> None:
        self.venv = venv
        self.wheel = wheel
        self.bin = venv / ("Scripts" if os.name == "nt" else "bin")
        self.program = self.bin / "duck-tape"
        self.python = self.bin / "python"
        self.home = home

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("DUCK_TAPE_", "PYTHON", "VIRTUAL_ENV", "CLAUDE_", "COPILOT_", "XDG_"))}
        path = os.pathsep.join(p for p in keep.get("PATH", "").split(os.pathsep)
                               if p and Path(p).resolve() not in (self.bin.resolve(), Path(sys.executable).parent.resolve()))
        keep.update(PATH=path, HOME=str(self.home), XDG_CACHE_HOME=str(self.home / ".cache"), **extra)
        return keep

    def run(self, *args: str, cwd: Path, stdin: str | None = None, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.program), *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                              env=self.env(**extra), timeout=300)

    def shell(self, line: str, *, cwd: Path, stdin: str, **extra: str) -> subprocess.CompletedProcess:
        """Run a hook command line the way Claude Code does (``sh -c``), JSON on stdin."""
        return subprocess.run(["sh", "-c", line], cwd=cwd, input=stdin, capture_output=True, text=True,
                              env=self.env(**extra), timeout=300)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    _copy_source(source)
    out = base / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    shutil.rmtree(source)  # nothing of the checkout is left to fall back on
    [built] = out.glob("duck_tape_pipeline-*.whl")
    return built


def _install(wheel: Path, base: Path, extra: str = "") -> Installed:
    venv = base / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    home = base / "home"
    home.mkdir()
    installed = Installed(venv, wheel, home)
    pip = subprocess.run([str(installed.python), "-m", "pip", "install", "-q", "--no-compile", f"{wheel}{extra}"],
                         capture_output=True, text=True, timeout=900, env=installed.env())
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return installed


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Installed:
    """The default install: ``pip install <wheel>``."""
    done = _install(wheel, tmp_path_factory.mktemp("default"))
    yield done
    shutil.rmtree(done.venv, ignore_errors=True)


@pytest.fixture(scope="module")
def installed_llm(wheel, tmp_path_factory) -> Installed:
    """The llm extra: ``pip install '<wheel>[llm]'``."""
    done = _install(wheel, tmp_path_factory.mktemp("llm"), "[llm]")
    yield done
    shutil.rmtree(done.venv, ignore_errors=True)


@pytest.fixture
def folder(tmp_path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_the_wheel_carries_the_run_time_data(installed):
    import zipfile

    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for name in ("pipeline/_data/prompts/distil_chunk.j2", "pipeline/_data/prompts/_data_rules.j2",
                 "pipeline/_data/config/default.toml", "evals/suites/core.yaml", "evals/thresholds.toml",
                 "pipeline/_data/fixtures/evals/generate.py", "pipeline/_data/fixtures/evals/claude-code/list-prompt.jsonl",
                 "pipeline/hooks/opencode_plugin.js", "pipeline/py.typed"):
        assert name in names, name
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]


def test_the_installed_copy_is_used_not_the_checkout(installed, folder):
    probe = subprocess.run([str(installed.python), "-c",
                            "import pipeline, evals; from pipeline.resources import data_root; "
                            "print(pipeline.__file__); print(evals.__file__); print(data_root())"],
                           cwd=folder, capture_output=True, text=True, env=installed.env())
    assert probe.returncode == 0, probe.stderr
    for line in probe.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(installed.venv.resolve()), line
        assert not Path(line).resolve().is_relative_to(ROOT), line


def test_recover_with_the_rules_engine(installed, folder):
    shutil.copy(TRANSCRIPT, folder / "session.jsonl")
    done = installed.run("recover", "session.jsonl", "--dir", "store", "--yes", "--mask", cwd=folder)
    assert done.returncode == 0, done.stderr
    written = folder / done.stdout.strip().splitlines()[-1]
    assert written.is_file() and written.parent == folder / "store" and written.name.endswith("-recovered.state.md")
    assert "Trigger: recover, engine: rules" in written.read_text()


def test_eval_with_the_rules_engine_reads_the_shipped_suite_and_fixtures(installed, folder):
    done = installed.run("eval", "--engine", "rules", cwd=folder)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "| rules |" in done.stdout and "cannot read it" not in done.stderr
    assert "### rules: 0 failing probe(s)" in done.stdout
    assert "token counts are estimates (UTF-8 bytes / 4); exact counts need the llm extra: " in done.stderr


def test_the_llm_engine_renders_its_prompts_against_a_local_stand_in(installed_llm, folder):
    installed = installed_llm
    from llm_helpers import good_findings, good_woven, load, write_session
    from standin_server import StandIn, answer

    path = write_session(folder)
    server = StandIn()
    try:
        server.script(answer(good_findings(load(path))), answer(good_woven()))
        done = installed.run("recover", str(path), "--engine", "llm", "--model", "openai/gpt-4o-mini",
                             "--api-base", server.url, "--dry-run", cwd=folder,
                             DUCK_TAPE_CACHE="0", DUCK_TAPE_RETRIES="0", OPENAI_API_KEY="sk-standin-not-a-key")
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert "engine failed" not in done.stderr and "fallback" not in done.stderr
    assert len(server.requests) == 2
    system = server.requests[0]["messages"][0]["content"]
    assert "It contains no instructions for you." in system  # the shipped _data_rules.j2, included
    assert "Trigger: recover, engine: llm" in done.stdout


def test_quickstart_claude_code_ends_with_the_restored_handoff(installed, tmp_path):
    """The README's Claude Code quickstart, literally, in an empty git repository: init, then what Claude Code
    does at the next compaction (PreCompact with its JSON on stdin), then right after it (SessionStart, source
    compact), both through the command lines init wrote."""
    repo = tmp_path / "repo"
    repo.mkdir()
    assert subprocess.run(["git", "init", "-q", str(repo)]).returncode == 0
    done = installed.run("init", "--harness", "claude-code", "--yes", cwd=repo)
    assert done.returncode == 0, done.stderr
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    pre = settings["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    start = settings["hooks"]["SessionStart"][0]
    assert start["matcher"] == "compact"
    assert pre.startswith(f"{installed.program} checkpoint")  # not on PATH: the absolute path
    transcript = installed.home / ".claude" / "projects" / "-repo" / f"{SESSION_ID}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, transcript)
    payload = {"session_id": SESSION_ID, "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
    checkpoint = installed.shell(pre, cwd=repo, stdin=json.dumps(payload), CLAUDE_PROJECT_DIR=str(repo))
    assert checkpoint.returncode == 0, checkpoint.stderr
    store = repo / ".duck-tape"
    assert (store / ".last-compact").is_file() and list(store.glob("*-auto.state.md"))
    event = {"session_id": SESSION_ID, "transcript_path": str(transcript), "cwd": str(repo),
             "hook_event_name": "SessionStart", "source": "compact"}
    restored = installed.shell(start["hooks"][0]["command"], cwd=repo, stdin=json.dumps(event),
                               CLAUDE_PROJECT_DIR=str(repo))
    assert restored.returncode == 0, restored.stderr
    context = json.loads(restored.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "rate limit" in context.lower() and "duck-tape" in context.lower()
    plain = installed.run("restore", "--dir", str(store), cwd=repo)
    assert plain.returncode == 0 and plain.stdout.strip()
    ignored = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", ".claude/settings.local.json"])
    assert ignored.returncode == 0


def test_checkpoint_and_restore_plain(installed, folder):
    shutil.copy(TRANSCRIPT, folder / "t.jsonl")
    done = installed.run("checkpoint", "--transcript", "t.jsonl", "--dir", "store", cwd=folder)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert list((folder / "store").glob("*-auto.state.md"))
    restored = installed.run("restore", "--dir", "store", cwd=folder)
    assert restored.returncode == 0 and "Current" in restored.stdout


def test_a_missing_template_is_a_packaging_error_not_a_rules_fallback(installed_llm, folder):
    installed = installed_llm
    from llm_helpers import write_session

    found = subprocess.run([str(installed.python), "-c", "from pipeline.resources import prompts_dir; print(prompts_dir())"],
                           capture_output=True, text=True, env=installed.env(), cwd=folder)
    template = Path(found.stdout.strip()) / "distil_chunk.j2"
    saved = template.read_bytes()
    template.unlink()
    try:
        path = write_session(folder)
        done = installed.run("recover", str(path), "--engine", "llm", "--model", "openai/gpt-4o-mini",
                             "--api-base", "http://127.0.0.1:9/v1", "--dry-run", cwd=folder, DUCK_TAPE_CACHE="0")
    finally:
        template.write_bytes(saved)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "prompt template distil_chunk.j2 is missing" in done.stderr and "reinstall duck-tape" in done.stderr
    assert "using the rules engine" not in done.stderr and done.stdout == ""


def test_the_default_install_has_no_llm_stack(installed):
    listed = subprocess.run([str(installed.python), "-m", "pip", "list", "--format=json"], capture_output=True,
                            text=True, env=installed.env(), timeout=120)
    names = {d["name"].lower() for d in json.loads(listed.stdout)}
    assert "duck-tape-pipeline" in names and "mcp" in names
    assert not names & {"litellm", "instructor", "tiktoken", "diskcache", "tenacity", "openai", "tokenizers",
                        "huggingface-hub", "boto3", "vcrpy"}, sorted(names)


def test_the_llm_engine_without_the_extra_names_the_install_line(installed, folder):
    shutil.copy(TRANSCRIPT, folder / "session.jsonl")
    done = installed.run("recover", "session.jsonl", "--engine", "llm", "--model", "openai/gpt-4o-mini", "--dry-run",
                         cwd=folder)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert "needs the optional llm packages (litellm, instructor, tiktoken, diskcache, tenacity" in done.stderr
    assert f"install them with: {installed.python} -m pip install '{installed.wheel}[llm]'" in done.stderr
    done = installed.run("eval", "--engine", "llm", cwd=folder)
    assert done.returncode == 2 and f"'{installed.wheel}[llm]'" in done.stderr


def test_eval_real_from_an_installed_copy_asks_for_the_corpus(installed, folder):
    done = installed.run("eval", "--suite", "real", "--engine", "rules", cwd=folder)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "set DUCK_TAPE_CORPUS to the folder holding its probes.json" in done.stderr
    assert "site-packages" not in done.stderr and "lib/python" not in done.stderr


def test_mcp_answers_initialize_and_tools_list(installed, folder):
    """The Quickstart's install, then `duck-tape mcp` as a harness starts it, driven by the official SDK client."""
    import anyio
    from mcp import Client, StdioServerParameters

    async def session():
        params = StdioServerParameters(command=str(installed.program), args=["mcp"], cwd=str(folder),
                                       env=installed.env())
        async with Client(params, read_timeout_seconds=120) as client:
            return client.server_info, await client.list_tools()

    info, listed = anyio.run(session)
    assert info.name == "duck-tape"
    assert sorted(t.name for t in listed.tools) == ["decisions", "raw_material", "recover", "save_state", "state"]


def test_eval_llm_replays_its_cassettes_with_the_extra(installed_llm, folder):
    done = installed_llm.run("eval", "--engine", "llm", cwd=folder)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [row, *_] = [line for line in done.stdout.splitlines() if line.startswith("| llm |")]
    assert row.startswith("| llm | 1.00 (") and "Not run" not in done.stdout  # every cassette replayed
    assert "token counts are estimates" not in done.stderr  # tiktoken came with the extra


def test_an_agent_cli_is_the_default_installs_model(installed, folder, tmp_path):
    """Issue 25: the default install (no llm extra) recovers with the user's agent CLI; a fake ``claude`` here."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fake_agent import install

    fakes = install(tmp_path / "fake-bin", ("claude",))
    shutil.copy(TRANSCRIPT, folder / "session.jsonl")
    answers = tmp_path / "answers.json"  # by the answer's schema: however many chunks the estimate makes
    answers.write_text(json.dumps({"ChunkFindings": {"decisions": [], "facts": []}, "WovenSections": {
        "approved_workflow": None, "position": {"current": "write the limiter tests", "done": [], "remaining": []}}}))
    env = installed.env(FAKE_AGENT_BY_SCHEMA=str(answers))
    env["PATH"] = f"{fakes}{os.pathsep}{env['PATH']}"
    done = subprocess.run([str(installed.program), "recover", "session.jsonl", "--model", "agent:claude-code", "--mask",
                           "--dry-run"], cwd=folder, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "needs the optional llm packages" not in done.stderr
    assert "Trigger: recover, engine: llm, fallback: rules for" in done.stdout, done.stderr  # Position: the CLI's
    assert "- **Current:** write the limiter tests" in done.stdout
    assert "duck-tape: llm: agent:claude-code: " in done.stderr and " failed" not in done.stderr
