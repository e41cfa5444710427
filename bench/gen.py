"""Generate realistic Claude Code JSONL transcripts of a given size for benchmarks (no network, seeded)."""

from __future__ import annotations

import random
import uuid

import orjson

PROMPTS = [
    "Add rate limiting to the checkout API, 10 requests per minute per customer.",
    "The refund endpoint needs the same limiter, keep the limits configurable.",
    "Why does test_checkout_burst fail on CI but not locally?",
    "yes, do that",
    "no, don't use a fixed window, use the token bucket",
]
ASSISTANT = [
    "I'll start by reading the checkout handler and the Redis client setup.",
    "We're going with a token bucket in Redis because it survives restarts and is shared across pods.",
    "Ruled out the in-memory limiter: it resets on every deploy and each pod would count separately.",
    "The test failed because the fake clock was not advanced between requests; fixing the fixture now.",
    "Next I'll wire the limiter into the refund endpoint and add tests for the Retry-After header.",
]
FILES = ["src/shop/api/checkout.py", "src/shop/api/refund.py", "src/shop/limits.py", "tests/test_limits.py"]
COMMANDS = ["pytest -q tests/test_limits.py", "git diff --stat", "ruff check src", "pytest -q"]


def _line(rng: random.Random, base: dict, kind: str, n: int) -> dict:
    ts = f"2026-09-01T{10 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    rec = dict(base, uuid=str(uuid.UUID(int=rng.getrandbits(128))), timestamp=ts)
    if kind == "prompt":
        rec.update(type="user", message={"role": "user", "content": rng.choice(PROMPTS)})
    elif kind == "text":
        rec.update(type="assistant", message={"id": f"msg_{n:08d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [{"type": "text", "text": rng.choice(ASSISTANT)}]})
    elif kind == "call":
        tool = rng.choice(["Read", "Bash", "Edit", "Grep"])
        arg = {"Read": {"file_path": rng.choice(FILES)}, "Bash": {"command": rng.choice(COMMANDS)},
               "Edit": {"file_path": rng.choice(FILES), "old_string": "a", "new_string": "b"},
               "Grep": {"pattern": "RateLimiter", "path": "src"}}[tool]
        rec.update(type="assistant", message={"id": f"msg_{n:08d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [{"type": "tool_use", "id": f"toolu_{n:08d}", "name": tool, "input": arg}]})
    else:  # result: a large file read or test output
        body = "\n".join(f"{i:5d}  def handler_{i}(request): return limiter.check(request.customer_id)" for i in range(rng.randint(20, 160)))
        rec.update(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n - 1:08d}", "content": body, "is_error": rng.random() < 0.05}]})
    return rec


def generate(path: str, target_bytes: int, seed: int = 7) -> int:
    """Write a Claude Code JSONL transcript of about ``target_bytes`` bytes to ``path``; return lines written."""
    rng = random.Random(seed)
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
            "sessionId": "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f", "version": "2.0.55", "gitBranch": "feature/rate-limit"}
    cycle = ["prompt", "text", "call", "result", "text", "call", "result", "call", "result"]
    written = n = 0
    with open(path, "wb") as fh:
        fh.write(b'{"type":"permission-mode","permissionMode":"default","sessionId":"5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f"}\n')
        while written < target_bytes:
            kind = cycle[n % len(cycle)] if n % 40 else "prompt"
            data = orjson.dumps(_line(rng, base, kind, n)) + b"\n"
            fh.write(data)
            written += len(data)
            n += 1
    return n
