"""JSON schemas for agent CLIs: the strict form structured outputs require, and the answer found in text.

``strict``: OpenAI structured outputs (Codex's ``--output-schema``, openai/codex ``docs/exec.md``: "must follow the
strict schema rules", platform.openai.com/docs/guides/structured-outputs) accept an object schema only when every
property is listed in ``required`` and ``additionalProperties`` is ``false``, and reject ``default``.  A pydantic
schema marks optional fields by leaving them out of ``required`` and giving a ``default``; ``strict`` lists every
property as required and drops the defaults (an optional field of ours is nullable or has a usable empty value,
so the answer still validates with the model that produced it).

``find_json``: the answer object in a model's text: the whole text, else a fenced ```` ```json ```` block, else the
first ``{`` … ``}`` span that parses.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` in strict form (module docstring); ``schema`` itself is not changed."""
    out = copy.deepcopy(schema)
    _walk(out)
    return out


def _walk(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item)
        return
    if not isinstance(node, dict):
        return
    node.pop("default", None)
    properties = node.get("properties")
    if isinstance(properties, dict):
        node["required"] = list(properties)
        node["additionalProperties"] = False
    elif node.get("type") == "object" and "additionalProperties" not in node:
        node["additionalProperties"] = False
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for child in value.values():
                _walk(child)
        elif isinstance(value, (dict, list)):
            _walk(value)


def find_json(text: str) -> dict[str, Any]:
    """The JSON object in ``text`` (module docstring).  Raises ValueError naming what was found instead."""
    stripped = (text or "").strip()
    if not stripped:
        raise ValueError("the answer is empty")
    candidates = [stripped, *(m.group(1) for m in _FENCE.finditer(stripped))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError(f"no JSON object in the answer (it starts {stripped[:60]!r})")
