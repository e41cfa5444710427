"""The one seam to the model (STYLE.md habit 2): a small protocol the stages receive.

``complete(messages, response_model, *, stage) -> response_model instance``.  Implementations, chosen by
``model_for(config)`` from the model string:

* ``pipeline.llm.client.LiteLLMClient``: any litellm model string (``openai/…``, ``ollama/…``), instructor over
  ``litellm.completion`` (the ``llm`` extra);
* ``pipeline.llm.agents.cli.AgentCLI``: ``agent:claude-code``, ``agent:codex``, ``agent:gemini``,
  ``agent:opencode``, ``agent:copilot``: the agent CLI the user already has, as a subprocess, its answer validated
  with pydantic (no litellm, no key);
* ``pipeline.llm.fake.FakeLLM``: queued answers for tests and demos.

All count what they do in ``usage`` and raise ``pipeline.llm.errors`` exceptions, never a provider's own.  The
fourth way to a model, the agent *itself* over MCP (``pipeline.serve.agent_state``), needs no seam: the agent
hands over its answer (``save_state``) and it goes through the same screening, grounding, masking and per-section
fallback as an answer that came through here (``pipeline.engines.build_state(…, supplied=…)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import BaseModel

from pipeline.llm.usage import Usage

if TYPE_CHECKING:
    from pipeline.config import Config

M = TypeVar("M", bound=BaseModel)
Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}


class LLM(Protocol):
    """What the llm engine needs from a model.

    ``name``: the model identifier; part of every prompt's tagged hash, so another model never reuses an answer
    from the cache.  ``params``: the request parameters that change answers (temperature, output cap, mode…), also
    part of the hash.  ``usage``: the run's counters.
    """

    name: str
    params: dict
    usage: Usage

    def complete(self, messages: list[Message], response_model: type[M], *, stage: str = "") -> M:
        """Send ``messages`` (already masked) and return the answer parsed into ``response_model``.

        Raises ``LLMUnavailable``, ``LLMCallFailed``, ``LLMInvalidOutput`` or ``BudgetExceeded``.
        """
        ...


def model_for(config: "Config", *, usage: Usage | None = None) -> LLM:
    """The model behind the seam for ``config.model``: an ``AgentCLI`` for ``agent:…``, else a ``LiteLLMClient``.

    Raises ValueError for an ``agent:`` string that names no known CLI (the message lists them).  Nothing is
    imported for the other kind: an agent model never imports litellm, a litellm model never starts a process.
    """
    from pipeline.llm.agents import is_agent

    if is_agent(config.model):
        from pipeline.llm.agents.cli import AgentCLI

        return AgentCLI(config, usage=usage)
    from pipeline.llm.client import LiteLLMClient

    return LiteLLMClient(config, usage=usage)
