"""Generate realistic Claude Code JSONL transcripts of a given size for benchmarks (no network, seeded)."""

from __future__ import annotations

import random
import uuid
from datetime import date, timedelta

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


def _line(rng: random.Random, base: dict, kind: str, n: int, tag: str = "") -> dict:
    """One record of kind ``prompt``, ``text``, ``call`` or ``result``.  A non-empty ``tag`` (``REP``) goes into the
    uuid, the message and tool ids and the prose, where ``generate`` replaces it per repetition of a chunk."""
    ts = f"2026-09-01T{10 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    rid = str(uuid.UUID(int=rng.getrandbits(128)))
    rec = dict(base, uuid=rid[: -len(tag)] + tag if tag else rid, timestamp=ts)
    words = f" (pass {tag})" if tag else ""
    if kind == "prompt":
        rec.update(type="user", message={"role": "user", "content": rng.choice(PROMPTS) + words})
    elif kind == "text":
        rec.update(type="assistant", message={"id": f"msg_{tag}{n:08d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [{"type": "text", "text": rng.choice(ASSISTANT) + words}]})
    elif kind == "call":
        tool = rng.choice(["Read", "Bash", "Edit", "Grep"])
        arg = {"Read": {"file_path": rng.choice(FILES)}, "Bash": {"command": rng.choice(COMMANDS)},
               "Edit": {"file_path": rng.choice(FILES), "old_string": "a", "new_string": "b"},
               "Grep": {"pattern": "RateLimiter", "path": "src"}}[tool]
        rec.update(type="assistant", message={"id": f"msg_{tag}{n:08d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                              "content": [{"type": "tool_use", "id": f"toolu_{tag}{n:08d}", "name": tool,
                                                           "input": arg}]})
    else:  # result: a large file read or test output
        body = "\n".join(f"{i:5d}  def handler_{i}(request): return limiter.check(request.customer_id)" for i in range(rng.randint(20, 160)))
        rec.update(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{tag}{n - 1:08d}", "content": body, "is_error": rng.random() < 0.05}]})
    return rec


_BASE = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
         "sessionId": "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f", "version": "2.0.55", "gitBranch": "feature/rate-limit"}
_HEAD = b'{"type":"permission-mode","permissionMode":"default","sessionId":"5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f"}\n'
_CYCLE = ["prompt", "text", "call", "result", "text", "call", "result", "call", "result"]
REP = "c0ffee"  # six hex digits: the per-repetition placeholder in a chunk (see ``generate``)
CHUNK_BYTES = 4_000_000  # above twice this, ``generate`` repeats one chunk of this size
_DAY = b"2026-09-01T"


def _records(rng: random.Random, target_bytes: int, tag: str = ""):
    """Serialised records (bytes, newline-terminated) until about ``target_bytes`` bytes are produced."""
    written = n = 0
    while written < target_bytes:
        kind = _CYCLE[n % len(_CYCLE)] if n % 40 else "prompt"
        data = orjson.dumps(_line(rng, _BASE, kind, n, tag)) + b"\n"
        yield data
        written += len(data)
        n += 1


def generate(path: str, target_bytes: int, seed: int = 7, *, chunk_bytes: int = CHUNK_BYTES) -> int:
    """Write a Claude Code JSONL transcript of about ``target_bytes`` bytes to ``path``; return lines written.

    Up to ``2 * chunk_bytes`` every record is drawn afresh (the 5 MB bench file is the same as ever).  Above that,
    one chunk of ~``chunk_bytes`` is drawn once and written again and again, streaming, each copy with fresh uuids,
    message and tool ids (the ``REP`` placeholder becomes the copy's number in hex), a date one day later, and its
    prompts and assistant lines carrying the copy's number (so no two copies hold the same text): 1 GB takes a few
    seconds.  The last copy is cut at a line end near ``target_bytes``.
    """
    rng = random.Random(seed)
    if target_bytes <= 2 * chunk_bytes:
        n = 0
        with open(path, "wb") as fh:
            fh.write(_HEAD)
            for n, data in enumerate(_records(rng, target_bytes), 1):
                fh.write(data)
        return n
    chunk_lines = list(_records(rng, chunk_bytes, REP))
    chunk = b"".join(chunk_lines)
    tag, start = REP.encode(), date(2026, 9, 1)
    written, lines, copy = len(_HEAD), 0, 0
    with open(path, "wb") as fh:
        fh.write(_HEAD)
        while written < target_bytes:
            day = (start + timedelta(days=copy)).isoformat().encode() + b"T"
            data = chunk.replace(tag, b"%06x" % copy).replace(_DAY, day)
            room = target_bytes - written
            if len(data) > room:  # the last copy: cut at the first line end past the target
                data = data[: data.index(b"\n", room) + 1] if b"\n" in data[room:] else data
            fh.write(data)
            written += len(data)
            lines += data.count(b"\n")
            copy += 1
    return lines


# Prose-heavy shapes (issue 11 part 4): a 4.9 MB transcript of long user prompts took 51 s to checkpoint.  The
# sentences are ordinary working prose (requirements, context, a question now and then), not decision phrasings,
# drawn at random so no two prompts are the same text.
_SUBJECTS = ["the checkout service", "our billing team", "the nightly export", "the mobile client", "this module",
             "the staging cluster", "the old importer", "the search index", "the onboarding flow", "the cache layer"]
_VERBS = ["depends on", "talks to", "was written before", "is slower than", "replaced", "still reads from",
          "sends events to", "shares a schema with", "is owned by the same people as", "was migrated after"]
_OBJECTS = ["the payments gateway", "a legacy Postgres table", "the reporting dashboard", "an S3 bucket in eu-west-1",
            "the customer profile API", "a cron job on the bastion host", "the feature flag service",
            "the analytics pipeline", "a vendored copy of the SDK", "the warehouse loader"]
_TAILS = ["and nobody has touched it in a while", "which is why the numbers drift at month end",
          "as far as I remember", "according to the wiki page", "but the docs are out of date",
          "so keep that in mind when you read the code", "and the tests around it are thin",
          "which surprised me the first time", "at least in production", "though I may be wrong about the details"]
_QUESTIONS = ["Can you look into how that works?", "Does that match what you see in the repository?",
              "What would you check first?", "Is there a simpler way to do this?"]


_RULES = ["we must keep", "please don't change", "never rename", "always log", "only touch", "make sure to test",
          "avoid rewriting", "at most two people review"]
_WORDS = ("invoice ledger tenant quota webhook cursor shard replica token session badge coupon voucher parcel "
          "courier depot carrier manifest refund chargeback payout settlement merchant storefront basket wishlist "
          "catalogue variant bundle pricing discount loyalty referral campaign newsletter segment cohort funnel "
          "retention churn forecast budget ledger audit compliance consent retention archive snapshot backup "
          "failover region latency throughput backlog queue worker scheduler cronjob pipeline dashboard alert "
          "pager incident runbook postmortem rollout canary migration schema index trigger view partition").split()


def _noun(rng: random.Random) -> str:
    return f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}"


def _prose(rng: random.Random, size: int) -> str:
    """About ``size`` characters of paragraphs of plain sentences (some questions, some requirements of the kind
    real prompts carry, blank lines between paragraphs); word pairs drawn from a vocabulary keep sentences distinct."""
    paras: list[str] = []
    total = 0
    while total < size:
        sents = []
        for _ in range(rng.randint(3, 7)):
            roll = rng.random()
            if roll < 0.1:
                sents.append(rng.choice(_QUESTIONS))
            elif roll < 0.25:
                s = f"{rng.choice(_RULES)} the {_noun(rng)} code because the {_noun(rng)} job {rng.choice(_VERBS)} it."
                sents.append(s[0].upper() + s[1:])
            else:
                s = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} the {_noun(rng)} {rng.choice(_TAILS)}."
                sents.append(s[0].upper() + s[1:])
        para = " ".join(sents)
        paras.append(para)
        total += len(para) + 2
    return "\n\n".join(paras)


def generate_prose(path: str, target_bytes: int, *, role: str = "user", prose_chars: int = 4000, seed: int = 11) -> int:
    """A Claude Code JSONL transcript of about ``target_bytes`` bytes made mostly of prose; return lines written.

    ``role="user"``: many long user prompts of ``~prose_chars`` characters each, each answered by a short assistant
    line (the 51 s shape of issue 11).  ``role="assistant"``: short user prompts, each answered by a long assistant
    message of prose.  A small ``prose_chars`` (say 80) gives the many-small-prompts shape.
    """
    rng = random.Random(seed)
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
            "sessionId": "5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f", "version": "2.0.55", "gitBranch": "feature/rate-limit"}
    written = n = 0
    with open(path, "wb") as fh:
        fh.write(b'{"type":"permission-mode","permissionMode":"default","sessionId":"5b0e8a52-1d3c-4f7e-9a55-0c1f2b3d4e5f"}\n')
        while written < target_bytes:
            ts = f"2026-09-01T{10 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
            rid = str(uuid.UUID(int=rng.getrandbits(128)))
            if n % 2 == 0:
                text = _prose(rng, prose_chars) if role == "user" else rng.choice(PROMPTS)
                rec = dict(base, uuid=rid, timestamp=ts, type="user", message={"role": "user", "content": text})
            else:
                text = _prose(rng, prose_chars) if role == "assistant" else rng.choice(ASSISTANT)
                rec = dict(base, uuid=rid, timestamp=ts, type="assistant",
                           message={"id": f"msg_{n:08d}", "role": "assistant", "model": "claude-sonnet-4-5",
                                    "content": [{"type": "text", "text": text}]})
            data = orjson.dumps(rec) + b"\n"
            fh.write(data)
            written += len(data)
            n += 1
    return n
