"""The opencode plugin ``duck-tape init --harness opencode`` writes (``.opencode/plugins/duck-tape.js``).

opencode loads JavaScript/TypeScript files from ``.opencode/plugins/`` (project) and
``~/.config/opencode/plugins/`` (global); a plugin is an async function receiving ``{client, $, directory,
…}`` and returning hooks (opencode.ai/docs/plugins).  The ``experimental.session.compacting`` hook fires
before the model writes the compaction summary, with ``{sessionID}`` (opencode PR #5698).  The plugin
fetches the session's messages with the SDK (``client.session.messages``: the ``[{info, parts}]`` array
the opencode reader knows, FORMATS.md §3), saves them as ``.duck-tape/opencode/<session id>.json`` and pipes
``{"harness": "opencode", "sessionID", "snapshotPath", "cwd"}`` into ``duck-tape checkpoint``.  Errors are
logged and swallowed: the plugin never blocks a compaction.
"""

from __future__ import annotations

import json
import shlex

#: The plugin's text, shipped beside this module (package data) and read with ``importlib.resources``.
TEMPLATE_FILE = "opencode_plugin.js"


def template() -> str:
    """The plugin template (``__ARGV__`` marks where the command goes).  Raises PackagingError when the file
    is missing from this installation."""
    from importlib.resources import files

    from pipeline.resources import PackagingError

    try:
        return files("pipeline.hooks").joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackagingError(f"pipeline/hooks/{TEMPLATE_FILE} is missing from this installation; reinstall "
                             "duck-tape (its wheel ships the opencode plugin)") from None


def plugin_source(command: str = "duck-tape") -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array that Bun's shell passes as separate, escaped arguments."""
    return template().replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
