"""Issue 24, item 2: the default install has no llm stack.  Every command a user runs after the Quickstart works
without litellm, instructor, tiktoken, diskcache, tenacity and vcrpy; what needs them stops with exit 2
naming the line that installs the ``llm`` extra.

Each test runs duck-tape in a child Python whose imports of those packages fail (a ``sys.meta_path`` finder that
refuses them), as in a fresh ``pipx install`` without ``[llm]``; ``tests/test_wheel_install.py`` does the same with
real installs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import extras

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
LLM_STACK = ("litellm", "instructor", "tiktoken", "diskcache", "jinja2", "tenacity", "vcr", "openai", "tokenizers",
             "huggingface_hub", "boto3")

WITHOUT_LLM = f"""
import sys
BLOCKED = {LLM_STACK!r}
TRIED = set()

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            TRIED.add(name.split(".")[0])
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: no llm extra)", name=name)
        return None

sys.meta_path.insert(0, Refuse())
from pipeline.cli import main
code = main(sys.argv[1:])
print("TRIED:" + ",".join(sorted(TRIED)), file=sys.stderr)
sys.exit(code)
"""


def without_llm(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DUCK_TAPE_")}
    return subprocess.run([sys.executable, "-c", WITHOUT_LLM, *args], cwd=cwd, capture_output=True, text=True,
                          env={**clean, "PYTHONPATH": str(ROOT), "HOME": str(cwd), **env}, timeout=300)


def tried(done: subprocess.CompletedProcess) -> str:
    """The blocked packages the command looked for (imported or asked ``find_spec`` about), comma-separated."""
    return done.stderr.rsplit("TRIED:", 1)[1].strip()


def test_recover_resume_status_verify_and_eval_rules_need_no_llm_package(tmp_path):
    done = without_llm("recover", str(CC), "--dir", "store", "--yes", "--mask", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert tried(done) == "" and list((tmp_path / "store").glob("*-recovered.state.md"))
    for args in (["resume"], ["status"], ["verify", str(CC)], ["extract-raw", str(CC)], ["batch", str(CC), "--out", "out"]):
        done = without_llm(*args, cwd=tmp_path)
        assert done.returncode in (0, 1), (args, done.stderr)  # status: 1 = no hook installed here
        assert "Traceback" not in done.stderr and tried(done) == "", args
    done = without_llm("eval", "--engine", "rules", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| rules |" in done.stdout and tried(done) == "litellm,tiktoken"  # asked whether exact counts can be made
    assert "duck-tape: eval: token counts are estimates (UTF-8 bytes / 4); exact counts need the llm extra: " in done.stderr


def test_the_llm_engine_without_its_packages_is_exit_2_naming_the_install_line(tmp_path):
    done = without_llm("recover", str(CC), "--engine", "llm", "--model", "openai/gpt-4o-mini", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert ("duck-tape: error: --engine llm (model openai/gpt-4o-mini) needs the optional llm packages (litellm, "
            "instructor, tiktoken, diskcache, tenacity not installed): install them with: ") in done.stderr
    assert f"'{ROOT}[llm]'" in done.stderr  # from this checkout
    done = without_llm("batch", str(CC), "--out", "out", "--engine", "llm", "--model", "openai/gpt-4o-mini", cwd=tmp_path)
    assert done.returncode == 2 and "batch with the llm engine (model openai/gpt-4o-mini) needs the optional llm" in done.stderr
    done = without_llm("eval", "--engine", "llm", cwd=tmp_path)
    assert done.returncode == 2
    assert "engine 'llm' cannot run: its optional packages are not installed (litellm, " in done.stderr
    done = without_llm("eval", "--engine", "all", "--suite", str(ROOT / "evals" / "suites" / "core.yaml"), cwd=tmp_path)
    assert "Not run: llm: its optional packages are not installed" in done.stdout


def test_status_names_a_configured_model_without_the_llm_packages(tmp_path):
    done = without_llm("status", "--json", cwd=tmp_path, DUCK_TAPE_MODEL="openai/gpt-4o-mini")
    problems = json.loads(done.stdout)["problems"]
    assert any(p.startswith("the llm engine is configured (model openai/gpt-4o-mini) but its optional packages are "
                            "not installed (litellm, ") and p.endswith(f"'{ROOT}[llm]'") for p in problems), problems


@pytest.mark.parametrize("origin, prefix, line", [
    (("/home/me/src/duck-tape", False), "/home/me/.local/share/pipx/venvs/duck-tape-pipeline",
     "pipx install --force '/home/me/src/duck-tape[llm]'"),
    (("git+https://github.com/example/duck-tape@v0.2", False), "/home/me/.local/pipx/venvs/duck-tape-pipeline",
     "pipx install --force 'duck-tape-pipeline[llm] @ git+https://github.com/example/duck-tape@v0.2'"),
    (("/work/duck-tape", True), "/work/duck-tape/.venv", "{python} -m pip install -e '/work/duck-tape[llm]'"),
    (("/tmp/dist/duck_tape_pipeline-0.1.0-py3-none-any.whl", False), "/opt/venv",
     "{python} -m pip install '/tmp/dist/duck_tape_pipeline-0.1.0-py3-none-any.whl[llm]'"),
])
def test_install_line_follows_where_this_copy_came_from(monkeypatch, origin, prefix, line):
    monkeypatch.setattr(extras, "_origin", lambda: origin)
    monkeypatch.setattr(sys, "prefix", prefix)
    assert extras.install_line() == line.format(python=sys.executable)


def test_origin_reads_direct_url_json(monkeypatch):
    import importlib.metadata

    class Dist:
        def __init__(self, text):
            self.text = text

        def read_text(self, name):
            assert name == "direct_url.json"
            return self.text

    cases = [
        ('{"url": "file:///home/me/src/duck%20tape", "dir_info": {}}', ("/home/me/src/duck tape", False)),
        ('{"url": "file:///home/me/src/duck-tape", "dir_info": {"editable": true}}', ("/home/me/src/duck-tape", True)),
        ('{"url": "https://github.com/example/duck-tape", "vcs_info": {"vcs": "git", "commit_id": "abc", '
         '"requested_revision": "main"}}', ("git+https://github.com/example/duck-tape@main", False)),
    ]
    for text, want in cases:
        extras._origin.cache_clear()
        monkeypatch.setattr(importlib.metadata, "distribution", lambda name, text=text: Dist(text))
        assert extras._origin() == want
    extras._origin.cache_clear()


def test_a_pipx_virtualenv_anywhere_is_told_by_its_metadata_file(monkeypatch, tmp_path):
    """Trial: PIPX_HOME=/tmp/wt/pipxhome gave a `python -m pip install` line for a pipx-managed copy."""
    venv = tmp_path / "pipxhome" / "venvs" / "duck-tape-pipeline"
    venv.mkdir(parents=True)
    (venv / "pipx_metadata.json").write_text("{}")
    monkeypatch.setattr(extras, "_origin", lambda: ("/src/duck-tape", False))
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert extras.install_line() == "pipx install --force '/src/duck-tape[llm]'"
