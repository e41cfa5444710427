"""Retry policy and error mapping for provider calls (DESIGN.md "Stages": tenacity retries with backoff).

Two layers, each bounded:

* **transport** (here, tenacity): a request that times out, is rate limited (429) or meets a 5xx is sent again
  after ``retry_wait * 2**(n-1)`` seconds (at most ``MAX_WAIT``), up to ``retries`` times.  A refused connection
  is *not* retried: the provider is unreachable and the run falls back to rules at once.  The OpenAI SDK's own
  retries are switched off (``max_retries=0`` on every litellm call) so the count stays ours.
* **content** (instructor's ``max_retries``): an answer that fails validation is re-asked with the error, up
  to ``reasks`` times; see ``pipeline.llm.client``.

``classify`` turns whatever is left after both layers into ``pipeline.llm.errors``.
"""

from __future__ import annotations

import json
from typing import Callable

from pydantic import ValidationError

from pipeline.llm.errors import LLMCallFailed, LLMError, LLMInvalidOutput, LLMUnavailable

MAX_WAIT = 30.0  # seconds


def _litellm():
    from pipeline.llm._litellm import load

    return load()[0]


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def is_unreachable(exc: BaseException) -> bool:
    """True when the request never reached a server: connection refused, unknown host, no route.

    litellm reports a refused connection as ``InternalServerError("Connection error.")`` (status 500), so the
    cause chain is read: a ``ConnectError`` / ``APIConnectionError`` / ``ConnectionRefusedError`` /
    ``socket.gaierror`` in it, and no timeout, means unreachable.
    """
    import socket

    names = [type(link).__name__ for link in _chain(exc)]
    if any("Timeout" in name for name in names):
        return False
    links = list(_chain(exc))
    if any(isinstance(link, (ConnectionRefusedError, socket.gaierror)) for link in links):
        return True
    return any(name in ("ConnectError", "APIConnectionError") for name in names)


def is_transient(exc: BaseException) -> bool:
    """True for a timeout, a rate limit (429) or a server error (5xx): worth sending again.  A request that
    never reached a server (``is_unreachable``) is not."""
    litellm = _litellm()
    if is_unreachable(exc):
        return False
    if isinstance(exc, (litellm.Timeout, litellm.RateLimitError, litellm.InternalServerError,
                        litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(exc, litellm.APIError) and isinstance(status, int) and status >= 500


def retrying(retries: int, wait: float, *, sleep: Callable[[float], None] | None = None,
             on_retry: Callable[[BaseException], None] | None = None):
    """A tenacity ``Retrying`` for transient errors: ``retries`` more tries after the first, exponential backoff
    starting at ``wait`` seconds (doubling, capped at ``MAX_WAIT``); the last error is re-raised."""
    import tenacity

    kwargs = {}
    if sleep is not None:
        kwargs["sleep"] = sleep

    def before_sleep(state) -> None:
        if on_retry is not None and state.outcome is not None:
            on_retry(state.outcome.exception())

    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(retries + 1),
        wait=tenacity.wait_exponential(multiplier=wait, min=wait, max=MAX_WAIT) if wait > 0 else tenacity.wait_none(),
        retry=tenacity.retry_if_exception(is_transient),
        reraise=True,
        before_sleep=before_sleep,
        **kwargs,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def classify(exc: BaseException, *, where: str, attempts: int | None = None) -> LLMError:
    """The ``LLMError`` for ``exc`` raised by a call to the provider at ``where`` (model and api_base).

    Parse/validation errors -> ``LLMInvalidOutput``; refused connections, bad credentials, unknown models ->
    ``LLMUnavailable``; transient errors left after the retries -> ``LLMCallFailed``; a request the provider
    rejects (400, context window) -> ``LLMInvalidOutput`` (only that call's sections fall back).
    """
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, (ValidationError, json.JSONDecodeError)):
        return LLMInvalidOutput(f"model output failed validation after {attempts or 1} attempt(s): {_first_line(exc)}",
                                attempts=attempts)
    litellm = _litellm()
    name = type(exc).__name__
    if is_unreachable(exc):
        return LLMUnavailable(f"provider unreachable ({where}): {_first_line(exc)}", attempts=attempts)
    if is_transient(exc):
        kind = "timed out" if isinstance(exc, litellm.Timeout) else f"kept failing ({name})"
        return LLMCallFailed(f"provider {where} {kind} after retries: {_first_line(exc)}", attempts=attempts)
    if isinstance(exc, litellm.APIConnectionError):
        return LLMUnavailable(f"provider unreachable ({where}): {_first_line(exc)}", attempts=attempts)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)):
        return LLMUnavailable(f"provider refused the request ({where}, {name}): {_first_line(exc)}", attempts=attempts)
    if isinstance(exc, litellm.BadRequestError):
        return LLMInvalidOutput(f"provider rejected the request ({where}, {name}): {_first_line(exc)}", attempts=attempts)
    if isinstance(exc, litellm.APIError):
        return LLMCallFailed(f"provider error ({where}, {name}): {_first_line(exc)}", attempts=attempts)
    if "Incomplete" in name or "ResponseParsing" in name or "Validation" in name:
        return LLMInvalidOutput(f"model output unusable after {attempts or 1} attempt(s): {_first_line(exc)}",
                                attempts=attempts)
    return LLMCallFailed(f"llm call failed ({where}): {name}: {_first_line(exc)}", attempts=attempts)
