"""Text helpers of the rules engine (pipeline.stages.rules.text)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.stages.rules.text import (
    clip,
    local_spans,
    norm_key,
    norm_ts,
    quote,
    sentence_spans,
    similar,
    tokens,
)

MESSAGE = (
    "I looked at the handlers. We're going with Redis because it is shared across pods, e.g. the API workers.\n"
    "\n"
    "- First item here\n"
    "- second item: ok\n"
    "1. Do X.\n"
    "2. Do Y\n"
    "\n"
    "```python\n"
    "x = 1. Foo\n"
    "```\n"
    "This is a hard\n"
    "wrapped line. Mr. Smith vs. the rest took 200 ms. done. next `SET ... EX 30` here"
)


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


def test_sentence_spans():
    assert sentences(MESSAGE) == [
        "I looked at the handlers.",
        "We're going with Redis because it is shared across pods, e.g. the API workers.",
        "First item here",
        "second item: ok",
        "Do X.",
        "Do Y",
        "This is a hard\nwrapped line.",
        "Mr. Smith vs. the rest took 200 ms.",
        "done.",
        "next `SET ... EX 30` here",
    ]


def test_local_spans_equal_sentence_spans_of_the_lines_that_matter():
    full = sentence_spans(MESSAGE)
    pos = MESSAGE.index("Redis")
    got = local_spans(MESSAGE, [pos])
    assert got == full[:2] + full[2:3]  # its line, and the next non-blank line
    pos = MESSAGE.index("wrapped")
    assert local_spans(MESSAGE, [pos]) == full[6:]
    assert local_spans(MESSAGE, [MESSAGE.index("Foo")]) == []  # inside fenced code


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Done. ", "next step", "\n", "- item ", "a.b ", "Use X. ", "so ", "`a. B` ", "\n\n", "wrapped\n"]), max_size=25))
def test_local_spans_agree_with_sentence_spans(parts):
    text = "".join(parts)
    full = sentence_spans(text)
    for a, b in full:
        local = local_spans(text, [a])
        assert (a, b) in local


def test_clip():
    assert clip("short  text\nhere", 50) == "short text here"
    text = "First sentence is here. Second sentence is a good deal longer than the first one."
    assert clip(text, 40) == "First sentence is here.…"
    assert clip(text, 60) == "First sentence is here. Second sentence is a good deal…"
    assert clip("word " * 40, 30) == "word word word word word word…"
    assert len(clip("x" * 500, 100)) == 100


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("2026-09-01T10:00:00.000Z", "2026-09-01T10:00:00Z"),
        ("2026-09-01T10:00:00Z", "2026-09-01T10:00:00Z"),
        ("2026-09-01T12:00:00+02:00", "2026-09-01T10:00:00Z"),
        ("2026-09-01T10:00", "2026-09-01T10:00:00Z"),
        ("2026-09-01 10:00:00.123456", "2026-09-01T10:00:00Z"),
        ("yesterday", None),
        (None, None),
    ],
)
def test_norm_ts(raw, expected):
    assert norm_ts(raw) == expected


def test_keys_and_similarity():
    assert norm_key("**The** Token-Bucket, in Redis!") == "token bucket in redis"
    assert norm_key("use `httpx`") == "httpx"
    assert tokens("keying buckets by the API key") == frozenset({"key", "bucket", "api"})
    a, b = tokens("a token bucket in Redis"), tokens("the token buckets in redis")
    assert similar(a, b, jaccard=0.8, contain=0.9)
    assert not similar(tokens("Redis"), tokens("Postgres"), jaccard=0.5, contain=0.5)


def test_quote_is_verbatim_and_bounded():
    text = "x" * 50 + " The decision: " + "y" * 400
    q = quote(text, 0, len(text), focus=text.index("decision"))
    assert q in text and len(q) <= 300
    long = "a" * 200 + " going with Redis " + "b" * 300
    q = quote(long, 0, len(long), focus=long.index("going"))
    assert "going with Redis" in q and len(q) == 300
