"""Failures of an LLM call, as the engine sees them (DESIGN.md "Stages": repair or fall back).

None of these reaches the user as an error: the engine catches them and the rules engine fills the sections
concerned, with one line on stderr.  ``abort_run`` says whether the remaining calls of the run are skipped too
(the provider is unreachable or failing, or the token cap is reached) or only this call's sections fall back
(the answer failed validation after the re-asks, or the request was rejected).
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class: ``reason`` is a short, one-line explanation; ``attempts`` the HTTP calls made, when known."""

    abort_run = False

    def __init__(self, reason: str, *, attempts: int | None = None) -> None:
        self.reason = " ".join(str(reason).split())
        self.attempts = attempts
        super().__init__(self.reason)


class LLMUnavailable(LLMError):
    """No model configured, litellm missing, provider unreachable, or credentials refused: skip the llm engine."""

    abort_run = True


class LLMCallFailed(LLMError):
    """Timeouts, rate limits or 5xx still failing after the retries: skip the remaining calls."""

    abort_run = True


class LLMInvalidOutput(LLMError):
    """The answer failed validation after instructor's re-asks, or the request was rejected: this call's sections
    fall back, the other calls go on."""


class BudgetExceeded(LLMError):
    """The next call would pass the run's token cap (``--max-tokens``): skip it and every call after it."""

    abort_run = True
