"""Console-script entry point (``duck-tape``): a fast lane for the hook commands, click for the rest.

Agent harnesses call ``extract-raw`` on every compaction, so its start-up time is part of the user's wait
(issue 2 budget: 5x faster than the bash+jq extractor, ~80 ms with process start).  Importing click
costs ~18 ms here, so the plain shapes of the hook commands (``extract-raw PATH [--max-bytes N]``,
``checkpoint [--transcript PATH] [--dir DIR] [--max-bytes N]``, the pre-compact hook of issue 6; ``restore …``, the
post-compaction hook of issue 7; ``nudge …``, the after-each-turn hook of issue 17) are recognised without it and run the same function the click command runs.
Anything else (``--help``, a typo, an extra flag) goes to the click CLI in ``pipeline.cli``, which owns parsing,
help and errors.
"""

from __future__ import annotations

import os
import sys


def _fast_extract_raw(args: list[str]) -> int | None:
    """Run ``extract-raw PATH [--max-bytes N | --max-bytes=N]``; None when ``args`` has another shape."""
    path: str | None = None
    max_bytes: int | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("--max-bytes"):
            value = arg.partition("=")[2] if "=" in arg else (rest.pop(0) if rest else "")
            if not value.isdigit() or int(value) < 1:
                return None
            max_bytes = int(value)
        elif arg.startswith("-") or path is not None:
            return None
        else:
            path = arg
    if path is None:
        return None
    from pipeline.stages.extract import write_raw

    try:
        if sys.stdout is not None:
            write_raw(path, sys.stdout, max_bytes=max_bytes)  # read whole first, then written section by section
            sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the reader went away (or stdout is closed): a hook must still exit 0
    return 0


def _fast_checkpoint(args: list[str]) -> int | None:
    """Run ``checkpoint [--transcript PATH] [--dir DIR] [--max-bytes N]`` (also ``--opt=value``).  A hook must
    never fail, so any other argument (an unknown flag, a stray word, an option without its value, a repeated
    option, a ``--max-bytes`` that is not a positive integer) is ignored with one line on stderr; only
    ``-h``/``--help`` goes to click."""
    if "-h" in args or "--help" in args:
        return None
    values: dict[str, str] = {}
    ignored: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if name not in ("--transcript", "--dir", "--max-bytes") or name in values:
            ignored.append(arg)
            continue
        if not eq:
            value = rest.pop(0) if rest and not rest[0].startswith("--") else ""
        if not value:
            ignored.append(f"{name} (no value)")
            continue
        if name == "--max-bytes" and not (value.isdigit() and int(value) > 0):
            ignored.append(f"{name} {value} (not a positive number of bytes)")
            continue
        values[name] = value
    if ignored:
        try:
            sys.stderr.write(f"duck-tape: checkpoint: ignoring unexpected argument(s): {' '.join(ignored)}\n")
        except (OSError, ValueError, AttributeError):
            pass
    from pipeline.hooks.checkpoint import hook_main

    cap = values.get("--max-bytes")
    return hook_main(values.get("--transcript"), values.get("--dir"), max_bytes=int(cap) if cap else None)


def _options(args: list[str], names: tuple[str, ...], flags: tuple[str, ...] = ()) -> dict[str, str] | None:
    """``args`` as ``{option: value}`` when each is one of ``names`` with a non-empty value (``--opt value`` or
    ``--opt=value``) or one of ``flags`` (value ""), each at most once; None for any other shape."""
    values: dict[str, str] = {}
    rest = list(args)
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        if name in flags and not eq and name not in values:
            values[name] = ""
            continue
        if name not in names or name in values:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if not value:
            return None
        values[name] = value
    return values


def _fast_restore(args: list[str]) -> int | None:
    """Run ``restore [--dir DIR] [--budget BYTES] [--format plain|claude-code|gemini|codex] [--session ID]
    [--no-reconcile]`` (also ``--opt=value``, each at most once; the budget in ``MIN_BUDGET..MAX_BUDGET``); None for
    any other shape, which click then handles (and rejects a bad budget or format with exit 2)."""
    values = _options(args, ("--dir", "--budget", "--format", "--session"), flags=("--no-reconcile",))
    if values is None:
        return None
    from pipeline.restore.handoff import FORMATS, MAX_BUDGET, MIN_BUDGET

    budget = values.get("--budget")
    if budget is not None and not (budget.isdigit() and MIN_BUDGET <= int(budget) <= MAX_BUDGET):
        return None
    if values.get("--format", "plain") not in FORMATS:
        return None
    from pipeline.restore.run import restore_main

    return restore_main(values.get("--dir"), int(budget) if budget else None, values.get("--format", "plain"),
                        reconcile="--no-reconcile" not in values, session=values.get("--session"))


def _fast_nudge(args: list[str]) -> int | None:
    """Run ``nudge [--transcript PATH] [--dir DIR] [--format claude-code|plain]`` (also ``--opt=value``, each at
    most once), the Stop hook of issue 17; None for any other shape, which click then handles."""
    values = _options(args, ("--transcript", "--dir", "--format"))
    if values is None:
        return None
    if values.get("--format", "claude-code") not in ("claude-code", "plain"):
        return None
    from pipeline.hooks.nudge import hook_main

    return hook_main(values.get("--transcript"), values.get("--dir"), values.get("--format", "claude-code"))


FAST = {"extract-raw": _fast_extract_raw, "checkpoint": _fast_checkpoint, "restore": _fast_restore,
        "nudge": _fast_nudge}


#: Fast-lane commands that, as the process entry, end the process themselves (``_exit_now``).
EXIT_NOW = frozenset({"extract-raw", "checkpoint", "restore", "nudge"})


def _exit_now(code: int) -> None:
    """End the process with ``code`` once stdout and stderr are flushed, skipping interpreter teardown.

    Tearing down the modules an ``extract-raw`` run has loaded (orjson alone pulls in dataclasses,
    inspect, uuid, json…) costs ~4-5 ms, a tenth of the hook's budget, and the finished command has
    nothing left to clean up: its files are closed; the one ``atexit`` handler, ``recache.save`` (the compiled
    regular expressions this run added), runs here first.  Never returns.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    recache = sys.modules.get("pipeline.recache")
    if recache is not None:
        try:
            recache.save()
        except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower; the hook must not fail
            pass
    os._exit(code)


#: Hook commands that do nothing inside a nested agent run (``DUCK_TAPE_NESTED``, issue 25).
HOOKS = frozenset({"checkpoint", "restore", "nudge"})


def _nested_hook(args: list[str]) -> int:
    """The recursion guard: a hook fired by an agent CLI that duck-tape itself runs as the model
    (``pipeline.llm.agents.run`` sets ``DUCK_TAPE_NESTED=1`` for it) does nothing and succeeds, so the nested run
    never checkpoints, restores, nudges or starts a background refinement.  ``restore --format gemini`` still prints
    ``{}`` (Gemini CLI reads a hook's stdout as JSON)."""
    if args[0] == "restore" and ("gemini" in args[1:] or "--format=gemini" in args[1:]):
        try:
            sys.stdout.write("{}\n")
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``duck-tape`` with ``argv`` (default ``sys.argv[1:]``); return the exit code (DESIGN.md).

    As the process entry (``argv`` None: the console script, ``python -m pipeline``) an ``EXIT_NOW``
    fast-lane command ends the process itself; called with an ``argv`` (tests, embedding) it returns.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in HOOKS and os.environ.get("DUCK_TAPE_NESTED"):
        code = _nested_hook(args)
        if argv is None:
            _exit_now(code)
        return code
    if args and args[0] in FAST:
        code = FAST[args[0]](args[1:])
        if code is not None:
            if argv is None and args[0] in EXIT_NOW:
                _exit_now(code)
            return code
    from pipeline.cli import main as click_main

    return click_main(args)
