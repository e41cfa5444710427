"""The real model behind the seam: ``instructor.from_litellm(litellm.completion)`` (STACK.md, STYLE.md habit 2).

Any litellm model string works (``openai/…``, ``anthropic/…``, ``ollama/…``, or ``openai/<name>`` with an
``api_base`` for a local OpenAI-compatible server).  One call of ``complete``:

1. masks every message with ``pipeline.redact.mask(..., deep=True)`` (DESIGN.md "Redaction": text sent to an LLM
   is always masked; the engine has masked it already, this is the last gate before the wire);
2. asks instructor for ``response_model`` with ``max_retries=reasks`` (each re-ask sends the validation error);
3. each HTTP request goes through the transport retries of ``pipeline.llm.retry`` (tenacity) with the SDK's own
   retries off, and its usage and litellm's cost estimate are counted in ``usage``;
4. what is left after both layers is raised as a ``pipeline.llm.errors`` exception.

litellm is imported on first use only (``pipeline.llm._litellm``).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from pipeline.config import Config
from pipeline.llm.errors import LLMUnavailable
from pipeline.llm.retry import classify, retrying
from pipeline.llm.seam import M, Message
from pipeline.llm.usage import Usage

PLACEHOLDER = "<REDACTED>"
#: Key sent to an OpenAI-compatible ``api_base`` when no key is configured: local servers ignore it, and the
#: OpenAI SDK refuses to send a request without one.
LOCAL_KEY = "sk-local-no-key"


def mask_messages(messages: list[Message]) -> list[Message]:
    """Copies of ``messages`` with every secret and PII value in ``content`` replaced by ``<REDACTED>``."""
    from pipeline.redact import mask

    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            content, _ = mask(content, placeholder=PLACEHOLDER, deep=True)
        out.append({**message, "content": content})
    return out


def request_params(config: Config) -> dict[str, Any]:
    """The parameters that change answers, recorded in every prompt's tagged hash."""
    return {
        "mode": config.mode,
        "temperature": config.temperature,
        "max_output_tokens": config.max_output_tokens,
        "reasks": config.reasks,
    }


class LiteLLMClient:
    """``complete(messages, response_model, *, stage)`` over litellm + instructor for ``config.model``.

    ``sleep`` is the backoff's sleep function (tests pass a recorder).  Raises ``LLMUnavailable`` at the first
    call when no model is configured or litellm/instructor cannot be imported.
    """

    def __init__(self, config: Config, *, usage: Usage | None = None, sleep: Callable[[float], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.config = config
        self.name = config.model or ""
        self.params = request_params(config)
        self.usage = usage if usage is not None else Usage()
        self._sleep = sleep
        self._env = os.environ if env is None else env
        self._client = None
        self._stage = ""

    @property
    def where(self) -> str:
        """The model and address, for messages."""
        return f"{self.name} at {self.config.api_base}" if self.config.api_base else self.name

    def _api_key(self) -> str | None:
        if self.config.api_key_env:
            key = self._env.get(self.config.api_key_env)
            if not key:
                raise LLMUnavailable(f"{self.config.api_key_env} is not set (api_key_env names it as the API key)")
            return key
        if self.config.api_base and self.name.startswith("openai/") and not self._env.get("OPENAI_API_KEY"):
            return LOCAL_KEY
        return None

    def _instructor(self):
        if self._client is None:
            if not self.name:
                raise LLMUnavailable("no model configured: set DUCK_TAPE_MODEL or pass --model")
            try:
                from pipeline.llm._litellm import load

                litellm, instructor = load()
            except ImportError as exc:
                raise LLMUnavailable(f"the llm engine needs litellm and instructor ({exc})") from exc
            self._litellm = litellm
            mode = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON,
                    "json_schema": instructor.Mode.JSON_SCHEMA, "md_json": instructor.Mode.MD_JSON}[self.config.mode]
            self._client = instructor.from_litellm(self._completion, mode=mode)
        return self._client

    def _completion(self, **kwargs: Any) -> Any:
        """One HTTP request through litellm with our transport retries; counts usage and cost."""
        litellm = self._litellm

        def count_failure(_: BaseException) -> None:
            self.usage.failed += 1

        response = None
        for attempt in retrying(self.config.retries, self.config.retry_wait, sleep=self._sleep, on_retry=count_failure):
            with attempt:
                response = litellm.completion(max_retries=0, **kwargs)
        usage = getattr(response, "usage", None)
        sent = getattr(usage, "prompt_tokens", None)
        received = getattr(usage, "completion_tokens", None)
        estimated = sent is None
        if sent is None:
            from pipeline.tokens import count_tokens

            sent = sum(count_tokens(str(m.get("content") or "")) for m in kwargs.get("messages", []))
            received = received or 0
        try:
            cost = litellm.completion_cost(completion_response=response, model=self.name)
        except Exception:  # no price known for this model (a local server): report "cost unknown"
            cost = None
        self.usage.add(sent=int(sent), received=int(received or 0), cost=cost, stage=self._stage, estimated=estimated)
        return response

    def complete(self, messages: list[Message], response_model: type[M], *, stage: str = "") -> M:
        """Send the masked ``messages`` and parse the answer into ``response_model``; see the module docstring.

        Raises ``LLMUnavailable`` (no model, no litellm, unreachable, refused), ``LLMCallFailed`` (transient
        errors after the retries) or ``LLMInvalidOutput`` (validation failed after the re-asks).
        """
        client = self._instructor()
        self._stage = stage
        params: dict[str, Any] = {
            "model": self.name,
            "messages": mask_messages(messages),
            "response_model": response_model,
            "max_retries": self.config.reasks,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_output_tokens,
            "timeout": self.config.timeout,
            "drop_params": True,
        }
        if self.config.api_base:
            params["api_base"] = self.config.api_base
        key = self._api_key()
        if key:
            params["api_key"] = key
        try:
            return client.chat.completions.create(**params)
        except Exception as exc:  # noqa: BLE001 - every provider/instructor error is mapped, none escapes raw
            cause = exc.__cause__ if type(exc).__name__ == "InstructorRetryException" and exc.__cause__ else exc
            if not _is_parse_error(cause):
                self.usage.failed += 1  # the last request raised; the retried ones were counted by the retry hook
            raise classify(cause, where=self.where, attempts=getattr(exc, "n_attempts", None)) from exc


def _is_parse_error(exc: BaseException) -> bool:
    import json

    from pydantic import ValidationError

    return isinstance(exc, (ValidationError, json.JSONDecodeError)) or "Parsing" in type(exc).__name__
