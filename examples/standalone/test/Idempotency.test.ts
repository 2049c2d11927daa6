import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Exit, type Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeTestSchema } from "../../../packages/storage-pg/test/TestDatabase.js"
import { call, consoleToken, kill, type Server, start } from "./Process.js"

const REQUESTS = 100

type Database = Layer.Layer<SqlClient.SqlClient, unknown>

const record = (reference: string) => ({
  tradeflow_reference: reference,
  booking_reference: `BK-${reference}`,
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM"
})

const uatKey = async (server: Server, name: string) => {
  const auth = { authorization: `Bearer ${consoleToken}` }
  const org = await call(server, "POST", "/console/organisations", { name }, auth)
  const key = await call(server, "POST", `/console/organisations/${org.body.id}/api-keys`, { environment: "uat" }, auth)
  expect(key.status).toBe(201)
  return key.body as { key: string; organisation: { id: string } }
}

/** The organisation's jobs in the database: how many, and how many are still pending. */
const jobs = (database: Database, organisationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ total: number; pending: number }>`SELECT count(*) AS total,
      count(CASE WHEN status = 'pending' THEN 1 END) AS pending FROM jobs WHERE organisation_id = ${organisationId}`
    return { total: Number(rows[0]?.total), pending: Number(rows[0]?.pending) }
  }).pipe(Effect.provide(database), Effect.scoped, Effect.runPromise)

/** The TRADEFLOW_CREATED count per reference in `GET /upstream` (all cursor pages). */
const created = async (server: Server, key: string) => {
  const counts = new Map<string, number>()
  let cursor: string | undefined
  for (;;) {
    const query = `per_page=500${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const page = await call(server, "GET", `/v3/upstream?${query}`, undefined, { authorization: key })
    expect(page.status).toBe(200)
    for (
      const m of page.body.data as Array<{ type: string; tradeflow_reference: string; payload: { status?: string } }>
    ) {
      if (m.type === "BASIC_STATUS" && m.payload.status === "TRADEFLOW_CREATED") {
        counts.set(m.tradeflow_reference, (counts.get(m.tradeflow_reference) ?? 0) + 1)
      }
    }
    if (!page.body.has_more) return counts
    cursor = page.body.next_cursor
  }
}

/** Sends request `i` of {@link REQUESTS} at once to `servers[i % servers.length]`, all with one key. */
const burst = (servers: ReadonlyArray<Server>, apiKey: string, idempotencyKey: string, body: (i: number) => unknown) =>
  Promise.all(
    Array.from(
      { length: REQUESTS },
      (_, i) =>
        call(servers[i % servers.length]!, "POST", "/v3/downstream/tradeflows", body(i), {
          authorization: apiKey,
          "idempotency-key": idempotencyKey
        })
    )
  )

const tally = (answers: ReadonlyArray<{ status: number }>) => {
  const counts: Record<number, number> = {}
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1
  return counts
}

/** Waits until the organisation has no pending job and answers its TRADEFLOW_CREATED counts. */
const drained = async (database: Database, server: Server, key: { key: string; organisation: { id: string } }) => {
  for (let i = 0; i < 200; i++) {
    if ((await jobs(database, key.organisation.id)).pending === 0) break
    await new Promise((r) => setTimeout(r, 100))
  }
  expect((await jobs(database, key.organisation.id)).pending).toBe(0)
  return created(server, key.key)
}

/**
 * 100 concurrent identical posts with one key, then 100 concurrent posts of different bodies with
 * another key, spread over `servers`: each burst queues exactly one job, every other answer is the
 * replayed 202 or 409 (identical) / 422 or 409 (different), never a 5xx.
 */
const scenario = async (label: string, servers: ReadonlyArray<Server>, database: Database) => {
  const same = await uatKey(servers[0]!, `Idempotent ${label}`)
  const answers = await burst(servers, same.key, "same-body", () => record("IDEM-SAME"))
  const accepted = answers.filter((a) => a.status === 202)
  expect(accepted.length).toBeGreaterThanOrEqual(1)
  expect(answers.every((a) => a.status === 202 || a.status === 409), JSON.stringify(tally(answers))).toBe(true)
  for (const a of accepted) {
    expect(a.body).toEqual({ status: "queued", tradeflows: [{ tradeflow_reference: "IDEM-SAME", warnings: [] }] })
  }
  expect(await drained(database, servers[0]!, same)).toEqual(new Map([["IDEM-SAME", 1]]))
  expect((await jobs(database, same.organisation.id)).total).toBe(1)
  const replay = await call(servers.at(-1)!, "POST", "/v3/downstream/tradeflows", record("IDEM-SAME"), {
    authorization: same.key,
    "idempotency-key": "same-body"
  })
  expect(replay).toEqual({ status: 202, body: accepted[0]!.body })

  const different = await uatKey(servers[0]!, `Conflicting ${label}`)
  const mixed = await burst(servers, different.key, "different-bodies", (i) => record(`IDEM-DIFF-${i}`))
  const winners = mixed.filter((a) => a.status === 202)
  expect(winners.length, JSON.stringify(tally(mixed))).toBe(1)
  expect(mixed.every((a) => [202, 409, 422].includes(a.status)), JSON.stringify(tally(mixed))).toBe(true)
  const winner = winners[0]!.body.tradeflows[0].tradeflow_reference as string
  expect(await drained(database, servers[0]!, different)).toEqual(new Map([[winner, 1]]))
  expect((await jobs(database, different.organisation.id)).total).toBe(1)
  const again = await call(servers.at(-1)!, "POST", "/v3/downstream/tradeflows", record(`${winner}-other`), {
    authorization: different.key,
    "idempotency-key": "different-bodies"
  })
  expect(again.status).toBe(422)
}

/** 100 posts with one key in flight at once: more than a key may have by default (429 beyond). */
const manyInFlight = { MAX_IN_FLIGHT_PER_KEY: "1000" }

describe("Idempotency-Key under concurrency", () => {
  it("SQLite, one process: 100 concurrent posts with one key queue exactly one job", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-idempotency-"))
    const file = join(dir, "tracking.sqlite")
    let server: Server | undefined
    try {
      server = await start(file, manyInFlight)
      await scenario("sqlite", [server], SqliteStorage.layer({ filename: file }))
    } finally {
      if (server !== undefined) await kill(server)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  it("PostgreSQL, two processes on one database: 100 concurrent posts with one key queue exactly one job", async () => {
    const scope = Effect.runSync(Scope.make())
    const servers: Array<Server> = []
    try {
      const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
      const env = { DATABASE_URL: test.url, PG_MAX_CONNECTIONS: "6", ...manyInFlight }
      servers.push(await start("", env))
      servers.push(await start("", env))
      await scenario(
        "postgres",
        servers,
        PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 })
      )
    } finally {
      await Promise.all(servers.map(kill))
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 45_000)
})
