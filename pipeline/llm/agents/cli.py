"""``AgentCLI``: an agent CLI behind the seam (``pipeline.llm.seam.LLM``), with the caps of one session.

One ``complete(messages, response_model, stage=…)``:

1. **recursion guard**: inside a nested run (``DUCK_TAPE_NESTED`` set by ``pipeline.llm.agents.run``) no agent CLI
   is started: ``LLMUnavailable``, and the rules engine does the work;
2. the messages are masked once more (``pipeline.llm.client.mask_messages``, the last gate before anything leaves)
   and split into the system and user text;
3. **caps** (per session, i.e. per ``AgentCLI``: ``pipeline.engines`` makes one per transcript): the time left of
   ``agent_seconds`` (counted from the first call) must be at least ``MIN_CALL_SECONDS`` and is the call's time
   limit; the tokens spent so far plus this prompt's estimate must stay within ``agent_tokens``; else
   ``BudgetExceeded`` (the remaining sections fall back to rules);
4. the adapter builds the command (``pipeline.llm.agents.<cli>``), ``run`` runs it in ``workdir`` (an empty folder
   of duck-tape's cache, never the user's project) and the adapter parses stdout;
5. the answer (the CLI's structured output, else the JSON found in its text, ``schema.find_json``) is validated
   with pydantic into ``response_model``; an invalid answer is asked again with the validation error, up to
   ``reasks`` times (each time one more CLI run), then ``LLMInvalidOutput``.

Failures: the executable missing, or unable to start -> ``LLMUnavailable``; a non-zero exit or a reported error
with no answer, or the time limit -> ``LLMCallFailed`` (both stop the run's remaining calls).  Tokens are the ones
the CLI reports (its own system prompt and tools included), else estimated (``Usage.estimated``); the CLIs bill a
subscription, so no cost is computed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from pydantic import ValidationError

from pipeline.config import Config
from pipeline.llm.agents import adapter, parse
from pipeline.llm.agents.base import Reply, Request
from pipeline.llm.agents.run import NESTED_ENV, CliTimeout, nested_env, run
from pipeline.llm.agents.schema import find_json
from pipeline.llm.budget import count
from pipeline.llm.errors import BudgetExceeded, LLMCallFailed, LLMInvalidOutput, LLMUnavailable
from pipeline.llm.seam import M, Message
from pipeline.llm.usage import Usage

MIN_CALL_SECONDS = 5.0
RETRY_NOTE = ("Your previous answer could not be used: {problem}. Answer again with the corrected JSON object only.")
BILLING = "no cost computed (the CLI's own plan)"


def workdir_for(config: Config, env: Mapping[str, str] | None = None) -> Path:
    """The folder agent CLIs run in: ``agent-cwd`` beside the response cache (``<cache>/duck-tape/agent-cwd``),
    created if missing.  An empty folder of duck-tape's: no project instructions, settings, hooks or MCP servers of
    the user's project are loaded, and the nested sessions are filed under it, not under the project."""
    folder = config.cache_path(env).parent / "agent-cwd"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


class AgentCLI:
    """The model behind the seam for ``config.model = "agent:…"`` (module docstring).

    ``env``: the environment the CLI runs with (default ``os.environ``; its ``PATH`` finds the executable).
    ``clock``: a monotonic clock in seconds (tests).  Raises ValueError for a model string that names no known CLI.
    """

    def __init__(self, config: Config, *, usage: Usage | None = None, env: Mapping[str, str] | None = None,
                 workdir: Path | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.spec = parse(config.model or "")
        self.adapter = adapter(self.spec.name)
        self.name = (config.model or "").strip()
        self.params: dict[str, Any] = {"reasks": config.reasks}
        self.usage = usage if usage is not None else Usage()
        self.usage.billing = BILLING
        self.seconds = 0.0
        self.sessions: list[str] = []
        self._env = os.environ if env is None else env
        self._workdir = workdir
        self._clock = clock
        self._started: float | None = None

    @property
    def executable(self) -> str:
        return self.adapter.executable

    def where(self) -> str | None:
        """The executable's full path on ``PATH``, or None."""
        return shutil.which(self.adapter.executable, path=self._env.get("PATH"))

    def _time_left(self) -> float:
        if self._started is None:
            self._started = self._clock()
        return self.config.agent_seconds - (self._clock() - self._started)

    def _check_caps(self, prompt: str, stage: str) -> float:
        left = self._time_left()
        if left < MIN_CALL_SECONDS:
            raise BudgetExceeded(f"agent_seconds cap reached ({self.config.agent_seconds:.0f} s per session): "
                                 f"{self.config.agent_seconds - left:.0f} s spent before the {stage or 'next'} call")
        cap = self.config.agent_tokens
        if cap is not None:
            estimate = count(prompt)
            if self.usage.tokens + estimate > cap:
                raise BudgetExceeded(f"agent_tokens cap reached ({cap:,} tokens per session): {self.usage.tokens:,} "
                                     f"spent, the {stage or 'next'} call needs about {estimate:,} more")
        return left

    def complete(self, messages: list[Message], response_model: type[M], *, stage: str = "") -> M:
        """Ask the CLI for ``response_model``; see the module docstring.

        Raises ``LLMUnavailable``, ``LLMCallFailed``, ``LLMInvalidOutput`` or ``BudgetExceeded``.
        """
        if self._env.get(NESTED_ENV):
            raise LLMUnavailable(f"not starting {self.adapter.executable} inside a nested agent run ({NESTED_ENV} is "
                                 "set): the recursion guard")
        executable = self.where()
        if executable is None:
            raise LLMUnavailable(f"{self.adapter.executable} is not on PATH (model {self.name}): install it or "
                                 "choose another model")
        from pipeline.llm.client import mask_messages

        masked = mask_messages(messages)
        system = "\n\n".join(m["content"] for m in masked if m.get("role") == "system" and m.get("content"))
        user = "\n\n".join(m["content"] for m in masked if m.get("role") != "system" and m.get("content"))
        schema = response_model.model_json_schema()
        problem: str | None = None
        attempts = self.config.reasks + 1
        for _ in range(attempts):
            asked = user if problem is None else f"{user}\n\n{RETRY_NOTE.format(problem=problem)}"
            left = self._check_caps(f"{system}\n\n{asked}", stage)
            reply = self._call(executable, system, asked, schema, left, stage)
            try:
                answer = reply.data if reply.data is not None else find_json(reply.text or "")
                return response_model.model_validate(answer)
            except (ValidationError, ValueError) as exc:
                problem = _one_line(exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc), 200)
        raise LLMInvalidOutput(f"{self.name}: the answer failed validation after {attempts} attempt(s): {problem}",
                               attempts=attempts)

    def _call(self, executable: str, system: str, user: str, schema: dict, timeout: float, stage: str) -> Reply:
        workdir = self._workdir or workdir_for(self.config, self._env)
        with tempfile.TemporaryDirectory(prefix="duck-tape-agent-") as scratch:
            request = Request(system, user, schema, self.spec.model, workdir, Path(scratch))
            argv, stdin = self.adapter.command(request)
            try:
                done = run([executable, *argv], stdin, cwd=workdir, timeout=timeout,
                           env=nested_env(self._env, workdir=workdir))
            except CliTimeout as exc:
                self.seconds += exc.seconds
                self.usage.failed += 1
                raise LLMCallFailed(f"{self.name}: {self.adapter.executable} was stopped after {exc.seconds:.0f} s "
                                    f"(agent_seconds = {self.config.agent_seconds:.0f} per session)") from None
            except OSError as exc:
                self.usage.failed += 1
                raise LLMUnavailable(f"{self.name}: cannot run {executable}: {exc.strerror or exc}") from None
        self.seconds += done.seconds
        reply = self.adapter.parse(done.stdout)
        if reply.session:
            self.sessions.append(reply.session)
        answered = reply.data is not None or bool((reply.text or "").strip())
        estimated = reply.sent is None
        sent = reply.sent if reply.sent is not None else count(f"{system}\n\n{user}")
        received = reply.received if reply.received is not None else count(reply.text or str(reply.data or ""))
        if done.returncode != 0 or not answered or reply.failed:
            self.usage.failed += 1
            self.usage.sent += sent
            self.usage.received += received
            said = reply.error if done.stdout.strip() else None  # an empty stdout: the reason is on stderr
            why = said or _one_line(done.stderr) or reply.error or "no answer on stdout"
            raise LLMCallFailed(f"{self.name}: {self.adapter.executable} exited with {done.returncode}: {why}")
        self.usage.add(sent=sent, received=received, stage=stage, estimated=estimated)
        return reply
