"""pipeline.tokens: offline token counting with the encodings litellm ships (STACK.md "tiktoken")."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pipeline import tokens


def test_counts_known_texts():
    # cl100k_base: "hello world" is two tokens; o200k_base knows the same two words
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("hello world", "o200k_base") == 2
    assert tokens.count_tokens("") == 0
    # special-token text is counted as ordinary text, never refused
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_unknown_encoding_is_refused():
    with pytest.raises(ValueError, match="litellm ships"):
        tokens.count_tokens("x", "p50k_base")


def test_tokenizer_dir_holds_the_encoding_files():
    folder = tokens.tokenizer_dir()
    assert folder is not None and folder.name == "tokenizers"
    # tiktoken caches a download under the SHA-1 of its URL: the cl100k_base file is there
    assert (folder / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").stat().st_size > 1_000_000


def test_works_with_the_network_blocked_and_without_importing_litellm(tmp_path):
    """A fresh interpreter whose sockets cannot connect, with TIKTOKEN_CACHE_DIR pointing at an empty folder
    (where tiktoken would download into): counting still works, and litellm is never imported."""
    script = textwrap.dedent(
        """
        import socket, sys
        def refuse(*args, **kwargs):
            raise OSError("network blocked by the test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from pipeline.tokens import count_tokens
        print(count_tokens("Redis listens on port 6380, not 6379."), count_tokens("hi", "o200k_base"))
        print("litellm" in sys.modules)
        """
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    counts, imported = done.stdout.split("\n")[:2]
    first, second = (int(x) for x in counts.split())
    assert first == tokens.count_tokens("Redis listens on port 6380, not 6379.") and first > 5
    assert second == 1
    assert imported == "False"
    assert list(tmp_path.iterdir()) == []  # nothing was downloaded into the empty cache folder
