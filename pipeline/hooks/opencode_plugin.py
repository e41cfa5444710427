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

opencode 2.x loads a different plugin (``@opencode-ai/plugin`` ``Plugin.define({id, setup})``, whose ``setup(ctx)``
registers ``ctx.session.hook("compaction", event => …)``; packages/plugin/src/promise/session.ts): there is no SDK
client and no ``output.context``; the hook's event is the compaction request itself, ``{sessionID, messages,
system, …}`` with messages in the ``@opencode/ai`` shape (``{role, content: [text | tool-call | tool-result |
reasoning parts]}``, packages/ai/src/schema/messages.ts).  The 2.x plugin (``opencode_plugin_v2.js``) writes those messages as a ``{role,
content}`` JSONL snapshot (``<session id>.jsonl``: tool calls as OpenAI-style ``tool_calls``, results as ``tool``
lines, the shape the generic reader knows), runs the same checkpoint and restore, and pushes the handoff into
``event.system`` (a system part of the compaction request).  A 1.x host refuses a file whose default export has
an ``id`` but no ``server()``, and a 2.x host wants that default export, so one file cannot serve both: ``init``
writes the one for the installed opencode (``installed_api``).
"""


from __future__ import annotations

import json
import os
import re
import shlex
import subprocess

#: The plugins' texts, shipped beside this module (package data) and read with ``importlib.resources``;
#: ``__ARGV__`` marks where the command goes, ``__BUDGET__`` the handoff's byte budget.
TEMPLATE_FILE = "opencode_plugin.js"
TEMPLATE_V2_FILE = "opencode_plugin_v2.js"

HANDOFF_BYTES = 4000
"""What the handoff pushed into the compaction prompt may take (bytes): a fraction of the summary's input."""

API_ENV = "DUCK_TAPE_OPENCODE_API"
"""Environment variable naming the plugin API to write (``v1`` or ``v2``) instead of asking ``opencode --version``."""

APIS = ("v1", "v2")


def installed_api(run=subprocess.run) -> str:
    """``"v2"`` when the opencode on PATH is 2.x or later (``opencode --version``), else ``"v1"`` (1.x, or no
    opencode to ask: the plugin API every released 1.x loads).  ``DUCK_TAPE_OPENCODE_API=v1|v2`` decides instead
    (another opencode than the one on PATH; tests).  Never raises: an opencode that cannot be run counts as absent.
    ``run``: ``subprocess.run`` (tests pass a stand-in)."""
    chosen = os.environ.get(API_ENV, "").strip().lower()
    if chosen in APIS:
        return chosen
    try:
        proc = run(["opencode", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError, ValueError):
        return "v1"
    found = re.search(r"(\d+)\.\d+\.\d+", proc.stdout or "")
    return "v2" if found and int(found[1]) >= 2 else "v1"


def template(api: str = "v1") -> str:
    """The plugin template of ``api`` (``__ARGV__`` and ``__BUDGET__`` placeholders).  Raises PackagingError when
    the file is missing from this installation."""
    from importlib.resources import files

    from pipeline.resources import PackagingError

    name = TEMPLATE_V2_FILE if api == "v2" else TEMPLATE_FILE
    try:
        return files("pipeline.hooks").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackagingError(f"pipeline/hooks/{name} is missing from this installation; reinstall "
                             "duck-tape (its wheel ships the opencode plugin)") from None


def plugin_source(command: str = "duck-tape", *, budget: int = HANDOFF_BYTES, api: str = "v1") -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array run with ``execFile`` (no shell: each word one argument); ``budget``: the handoff's byte budget
    (``restore --budget``, 1000..9500); ``api``: ``v1`` (opencode 1.x) or ``v2`` (2.x).  Raises ``ValueError`` for
    another ``api``, PackagingError when the template is not installed."""
    if api not in APIS:
        raise ValueError(f"unknown opencode plugin API {api!r}: expected one of {', '.join(APIS)}")
    return (template(api).replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
            .replace("__BUDGET__", str(budget)))
