"""One LLM call, the way every stage makes it: render, mask, cache, cap, complete (issue 4, items 2, 5, 8).

``Session`` bundles what a run shares: the model behind the seam, the response cache (optional), the token cap and
the usage counters.  ``Session.ask(name, response_model, **context)``:

1. renders template ``name`` (``pipeline.llm.prompts``) -> messages + tagged hash;
2. masks every message with ``pipeline.redact.mask(..., deep=True)`` — the request body never holds a detected
   secret, whatever the model implementation;
3. looks the request up in the cache (key: tag + masked messages); a hit makes no call and counts as ``cached``;
4. checks the token cap with the prompt's tiktoken estimate (``BudgetExceeded``);
5. calls ``llm.complete`` and stores the validated answer in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pipeline.llm.budget import TokenCap, count_messages
from pipeline.llm.cache import ResponseCache, key
from pipeline.llm.client import mask_messages
from pipeline.llm.prompts import render
from pipeline.llm.seam import LLM, M
from pipeline.llm.usage import Usage


@dataclass(slots=True)
class Session:
    """A run's LLM context.  ``tags``: template name -> tagged hash of the prompts used, in first-use order."""

    llm: LLM
    cache: ResponseCache | None = None
    max_tokens: int | None = None
    max_output_tokens: int = 4000
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def usage(self) -> Usage:
        return self.llm.usage

    def prompt_tokens(self, name: str, response_model: type[M], **context: Any) -> int:
        """Estimated prompt tokens of template ``name`` rendered with ``context`` (nothing is sent)."""
        prompt = render(name, response_model=response_model, model=self.llm.name, params=self.llm.params, **context)
        return count_messages(prompt.messages)

    def ask(self, name: str, response_model: type[M], **context: Any) -> M:
        """Render, mask, look up, cap-check and complete one call; see the module docstring.

        Raises the ``pipeline.llm.errors`` of the model, and ``BudgetExceeded`` when the cap would be passed.
        """
        prompt = render(name, response_model=response_model, model=self.llm.name, params=self.llm.params, **context)
        self.tags.setdefault(name, prompt.tag)
        messages = mask_messages(prompt.messages)
        cache_key = key(prompt.tag, messages)
        if self.cache is not None:
            hit = self.cache.get(cache_key)
            if hit is not None:
                try:
                    value = response_model.model_validate(hit)
                except ValidationError:
                    value = None
                if value is not None:
                    self.usage.cached += 1
                    return value
        TokenCap(self.max_tokens, self.usage, max_output_tokens=self.max_output_tokens).check(
            count_messages(messages), stage=name
        )
        value = self.llm.complete(messages, response_model, stage=name)
        if self.cache is not None:
            self.cache.set(cache_key, value.model_dump(mode="json"))
        return value

    def prompts_hash(self) -> str | None:
        """8 hex characters summarizing the tags used (None before any call)."""
        if not self.tags:
            return None
        import hashlib

        joined = "\n".join(f"{k}={v}" for k, v in sorted(self.tags.items()))
        return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:8]
