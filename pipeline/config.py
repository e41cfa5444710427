"""Configuration of the engines: one function, ``resolve``, applies the precedence (STYLE.md habit 9).

Per key, highest first: command-line flag > environment ``DUCK_TAPE_<KEY>`` > the project's config > the user's
config > the config file > built-in default.

* project: ``.duck-tape/config.toml`` in the project folder (the working folder), then the
  ``[tool.duck-tape.llm]`` table of its ``pyproject.toml``;
* user: ``$XDG_CONFIG_HOME/duck-tape/config.toml``, else ``~/.config/duck-tape/config.toml``;
* config file: ``$DUCK_TAPE_CONFIG`` when set (it must exist), else the ``config/default.toml`` shipped with
  duck-tape (``pipeline.resources``).

Each file's ``[llm]`` table holds the keys below.  Values are checked and converted here, so a bad one is an
``InputError`` (exit 2) naming where it came from (``DUCK_TAPE_TIMEOUT='soon': not a number``).

Stdlib only (``tomllib``): the CLI resolves the config before it decides whether the llm engine (and litellm)
is needed at all.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from pipeline.errors import InputError

ENGINES = ("rules", "llm", "auto")
MODES = ("tools", "json", "json_schema", "md_json")
ENV_PREFIX = "DUCK_TAPE_"
CONFIG_ENV = "DUCK_TAPE_CONFIG"
DEFAULT_FILE = Path(__file__).resolve().parent.parent / "config" / "default.toml"  # the checkout's; see default_file()


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of the engines (units in the names or below); see ``config/default.toml`` for each key.

    ``engine``: rules | llm | auto (auto = llm when ``model`` is set).  ``model``: a litellm model string or None.
    ``api_base``: base URL of an OpenAI-compatible server or None.  ``api_key_env``: name of the variable that
    holds the key, or None for litellm's default.  ``mode``: instructor mode (tools | json | json_schema |
    md_json).  ``max_output_tokens``: tokens per answer.  ``timeout``: seconds per HTTP request.  ``retries``:
    transport retries after the first try.  ``retry_wait``: first backoff in seconds.  ``reasks``: instructor
    re-asks on invalid output.  ``token_budget``: prompt tokens per call.  ``max_tokens``: cap on tokens sent +
    received per run, None = no cap.  ``tool_output_chars``: characters kept per tool call/output when condensing.
    ``cache``: use the response cache.  ``cache_dir``: its folder (None = the user cache folder).
    ``cache_size_mb``: eviction limit in MiB, 0 = never evict.  ``agent_seconds``: wall-clock cap in seconds on the
    model calls of one session's recovery through an agent CLI (``model = "agent:…"``, ``pipeline.llm.agents``).
    ``agent_tokens``: cap on the tokens one session's recovery through an agent CLI may spend, as the CLI reports
    them (None = no cap).  ``refine``: after each checkpoint, refine its state in the background with ``model``
    (``pipeline.refine``); off unless asked for.
    """

    engine: str = "auto"
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    mode: str = "tools"
    temperature: float = 0.0
    max_output_tokens: int = 4000
    timeout: float = 60.0
    retries: int = 3
    retry_wait: float = 1.0
    reasks: int = 2
    token_budget: int = 12000
    max_tokens: int | None = None
    tool_output_chars: int = 600
    cache: bool = True
    cache_dir: str | None = None
    cache_size_mb: int = 512
    agent_seconds: float = 600.0
    agent_tokens: int | None = 300000
    refine: bool = False

    def effective_engine(self) -> str:
        """``rules`` or ``llm``: what ``engine`` means with this ``model`` (auto = llm when a model is set)."""
        if self.engine == "auto":
            return "llm" if self.model else "rules"
        return self.engine

    def cache_path(self, env: Mapping[str, str] | None = None) -> Path:
        """The cache folder: ``cache_dir``, else ``$XDG_CACHE_HOME/duck-tape/llm``, else ``~/.cache/duck-tape/llm``."""
        if self.cache_dir:
            return Path(self.cache_dir).expanduser()
        env = os.environ if env is None else env
        base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "duck-tape" / "llm"


DEFAULTS = Config()


def _text(value: Any) -> str | None:
    text = str(value).strip()
    return text or None


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in options:
            raise ValueError(f"not one of {', '.join(options)}")
        return text

    return convert


def _integer(minimum: int, *, zero_is_none: bool = False) -> Callable[[Any], int | None]:
    def convert(value: Any) -> int | None:
        if isinstance(value, bool):
            raise ValueError("not a whole number")
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            raise ValueError("not a whole number") from None
        if zero_is_none and number == 0:
            return None
        if number < minimum:
            raise ValueError(f"must be at least {minimum}")
        return number

    return convert


def _number(minimum: float) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if isinstance(value, bool):
            raise ValueError("not a number")
        try:
            number = float(str(value).strip()) if not isinstance(value, (int, float)) else float(value)
        except ValueError:
            raise ValueError("not a number") from None
        if number != number or number < minimum:  # NaN or too small
            raise ValueError(f"must be a number >= {minimum:g}")
        return number

    return convert


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("not a boolean (true/false, 1/0, yes/no, on/off)")


#: key -> converter from a flag, environment or file value; raises ValueError with the reason.
CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "engine": _choice(ENGINES),
    "model": _text,
    "api_base": _text,
    "api_key_env": _text,
    "mode": _choice(MODES),
    "temperature": _number(0.0),
    "max_output_tokens": _integer(1),
    "timeout": _number(0.001),
    "retries": _integer(0),
    "retry_wait": _number(0.0),
    "reasks": _integer(0),
    "token_budget": _integer(500),
    "max_tokens": _integer(1, zero_is_none=True),
    "tool_output_chars": _integer(20),
    "cache": _boolean,
    "cache_dir": _text,
    "cache_size_mb": _integer(0),
    "agent_seconds": _number(1.0),
    "agent_tokens": _integer(1, zero_is_none=True),
    "refine": _boolean,
}
KEYS: tuple[str, ...] = tuple(f.name for f in fields(Config))


def env_name(key: str) -> str:
    """The environment variable of ``key``: ``DUCK_TAPE_`` + the key in upper case."""
    return ENV_PREFIX + key.upper()


def _table(data: dict, path: Path, name: str) -> dict[str, Any]:
    table = data.get("llm", {})
    if not isinstance(table, dict):
        raise InputError(f"[{name}] must be a table", path=str(path))
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise InputError(f"unknown key(s) in [{name}]: {', '.join(unknown)} (known: {', '.join(KEYS)})", path=str(path))
    return table


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the config file: {exc.strerror or exc}", path=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(path)) from exc


def read_file(path: Path) -> dict[str, Any]:
    """The ``[llm]`` table of the TOML file at ``path`` (unknown tables are left to other parts of duck-tape).

    Raises InputError (exit 2) naming the file when it cannot be read, is not TOML, or its ``[llm]`` table has an
    unknown key.
    """
    return _table(_load_toml(path), path, "llm")


def read_pyproject(path: Path) -> dict[str, Any] | None:
    """The ``[tool.duck-tape.llm]`` table of a ``pyproject.toml`` (None when it has no ``[tool.duck-tape]``).
    Raises InputError as ``read_file``."""
    tool = _load_toml(path).get("tool", {})
    ours = tool.get("duck-tape") if isinstance(tool, dict) else None
    if ours is None:
        return None
    if not isinstance(ours, dict):
        raise InputError("[tool.duck-tape] must be a table", path=str(path))
    return _table(ours, path, "tool.duck-tape.llm")


def user_file(env: Mapping[str, str]) -> Path:
    """The user's config file: ``$XDG_CONFIG_HOME/duck-tape/config.toml``, else ``~/.config/duck-tape/config.toml``
    (it need not exist)."""
    base = env.get("XDG_CONFIG_HOME")
    home = Path(env.get("HOME") or Path.home())
    return (Path(base) if base else home / ".config") / "duck-tape" / "config.toml"


def file_layers(env: Mapping[str, str], root: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """The config files in precedence order (highest first) as ``(source, label, table)``: ``project`` (the
    ``.duck-tape/config.toml`` of ``root``, then its ``pyproject.toml`` ``[tool.duck-tape]``), ``user``
    (``user_file``), ``file`` (``config_file``).  Files that do not exist are left out."""
    layers: list[tuple[str, str, dict[str, Any]]] = []
    project = root / ".duck-tape" / "config.toml"
    if project.is_file():
        layers.append(("project", str(project), read_file(project)))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        table = read_pyproject(pyproject)
        if table is not None:
            layers.append(("project", f"{pyproject} [tool.duck-tape]", table))
    user = user_file(env)
    if user.is_file():
        layers.append(("user", str(user), read_file(user)))
    shipped = config_file(env)
    if shipped is not None:
        layers.append(("file", str(shipped), read_file(shipped)))
    return layers


def config_file(env: Mapping[str, str]) -> Path | None:
    """The config file to read: ``$DUCK_TAPE_CONFIG`` (must exist), else ``config/default.toml`` when present."""
    named = env.get(CONFIG_ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise InputError(f"{CONFIG_ENV} names a file that does not exist", path=str(path))
        return path
    default = default_file()
    return default if default.is_file() else None


def default_file() -> Path:
    """``config/default.toml`` as shipped: the checkout's, or the installed package data's (``pipeline.resources``)."""
    from pipeline.resources import PackagingError, data_path

    try:
        return data_path("config/default.toml", must_exist=False)
    except PackagingError:
        return DEFAULT_FILE


def resolve(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    file_values: Mapping[str, Any] | None = None,
    *,
    root: Path | None = None,
    labels: dict[str, str] | None = None,
) -> tuple[Config, dict[str, str]]:
    """Resolve every key by precedence: flag > environment > project > user > config file > default.

    ``flags``: key -> value from the command line; None means "not given".  ``env``: the environment (default
    ``os.environ``); ``DUCK_TAPE_<KEY>`` set to an empty string counts as not set.  ``file_values``: one table to
    use in place of every config file (tests; pass ``{}`` for none); default: ``file_layers(env, root)``, ``root``
    defaulting to the working folder.  Returns the ``Config`` and, per key, where its value came from: ``flag``,
    ``env``, ``project``, ``user``, ``file`` or ``default``.  ``labels``, when given, is filled with the exact
    place per key (``--model``, ``DUCK_TAPE_MODEL``, ``/p/.duck-tape/config.toml [llm].model``, ``built-in``).

    Raises InputError (exit 2) for an unknown flag key, a value that does not convert (naming its source), or a
    config file that cannot be read.
    """
    env = os.environ if env is None else env
    flags = flags or {}
    unknown = sorted(set(flags) - set(KEYS))
    if unknown:
        raise InputError(f"unknown config key(s): {', '.join(unknown)}")
    if file_values is None:
        layers = file_layers(env, Path.cwd() if root is None else root)
    else:
        layers = [("file", "config file", dict(file_values))]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        convert = CONVERTERS[key]
        candidates = [
            ("flag", flags.get(key), f"--{key.replace('_', '-')}"),
            ("env", env.get(env_name(key)) or None, env_name(key)),
            *((source, table.get(key), f"{where} [llm].{key}") for source, where, table in layers),
        ]
        for source, raw, label in candidates:
            if raw is None:
                continue
            try:
                values[key] = convert(raw)
            except ValueError as exc:
                raise InputError(f"{label}={raw!r}: {exc}") from None
            sources[key] = source
            if labels is not None:
                labels[key] = label
            break
        else:
            sources[key] = "default"
            if labels is not None:
                labels[key] = "built-in"
    return replace(DEFAULTS, **values), sources


def resolve_with_sources(env: Mapping[str, str] | None = None, root: Path | None = None,
                         flags: Mapping[str, Any] | None = None) -> tuple[Config, dict[str, str]]:
    """``resolve`` with, per key, the exact place its value came from (``labels``), for ``duck-tape status``."""
    labels: dict[str, str] = {}
    config, sources = resolve(flags, env, root=root, labels=labels)
    return config, {key: f"{sources[key]}: {labels[key]}" for key in KEYS}


def load(flags: Mapping[str, Any] | None = None) -> Config:
    """``resolve(flags)`` against the real environment and config file; the CLI's entry point."""
    return resolve(flags)[0]
