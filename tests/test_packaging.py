"""Package data and its look-up (issue 15, item 1), in process: pyproject.toml lists every package and maps
every data folder, ``pipeline.resources`` finds the files, and a missing template stops the llm engine with a
packaging error (exit 1) instead of a silent rules fallback.  The installed wheel itself: test_wheel_install.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

from pipeline import resources
from pipeline.cli import main
from pipeline.llm import prompts

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_python_package_is_listed_in_pyproject():
    found = set(find_packages(str(ROOT), include=["pipeline", "pipeline.*", "evals", "evals.*"]))
    listed = set(PYPROJECT["packages"])
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_every_data_folder_is_mapped_and_its_patterns_match_files():
    assert PYPROJECT["package-dir"] == {"pipeline._data.prompts": "prompts", "pipeline._data.config": "config",
                                        "pipeline._data.fixtures": "fixtures"}
    for package, patterns in PYPROJECT["package-data"].items():
        folder = ROOT / PYPROJECT["package-dir"].get(package, package.replace(".", "/"))
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches nothing in {folder}"


def test_every_fixture_the_core_suite_names_is_shipped():
    import fnmatch

    from evals.suite import load_suite

    patterns = PYPROJECT["package-data"]["pipeline._data.fixtures"]
    suite = load_suite(str(resources.evals_path("suites/core.yaml")))
    for case in suite.cases:
        if case.generator:
            continue
        relative = Path(case.transcript).relative_to("fixtures").as_posix()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), case.transcript


def test_the_checkout_is_the_data_root_when_running_from_source():
    assert resources.data_root() == ROOT
    assert resources.prompts_dir() == ROOT / "prompts"
    assert resources.evals_path("suites/core.yaml") == ROOT / "evals" / "suites" / "core.yaml"


def test_a_missing_data_file_names_itself():
    with pytest.raises(resources.PackagingError, match="prompts/nothing.j2: this file ships with duck-tape"):
        resources.data_path("prompts/nothing.j2")
    assert resources.PackagingError("x").exit_code == 1


def test_a_missing_template_is_exit_1_with_a_clear_message_not_a_rules_fallback(tmp_path, monkeypatch, capsys):
    from llm_helpers import write_session

    monkeypatch.setattr(prompts, "prompts_dir", lambda: tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    path = write_session(tmp_path)
    code = main(["recover", str(path), "--engine", "llm", "--model", "openai/gpt-4o-mini",
                 "--api-base", "http://127.0.0.1:9/v1", "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"prompt template distil_chunk.j2 is missing from {tmp_path / 'empty'}" in err
    assert "using the rules engine" not in err


def test_a_missing_partial_is_a_packaging_error_too(tmp_path):
    from pipeline.stages.llm.schemas import ChunkFindings

    (tmp_path / "t.j2").write_text('{% block system %}{% include "_gone.j2" %}{% endblock %}{% block user %}u'
                                   '{% endblock %}')
    with pytest.raises(resources.PackagingError, match="prompt template _gone.j2 is missing"):
        prompts.render("t", response_model=ChunkFindings, model="m", params={}, directory=str(tmp_path))
