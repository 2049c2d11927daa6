import { describe, expect, it } from "@effect/vitest"
import { JobQueue, MessageStore } from "@tradeflow/core"
import { PgStorage } from "@tradeflow/storage-pg"
import { Effect, Exit, Scope } from "effect"
import { makeTestSchema, type TestSchema } from "../../../packages/storage-pg/test/TestDatabase.js"
import { call, consoleToken, kill, type Server, start } from "./Process.js"

const RECORDS = 5_000
const BATCH = 50
const CLIENTS = 4

const record = (reference: string, i: number) => ({
  tradeflow_reference: reference,
  booking_reference: `BK-${i}`,
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM"
})

/** What the database holds for these organisations, read through the PG storage layer. */
const inspect = (test: TestSchema, organisationIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    const messages = yield* MessageStore.MessageStore
    const pending = (yield* queue.pending(1_000_000)).length
    const created = new Map<string, number>()
    const hashes: Array<string> = []
    for (const organisation_id of organisationIds) {
      for (const m of yield* messages.list({ organisation_id, take: "oldest", limit: 10_000_000 })) {
        hashes.push(`${organisation_id}/${m.hash}`)
        const body = JSON.parse(m.body) as { payload: { status?: string } }
        if (m.type === "BASIC_STATUS" && body.payload.status === "TRADEFLOW_CREATED") {
          const key = `${organisation_id}/${m.tradeflow_reference}`
          created.set(key, (created.get(key) ?? 0) + 1)
        }
      }
    }
    return { pending, created, hashes }
  }).pipe(
    Effect.provide(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 })),
    Effect.runPromise
  )

describe("several server processes on one PostgreSQL database", () => {
  it(
    "5,000 tradeflows posted across three processes, one killed: each accepted one is processed exactly once",
    async () => {
      const scope = Effect.runSync(Scope.make())
      const servers: Array<Server> = []
      try {
        const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
        const env = { DATABASE_URL: test.url, WORKER_LEASE_MILLIS: "3000", PG_MAX_CONNECTIONS: "6" }
        servers.push(...await Promise.all([start("", env), start("", env), start("", env)]))
        const auth = { authorization: `Bearer ${consoleToken}` }
        const keys: Array<{ key: string; organisation: string }> = []
        for (let c = 0; c < CLIENTS; c++) {
          const org = await call(servers[c % 3]!, "POST", "/console/organisations", { name: `Multi ${c}` }, auth)
          const key = await call(servers[(c + 1) % 3]!, "POST", `/console/organisations/${org.body.id}/api-keys`, {
            environment: "uat"
          }, auth)
          expect(key.status).toBe(201)
          keys.push({ key: key.body.key, organisation: key.body.organisation.id })
        }

        const victim = servers[2]!
        let killed = false
        let answered = 0
        const accepted: Array<string> = []
        const batches = Array.from({ length: RECORDS / BATCH }, (_, b) => b)
        let next = 0
        const client = async (c: number) => {
          while (next < batches.length) {
            const b = batches[next++]!
            const alive = killed ? servers.slice(0, 2) : servers
            const server = alive[b % alive.length]!
            const references = Array.from({ length: BATCH }, (_, i) => `MP-${b * BATCH + i}`)
            const { key, organisation } = keys[c]!
            const answer = await call(
              server,
              "POST",
              "/v3/downstream/tradeflows",
              references.map((r, i) => record(r, b * BATCH + i)),
              { authorization: key }
            ).catch(() => undefined)
            if (answer?.status === 202) {
              accepted.push(...references.map((r) => `${organisation}/${r}`))
              answered++
            }
            if (answered >= 40 && !killed) {
              killed = true
              await kill(victim)
            }
          }
        }
        await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)))
        expect(killed).toBe(true)
        expect(accepted.length).toBeGreaterThan(RECORDS / 2)

        const organisations = keys.map((k) => k.organisation)
        let state = await inspect(test, organisations)
        for (let i = 0; i < 200 && accepted.some((r) => state.created.get(r) !== 1); i++) {
          await new Promise((r) => setTimeout(r, 200))
          state = await inspect(test, organisations)
        }
        for (const reference of accepted) expect(state.created.get(reference), reference).toBe(1)
        expect([...state.created.values()].every((n) => n === 1)).toBe(true)
        expect(new Set(state.hashes).size).toBe(state.hashes.length)
      } finally {
        await Promise.all(servers.map(kill))
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    },
    90_000
  )
})
