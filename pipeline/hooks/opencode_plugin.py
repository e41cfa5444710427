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

TEMPLATE = """\
// duck-tape for opencode, written by `duck-tape init --harness opencode`.
// Before opencode compacts a session: save the session's messages as .duck-tape/opencode/<session id>.json,
// run `duck-tape checkpoint` on that snapshot (auto state file + .duck-tape/.last-compact marker), then give the
// compaction what it would lose: the restore handoff (decisions, rejected approaches, facts, remaining work,
// within HANDOFF_BYTES) goes into output.context, so opencode's own summary keeps it.
// duck-tape runs without a shell (each word passed as it is). Any error is logged and ignored: compaction is
// never blocked.
import { execFile } from "node:child_process"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"

const DUCK_TAPE = __ARGV__
const HANDOFF_BYTES = __BUDGET__

function duckTape(args, input, cwd) {
  return new Promise((resolve) => {
    const child = execFile(DUCK_TAPE[0], [...DUCK_TAPE.slice(1), ...args], { cwd, timeout: 30000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => resolve({ error, stdout: String(stdout ?? ""), stderr: String(stderr ?? "") }))
    child.stdin?.on("error", () => {})
    child.stdin?.end(input ?? "")
  })
}

export const DuckTapeCheckpoint = async ({ client, directory }) => {
  return {
    "experimental.session.compacting": async (input, output) => {
      try {
        const store = join(directory, ".duck-tape")
        const folder = join(store, "opencode")
        await mkdir(folder, { recursive: true })
        const response = await client.session.messages({ path: { id: input.sessionID } })
        const messages = response?.data ?? response
        const snapshotPath = join(folder, `${input.sessionID}.json`)
        await writeFile(snapshotPath, JSON.stringify(messages))
        const payload = JSON.stringify({ harness: "opencode", sessionID: input.sessionID, snapshotPath, cwd: directory })
        const saved = await duckTape(["checkpoint", "--dir", store], payload, directory)
        if (saved.error) console.error(`duck-tape: checkpoint: ${saved.error}`)
        const handoff = await duckTape(["restore", "--dir", store, "--budget", String(HANDOFF_BYTES)], "", directory)
        if (handoff.stdout.trim() && Array.isArray(output?.context)) output.context.push(handoff.stdout)
      } catch (error) {
        console.error(`duck-tape: checkpoint: ${error}`)
      }
    },
  }
}
"""


HANDOFF_BYTES = 4000
"""What the handoff pushed into the compaction prompt may take (bytes): a fraction of the summary's input."""


def plugin_source(command: str = "duck-tape", *, budget: int = HANDOFF_BYTES) -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array run with ``execFile`` (no shell: each word one argument); ``budget``: the handoff's byte budget
    (``restore --budget``, 1000..9500)."""
    return (TEMPLATE.replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
            .replace("__BUDGET__", str(budget)))
