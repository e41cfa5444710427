"""Config precedence (STYLE.md habit 9): flag > environment DUCK_TAPE_* > config file > default, in one function."""

from __future__ import annotations

import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from pipeline.config import DEFAULT_FILE, DEFAULTS, KEYS, Config, config_file, env_name, read_file, resolve
from pipeline.errors import InputError


def test_each_layer_wins_over_the_ones_below_it():
    file_values = {"model": "file/model", "engine": "rules", "timeout": 30, "retries": 5}
    env = {"DUCK_TAPE_MODEL": "env/model", "DUCK_TAPE_ENGINE": "llm", "DUCK_TAPE_TIMEOUT": "12.5"}
    flags = {"model": "flag/model", "engine": None, "timeout": None}
    config, sources = resolve(flags, env, file_values)
    assert config.model == "flag/model" and sources["model"] == "flag"
    assert config.engine == "llm" and sources["engine"] == "env"  # a None flag is "not given"
    assert config.timeout == 12.5 and sources["timeout"] == "env"
    assert config.retries == 5 and sources["retries"] == "file"
    assert config.reasks == DEFAULTS.reasks and sources["reasks"] == "default"


def test_empty_environment_value_counts_as_unset():
    config, sources = resolve({}, {"DUCK_TAPE_MODEL": ""}, {"model": "file/model"})
    assert config.model == "file/model"
    assert sources["model"] == "file"


def test_conversions_from_strings():
    env = {
        "DUCK_TAPE_CACHE": "off",
        "DUCK_TAPE_MAX_TOKENS": "0",
        "DUCK_TAPE_TOKEN_BUDGET": "8000",
        "DUCK_TAPE_MODE": "JSON",
        "DUCK_TAPE_CACHE_DIR": "  /tmp/dt-cache  ",
        "DUCK_TAPE_API_BASE": "http://127.0.0.1:11434/v1",
    }
    config, _ = resolve({}, env, {})
    assert config.cache is False
    assert config.max_tokens is None  # 0 = no cap
    assert config.token_budget == 8000
    assert config.mode == "json"
    assert config.cache_dir == "/tmp/dt-cache"
    assert config.api_base == "http://127.0.0.1:11434/v1"
    config, _ = resolve({"max_tokens": 5000}, {}, {})
    assert config.max_tokens == 5000


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DUCK_TAPE_TIMEOUT": "soon"}, "DUCK_TAPE_TIMEOUT='soon': not a number"),
        ({"DUCK_TAPE_ENGINE": "gpt"}, "DUCK_TAPE_ENGINE='gpt': not one of rules, llm, auto"),
        ({"DUCK_TAPE_RETRIES": "-1"}, "DUCK_TAPE_RETRIES='-1': must be at least 0"),
        ({"DUCK_TAPE_CACHE": "maybe"}, "DUCK_TAPE_CACHE='maybe': not a boolean"),
        ({"DUCK_TAPE_TOKEN_BUDGET": "12.5"}, "DUCK_TAPE_TOKEN_BUDGET='12.5': not a whole number"),
    ],
)
def test_bad_values_name_their_source(env, message):
    with pytest.raises(InputError) as err:
        resolve({}, env, {})
    assert message in str(err.value)
    assert err.value.exit_code == 2


def test_bad_flag_and_file_values_name_their_source():
    with pytest.raises(InputError, match=r"--max-tokens=-3"):
        resolve({"max_tokens": -3}, {}, {})
    with pytest.raises(InputError, match=r"\[llm\]\.mode='xml'"):
        resolve({}, {}, {"mode": "xml"})
    with pytest.raises(InputError, match="unknown config key"):
        resolve({"colour": "red"}, {}, {})


def test_default_toml_agrees_with_the_builtin_defaults():
    table = tomllib.loads(DEFAULT_FILE.read_text(encoding="utf-8"))["llm"]
    assert set(table) == set(KEYS)
    from_file, sources = resolve({}, {}, table)
    assert asdict(from_file) == asdict(DEFAULTS)
    assert set(sources.values()) == {"file"}


def test_config_file_from_env_and_its_errors(tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text('[llm]\nmodel = "ollama/llama3.1"\napi_base = "http://127.0.0.1:11434"\n[batch]\nworkers = 4\n')
    assert config_file({"DUCK_TAPE_CONFIG": str(good)}) == good
    config, sources = resolve({}, {"DUCK_TAPE_CONFIG": str(good)})
    assert config.model == "ollama/llama3.1" and sources["model"] == "file"
    assert config.effective_engine() == "llm"  # auto + a model
    with pytest.raises(InputError, match="does not exist"):
        resolve({}, {"DUCK_TAPE_CONFIG": str(tmp_path / "missing.toml")})
    bad = tmp_path / "bad.toml"
    bad.write_text("[llm]\nmodle = 'typo'\n")
    with pytest.raises(InputError, match="unknown key.*modle"):
        read_file(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("[llm\n")
    with pytest.raises(InputError, match="not valid TOML"):
        read_file(broken)


def test_effective_engine_and_cache_path():
    assert Config().effective_engine() == "rules"
    assert Config(model="openai/gpt-4o-mini").effective_engine() == "llm"
    assert Config(engine="rules", model="openai/gpt-4o-mini").effective_engine() == "rules"
    assert Config(engine="llm").effective_engine() == "llm"  # and the engine then says no model is configured
    assert Config().cache_path({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/duck-tape/llm")
    assert Config(cache_dir="/y").cache_path({"XDG_CACHE_HOME": "/x"}) == Path("/y")


def test_env_names():
    assert env_name("model") == "DUCK_TAPE_MODEL"
    assert env_name("cache_dir") == "DUCK_TAPE_CACHE_DIR"
