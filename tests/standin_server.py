"""A local OpenAI-compatible stand-in for recording cassettes (STYLE.md habit 4).

A tiny stdlib ``http.server`` on ``127.0.0.1`` with a random port that answers ``POST /v1/chat/completions``
from a script the test writes: a queue of steps, each one of

* ``answer(obj)``          a 200 with ``obj`` as the structured answer: as the arguments of a tool call when the
                           request offered ``tools`` (instructor's TOOLS mode), else as the message content (JSON
                           modes);
* ``raw(text)``            a 200 whose tool-call arguments / content is ``text`` verbatim (malformed JSON);
* ``error(status, msg)``   an OpenAI-style error body with that HTTP status (429, 500, 503…);
* ``delay(seconds, step)`` sleep, then play ``step`` (a client with a shorter timeout gives up first);
* a callable ``f(body) -> step`` that builds the step from the request body.

Every request body is kept in ``requests`` (parsed JSON) in arrival order.  An empty queue answers 500 with
"stand-in: no scripted answer left" so a test that makes more calls than it scripted fails loudly.  The
``usage`` block counts whitespace-separated words of the request's messages (sent) and of the answer
(received): deterministic numbers, not a tokenizer.

Used by ``tests/test_llm_*.py``; nothing here reaches any address but 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

MODEL_ECHO = "standin-1"


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted reply: ``kind`` is answer | raw | error; ``delay`` seconds before replying."""

    kind: str
    payload: Any = None
    status: int = 200
    delay: float = 0.0


def answer(obj: Any) -> Step:
    """A good structured answer (a dict, serialized as JSON)."""
    return Step("answer", obj)


def raw(text: str) -> Step:
    """A 200 whose structured part is ``text`` verbatim (e.g. malformed JSON)."""
    return Step("raw", text)


def error(status: int, message: str = "stand-in error") -> Step:
    """An OpenAI-style error reply with HTTP ``status``."""
    return Step("error", message, status=status)


def delay(seconds: float, step: Step) -> Step:
    """``step`` played after sleeping ``seconds``."""
    return Step(step.kind, step.payload, status=step.status, delay=seconds)


def _words(messages: list) -> int:
    total = 0
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += len(content.split())
        elif isinstance(content, list):
            total += sum(len(str(part.get("text", "")).split()) for part in content if isinstance(part, dict))
    return total


def completion_body(request: dict, text: str) -> dict:
    """The chat-completion JSON that carries ``text`` the way the request asked for structured output."""
    tools = request.get("tools") or []
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if tools:
        name = tools[0].get("function", {}).get("name", "answer")
        message["tool_calls"] = [
            {"id": "call_standin_1", "type": "function", "function": {"name": name, "arguments": text}}
        ]
        finish = "tool_calls"
    else:
        message["content"] = text
    sent = _words(request.get("messages", []))
    received = len(text.split())
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": 1767225600,
        "model": MODEL_ECHO,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": sent, "completion_tokens": received, "total_tokens": sent + received},
    }


class StandIn:
    """The server: ``url`` (``http://127.0.0.1:<port>/v1``), ``script(*steps)``, ``requests``, ``close()``."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self._queue: deque = deque()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests.append(body)
                    step = owner._queue.popleft() if owner._queue else error(500, "stand-in: no scripted answer left")
                if callable(step):
                    step = step(body)
                if step.delay:
                    time.sleep(step.delay)
                if step.kind == "error":
                    status = step.status
                    payload = {"error": {"message": step.payload, "type": "standin_error", "code": str(status)}}
                else:
                    status = 200
                    text = json.dumps(step.payload) if step.kind == "answer" else str(step.payload)
                    payload = completion_body(body, text)
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The ``api_base`` to give the client."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *steps: Step | Callable[[dict], Step]) -> None:
        """Queue ``steps``; each request takes the next one."""
        with self._lock:
            self._queue.extend(steps)

    @property
    def left(self) -> int:
        """Scripted steps not played yet."""
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "StandIn":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
