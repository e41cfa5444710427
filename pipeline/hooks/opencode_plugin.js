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
