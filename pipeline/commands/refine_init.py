"""``duck-tape init``'s offer of the background refinement (issue 25): off by default, asked on a terminal.

With ``--refine`` (or a yes on a terminal) ``init`` writes ``refine = true`` into the ``[llm]`` table of the
project's ``.duck-tape/config.toml`` (``--user``: the user's config file, ``pipeline.config.user_file``) and, when no
model is configured, ``model = "agent:<cli>"`` for the first harness set up whose CLI is on ``PATH``
(``pipeline.llm.agents.HARNESS_AGENT``).  ``--no-refine`` writes ``refine = false`` where the file turned it on.
The table is edited line by line (other keys, comments and tables kept as they are).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

import click

_TABLE = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


def set_keys(text: str, values: dict[str, str]) -> str:
    """``text`` (a TOML file, possibly empty) with each ``key = value`` of ``values`` (values already TOML) set in
    its ``[llm]`` table: an existing line of the key replaced, a missing key appended to the table, a missing table
    added at the end."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if (m := _TABLE.match(line)) and m[1].strip() == "llm"), None)
    if start is None:
        block = ["[llm]", *(f"{k} = {v}" for k, v in values.items())]
        body = "\n".join(lines).rstrip("\n")
        return (body + "\n\n" if body else "") + "\n".join(block) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
    missing = dict(values)
    for i in range(start + 1, end):
        m = re.match(r"^\s*([A-Za-z0-9_-]+)\s*=", lines[i])
        if m and m[1] in missing:
            lines[i] = f"{m[1]} = {missing.pop(m[1])}"
    last = end
    while last - 1 > start and not lines[last - 1].strip():
        last -= 1
    lines[last:last] = [f"{k} = {v}" for k, v in missing.items()]
    return "\n".join(lines) + "\n"


def config_path(root: Path, *, user: bool) -> Path:
    """The config file ``init`` writes: ``<root>/.duck-tape/config.toml``, or the user's with ``user``."""
    if user:
        from pipeline.config import user_file

        return user_file(os.environ)
    return root / ".duck-tape" / "config.toml"


def pick_agent(harnesses: list[str]) -> str | None:
    """``agent:<cli>`` for the first of ``harnesses`` whose CLI is on ``PATH``; None when none is."""
    import shutil

    from pipeline.llm.agents import HARNESS_AGENT, adapter

    for name in harnesses:
        agent = HARNESS_AGENT.get(name)
        if agent and shutil.which(adapter(agent).executable):
            return f"agent:{agent}"
    return None


def offer_refine(harnesses: list[str], root: Path, report: dict, *, user: bool, refine: bool | None, yes: bool,
                 dry_run: bool, interactive: bool, as_json: bool, offer: Callable[..., bool]) -> None:
    """Offer (or apply ``refine``) the background refinement (module docstring); ``offer`` is ``init``'s
    show-ask-write step.  What happened goes into ``report``."""
    from pipeline.config import resolve
    from pipeline.hooks.install import InstallPlan

    path = config_path(root, user=user)
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    config, _ = resolve(root=root)
    if refine is False:
        if not config.refine or old is None or "refine" not in old:
            return
        new = set_keys(old, {"refine": "false"})
        offer([InstallPlan("refine", path, old, new, "refine = false\n")], report, harness="refine",
              question=f"Turn the background refinement off in {path}?", present="", hint="",
              yes=True, dry_run=dry_run, interactive=interactive, as_json=as_json)
        return
    model = config.model or pick_agent(harnesses)
    if model is None:
        line = ("refine: no model configured and no agent CLI of these harnesses on PATH; set model (e.g. "
                "model = \"agent:claude-code\") in the config file, then run init --refine")
        report["warnings"].append(line)
        if not as_json:
            click.echo(f"note: {line}", err=True)
        return
    values = {"refine": "true"} if config.model else {"refine": "true", "model": f'"{model}"'}
    new = set_keys(old or "", values)
    caps = f"at most {config.agent_tokens:,} tokens and {config.agent_seconds:.0f} s per session" \
        if config.agent_tokens else f"at most {config.agent_seconds:.0f} s per session"
    question = (f"Refine every checkpoint in the background with {model}? It spends that model's tokens after each "
                f"compaction ({caps}); restore and resume then prefer its state. Write {path}?")
    done = offer([InstallPlan("refine", path, old, new, new)], report, harness="refine", question=question,
                 present=f"{path}: the background refinement is on already ({model}).",
                 hint=f"set refine = true in the [llm] table of {path}, or run init --refine", yes=yes or bool(refine),
                 dry_run=dry_run, interactive=interactive, as_json=as_json)
    if done:
        line = (f"refine: after each checkpoint a background job refines the state with {model} ({caps}); "
                "`duck-tape status` shows the tokens it spent; init --no-refine turns it off")
        report["warnings"].append(line)
        if not as_json:
            click.echo(f"note: {line}", err=True)
