"""Token budget: count prompt tokens offline and cap a run (issue 4, item 4; STACK.md "tiktoken").

Counts use tiktoken's ``cl100k_base`` through ``pipeline.tokens`` (offline, from litellm's bundled encoding
files): an estimate for any model, used to size chunks and to check the cap *before* a call.  Without tiktoken
(the default install, where only the agent CLIs reach a model) the estimate is UTF-8 bytes ÷ 4.  What a call
really cost is the provider's count (``pipeline.llm.usage``).

The cap (``--max-tokens N``) is on tokens sent + received by the whole run.  A call is made only when
``spent + its prompt estimate + max_output_tokens <= N``: the worst case of the call fits, so a run never
passes the cap; otherwise ``BudgetExceeded`` is raised and the remaining sections fall back to rules.
"""

from __future__ import annotations

from pipeline.llm.errors import BudgetExceeded
from pipeline.llm.usage import Usage


def count(text: str) -> int:
    """Estimated tokens of ``text``: tiktoken ``cl100k_base`` offline, else UTF-8 bytes ÷ 4 without the llm extra
    (``pipeline.tokens.count_or_estimate``)."""
    from pipeline.tokens import count_or_estimate

    return count_or_estimate(text)


def count_messages(messages: list[dict[str, str]]) -> int:
    """Estimated prompt tokens of chat ``messages``: their contents plus 4 per message for the chat framing."""
    return sum(count(str(m.get("content") or "")) + 4 for m in messages)


class TokenCap:
    """The run's cap: ``limit`` tokens (None = no cap) against the counters in ``usage``."""

    def __init__(self, limit: int | None, usage: Usage, *, max_output_tokens: int) -> None:
        self.limit = limit
        self.usage = usage
        self.max_output_tokens = max_output_tokens

    def check(self, prompt_tokens: int, *, stage: str = "") -> None:
        """Raise ``BudgetExceeded`` unless a call of ``prompt_tokens`` (+ its whole output cap) still fits."""
        if self.limit is None:
            return
        worst = self.usage.tokens + prompt_tokens + self.max_output_tokens
        if worst > self.limit:
            raise BudgetExceeded(
                f"--max-tokens {self.limit} reached: {self.usage.tokens} tokens used, the next call ({stage or 'llm'}) "
                f"could take {prompt_tokens + self.max_output_tokens} more"
            )
