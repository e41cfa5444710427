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
reasoning parts]}``, packages/ai/src/schema/messages.ts).  ``TEMPLATE_V2`` writes those messages as a ``{role,
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


TEMPLATE_V2 = """\
// duck-tape for opencode 2.x (plugin API: Plugin.define), written by `duck-tape init --harness opencode`.
// When opencode compacts a session (ctx.session.hook("compaction")): save the messages of the compaction request
// as .duck-tape/opencode/<session id>.jsonl ({role, content} lines), run `duck-tape checkpoint` on it (auto state
// file + .duck-tape/.last-compact marker), then give the compaction what it would lose: the restore handoff
// (decisions, rejected approaches, facts, remaining work, within HANDOFF_BYTES) becomes a system part of the
// compaction request, so opencode's own summary keeps it. No shell; any error is logged and ignored.
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

function resultText(result) {
  const value = result?.value
  if (result?.type === "content" && Array.isArray(value))
    return value.filter((c) => c?.type === "text").map((c) => c.text).join("\\n")
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "")
  return result?.type === "error" ? `Error: ${text}` : text
}

// The request's messages as the {role, content} JSONL duck-tape reads (tool calls OpenAI-style).
function snapshotLines(messages) {
  const lines = []
  for (const message of Array.isArray(messages) ? messages : []) {
    const parts = typeof message?.content === "string" ? [{ type: "text", text: message.content }]
      : Array.isArray(message?.content) ? message.content : []
    if (message?.role === "tool") {
      for (const part of parts)
        if (part?.type === "tool-result")
          lines.push({ role: "tool", tool_call_id: part.id, name: part.name, content: resultText(part.result) })
      continue
    }
    if (message?.role !== "user" && message?.role !== "assistant") continue
    const content = parts.filter((p) => p?.type === "text" && p.text).map((p) => ({ type: "text", text: p.text }))
    const calls = parts.filter((p) => p?.type === "tool-call").map((p) => ({ id: p.id, type: "function",
      function: { name: p.name, arguments: JSON.stringify(p.input ?? {}) } }))
    const line = { role: message.role, content }
    if (calls.length) line.tool_calls = calls
    if (content.length || calls.length) lines.push(line)
    for (const part of parts)  // results of provider-executed tools sit in the assistant message
      if (part?.type === "tool-result")
        lines.push({ role: "tool", tool_call_id: part.id, name: part.name, content: resultText(part.result) })
  }
  return lines.map((line) => JSON.stringify(line)).join("\\n") + "\\n"
}

export default {
  id: "duck-tape",
  setup: async (ctx) => {
    const directory = ctx?.location?.directory || process.cwd()
    await ctx.session.hook("compaction", async (event) => {
      try {
        const store = join(directory, ".duck-tape")
        const folder = join(store, "opencode")
        await mkdir(folder, { recursive: true })
        const snapshotPath = join(folder, `${event.sessionID}.jsonl`)
        await writeFile(snapshotPath, snapshotLines(event.messages))
        const payload = JSON.stringify({ harness: "opencode", sessionID: event.sessionID, snapshotPath, cwd: directory })
        const saved = await duckTape(["checkpoint", "--dir", store], payload, directory)
        if (saved.error) console.error(`duck-tape: checkpoint: ${saved.error}`)
        const handoff = await duckTape(["restore", "--dir", store, "--budget", String(HANDOFF_BYTES)], "", directory)
        if (handoff.stdout.trim() && Array.isArray(event.system)) event.system.push({ type: "text", text: handoff.stdout })
      } catch (error) {
        console.error(`duck-tape: checkpoint: ${error}`)
      }
    })
  },
}
"""


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


def plugin_source(command: str = "duck-tape", *, budget: int = HANDOFF_BYTES, api: str = "v1") -> str:
    """The plugin file text; ``command`` (shell words, e.g. ``duck-tape`` or ``/opt/bin/duck-tape``) becomes a
    JSON array run with ``execFile`` (no shell: each word one argument); ``budget``: the handoff's byte budget
    (``restore --budget``, 1000..9500); ``api``: ``v1`` (opencode 1.x, ``TEMPLATE``) or ``v2`` (2.x,
    ``TEMPLATE_V2``).  Raises ``ValueError`` for another ``api``."""
    if api not in APIS:
        raise ValueError(f"unknown opencode plugin API {api!r}: expected one of {', '.join(APIS)}")
    template = TEMPLATE_V2 if api == "v2" else TEMPLATE
    return (template.replace("__ARGV__", json.dumps(shlex.split(command) or ["duck-tape"]))
            .replace("__BUDGET__", str(budget)))
