"""The engine flags shared by ``recover``, ``resume`` and ``eval``: ``--engine``, ``--model``, ``--api-base``,
``--max-tokens`` (issue 4, item 9).

``engine_options`` adds them to a click command; ``config_from_flags`` resolves the full ``Config`` with the
precedence of ``pipeline.config.resolve`` (flag > ``DUCK_TAPE_*`` > config file > default).  Only click and the
stdlib are imported here, so ``duck-tape --help`` stays fast.
"""

from __future__ import annotations

from typing import Callable

import click

ENGINE_HELP = ("rules: deterministic, no model.  llm: litellm + instructor, each section falling back to rules.  "
               "auto: llm when a model is configured.  [default: DUCK_TAPE_ENGINE, else auto]")


def engine_options(command: Callable) -> Callable:
    """Decorate a click command with the four engine flags (keyword arguments engine, model, api_base, max_tokens)."""
    options = [
        click.option("--engine", type=click.Choice(["rules", "llm", "auto"]), default=None, help=ENGINE_HELP),
        click.option("--model", default=None, metavar="MODEL",
                     help="litellm model string, e.g. openai/gpt-4o-mini, anthropic/…, ollama/llama3.1 "
                          "[default: DUCK_TAPE_MODEL, else none]."),
        click.option("--api-base", default=None, metavar="URL",
                     help="Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 "
                          "[default: DUCK_TAPE_API_BASE]."),
        click.option("--max-tokens", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Cap on the tokens one run sends and receives; past it the remaining sections use the "
                          "rules engine [default: DUCK_TAPE_MAX_TOKENS, else no cap]."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def config_from_flags(engine: str | None, model: str | None, api_base: str | None, max_tokens: int | None):
    """The resolved ``pipeline.config.Config`` for these flag values (None = not given).

    Raises ``pipeline.errors.InputError`` (exit 2) for a bad environment or config-file value.
    """
    from pipeline.config import load

    return load({"engine": engine, "model": model, "api_base": api_base, "max_tokens": max_tokens})
