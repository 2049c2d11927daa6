/**
 * What `npm start` runs: `npm run build` bundles the server into `dist/server.mjs`, which plain
 * node runs with the arguments of the `start` script. The bundle must serve the walk-through and
 * shut down cleanly.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { record, uatKey } from "./Fixtures.js"
import { build, call, npmStartArgs, start } from "./Process.js"

describe("npm start", () => {
  it("the bundled server accepts a record, processes it, and exits 0 on SIGTERM", async () => {
    build()
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-build-"))
    try {
      const server = await start(join(dir, "tracking.sqlite"), {}, npmStartArgs())
      const key = await uatKey(server, "Bundle Freight")
      const posted = await call(server, "POST", "/v3/downstream/tradeflows", [record("BUNDLE-1")], {
        authorization: key.key
      })
      expect(posted.status).toBe(202)
      let messages: Array<{ type: string }> = []
      for (let i = 0; i < 100 && messages.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        messages =
          (await call(server, "GET", "/v3/upstream?tradeflow=BUNDLE-1", undefined, { authorization: key.key })).body
      }
      expect(messages.map((m) => m.type)).toContain("BASIC_STATUS")
      const exit = new Promise<number | null>((resolve) => server.child.once("exit", (code) => resolve(code)))
      server.child.kill("SIGTERM")
      expect(await exit).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
