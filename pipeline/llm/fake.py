"""``FakeLLM``: a model stand-in shipped with the package, for tests and demos (STYLE.md habit 2).

Answers come from a queue (``answers``) or from per-stage queues (``by_stage``, tried first).  An answer is one
of: a pydantic model instance (returned as is when it has the requested type), a dict (validated into the
requested ``response_model``; a ``ValidationError`` becomes ``LLMInvalidOutput``, as instructor's exhausted
re-asks would), an exception instance (raised), or a callable ``f(messages, response_model) -> answer``.
``history`` records every call (stage, messages, response model); ``usage`` counts whitespace words of the
messages and of the answer's JSON as tokens, so token caps can be tested without a tokenizer.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from pipeline.llm.errors import LLMInvalidOutput, LLMUnavailable
from pipeline.llm.seam import M, Message
from pipeline.llm.usage import Usage


@dataclass(frozen=True, slots=True)
class Call:
    """One call the fake received."""

    stage: str
    messages: list[Message]
    response_model: type[BaseModel]


class FakeLLM:
    """Queued answers; ``FakeLLM([a, b], by_stage={"weave_state": [c]}, name="fake/model")``."""

    def __init__(
        self,
        answers: list[Any] | None = None,
        *,
        by_stage: dict[str, list[Any]] | None = None,
        name: str = "fake/model",
        params: dict | None = None,
    ) -> None:
        self.name = name
        self.params = dict(params or {})
        self.usage = Usage()
        self.history: list[Call] = []
        self._answers: deque = deque(answers or [])
        self._by_stage: dict[str, deque] = {k: deque(v) for k, v in (by_stage or {}).items()}

    def add(self, answer: Any, *, stage: str | None = None) -> None:
        """Queue one more answer (for ``stage`` only when given)."""
        (self._by_stage.setdefault(stage, deque()) if stage else self._answers).append(answer)

    @property
    def left(self) -> int:
        """Answers not used yet."""
        return len(self._answers) + sum(len(q) for q in self._by_stage.values())

    def _next(self, stage: str) -> Any:
        queue = self._by_stage.get(stage)
        if queue:
            return queue.popleft()
        if self._answers:
            return self._answers.popleft()
        raise LLMUnavailable(f"FakeLLM has no answer left for stage {stage or '(none)'}")

    def complete(self, messages: list[Message], response_model: type[M], *, stage: str = "") -> M:
        """Return the next queued answer for ``stage`` as a ``response_model``; see the module docstring."""
        self.history.append(Call(stage, [dict(m) for m in messages], response_model))
        answer = self._next(stage)
        if callable(answer) and not isinstance(answer, (BaseModel, type)):
            answer = answer(messages, response_model)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, response_model):
            value = answer
        else:
            data = answer.model_dump() if isinstance(answer, BaseModel) else answer
            try:
                value = response_model.model_validate(data)
            except ValidationError as exc:
                raise LLMInvalidOutput(f"answer failed validation: {exc.errors()[0]['msg']}", attempts=1) from exc
        sent = sum(len(str(m.get("content", "")).split()) for m in messages)
        received = len(json.dumps(value.model_dump(mode="json")).split())
        self.usage.add(sent=sent, received=received, stage=stage)
        return value
