/**
 * `npm run bench:multi-process`: end-to-end throughput of N = 1, 2, 3 standalone server processes
 * sharing one PostgreSQL database (TRADEFLOW_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test).
 *
 * For each N: a fresh schema, N servers, ORGS organisations (one API key and one client each),
 * RECORDS tradeflow records posted in batches of BATCH, round-robin over the servers. "accepted" is
 * records / time until every request was answered 202; "processed" is records / time until the
 * queue is empty (from the first request). Records carry `mock_tracking: ocean_basic` (a UAT mock
 * journey, so each record yields milestones and vessel positions) unless MOCK=false. Prints one
 * JSON line per N and a Markdown table. Env: RECORDS, BATCH, ORGS, PROCESSES ("1,2,3"), MOCK.
 */
import { SqlClient } from "@effect/sql"
import { JobQueue } from "@tradeflow/core"
import { PgStorage } from "@tradeflow/storage-pg"
import { Effect, Exit, Scope } from "effect"
import { call, consoleToken, kill, type Server, start } from "../../examples/standalone/test/Process.js"
import { makeTestSchema, type TestSchema } from "../../packages/storage-pg/test/TestDatabase.js"
import { unlimited } from "../Harness.js"

const RECORDS = Number(process.env["RECORDS"] ?? 4_000)
const BATCH = Number(process.env["BATCH"] ?? 100)
const ORGS = Number(process.env["ORGS"] ?? 8)
const PROCESSES = (process.env["PROCESSES"] ?? "1,2,3").split(",").map(Number)
const MOCK = (process.env["MOCK"] ?? "true") === "true"

const messageCount = (test: TestSchema) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM messages`).pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.provide(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 1 })),
    Effect.runPromise
  )

const pending = (test: TestSchema) =>
  Effect.flatMap(JobQueue.JobQueue, (q) => q.pending(1)).pipe(
    Effect.map((jobs) => jobs.length),
    Effect.provide(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 1 })),
    Effect.runPromise
  )

const run = async (n: number) => {
  const scope = Effect.runSync(Scope.make())
  const servers: Array<Server> = []
  try {
    const test = await Effect.runPromise(Scope.extend(makeTestSchema(), scope))
    const env = { ...unlimited, DATABASE_URL: test.url, PG_MAX_CONNECTIONS: "10" }
    for (let i = 0; i < n; i++) servers.push(await start("", env))
    const auth = { authorization: `Bearer ${consoleToken}` }
    const keys: Array<string> = []
    for (let c = 0; c < ORGS; c++) {
      const org = await call(servers[0]!, "POST", "/console/organisations", { name: `Bench ${c}` }, auth)
      const key = await call(servers[0]!, "POST", `/console/organisations/${org.body.id}/api-keys`, {
        environment: "uat"
      }, auth)
      keys.push(key.body.key)
    }
    const batches = RECORDS / BATCH
    let next = 0
    let failed = 0
    const started = performance.now()
    await Promise.all(keys.map(async (key) => {
      while (next < batches) {
        const b = next++
        const body = Array.from({ length: BATCH }, (_, i) => ({
          tradeflow_reference: `B-${b * BATCH + i}`,
          booking_reference: `BK-${b * BATCH + i}`,
          port_of_loading: "CNSHA",
          port_of_discharge: "NLRTM",
          ...(MOCK ? { mock_tracking: { scenario: "ocean_basic" } } : {})
        }))
        const answer = await call(servers[b % n]!, "POST", "/v3/downstream/tradeflows", body, { authorization: key })
        if (answer.status !== 202) failed++
      }
    }))
    const acceptedAt = performance.now()
    while ((await pending(test)) > 0) await new Promise((r) => setTimeout(r, 100))
    const processedAt = performance.now()
    const messages = await messageCount(test)
    return {
      messages,
      messages_per_second: Math.round(messages / ((processedAt - started) / 1000)),
      processes: n,
      records: RECORDS,
      failed_requests: failed,
      accept_seconds: (acceptedAt - started) / 1000,
      process_seconds: (processedAt - started) / 1000,
      accepted_per_second: Math.round(RECORDS / ((acceptedAt - started) / 1000)),
      processed_per_second: Math.round(RECORDS / ((processedAt - started) / 1000))
    }
  } finally {
    await Promise.all(servers.map(kill))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const results = []
for (const n of PROCESSES) {
  const r = await run(n)
  console.log(JSON.stringify(r))
  results.push(r)
}
const base = results[0]!
console.log(
  `\n| processes | accepted rec/s | processed rec/s | accepted ×N=${base.processes} | processed ×N=${base.processes} |`
)
console.log("|---|---|---|---|---|")
for (const r of results) {
  console.log(
    `| ${r.processes} | ${r.accepted_per_second} | ${r.processed_per_second} | ${
      (r.accepted_per_second / base.accepted_per_second).toFixed(2)
    } | ${(r.processed_per_second / base.processed_per_second).toFixed(2)} |`
  )
}
