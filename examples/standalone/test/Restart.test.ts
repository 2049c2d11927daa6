import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect, record, uatKey } from "./Fixtures.js"
import { call, kill, start } from "./Process.js"

const waitFor = async <A>(f: () => Promise<A>, done: (a: A) => boolean): Promise<A> => {
  for (let i = 0; i < 200; i++) {
    const a = await f()
    if (done(a)) return a
    await new Promise((r) => setTimeout(r, 100))
  }
  return f()
}

/**
 * Starts a server on the file, waits until its queue is empty, and answers what the file holds:
 * every tradeflow created once, no message twice.
 */
const processedAfterRestart = async (file: string, organisationId: string) => {
  const server = await start(file)
  try {
    const after = await waitFor(() => inspect(file, organisationId), (s) => s.pending === 0)
    expect(after.pending).toBe(0)
    expect([...after.created.values()].every((n) => n === 1)).toBe(true)
    expect(new Set(after.hashes).size).toBe(after.hashes.length)
    return after
  } finally {
    await kill(server)
  }
}

describe("restart", () => {
  it("work answered 202 by a process killed before processing it is processed once after restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-restart-"))
    const file = join(dir, "tracking.sqlite")
    try {
      const first = await start(file, { WORKER_ENABLED: "false" })
      const key = await uatKey(first, "Restart Freight")
      const headers = { authorization: key.key }
      const references = Array.from({ length: 30 }, (_, i) => `PO-${i}`)
      for (const [i, reference] of references.entries()) {
        const answer = await call(first, "POST", "/v3/downstream/tradeflows", [
          record(reference, `BK-${i}`),
          record(reference, `BK-${i + 100}`)
        ], headers)
        expect(answer.status).toBe(202)
      }
      await kill(first)
      const before = await inspect(file, key.organisation.id)
      expect(before.pending).toBe(references.length)
      expect(before.created.size).toBe(0)

      const after = await processedAfterRestart(file, key.organisation.id)
      expect([...after.created.keys()].sort()).toEqual([...references].sort())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("a process killed with SIGKILL while accepting loses nothing it answered 202", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-kill-"))
    const file = join(dir, "tracking.sqlite")
    try {
      const first = await start(file, { WORKER_LEASE_MILLIS: "2000" })
      const key = await uatKey(first, "Restart Freight")
      const headers = { authorization: key.key }
      const accepted: Array<string> = []
      const posting = (async () => {
        for (let i = 0; i < 10_000; i++) {
          const reference = `K-${i}`
          const answer = await call(first, "POST", "/v3/downstream/tradeflows", record(reference, `BK-${i}`), headers)
            .catch(() => undefined)
          if (answer === undefined) return
          if (answer.status === 202) accepted.push(reference)
        }
      })()
      await waitFor(async () => accepted.length, (n) => n >= 40)
      await kill(first)
      await posting
      expect(accepted.length).toBeGreaterThanOrEqual(40)

      const after = await processedAfterRestart(file, key.organisation.id)
      for (const reference of accepted) expect(after.created.get(reference)).toBe(1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})
