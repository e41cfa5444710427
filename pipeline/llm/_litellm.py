"""The one place that imports litellm and instructor (STACK.md "litellm", "instructor").

``import litellm`` costs ~3 s and ~200 MB and, without the offline settings, fetches a model cost map from the
internet at import (a network that drops packets blocks it for 5 s).  So it is imported lazily, only by the llm
engine, and ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true`` are set before the import.
The hook and extract paths (``pipeline.entry``, ``extract-raw``) and the rules engine never reach this module.

The libraries' own logging is silenced here: instructor logs every failed attempt at ERROR level, which Python's
last-resort handler would print on stderr, and the CLI promises one line per fallback instead.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from types import ModuleType

OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
_QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "instructor", "openai", "httpx", "httpx2")


def set_offline_env() -> None:
    """Set litellm's offline variables (STACK.md) and point tiktoken at litellm's bundled encodings."""
    os.environ.update(OFFLINE_ENV)
    from pipeline.tokens import tokenizer_dir

    folder = tokenizer_dir()
    if folder is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        os.environ["CUSTOM_TIKTOKEN_CACHE_DIR"] = str(folder)


@lru_cache(maxsize=1)
def load() -> tuple[ModuleType, ModuleType]:
    """``(litellm, instructor)``, imported once with the offline settings.

    Raises ImportError when either is not installed (the caller falls back to the rules engine).
    """
    set_offline_env()
    import instructor
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    for name in _QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [logging.NullHandler()]
        logger.propagate = False
        logger.setLevel(logging.CRITICAL + 1)  # children (instructor.v2.retry …) inherit it
    return litellm, instructor
