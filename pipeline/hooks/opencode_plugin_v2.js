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
    return value.filter((c) => c?.type === "text").map((c) => c.text).join("\n")
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
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n"
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
        const handoff = await duckTape(["restore", "--dir", store, "--budget", String(HANDOFF_BYTES)], payload, directory)
        if (handoff.stdout.trim() && Array.isArray(event.system)) event.system.push({ type: "text", text: handoff.stdout })
      } catch (error) {
        console.error(`duck-tape: checkpoint: ${error}`)
      }
    })
  },
}
