"""The resume prompt as each harness's own command or skill (issue 25), installed by ``duck-tape init``.

One text, ``resume_prompt.md`` beside this module (the Claude Code plugin ships the same text as
``/duck-tape:resume``, ``commands/resume.md``), walks the agent through recovering the state itself with the MCP
tools ``raw_material`` and ``save_state`` (``pipeline.serve.agent_state``).  It runs only when the user invokes it:

=============  =================================================  ===========================  ======================
harness        project file (``--user``: under the user folder)   invoked as                   documented in
=============  =================================================  ===========================  ======================
Claude Code    ``.claude/commands/duck-tape-resume.md``           ``/duck-tape-resume``        code.claude.com/docs/en/slash-commands
Codex CLI      ``.agents/skills/duck-tape-resume/SKILL.md`` and   ``$duck-tape-resume``        developers.openai.com/codex/skills
               ``agents/openai.yaml`` (implicit use off);
               user: ``~/.agents/skills/``
Gemini CLI     ``.gemini/commands/duck-tape/resume.toml``         ``/duck-tape:resume``        gemini-cli docs/cli/custom-commands.md
opencode       ``.opencode/commands/duck-tape-resume.md``         ``/duck-tape-resume``        opencode docs/commands (``{command,commands}/**/*.md``)
Copilot CLI    ``.github/skills/duck-tape-resume/SKILL.md``;      ``/duck-tape-resume``        docs.github.com copilot-cli create-skills
               user: ``~/.copilot/skills/``
=============  =================================================  ===========================  ======================

Codex custom prompts (``~/.codex/prompts``) are deprecated in favour of skills; a skill whose ``agents/openai.yaml``
sets ``policy.allow_implicit_invocation: false`` runs only when named.  A Copilot skill has no such switch: its
description says to use it only when the user asks.  Pure planning (``InstallPlan``); ``init`` shows and asks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from pipeline.hooks.install import InstallPlan

NAME = "duck-tape-resume"
DESCRIPTION = "Recover the session's state yourself after a compaction (duck-tape), then continue the work"
SKILL_DESCRIPTION = ("Recover this session's working state yourself with the duck-tape MCP tools (raw_material, "
                     "save_state) after a context compaction. Use only when the user asks for it.")
INVOKED = {"claude-code": "/duck-tape-resume", "codex": "$duck-tape-resume", "gemini": "/duck-tape:resume",
           "opencode": "/duck-tape-resume", "copilot": "/duck-tape-resume"}


def prompt_text() -> str:
    """The resume prompt (``resume_prompt.md`` beside this module)."""
    return (Path(__file__).resolve().parent / "resume_prompt.md").read_text(encoding="utf-8")


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _files(harness: str, root: Path, user: bool, env: Mapping[str, str]) -> list[tuple[Path, str]]:
    from pipeline.hooks.detect import harness as find

    body = prompt_text()
    front = f"---\ndescription: {DESCRIPTION}\n---\n\n"
    skill = f"---\nname: {NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n\n"
    base = find(harness).user_dir(env) if user else None
    if harness == "claude-code":
        folder = base if user else root / ".claude"
        return [(folder / "commands" / f"{NAME}.md", front + body)]
    if harness == "codex":
        folder = (_home(env) / ".agents" if user else root / ".agents") / "skills" / NAME
        policy = "policy:\n  allow_implicit_invocation: false\n"
        return [(folder / "SKILL.md", skill + body), (folder / "agents" / "openai.yaml", policy)]
    if harness == "gemini":
        folder = base if user else root / ".gemini"
        toml = f'description = "{DESCRIPTION}"\nprompt = \'\'\'\n{body}\'\'\'\n'
        return [(folder / "commands" / "duck-tape" / "resume.toml", toml)]
    if harness == "opencode":
        folder = base if user else root / ".opencode"
        return [(folder / "commands" / f"{NAME}.md", front + body)]
    if harness == "copilot":
        folder = base if user else root / ".github"
        return [(folder / "skills" / NAME / "SKILL.md", skill + body)]
    raise ValueError(f"no resume prompt for harness {harness!r}")


def plan_prompt(harness: str, root: Path, *, user: bool = False, env: Mapping[str, str] | None = None
                ) -> list[InstallPlan]:
    """The files that install the resume prompt for ``harness`` (module docstring), as ``InstallPlan``s: unchanged
    when a file already holds exactly this text, replaced (``init`` backs the old one up) when it holds another.
    Raises ValueError for a harness without one, OSError when an existing file cannot be read."""
    env = os.environ if env is None else env
    plans = []
    for path, text in _files(harness, root, user, env):
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        plans.append(InstallPlan(harness, path, old, text, f"{path}: the resume prompt, run as {INVOKED[harness]}\n"))
    return plans
