"""The one seam to the model (STYLE.md habit 2): a small protocol the stages receive.

``complete(messages, response_model, *, stage) -> response_model instance``.  Implementations:
``pipeline.llm.client.LiteLLMClient`` (instructor over ``litellm.completion``) and ``pipeline.llm.fake.FakeLLM``
(queued answers for tests and demos).  Both count what they do in ``usage``.  Failures are raised as
``pipeline.llm.errors`` exceptions, never as a provider's own.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from pydantic import BaseModel

from pipeline.llm.usage import Usage

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
