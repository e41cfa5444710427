"""Config where people look for it (issue 15, item 6): flag > env > project > user > config file > default."""

from __future__ import annotations

import pytest

from pipeline.config import DEFAULTS, resolve, resolve_with_sources, user_file
from pipeline.errors import InputError


@pytest.fixture
def places(tmp_path):
    home, xdg, root = tmp_path / "home", tmp_path / "xdg", tmp_path / "proj"
    for folder in (home, root / ".duck-tape", xdg / "duck-tape"):
        folder.mkdir(parents=True)
    shipped = tmp_path / "shipped.toml"
    shipped.write_text('[llm]\nmodel = "file/model"\ntimeout = 11\nretries = 7\nreasks = 1\ncache_size_mb = 9\n')
    (xdg / "duck-tape" / "config.toml").write_text('[llm]\nmodel = "user/model"\ntimeout = 22\nretries = 8\nreasks = 0\n')
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.duck-tape.llm]\nmodel = "pyproject/model"\n'
                                         'timeout = 33\nretries = 9\n')
    (root / ".duck-tape" / "config.toml").write_text('[llm]\nmodel = "project/model"\ntimeout = 44\n')
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg), "DUCK_TAPE_CONFIG": str(shipped)}
    return env, root


def test_every_layer_wins_over_the_ones_below(places):
    env, root = places
    env = {**env, "DUCK_TAPE_TOKEN_BUDGET": "900"}
    config, sources = resolve({"token_budget": None, "max_output_tokens": 77}, env, root=root)
    assert (config.max_output_tokens, sources["max_output_tokens"]) == (77, "flag")
    assert (config.token_budget, sources["token_budget"]) == (900, "env")
    assert (config.model, sources["model"]) == ("project/model", "project")  # .duck-tape/config.toml first
    assert (config.timeout, sources["timeout"]) == (44.0, "project")
    assert (config.retries, sources["retries"]) == (9, "project")  # then pyproject [tool.duck-tape]
    assert (config.reasks, sources["reasks"]) == (0, "user")
    assert (config.cache_size_mb, sources["cache_size_mb"]) == (9, "file")
    assert (config.mode, sources["mode"]) == (DEFAULTS.mode, "default")


def test_status_labels_name_the_exact_place(places):
    env, root = places
    _, labels = resolve_with_sources(env=env, root=root)
    assert labels["model"] == f"project: {root / '.duck-tape' / 'config.toml'} [llm].model"
    assert labels["retries"] == f"project: {root / 'pyproject.toml'} [tool.duck-tape] [llm].retries"
    assert labels["reasks"].startswith("user: ") and labels["reasks"].endswith("duck-tape/config.toml [llm].reasks")
    assert labels["mode"] == "default: built-in"


def test_user_file_is_xdg_then_dot_config():
    assert str(user_file({"XDG_CONFIG_HOME": "/x", "HOME": "/h"})) == "/x/duck-tape/config.toml"
    assert str(user_file({"HOME": "/h"})) == "/h/.config/duck-tape/config.toml"


def test_a_bad_project_file_is_named(places):
    env, root = places
    (root / ".duck-tape" / "config.toml").write_text("[llm]\nmodle = 'typo'\n")
    with pytest.raises(InputError, match=r"config.toml: unknown key\(s\) in \[llm\]: modle"):
        resolve({}, env, root=root)
    (root / ".duck-tape" / "config.toml").unlink()
    (root / "pyproject.toml").write_text("[tool.duck-tape.llm]\ntimeout = 'soon'\n")
    with pytest.raises(InputError, match=r"pyproject.toml \[tool.duck-tape\] \[llm\].timeout='soon': not a number"):
        resolve({}, env, root=root)


def test_a_pyproject_without_our_table_is_ignored(places):
    env, root = places
    (root / ".duck-tape" / "config.toml").unlink()
    (root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    config, sources = resolve({}, env, root=root)
    assert (config.model, sources["model"]) == ("user/model", "user")
