"""Is the configured model reachable? (``duck-tape status``, issue 15 item 4.)

``cheap_check`` makes no model call and sends nothing: with an ``api_base`` (a local or self-hosted
OpenAI-compatible server) it opens a TCP connection to its host and port (2 s) and closes it; without one it
checks that the provider's API key variable is set (``api_key_env``, else the provider's usual variable).
``call_check`` (``--check-model``) sends one tiny completion through litellm ("Reply with OK.", 5 tokens).
An agent CLI (``agent:…``, ``pipeline.llm.agents``): the cheap check looks for its executable on ``PATH``; the
call check runs it once with a one-field answer (a real run of the CLI: its tokens count on the user's plan).

Both return ``(reachable, detail)``; ``reachable`` is None when nothing could be said (an unknown provider
without ``api_base``).
"""

from __future__ import annotations

import os
import socket
from typing import Mapping
from urllib.parse import urlsplit

from pipeline.config import Config

#: litellm provider prefix -> the environment variable holding its key (litellm's own defaults).
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY", "groq": "GROQ_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY", "together_ai": "TOGETHERAI_API_KEY", "xai": "XAI_API_KEY",
    "cohere": "COHERE_API_KEY", "azure": "AZURE_API_KEY",
}
#: Providers that run locally without a key, with their default address.
LOCAL_DEFAULTS = {"ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434"}


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def _connect(url: str, timeout: float) -> tuple[bool, str]:
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return False, f"api_base {url!r} has no host"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, f"{host}:{port} accepts connections (no model call made; --check-model makes one)"
    except OSError as exc:
        return False, f"cannot connect to {host}:{port}: {exc.strerror or exc}"


def cheap_check(config: Config, env: Mapping[str, str] | None = None, *, timeout: float = 2.0) -> tuple[bool | None, str]:
    """Reachability of ``config.model`` without calling it (module docstring)."""
    env = os.environ if env is None else env
    if not config.model:
        return False, "no model configured (set model in the config file, DUCK_TAPE_MODEL or --model)"
    from pipeline.llm.agents import is_agent

    if is_agent(config.model):
        return _agent_found(config, env)
    provider = _provider(config.model)
    base = config.api_base or LOCAL_DEFAULTS.get(provider)
    if base:
        return _connect(base, timeout)
    variable = config.api_key_env or KEY_VARIABLES.get(provider)
    if variable is None:
        return None, f"provider {provider!r}: not checked without --check-model"
    if not env.get(variable):
        return False, f"{variable} is not set (the API key of {provider})"
    return True, f"{variable} is set (no model call made; --check-model makes one)"


def _agent_found(config: Config, env: Mapping[str, str]) -> tuple[bool, str]:
    from pipeline.llm.agents.cli import AgentCLI

    try:
        agent = AgentCLI(config, env=env)
    except ValueError as exc:
        return False, str(exc)
    path = agent.where()
    if path is None:
        return False, f"{agent.executable} is not on PATH"
    return True, f"{agent.executable} found at {path} (no model call made; --check-model makes one)"


def _agent_call(config: Config) -> tuple[bool, str]:
    from pydantic import BaseModel

    from pipeline.llm.agents.cli import AgentCLI
    from pipeline.llm.errors import LLMError

    class Check(BaseModel):
        ok: bool

    try:
        agent = AgentCLI(config)
        agent.complete([{"role": "system", "content": "Reply with the JSON object {\"ok\": true}."},
                        {"role": "user", "content": "Are you there?"}], Check, stage="check")
    except (ValueError, LLMError) as exc:
        return False, str(exc)
    return True, f"{config.model} answered ({agent.usage.tokens:,} tokens, {agent.seconds:.1f} s)"


def call_check(config: Config) -> tuple[bool, str]:
    """One tiny completion through litellm (or one run of the agent CLI); ``(True, "answered")`` or
    ``(False, the error)``."""
    from pipeline.llm.agents import is_agent

    if is_agent(config.model):
        return _agent_call(config)
    from pipeline.llm._litellm import load

    try:
        litellm, _ = load()
    except ImportError as exc:
        return False, f"litellm is not installed: {exc}"
    params = {"model": config.model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 5,
              "timeout": min(config.timeout, 30.0), "num_retries": 0}
    if config.api_base:
        params["api_base"] = config.api_base
    if config.api_key_env and os.environ.get(config.api_key_env):
        params["api_key"] = os.environ[config.api_key_env]
    elif config.api_base and _provider(config.model or "") == "openai" and not os.environ.get("OPENAI_API_KEY"):
        params["api_key"] = "not-needed"  # a local server; litellm's OpenAI client insists on some key
    try:
        litellm.completion(**params)
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return False, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return True, f"{config.model} answered"
