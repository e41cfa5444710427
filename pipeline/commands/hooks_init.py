"""The body of ``duck-tape init`` (``pipeline.commands.hooks``): plan every chosen harness, show, ask, write.

Text mode prints, per harness, the file, the hook snippet and the diff, then what was done.  ``--json`` prints
one object instead (shape: docs/json.md, printed by ``pipeline.commands.json_out.emit``):

``{"command": "init", "root", "user", "written": [paths], "harnesses": [{"harness", "path", "scope", "restore",
"changed", "written", "backup", "git_excluded", "evidence"}], "skipped": [{"harness", "reason"}],
"prompts": [{"harness", "paths", "run_as", "installed": bool}], "warnings": [lines]}``; ``scope`` is ``project-local`` | ``project`` | ``user``.  ``warnings`` holds each
installer's notes (``InstallPlan.notes``) prefixed with the harness name.

Copilot CLI gets, after its hook, the offer of the ``duck-tape resume`` line in its instructions file
(``pipeline.hooks.install_copilot``) under the same rules: written with ``--yes``, asked on a terminal, only shown
with ``--dry-run`` or without a terminal.  Every harness then gets the offer of the resume prompt as its own
command or skill (``pipeline.hooks.install_prompt``; ``--no-prompt`` leaves it out), and, on a terminal or with
``--refine``, the background refinement (``pipeline.commands.refine_init``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


def _scope(name: str, *, user: bool, project: bool) -> str:
    if user:
        return "user"
    return "project" if project or name != "claude-code" else "project-local"


def run_init(harnesses: tuple[str, ...], *, root: str, yes: bool, dry_run: bool, user: bool, project: bool,
             restore: bool | None, hook_command: str | None, as_json: bool, nudge: bool = False,
             prompt: bool = True, refine: bool | None = None) -> None:
    """Run ``init`` (see the command's help).  Raises InputError (exit 2) as ``setup.choose``/``setup.plan``."""
    from pipeline.approval import ask
    from pipeline.hooks import setup
    from pipeline.hooks.install import apply_plan, command_notes, parse_hook_command
    from pipeline.redact import safe  # the diff shows the harness's settings file, which may hold keys (issue 11)

    if as_json:
        from pipeline.commands.json_out import begin

        begin("init")
    base = Path(root)
    if not base.is_dir():
        from pipeline.errors import InputError

        raise InputError(f"--root {root}: {'not a directory' if base.exists() else 'no such directory'} (init "
                         "installs into an existing project folder and does not create it; check the spelling)")
    warnings: list[str] = []
    if hook_command is None:
        command, why = setup.default_command(base)
        if why:
            warnings.append(why)
    else:
        command = parse_hook_command(hook_command, base)
    chosen = setup.choose(harnesses, base)
    interactive = not (yes or dry_run or as_json) and sys.stdin.isatty()
    report = {"command": "init", "root": str(base.resolve()), "user": user, "written": [], "harnesses": [],
              "skipped": [], "prompts": [], "warnings": warnings}
    plans = []
    for choice in chosen:
        if choice.skip:
            report["skipped"].append({"harness": choice.name, "reason": choice.skip})
            continue
        plan, with_restore, left_out = setup.plan(choice.name, base, command, user=user, project=project,
                                                  restore=restore, nudge=nudge, named=bool(harnesses))
        warnings.extend(f"{choice.name}: {n}" for n in left_out)
        plans.append((choice, plan, with_restore))
    if not as_json:
        for line in warnings:
            click.echo(f"note: {line}", err=True)
        for item in report["skipped"]:
            click.echo(f"{item['harness']}: skipped ({item['reason']})", err=True)
    for choice, plan, with_restore in plans:
        entry = {"harness": choice.name, "path": str(plan.path), "scope": _scope(choice.name, user=user, project=project),
                 "restore": with_restore, "changed": plan.changed, "written": False, "backup": None,
                 "git_excluded": None, "evidence": [str(p) for p in choice.evidence]}
        report["harnesses"].append(entry)
        notes = (command_notes(command, base, choice.name) if hook_command is not None else []) + list(plan.notes)
        report["warnings"].extend(f"{choice.name}: {n}" for n in notes)
        if not as_json:
            found = f" (in use: {', '.join(map(str, choice.evidence))})" if choice.evidence else ""
            click.echo(f"# {choice.name}{found}: {plan.path}")
            click.echo(safe(plan.snippet), nl=not plan.snippet.endswith("\n"))
        if not plan.changed:
            if not as_json:
                click.echo(f"{plan.path}: the duck-tape hook is already installed; nothing to do.")
                for note in plan.notes:
                    click.echo(f"note: {note}", err=True)
            if choice.name == "copilot":
                _copilot_instructions(base, report, user=user, yes=yes, dry_run=dry_run, interactive=interactive,
                                      as_json=as_json)
            continue
        if not as_json:
            diff = plan.diff()
            click.echo(safe(diff), nl=not diff.endswith("\n"))
            for note in notes:
                click.echo(f"note: {note}", err=True)
        if dry_run or not (yes or interactive):
            if not as_json:
                click.echo(f"Not written (dry run): pass --yes to install into {plan.path}.")
            if choice.name == "copilot":
                _copilot_instructions(base, report, user=user, yes=yes, dry_run=dry_run, interactive=interactive,
                                      as_json=as_json)
            continue
        if interactive and not ask(f"Install the {choice.name} hook into {plan.path}?"):
            click.echo(f"Skipped {choice.name}: not approved.")
            continue
        backup = apply_plan(plan)
        entry.update(written=True, backup=str(backup) if backup else None)
        report["written"].append(str(plan.path))
        if setup.personal(choice.name, user=user, project=project):
            excluded = setup.ignore_in_git(plan.path, base)
            entry["git_excluded"] = str(excluded) if excluded else None
        if not as_json:
            if backup is not None:
                click.echo(f"Backed up the old file to {backup}")
            click.echo(f"Wrote {plan.path}")
            if entry["git_excluded"]:
                click.echo(f"Added {plan.path.name} to {entry['git_excluded']} (a personal file, kept out of git)")
        if choice.name == "copilot":
            _copilot_instructions(base, report, user=user, yes=yes, dry_run=dry_run, interactive=interactive,
                                  as_json=as_json)
    if prompt:
        for choice, _, _ in plans:
            _resume_prompt(choice.name, base, report, user=user, yes=yes, dry_run=dry_run, interactive=interactive,
                           as_json=as_json)
    if plans and (refine is not None or interactive):
        from pipeline.commands.refine_init import offer_refine

        offer_refine([choice.name for choice, _, _ in plans], base, report, user=user, refine=refine, yes=yes,
                     dry_run=dry_run, interactive=interactive, as_json=as_json, offer=_offer)
    if as_json:
        from pipeline.commands.json_out import emit

        emit(report)


def _offer(plans: list, report: dict, *, harness: str, question: str, present: str, hint: str, yes: bool,
           dry_run: bool, interactive: bool, as_json: bool) -> bool:
    """Show ``plans`` (``InstallPlan``s of one addition) and write them with --yes or an approving answer to
    ``question`` on a terminal; only show them with --dry-run or without a terminal.  ``present``: what to say when
    nothing changes; ``hint``: how to add it by hand.  What happened goes into ``report`` (``written``,
    ``warnings``).  Returns True when written (or already there)."""
    from pipeline.approval import ask
    from pipeline.hooks.install import apply_plan

    changed = [plan for plan in plans if plan.changed]
    if not changed:
        if not as_json:
            click.echo(present)
        return True
    if not as_json:
        for plan in changed:
            diff = plan.diff()
            click.echo(diff, nl=not diff.endswith("\n"))
    if dry_run or not (yes or interactive) or (interactive and not ask(question)):
        if as_json:
            report["warnings"].append(f"{harness}: not added: {hint}")
        else:
            click.echo(f"Not added: {hint}.")
        return False
    for plan in changed:
        backup = apply_plan(plan)
        report["written"].append(str(plan.path))
        if not as_json:
            if backup is not None:
                click.echo(f"Backed up the old file to {backup}")
            click.echo(f"Wrote {plan.path}")
    return True


def _copilot_instructions(root: Path, report: dict, *, user: bool, yes: bool, dry_run: bool, interactive: bool,
                          as_json: bool) -> None:
    """Copilot CLI restores nothing after a compaction: say so, and offer the ``duck-tape resume`` line in its
    instructions file (``pipeline.hooks.install_copilot``) as ``_offer`` does."""
    from pipeline.hooks.install_copilot import NOTE, plan_instructions

    plan = plan_instructions(root, user=user)
    report["warnings"].append(f"copilot: after a compaction: {NOTE}")
    if not as_json:
        click.echo(f"after a compaction: {NOTE}", err=True)  # not a "note:" about --command
    _offer([plan], report, harness="copilot", question=f"Add this line to {plan.path}?",
           present=f"{plan.path} already tells the agent to run `duck-tape resume`.",
           hint=f"put `duck-tape resume` in {plan.path} yourself, or run init with --yes", yes=yes, dry_run=dry_run,
           interactive=interactive, as_json=as_json)


def _resume_prompt(name: str, root: Path, report: dict, *, user: bool, yes: bool, dry_run: bool, interactive: bool,
                   as_json: bool) -> None:
    """Offer the resume prompt as ``name``'s own command or skill (``pipeline.hooks.install_prompt``) as ``_offer``
    does; it runs only when the user invokes it, and needs the ``duck-tape mcp`` server in that harness."""
    from pipeline.hooks.install_prompt import INVOKED, plan_prompt

    plans = plan_prompt(name, root, user=user)
    run_as = INVOKED[name]
    written = _offer(plans, report, harness=name,
                     question=f"Add the {run_as} command (the agent recovers the state itself) to {plans[0].path}?",
                     present=f"{plans[0].path}: {run_as} is installed already.",
                     hint=f"run init again with --yes to add {run_as}", yes=yes, dry_run=dry_run,
                     interactive=interactive, as_json=as_json)
    report.setdefault("prompts", []).append({"harness": name, "paths": [str(p.path) for p in plans],
                                             "run_as": run_as, "installed": written})
    if written and not as_json:
        click.echo(f"{name}: {run_as} lets the agent recover the state itself (it needs the duck-tape MCP server in "
                   "that harness: `duck-tape mcp`, see the README).")
