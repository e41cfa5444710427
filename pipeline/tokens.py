"""Offline token counting with tiktoken (STACK.md "tiktoken": encodings from litellm's package folder).

tiktoken downloads its encoding files on first use, which fails without a network.  litellm ships
``cl100k_base`` and ``o200k_base`` (files named by the SHA-1 of their download URL, tiktoken's cache layout) in
``litellm/litellm_core_utils/tokenizers/``.  That folder is found with ``importlib.util.find_spec`` — which
does **not** import litellm (~3 s, ~200 MB) — and both ``TIKTOKEN_CACHE_DIR`` and ``CUSTOM_TIKTOKEN_CACHE_DIR``
point at it (litellm overwrites the first on its own first token count otherwise), so tiktoken reads the
files from disk and never opens a socket.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path

DEFAULT_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")  # the two litellm ships
_SUBDIR = ("litellm_core_utils", "tokenizers")


def tokenizer_dir() -> Path | None:
    """litellm's folder of tiktoken encoding files, or None when litellm is not installed (nothing imported)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent.joinpath(*_SUBDIR)
    return folder if folder.is_dir() else None


def _point_tiktoken_at_litellm() -> None:
    folder = tokenizer_dir()
    if folder is None:
        from pipeline.extras import install_line

        raise RuntimeError(f"token counting needs tiktoken and litellm's bundled encodings (the llm extra): "
                           f"{install_line()}")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    os.environ["CUSTOM_TIKTOKEN_CACHE_DIR"] = str(folder)


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING):
    """The tiktoken ``Encoding`` ``name`` (one of ``ENCODINGS``), loaded offline from litellm's folder.

    Raises ValueError for another name and RuntimeError when the encoding files cannot be found.
    """
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}: litellm ships {', '.join(ENCODINGS)}")
    _point_tiktoken_at_litellm()
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Number of tokens of ``text`` in encoding ``name`` (special-token text counted as ordinary text)."""
    if not text:
        return 0
    return len(encoding(name).encode_ordinary(text))


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether exact counts can be made here: tiktoken and litellm's encoding files are installed (the ``llm``
    extra); nothing is imported to find out."""
    from pipeline.extras import missing

    return not missing(("tiktoken", "litellm")) and tokenizer_dir() is not None


def estimate(text: str) -> int:
    """A token estimate without a tokenizer: UTF-8 bytes ÷ 4, rounded up (about cl100k_base's ratio on English
    prose and code)."""
    return (len(text.encode("utf-8")) + 3) // 4


def count_or_estimate(text: str) -> int:
    """``count_tokens(text)`` where ``available()``, else ``estimate(text)`` (the default install: issue 24)."""
    return count_tokens(text) if available() else estimate(text)
