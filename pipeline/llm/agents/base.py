"""What every agent-CLI adapter shares: the request it turns into a command line, the reply it parses.

An adapter (one module per CLI: ``claude_code``, ``codex``, ``gemini``, ``opencode``, ``copilot``) knows three
things about its CLI, each looked up in that CLI's documentation and cited in its module docstring:

* ``command(request)``: the argument list and the text for stdin of one non-interactive, structured-output run
  that fires no hooks and saves no session where the CLI has a flag for that;
* ``parse(stdout)``: the answer (a JSON object, or the text holding one) and the tokens the CLI reports;
* ``schema_flag``: whether the CLI itself is given the JSON schema of the answer (else the schema is written
  into the prompt, ``SCHEMA_NOTE``, and the answer is only validated here).

The prompt always goes on stdin, never on the command line: a command line is limited in length and visible to
every user of the machine (``ps``), and the prompt is transcript text (masked, but still the user's work).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

SCHEMA_NOTE = ("Answer with one JSON object and nothing else: no prose before or after it, no code fence. "
               "It must match this JSON Schema:\n{schema}")
INSTRUCTION = "Answer the request above with the JSON object only."
"""The short instruction given on the command line to CLIs that append stdin to a prompt argument."""


@dataclass(frozen=True, slots=True)
class Request:
    """One call: ``system`` and ``user`` messages (already masked), the answer's JSON ``schema``, the CLI's
    ``model`` (None: the CLI's default), ``workdir`` (the folder the CLI runs in) and ``scratch`` (a private
    temporary folder for files the call needs, removed afterwards)."""

    system: str
    user: str
    schema: dict[str, Any]
    model: str | None
    workdir: Path
    scratch: Path

    def prompt(self, *, with_schema: bool) -> str:
        """System and user text as one prompt, with ``SCHEMA_NOTE`` at the end when ``with_schema``."""
        parts = [self.system.strip(), self.user.strip()]
        if with_schema:
            parts.append(schema_note(self.schema))
        return "\n\n".join(p for p in parts if p) + "\n"


def schema_note(schema: dict[str, Any]) -> str:
    """``SCHEMA_NOTE`` with ``schema`` as compact JSON."""
    return SCHEMA_NOTE.format(schema=json.dumps(schema, separators=(",", ":"), ensure_ascii=False))


@dataclass(slots=True)
class Reply:
    """What one run printed, parsed: ``data`` (the structured answer, when the CLI returned one as JSON), ``text``
    (the model's final message, which should hold the JSON answer), ``sent``/``received`` (tokens the CLI reports;
    None when it reports none), ``error`` (the CLI's own error message, None when it reports none), ``failed``
    (the CLI says the run failed: whatever text came with it is not an answer), ``session`` (the nested run's
    session id, when printed) and ``notes`` (anything odd in the output)."""

    data: dict[str, Any] | None = None
    text: str | None = None
    sent: int | None = None
    received: int | None = None
    error: str | None = None
    failed: bool = False
    session: str | None = None
    notes: list[str] = field(default_factory=list)


class Adapter(Protocol):
    """One agent CLI (see the module docstring)."""

    name: str
    executable: str
    schema_flag: bool

    def command(self, request: Request) -> tuple[list[str], str]:
        """``(argv without the executable, stdin text)`` for ``request``."""
        ...

    def parse(self, stdout: str) -> Reply:
        """The ``Reply`` in ``stdout``; never raises (unreadable output is a ``Reply`` with an ``error``)."""
        ...


class CliAdapter:
    """What the adapters share: ``name`` (the ``agent:`` name), ``executable``, ``schema_flag``, and the CLI's
    ``--model`` flag for a model named in the model string (``with_model``)."""

    name = ""
    executable = ""
    schema_flag = False

    @staticmethod
    def with_model(argv: list[str], request: Request) -> list[str]:
        """``argv`` with ``--model <name>`` when ``request`` names the CLI's model."""
        return [*argv, "--model", request.model] if request.model else argv

    @staticmethod
    def events(stdout: str) -> tuple[Reply, list[dict[str, Any]]]:
        """A new ``Reply`` and the JSONL events of ``stdout``; the reply says so when there are none."""
        events = json_lines(stdout)
        return Reply(error=None if events else "no JSON events on stdout"), events


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL ``stdout``, in order; lines that are not JSON objects are skipped."""
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def json_document(stdout: str) -> dict[str, Any] | None:
    """``stdout`` as one JSON object (whitespace around it allowed), else the last line that is one; None when
    neither."""
    text = stdout.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    lines = json_lines(stdout)
    return lines[-1] if lines else None


def number(value: Any) -> int | None:
    """``value`` as a non-negative int when it is a number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(int(value), 0)


def add(a: int | None, b: int | None) -> int | None:
    """``a + b`` where None means "not reported" (None only when both are)."""
    if a is None:
        return b
    return a if b is None else a + b
