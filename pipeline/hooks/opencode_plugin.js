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
        const handoff = await duckTape(["restore", "--dir", store, "--budget", String(HANDOFF_BYTES)], payload, directory)
        if (handoff.stdout.trim() && Array.isArray(output?.context)) output.context.push(handoff.stdout)
      } catch (error) {
        console.error(`duck-tape: checkpoint: ${error}`)
      }
    },
  }
}
