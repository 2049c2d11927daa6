import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { makeTestSchema } from "../../../packages/storage-pg/test/TestDatabase.js"
import { call, kill, start } from "./Process.js"

const ready = async (base: string) => {
  const res = await fetch(`${base}/ready`)
  return { status: res.status, body: await res.json() as any }
}

/** Past the second for which one storage check answers every probe. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1_100))

describe("GET /ready of the standalone server", () => {
  it("is 200 with every background loop running, and expects none that a process is told not to run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-ready-"))
    try {
      const server = await start(join(dir, "all.sqlite"))
      try {
        const answer = await ready(server.base)
        expect(answer.status).toBe(200)
        expect([...answer.body.running].sort()).toEqual(
          ["job worker", "retention", "scheduler", "tracker", "webhook delivery worker"]
        )
      } finally {
        await kill(server)
      }
      const idle = await start(join(dir, "none.sqlite"), { WORKER_ENABLED: "false", WEBHOOK_ENABLED: "false" })
      try {
        expect(await ready(idle.base)).toEqual({ status: 200, body: { status: "ready", running: [] } })
      } finally {
        await kill(idle)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("is 503 naming the database while PostgreSQL cannot serve its schema, and 200 again once it can", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
      const server = await start("", { DATABASE_URL: test.url, PG_MAX_CONNECTIONS: "2" })
      const admin = new pg.Client({ connectionString: test.baseUrl })
      await admin.connect()
      try {
        expect((await ready(server.base)).status).toBe(200)
        await admin.query(`ALTER SCHEMA ${test.schema} RENAME TO ${test.schema}_away`)
        await settle()
        try {
          const down = await ready(server.base)
          expect(down.status).toBe(503)
          expect(down.body.errors).toEqual([{ path: "database", message: "unreachable" }])
          expect((await call(server, "GET", "/health")).status).toBe(200)
        } finally {
          await admin.query(`ALTER SCHEMA ${test.schema}_away RENAME TO ${test.schema}`)
        }
        await settle()
        expect((await ready(server.base)).status).toBe(200)
      } finally {
        await admin.end()
        await kill(server)
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)
})
