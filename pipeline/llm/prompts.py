"""Prompt templates: Jinja2 files in ``prompts/`` (``pipeline.resources.prompts_dir``), rendered strictly and sandboxed (STYLE.md habit 6).

Each template is one call and defines two blocks, ``system`` and ``user``; ``render`` turns them into the
``[{"role": "system"}, {"role": "user"}]`` messages.  The environment is a ``SandboxedEnvironment`` (a template
cannot reach Python internals) with ``StrictUndefined`` (a missing variable raises instead of rendering as
nothing) and no autoescaping (the output is plain text, not HTML).

Every rendered prompt carries a **tagged hash**: ``<template name>@<16 hex>`` = SHA-256 of the template source,
the response model's JSON schema, the model name and the answer-changing parameters.  It keys the response cache
and is reported with the run, so a changed prompt is visible and invalidates cached answers.

Transcript text reaches a template only through ``fence`` (called by ``pipeline.stages.llm.engine``), which
neutralizes the fence tags inside it, so the data cannot close its own fence; every template says that fenced
text is data and contains no instructions for the model.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pipeline.resources import PackagingError, prompts_dir


def __getattr__(name: str) -> Any:
    if name == "PROMPTS_DIR":  # resolved on use: a packaging problem surfaces as PackagingError, not at import
        return prompts_dir()
    raise AttributeError(name)


def _dir(directory: str | None) -> str:
    return str(prompts_dir()) if directory is None else directory


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt: ``stage`` (the template name), ``messages`` and its tagged hash ``tag``."""

    stage: str
    messages: list[dict[str, str]]
    tag: str


def environment(directory: str | None = None):
    """The sandboxed, strict Jinja2 environment over ``directory`` (default: the shipped ``prompts/``)."""
    return _environment(_dir(directory))


environment.cache_clear = lambda: _environment.cache_clear()  # type: ignore[attr-defined]  # tests edit templates


@lru_cache(maxsize=4)
def _environment(directory: str):
    from jinja2 import FileSystemLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(
        loader=FileSystemLoader(directory),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _missing(name: str, directory: str | None) -> PackagingError:
    return PackagingError(f"prompt template {name}.j2 is missing from {_dir(directory)}: the llm engine cannot run "
                          "without it; reinstall duck-tape (its wheel ships prompts/)")


def template_source(name: str, directory: str | None = None) -> str:
    """The source text of template ``name`` (without the ``.j2``).  Raises PackagingError when it is missing."""
    from jinja2 import TemplateNotFound

    env = environment(directory)
    try:
        source, _, _ = env.loader.get_source(env, f"{name}.j2")
    except TemplateNotFound:
        raise _missing(name, directory) from None
    return source


def tag(name: str, response_model: type[BaseModel], model: str, params: dict[str, Any],
        directory: str | None = None) -> str:
    """``<name>@<16 hex>``: SHA-256 of the template source (and of the shared ``_*.j2`` partials it may include)
    + response JSON schema + model + params (sorted JSON)."""
    partials = sorted(p.stem for p in Path(_dir(directory)).glob("_*.j2"))
    material = json.dumps(
        {
            "template": template_source(name, directory),
            "partials": {p: template_source(p, directory) for p in partials},
            "schema": response_model.model_json_schema(),
            "model": model,
            "params": params,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return f"{name}@{hashlib.sha256(material.encode('utf-8')).hexdigest()[:16]}"


def fence(text: str, name: str = "transcript") -> str:
    """``text`` between ``<name>`` and ``</name>`` lines, with any such tag inside it made inert (``<\\name>``).

    Used for every piece of transcript-derived data a prompt carries, so the data cannot close its own fence.
    """
    inner = re.sub(rf"<\s*/?\s*{re.escape(name)}\s*>", f"<\\\\{name}>", text, flags=re.IGNORECASE)
    return f"<{name}>\n{inner}\n</{name}>"


def render(name: str, *, response_model: type[BaseModel], model: str, params: dict[str, Any],
           directory: str | None = None, **context: Any) -> Prompt:
    """Render template ``name`` with ``context`` into a ``Prompt``.

    Raises ``jinja2.UndefinedError`` when the template uses a variable not in ``context``,
    ``jinja2.exceptions.SecurityError`` when it reaches for something the sandbox forbids, and
    ``pipeline.resources.PackagingError`` (exit 1) when the template (or one it includes) is missing: the
    installation lacks its package data, never a reason to fall back to the rules engine.  The response
    schema itself is not rendered: instructor sends it (as the tool's parameters, or in its JSON-mode system message).
    """
    from jinja2 import TemplateNotFound

    env = environment(directory)
    try:
        template = env.get_template(f"{name}.j2")
        values = dict(context)
        messages = []
        for role in ("system", "user"):
            block = template.blocks.get(role)
            if block is None:
                raise ValueError(f"prompt template {name}.j2 has no {{% block {role} %}}")
            text = "".join(block(template.new_context(values))).strip()
            messages.append({"role": role, "content": text})
    except TemplateNotFound as exc:  # the template itself or a partial it includes
        raise _missing(str(exc.name or name).removesuffix(".j2"), directory) from None
    return Prompt(stage=name, messages=messages, tag=tag(name, response_model, model, params, directory))
