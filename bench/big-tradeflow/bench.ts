/**
 * Big tradeflow benchmark (issue 12 point 2): another tenant's small posts while one tenant's
 * tradeflow at the stored caps (1,000 containers, 20,000 events) is processed, on the real
 * standalone server (a child process, as `npm start` runs it; `BENCH_SERVER=tsx` for the loader)
 * with the event-loop-delay probe of bench/event-loop-probe.mjs preloaded.
 *
 * Per backend, on a fresh database: tenant A's tradeflow `BIG` is built up to the caps through
 * the API (20 requests of 1,000 events while it has one container, then its 1,000 containers).
 * Then two phases of BENCH_SECONDS (default 20) each, in which tenant B posts one single-record
 * request at a time (a new tradeflow each, BENCH_GAP_MILLIS apart, default 10) and records each
 * request's time to its 202:
 * - "floor": nothing else runs (the same server, database and client, in the same run);
 * - "big jobs": tenant A posts, one after another, the largest request the ingest admits for `BIG`
 *   (a new date for as many container events as the render estimate lets one job render, each
 *   rendering a CONTAINER_MILESTONE with the 1,000 containers), waiting for each job to end.
 * Reported per phase: B's 202 latency p50 / p99 / max, the server's event-loop delay p50 / p99 /
 * max (monitorEventLoopDelay, 5 ms resolution), and for the big jobs their count, mean duration
 * (202 to done, from the jobs table) and the bytes of message bodies each stored.
 *
 * `npx tsx --conditions=@tradeflow/source bench/big-tradeflow/bench.ts [sqlite|postgres|both]`. Env: BENCH_SECONDS,
 * BENCH_GAP_MILLIS, BENCH_SERVER, BENCH_CPU_PROF (a directory: the server runs with `--cpu-prof`
 * and writes its profile into `<dir>/<backend>/` when it stops), TRADEFLOW_TEST_PG_URL. Prints JSON lines and a Markdown table;
 * writes nothing into the repository.
 */
import { IngestLimits, RenderBudget } from "@tradeflow/core"
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uatKey } from "../../examples/standalone/test/Fixtures.js"
import { type Backend, selectedBackends } from "../Backends.js"
import {
  type BenchDatabase,
  eventLoopProbe,
  machineLine,
  post,
  type Running,
  startServer,
  withDatabase
} from "../Harness.js"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 20)
const gapMillis = Number(process.env["BENCH_GAP_MILLIS"] ?? 10)
const cpuProf = process.env["BENCH_CPU_PROF"]

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
const containerNumber = (i: number) => `ABCU${String(i).padStart(7, "0")}`
const range = (n: number) => Array.from({ length: n }, (_, i) => i)

/** The largest number of changed container events one request may carry for a tradeflow of 1,000 containers. */
const admitted = Math.floor(
  (RenderBudget.maxBytesPerJob - 24_000) /
    (600 + IngestLimits.shipmentMessageBytes(IngestLimits.maxStoredContainers, false))
)

/** A reader of one organisation's jobs: how many are pending, and the duration of the last one done. */
const jobsOf = (backend: Backend, database: BenchDatabase) => {
  const sqlite = backend === "sqlite" ? new Database(database.file, { readonly: true }) : undefined
  const query = async <A>(text: string, params: ReadonlyArray<unknown>): Promise<ReadonlyArray<A>> => {
    if (sqlite !== undefined) return sqlite.prepare(text.replace(/\$\d/g, "?")).all(...params) as ReadonlyArray<A>
    const client = await database.admin.connect()
    try {
      await client.query(`SET search_path = ${database.schema}`)
      return (await client.query(text, [...params])).rows as ReadonlyArray<A>
    } finally {
      client.release()
    }
  }
  return {
    pending: async (organisationId: string) =>
      Number(
        (await query<{ n: number | string }>(
          "SELECT count(*) AS n FROM jobs WHERE organisation_id = $1 AND status = 'pending'",
          [organisationId]
        ))[0]?.n ?? 0
      ),
    bodyBytes: async (organisationId: string, reference: string) =>
      Number(
        (await query<{ n: number | string | null }>(
          "SELECT sum(length(body)) AS n FROM messages WHERE organisation_id = $1 AND tradeflow_reference = $2",
          [organisationId, reference]
        ))[0]?.n ?? 0
      ),
    close: () => sqlite?.close()
  }
}

/** Waits until the organisation has no pending job. */
const settle = async (jobs: ReturnType<typeof jobsOf>, organisationId: string) => {
  while (await jobs.pending(organisationId) > 0) await sleep(20)
}

/** Tenant B: single-record posts, one at a time, until `stop()` is true; answers each time to its 202. */
const smallPosts = async (port: number, key: string, tag: string, stop: () => boolean) => {
  const latencies: Array<number> = []
  for (let n = 0; !stop(); n++) {
    const body = JSON.stringify([{ tradeflow_reference: `${tag}-${n}`, booking_reference: `BK-${tag}-${n}` }])
    const started = performance.now()
    const answer = await post(port, "/v3/downstream/tradeflows", body, { authorization: key })
    if (answer.status !== 202) throw new Error(`small post answered ${answer.status}: ${answer.body}`)
    latencies.push(performance.now() - started)
    await sleep(gapMillis)
  }
  const sorted = latencies.sort((a, b) => a - b)
  return {
    posts: sorted.length,
    p50: Number(percentile(sorted, 0.5).toFixed(1)),
    p99: Number(percentile(sorted, 0.99).toFixed(1)),
    max: Number((sorted.at(-1) ?? 0).toFixed(1))
  }
}

/** Builds tenant A's `BIG` up to the caps through the API. */
const seed = async (server: Running, key: string, organisationId: string, jobs: ReturnType<typeof jobsOf>) => {
  const perRequest = 1_000
  for (let k = 0; k < IngestLimits.maxStoredEvents / perRequest; k++) {
    const body = JSON.stringify([{
      tradeflow_reference: "BIG",
      container_reference: containerNumber(0),
      port_of_loading: "CNSHA",
      port_of_discharge: "NLRTM",
      events: range(perRequest).map((i) => ({
        message: `Status ${k}`,
        container_reference: containerNumber(i),
        location_name: "CNSHA",
        event_date: "2026-01-01T00:00:00Z",
        actual: true
      }))
    }])
    const answer = await post(server.port, "/v3/downstream/tradeflows", body, { authorization: key })
    if (answer.status !== 202) throw new Error(`seed answered ${answer.status}: ${answer.body.slice(0, 500)}`)
    await settle(jobs, organisationId)
  }
  const containers = JSON.stringify([{
    tradeflow_reference: "BIG",
    container_reference: range(IngestLimits.maxStoredContainers).map(containerNumber)
  }])
  const answer = await post(server.port, "/v3/downstream/tradeflows", containers, { authorization: key })
  if (answer.status !== 202) throw new Error(`seed answered ${answer.status}: ${answer.body.slice(0, 500)}`)
  await settle(jobs, organisationId)
}

/** Tenant A's request at the render cap: a new date for `admitted` container events of `BIG`. */
const bigRequest = (round: number) =>
  JSON.stringify([{
    tradeflow_reference: "BIG",
    container_reference: containerNumber(0),
    events: range(admitted).map((i) => ({
      message: "Status 0",
      container_reference: containerNumber(i),
      location_name: "CNSHA",
      event_date: new Date(Date.UTC(2026, 1, 1) + round * 60_000).toISOString(),
      actual: true
    }))
  }])

const results: Array<Record<string, unknown>> = []

const runBackend = (backend: Backend) =>
  withDatabase(backend, "big_tradeflow", async (database) => {
    const dir = mkdtempSync(join(tmpdir(), "tradeflow-bench-big-"))
    const probe = eventLoopProbe(dir)
    const server = await startServer(
      database.url,
      probe.env,
      cpuProf === undefined ? undefined : join(cpuProf, backend),
      probe.nodeArgs
    )
    const jobs = jobsOf(backend, database)
    try {
      const a = await uatKey(server, "Big tenant")
      const b = await uatKey(server, "Small tenant")
      const seeded = performance.now()
      await seed(server, a.key, a.organisation.id, jobs)
      console.log(JSON.stringify({ backend, seeded_seconds: Number(((performance.now() - seeded) / 1000).toFixed(1)) }))
      await smallPosts(
        server.port,
        b.key,
        "warmup",
        ((until) => () => performance.now() > until)(performance.now() + 2_000)
      )
      await probe.read(server)

      const floorUntil = performance.now() + seconds * 1000
      const floor = await smallPosts(server.port, b.key, "floor", () => performance.now() > floorUntil)
      results.push({ backend, phase: "floor (idle)", ...floor, eld: await probe.read(server) })
      console.log(JSON.stringify(results.at(-1)))

      let stopped = false
      const durations: Array<number> = []
      const bytes: Array<number> = []
      const big = (async () => {
        for (let round = 1; !stopped; round++) {
          const before = await jobs.bodyBytes(a.organisation.id, "BIG")
          const started = performance.now()
          const answer = await post(server.port, "/v3/downstream/tradeflows", bigRequest(round), {
            authorization: a.key
          })
          if (answer.status !== 202) {
            throw new Error(`big request answered ${answer.status}: ${answer.body.slice(0, 500)}`)
          }
          await settle(jobs, a.organisation.id)
          durations.push(performance.now() - started)
          bytes.push(await jobs.bodyBytes(a.organisation.id, "BIG") - before)
        }
      })()
      const loadedUntil = performance.now() + seconds * 1000
      const loaded = await smallPosts(server.port, b.key, "loaded", () => performance.now() > loadedUntil)
        .finally(() => stopped = true)
      const eld = await probe.read(server)
      await big
      results.push({
        backend,
        phase: `big jobs (${admitted} milestones of 1,000 containers each)`,
        ...loaded,
        eld,
        big_jobs: durations.length,
        big_job_seconds: Number((durations.reduce((s, d) => s + d, 0) / durations.length / 1000).toFixed(2)),
        big_job_mib: Number((bytes.reduce((s, n) => s + n, 0) / bytes.length / 1024 / 1024).toFixed(1))
      })
      console.log(JSON.stringify(results.at(-1)))
    } finally {
      jobs.close()
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

console.log(machineLine())
for (const backend of selectedBackends()) await runBackend(backend)
console.log(
  "\n| storage | phase | B posts | B 202 p50 ms | p99 ms | max ms | event-loop delay p50 / p99 / max ms | big jobs | s per big job | MiB per big job |" +
    "\n|---|---|---:|---:|---:|---:|---|---:|---:|---:|"
)
for (const r of results) {
  const eld = r["eld"] as { p50: number; p99: number; max: number }
  console.log(
    `| ${r["backend"]} | ${r["phase"]} | ${r["posts"]} | ${r["p50"]} | ${r["p99"]} | ${
      r["max"]
    } | ${eld.p50} / ${eld.p99} / ${eld.max} | ${r["big_jobs"] ?? "–"} | ${r["big_job_seconds"] ?? "–"} | ${
      r["big_job_mib"] ?? "–"
    } |`
  )
}
