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

TEMPLATE = """\
// duck-tape pre-compact checkpoint for opencode, written by `duck-tape init --harness opencode`.
// Before opencode compacts a session, save the session's messages as .duck-tape/opencode/<session id>.json
// and run `duck-tape checkpoint` on that snapshot (auto state file + .duck-tape/.last-compact marker).
// Any error is logged and ignored: compaction is never blocked.
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"

const DUCK_TAPE = __ARGV__

export const DuckTapeCheckpoint = async ({ client, $, directory }) => {
  return {
    "experimental.session.compacting": async (input) => {
      try {
        const store = join(directory, ".duck-tape")
        const folder = join(store, "opencode")
        await mkdir(folder, { recursive: true })
        const response = await client.session.messages({ path: { id: input.sessionID } })
        const messages = response?.data ?? response
        const snapshotPath = join(folder, `${input.sessionID}.json`)
        await writeFile(snapshotPath, JSON.stringify(messages))
        const payload = JSON.stringify({ harness: "opencode", sessionID: input.sessionID, snapshotPath, cwd: directory })
        await $`echo ${payload} | ${DUCK_TAPE} checkpoint --dir ${store}`.cwd(directory).quiet().nothrow()
      } catch (error) {
        console.error(`duck-tape: checkpoint: ${error}`)
      }
    },
  }
}
"""


def plugin_source(command: str = "duck-tape") -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array that Bun's shell passes as separate, escaped arguments."""
    return TEMPLATE.replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
