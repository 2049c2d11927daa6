/**
 * Widget search benchmark (issue 12 point 4): searches in an organisation of BENCH_TRADEFLOWS
 * (default 20,000) tradeflows, on the real standalone server (a child process, as `npm start`
 * runs it; `BENCH_SERVER=tsx` for the loader) with the event-loop-delay probe of
 * bench/event-loop-probe.mjs preloaded. The per-key rate limit is lifted
 * (the harness turns the rate limits off) so that the search itself is measured.
 *
 * Per backend, on a fresh database: one UAT organisation gets the tradeflows through the API (500
 * records per request, each with its own container number, bill of lading and booking, three
 * imported events), and a widget key. Then phases of BENCH_SECONDS (default 10) each, every
 * client sending one request at a time:
 * - "floor": `GET /health` (the same server, database and clients, in the same run), 1 and 8 clients;
 * - "search": `GET /api/v2/widget-search` by a random tradeflow's reference, container number
 *   (lower case, spaced), bill of lading or booking, 1 and 8 clients; each must answer 200.
 * Reported per phase: requests, latency p50 / p99 / max, and the server's event-loop delay
 * p50 / p99 / max (monitorEventLoopDelay, 5 ms resolution). A phase whose requests outlast it
 * ends with them.
 *
 * `npx tsx --conditions=@tradeflow/source bench/widget-search/bench.ts [sqlite|postgres|both]`. Env: BENCH_TRADEFLOWS,
 * BENCH_SECONDS, BENCH_SERVER, TRADEFLOW_TEST_PG_URL. Prints JSON lines and a Markdown table;
 * writes nothing into the repository.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { consoleToken } from "../../examples/standalone/test/Process.js"
import { type Backend, selectedBackends } from "../Backends.js"
import { call, eventLoopProbe, machineLine, post, type Running, startServer, withDatabase } from "../Harness.js"

const tradeflows = Number(process.env["BENCH_TRADEFLOWS"] ?? 20_000)
const seconds = Number(process.env["BENCH_SECONDS"] ?? 10)
const perRequest = 500

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
const container = (i: number) => `WSCU${String(i).padStart(7, "0")}`
const reference = (i: number) => `WS-${i}`

const recordOf = (i: number) => ({
  tradeflow_reference: reference(i),
  container_reference: container(i),
  bill_of_lading_reference: `BL-WS-${i}`,
  booking_reference: `BK-WS-${i}`,
  carrier_name: "Maersk",
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  events: ["Gate in", "Loaded", "Vessel departure"].map((message, k) => ({
    message,
    container_reference: container(i),
    location_name: "CNSHA",
    event_date: new Date(Date.UTC(2026, 9, 1 + k)).toISOString(),
    actual: true
  }))
})

/** A query finding tradeflow `i` by one of its four kinds of reference, spelled as a person might. */
const queryOf = (i: number, kind: number) => {
  switch (kind % 4) {
    case 0:
      return reference(i)
    case 1:
      return `${container(i).slice(0, 4).toLowerCase()} ${container(i).slice(4, 10)}-${container(i).slice(10)}`
    case 2:
      return `bl-ws-${i}`
    default:
      return `BK-WS-${i}`
  }
}

/** Posts the tradeflows, then waits until the last one is found (an organisation's jobs run in order). */
const seed = async (server: Running, key: string, widgetAuth: string) => {
  for (let from = 0; from < tradeflows; from += perRequest) {
    const body = JSON.stringify(
      Array.from({ length: Math.min(perRequest, tradeflows - from) }, (_, k) => recordOf(from + k))
    )
    const answer = await post(server.port, "/v3/downstream/tradeflows", body, { authorization: key })
    if (answer.status !== 202) throw new Error(`seed answered ${answer.status}: ${answer.body.slice(0, 500)}`)
  }
  const last = `/api/v2/widget-search?query=${encodeURIComponent(reference(tradeflows - 1))}`
  while ((await call(server.port, "GET", last, { authorization: widgetAuth })).status !== 200) await sleep(200)
}

/** `clients` clients each sending `next()` one at a time until `seconds` have passed; answers latencies. */
const drive = async (clients: number, next: () => Promise<void>) => {
  const until = performance.now() + seconds * 1000
  const latencies: Array<number> = []
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < until) {
      const started = performance.now()
      await next()
      latencies.push(performance.now() - started)
    }
  }))
  const sorted = latencies.sort((a, b) => a - b)
  return {
    requests: sorted.length,
    p50: Number(percentile(sorted, 0.5).toFixed(1)),
    p99: Number(percentile(sorted, 0.99).toFixed(1)),
    max: Number((sorted.at(-1) ?? 0).toFixed(1))
  }
}

const results: Array<Record<string, unknown>> = []

const runBackend = (backend: Backend) =>
  withDatabase(backend, "widget_search", async (database) => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-bench-widget-"))
    const probe = eventLoopProbe(dir)
    const server = await startServer(
      database.url,
      probe.env,
      undefined,
      probe.nodeArgs
    )
    try {
      const tenant = await uatKey(server, "Widget tenant")
      const created = await call(server.port, "POST", `/console/organisations/${tenant.organisation.id}/widget-keys`, {
        authorization: `Bearer ${consoleToken}`
      })
      if (created.status !== 201) throw new Error(`widget key answered ${created.status}: ${created.body}`)
      const widgetAuth = `Basic ${(JSON.parse(created.body) as { key: string }).key}`
      const seeded = performance.now()
      await seed(server, tenant.key, widgetAuth)
      console.log(
        JSON.stringify({
          backend,
          tradeflows,
          seeded_seconds: Number(((performance.now() - seeded) / 1000).toFixed(1))
        })
      )

      let n = 0
      const search = async () => {
        const i = Math.floor(Math.random() * tradeflows)
        const answer = await call(
          server.port,
          "GET",
          `/api/v2/widget-search?query=${encodeURIComponent(queryOf(i, n++))}`,
          {
            authorization: widgetAuth
          }
        )
        if (answer.status !== 200) throw new Error(`search answered ${answer.status}: ${answer.body.slice(0, 500)}`)
      }
      const health = async () => {
        const answer = await call(server.port, "GET", "/health", {})
        if (answer.status !== 200) throw new Error(`health answered ${answer.status}`)
      }
      await drive(2, search)
      for (
        const [phase, clients, next] of [
          ["floor: GET /health", 1, health],
          ["floor: GET /health", 8, health],
          ["search", 1, search],
          ["search", 8, search]
        ] as const
      ) {
        await probe.read(server)
        const measured = await drive(clients, next)
        results.push({ backend, phase, clients, ...measured, eld: await probe.read(server) })
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
  `\n| storage | phase (${
    tradeflows.toLocaleString("en")
  } tradeflows) | clients | requests | p50 ms | p99 ms | max ms | event-loop delay p50 / p99 / max ms |` +
    "\n|---|---|---:|---:|---:|---:|---:|---|"
)
for (const r of results) {
  const eld = r["eld"] as { p50: number; p99: number; max: number }
  console.log(
    `| ${r["backend"]} | ${r["phase"]} | ${r["clients"]} | ${r["requests"]} | ${r["p50"]} | ${r["p99"]} | ${
      r["max"]
    } | ${eld.p50} / ${eld.p99} / ${eld.max} |`
  )
}
