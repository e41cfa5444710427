"""Agent CLIs as the model: the CLI the user already runs, on the subscription they already have (issue 25).

``model = "agent:<cli>[/<the CLI's model>]"`` chooses one:

=====================  ==============  ==========================================================
model string           executable      module (flags and the documentation they come from)
=====================  ==============  ==========================================================
``agent:claude-code``  ``claude``      ``claude_code``: ``claude -p --output-format json --json-schema …``
``agent:codex``        ``codex``       ``codex``: ``codex exec --json --output-schema FILE --ephemeral …``
``agent:gemini``       ``gemini``      ``gemini``: ``gemini -p … --output-format json``
``agent:opencode``     ``opencode``    ``opencode``: ``opencode run --format json``
``agent:copilot``      ``copilot``     ``copilot``: ``copilot --output-format json`` (prompt piped)
=====================  ==============  ==========================================================

``agent:codex/gpt-5-codex``, ``agent:opencode/anthropic/claude-sonnet-4-5``: what follows the first ``/`` is
passed to the CLI's ``--model``.  ``AgentCLI`` (``cli``) is the model behind the seam (``pipeline.llm.seam``);
``run`` starts the processes; ``schema`` rewrites schemas and finds JSON in text.  Nothing here imports litellm,
instructor, tiktoken, diskcache or tenacity: the agent CLIs work in the default install.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "agent:"
NAMES: tuple[str, ...] = ("claude-code", "codex", "gemini", "opencode", "copilot")
HARNESS_AGENT = {"claude-code": "claude-code", "codex": "codex", "gemini": "gemini", "opencode": "opencode",
                 "copilot": "copilot"}
"""duck-tape's harness name (``init --harness``) -> the agent CLI of that harness."""


@dataclass(frozen=True, slots=True)
class AgentModel:
    """A parsed ``agent:`` model string: ``name`` (one of ``NAMES``) and the CLI's own ``model`` (None: its
    default)."""

    name: str
    model: str | None = None


def is_agent(model: str | None) -> bool:
    """True when ``model`` is an ``agent:`` model string (valid or not)."""
    return bool(model) and model.strip().lower().startswith(PREFIX)


def parse(model: str) -> AgentModel:
    """``agent:<name>[/<model>]`` as an ``AgentModel``.  Raises ValueError naming the known CLIs for another name."""
    rest = model.strip()[len(PREFIX):]
    name, _, cli_model = rest.partition("/")
    name = name.strip().lower()
    if name not in NAMES:
        raise ValueError(f"unknown agent CLI {name!r} in model {model!r}: use one of "
                         + ", ".join(f"{PREFIX}{n}" for n in NAMES))
    return AgentModel(name, cli_model.strip() or None)


def adapter(name: str):
    """The adapter module's ``ADAPTER`` for CLI ``name`` (``pipeline.llm.agents.base.Adapter``)."""
    import importlib

    return importlib.import_module(f"pipeline.llm.agents.{name.replace('-', '_')}").ADAPTER
