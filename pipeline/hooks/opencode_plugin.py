"""The opencode plugin ``duck-tape init --harness opencode`` writes (``.opencode/plugins/duck-tape.js``).

opencode loads JavaScript/TypeScript files from ``.opencode/plugins/`` (project) and
``~/.config/opencode/plugins/`` (global); a plugin is an async function receiving ``{client, $, directory,
…}`` and returning hooks (opencode.ai/docs/plugins).  The ``experimental.session.compacting`` hook fires
before the model writes the compaction summary, with ``{sessionID}`` (opencode PR #5698).  The plugin
fetches the session's messages with the SDK (``client.session.messages``: the ``[{info, parts}]`` array
the opencode reader knows, FORMATS.md §3), saves them as ``.duck-tape/opencode/<session id>.json`` and pipes
``{"harness": "opencode", "sessionID", "snapshotPath", "cwd"}`` into ``duck-tape checkpoint``.  Then it runs
``duck-tape restore --budget HANDOFF_BYTES`` and pushes its text into ``output.context`` (the hook's second
argument: strings appended to the compaction prompt), so the summary opencode writes keeps the decisions, the
rejected approaches, the facts and the remaining work.  duck-tape is run with ``node:child_process.execFile``
(Bun and Node both have it): no shell, each word of ``--command`` one argument.  Errors are logged and
swallowed: the plugin never blocks a compaction.

opencode 2.x plugins (``Plugin.define({id, setup})`` with ``ctx.session.hook("compaction", …)``) are not
written by ``init`` yet: that API hands the hook the new message shape and no SDK client.
"""

from __future__ import annotations

import json
import shlex

#: The plugin's text, shipped beside this module (package data) and read with ``importlib.resources``;
#: ``__ARGV__`` marks where the command goes, ``__BUDGET__`` the handoff's byte budget.
TEMPLATE_FILE = "opencode_plugin.js"

HANDOFF_BYTES = 4000
"""What the handoff pushed into the compaction prompt may take (bytes): a fraction of the summary's input."""


def template() -> str:
    """The plugin template (``__ARGV__`` and ``__BUDGET__`` placeholders).  Raises PackagingError when the
    file is missing from this installation."""
    from importlib.resources import files

    from pipeline.resources import PackagingError

    try:
        return files("pipeline.hooks").joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackagingError(f"pipeline/hooks/{TEMPLATE_FILE} is missing from this installation; reinstall "
                             "duck-tape (its wheel ships the opencode plugin)") from None


def plugin_source(command: str = "duck-tape", *, budget: int = HANDOFF_BYTES) -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array run with ``execFile`` (no shell: each word one argument); ``budget``: the handoff's byte budget
    (``restore --budget``, 1000..9500)."""
    return (template().replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
            .replace("__BUDGET__", str(budget)))
