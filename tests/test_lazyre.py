"""``pipeline.lazyre``: module-level patterns compiled on first use, and every rules pattern still valid."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import pipeline.stages.rules as rules_pkg
from pipeline.lazyre import LazyPattern, lazy_re


def test_compiles_on_first_use_and_behaves_like_the_compiled_pattern():
    lazy = lazy_re(r"(?P<word>go(?:ing)?)\s+with\s+(\w+)", re.IGNORECASE)
    real = re.compile(lazy.pattern, re.IGNORECASE)
    assert lazy._compiled is None  # nothing compiled yet
    text = "We're GOING with Redis, not going  with memcached"
    assert lazy.search(text).group("word", 2) == real.search(text).group("word", 2) == ("GOING", "Redis")
    assert lazy._compiled is not None and lazy.compiled is lazy._compiled
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text) == [("GOING", "Redis"), ("going", "memcached")]
    assert lazy.sub("X", text) == real.sub("X", text)
    assert lazy.subn("X", text) == real.subn("X", text)
    assert lazy.split(text) == real.split(text)
    assert lazy.match(text) is None and lazy.fullmatch("go with it").group(2) == "it"


def test_an_invalid_pattern_raises_on_first_use_and_other_attributes_are_errors():
    broken = lazy_re(r"(unclosed")
    with pytest.raises(re.error):
        broken.search("x")
    with pytest.raises(AttributeError):
        lazy_re("x").groupindex  # noqa: B018 - not part of the stand-in


def _lazy_patterns(value, seen):
    if isinstance(value, LazyPattern):
        yield value
    elif isinstance(value, (tuple, list, frozenset, set)) and id(value) not in seen:
        seen.add(id(value))
        for item in value:
            yield from _lazy_patterns(item, seen)
    elif hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        for name in value.__dataclass_fields__:
            yield from _lazy_patterns(getattr(value, name), seen)


def test_every_rules_pattern_compiles():
    """Lazy compilation must not hide a broken pattern in a branch few transcripts reach."""
    found = []
    for info in pkgutil.iter_modules(rules_pkg.__path__):
        module = importlib.import_module(f"{rules_pkg.__name__}.{info.name}")
        seen: set[int] = set()
        for value in vars(module).values():
            found.extend(_lazy_patterns(value, seen))
    unique = {id(p): p for p in found}.values()  # modules re-export each other's patterns
    assert len(unique) >= 150  # the rules engine's module-level patterns (165 when this was written)
    for pattern in unique:
        assert isinstance(pattern.compiled, re.Pattern), pattern
