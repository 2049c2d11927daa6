/**
 * Upstream filters benchmark (issue 12 point 9): how long one `GET /upstream` request holds the
 * server's event loop, for every combination of the filters the API offers, with BENCH_MESSAGES
 * (default 1,000,000) messages in one organisation.
 *
 * The real standalone server runs as a child process (as `npm start` runs it; `BENCH_SERVER=tsx`
 * for the loader) with the event-loop-delay probe of bench/event-loop-probe.mjs preloaded
 * (`perf_hooks.monitorEventLoopDelay`, 5 ms resolution), its worker off. Per backend, on a fresh
 * database: a UAT organisation and key through the console, then the messages of bench/Fill.ts
 * (1,000 tradeflows, 4 types round-robin, so tradeflow TF-k has only type k mod 4; one container,
 * MSCU1234565, on every CONTAINER_MILESTONE, a quarter of the log; ~470 byte bodies; message i
 * generated `total - i` ms before the fill), written through TradeflowStore.commit on SQLite and
 * with bulk statements on PostgreSQL (message_heads filled as the commits would have).
 *
 * Then, BENCH_REPEAT (default 5) rounds, each one request per case in turn, every request alone
 * with the probe read right before and right after it, so that the delay it reports is that
 * request's: the floor (`GET /health`, the same server, database and client, in the same run), and
 * each filter combination as a first page of 500, a first page with `since` (the middle of the
 * log), and the array form (the 500 newest of the last 24 hours, which here hold the whole log).
 * Reported per case: rows answered, latency p50 and max, and the largest event-loop delay any of
 * its requests caused (the goal: under 50 ms).
 *
 * `npm run bench:upstream-filters [-- sqlite|postgres|both]`. Env: BENCH_MESSAGES,
 * BENCH_REPEAT, BENCH_SERVER, TRADEFLOW_TEST_PG_URL. Prints JSON lines and a Markdown table;
 * writes nothing into the repository.
 */
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { bulkFill, commitFill } from "../Fill.js"
import { call, eventLoopProbe, machineLine, pgUrl, startServer, withDatabase } from "../Harness.js"

const total = Number(process.env["BENCH_MESSAGES"] ?? 1_000_000)
const repeat = Number(process.env["BENCH_REPEAT"] ?? 5)

/** The filter combinations: every one the API offers over the fill, some of them matching nothing. */
const filters: ReadonlyArray<readonly [string, string]> = [
  ["none", ""],
  ["tradeflow", "tradeflow=TF-1"],
  ["container", "container=MSCU1234565"],
  ["type", "type=CONTAINER_MILESTONE"],
  ["two types", "type=CONTAINER_MILESTONE,LOCATION_UPDATE"],
  ["tradeflow + type", "tradeflow=TF-1&type=CONTAINER_MILESTONE"],
  ["tradeflow + type (none match)", "tradeflow=TF-2&type=CONTAINER_MILESTONE"],
  ["tradeflow + container", "tradeflow=TF-1&container=MSCU1234565"],
  ["tradeflow + container (none match)", "tradeflow=TF-2&container=MSCU1234565"],
  ["container + type (none match)", "container=MSCU1234565&type=LOCATION_UPDATE"],
  ["tradeflow + container + type", "tradeflow=TF-1&container=MSCU1234565&type=CONTAINER_MILESTONE"]
]
const combinations = filters.flatMap(([name, query]) => [
  [name, query] as const,
  [`latest + ${name}`.replace(" + none", ""), `latest=true${query === "" ? "" : `&${query}`}`] as const
])

interface Measured {
  readonly ms: number
  readonly eld: number
  readonly rows: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

const results: Array<Record<string, unknown>> = []

const fillOn = (backend: Backend, file: string, schema: string, organisationId: string) =>
  Effect.runPromise(
    backend === "sqlite"
      ? commitFill(organisationId, { total, batchSize: 10_000 }).pipe(
        Effect.provide(Layer.orDie(SqliteStorage.layer({ filename: file, synchronous: "NORMAL" })))
      )
      : bulkFill(organisationId, { total, chunk: 100_000 }).pipe(
        Effect.provide(Layer.orDie(PgStorage.layer({ url: pgUrl, schema })))
      )
  )

const runBackend = (backend: Backend) =>
  withDatabase(backend, "upstream_filters", async (database) => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-bench-upstream-filters-"))
    const probe = eventLoopProbe(dir)
    const server = await startServer(database.url, { ...probe.env, WORKER_ENABLED: "false" }, undefined, probe.nodeArgs)
    try {
      const tenant = await uatKey(server, "Upstream filters tenant")
      const filled = performance.now()
      const fillStart = Date.now()
      await fillOn(backend, database.file, database.schema, tenant.organisation.id)
      console.log(
        JSON.stringify({
          backend,
          messages: total,
          fill_seconds: Number(((performance.now() - filled) / 1000).toFixed(1))
        })
      )
      const since = new Date(fillStart - Math.floor(total / 2)).toISOString()

      const get = (path: string) => async (): Promise<number> => {
        const answer = await call(server.port, "GET", path, { authorization: tenant.key })
        if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
        const body = JSON.parse(answer.body) as ReadonlyArray<unknown> | { data: ReadonlyArray<unknown> }
        return Array.isArray(body) ? body.length : (body as { data: ReadonlyArray<unknown> }).data.length
      }
      const cases: Array<readonly [string, string, () => Promise<number>]> = [
        ["floor: GET /health", "", async () => (await call(server.port, "GET", "/health", {})).status === 200 ? 0 : -1]
      ]
      for (const [name, query] of combinations) {
        const and = query === "" ? "" : `&${query}`
        cases.push([name, "first page of 500", get(`/v3/upstream?per_page=500${and}`)])
        cases.push([name, "first page with since", get(`/v3/upstream?per_page=500&since=${since}${and}`)])
        cases.push([name, "array form", get(`/v3/upstream${query === "" ? "" : `?${query}`}`)])
      }
      const seen = cases.map(() => [] as Array<Measured>)
      for (const [, , request] of cases) await request()
      for (let round = 0; round < repeat; round++) {
        for (const [c, [, , request]] of cases.entries()) {
          await probe.read(server)
          const started = performance.now()
          const rows = await request()
          const ms = performance.now() - started
          seen[c]!.push({ ms, rows, eld: (await probe.read(server)).max })
        }
      }
      for (const [c, [name, form]] of cases.entries()) {
        const times = seen[c]!.map((m) => m.ms).sort((a, b) => a - b)
        results.push({
          backend,
          filters: name,
          form,
          rows: seen[c]![0]?.rows ?? 0,
          p50_ms: Number(percentile(times, 0.5).toFixed(1)),
          max_ms: Number((times.at(-1) ?? 0).toFixed(1)),
          eld_max_ms: Math.max(...seen[c]!.map((m) => m.eld))
        })
        console.log(JSON.stringify(results.at(-1)))
      }
    } finally {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

console.log(machineLine())
for (const backend of selectedBackends()) await runBackend(backend)
console.log(
  `\n| storage | filters (${
    total.toLocaleString("en")
  } messages) | request | rows | p50 ms | max ms | largest event-loop delay ms |` +
    "\n|---|---|---|---:|---:|---:|---:|"
)
for (const r of results) {
  console.log(
    `| ${r["backend"]} | ${r["filters"]} | ${r["form"]} | ${r["rows"]} | ${r["p50_ms"]} | ${r["max_ms"]} | ${
      r["eld_max_ms"]
    } |`
  )
}
const worst = results.filter((r) => r["form"] !== "").reduce((a, r) => Math.max(a, r["eld_max_ms"] as number), 0)
console.log(`\nlargest event-loop delay of any upstream request: ${worst} ms (goal: under 50 ms)`)
