/**
 * LOCATION_UPDATE benchmark: the cost of mock-voyage positions.
 *
 * 1. Great-circle maths: `Positions.interpolate` per point.
 * 2. Scheduler round: BENCH_VOYAGES (default 1,000) voyages under way, the clock moved one interval
 *    on: one `Scheduler.tick` (queues one Advance job per voyage) and one `Worker.drain` (renders
 *    one position each), on memory and on SQLite (file, synchronous=FULL).
 * 3. Catch-up: one voyage with a 1-minute interval that departed 30 days ago: Advance jobs of
 *    `Positions.maxPositionsPerJob` positions each, on memory and on SQLite.
 *
 * The clock is the TestClock (no background fibers), so "one interval later" costs no waiting.
 * `npx tsx --conditions=@tradeflow/source bench/location-updates/bench.ts` (not part of `npm test`). Writes bench/location-updates/RESULTS.md.
 */
import {
  Ingest,
  JobQueue,
  Locations,
  OrganisationStore,
  Service,
  Storage,
  TrackingConfig,
  Worker
} from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
// Not yet re-exported from the package index.
import * as Positions from "../../packages/core/src/Positions.js"
import * as Scheduler from "../../packages/core/src/Scheduler.js"

const voyages = Number(process.env["BENCH_VOYAGES"] ?? 1_000)
const catchUpJobs = Number(process.env["BENCH_CATCHUP_JOBS"] ?? 5)
const hour = 3_600_000
const day = 24 * hour
const now0 = Date.UTC(2026, 10, 22, 10, 17, 23, 456)
const org = "org-bench"
const iso = (ms: number) => new Date(ms).toISOString()

const root = mkdtempSync(join(tmpdir(), "tradeflow-bench-positions-"))
let dbCounter = 0

type Backend = "memory" | "sqlite"
const storage = (backend: Backend): Layer.Layer<Storage.Storage, unknown> =>
  backend === "memory"
    ? Storage.layerMemory
    : SqliteStorage.layer({ filename: join(root, `bench-${dbCounter++}.sqlite`) })

const service = (backend: Backend, intervalMinutes: number) =>
  Service.layer({ background: false }, { background: false, batchSize: voyages }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        storage(backend),
        Locations.layerBuiltin,
        TrackingConfig.layer({ locationIntervalMinutes: intervalMinutes })
      )
    )
  )

const record = (reference: string, departure: number, arrival: number) => ({
  tradeflow_reference: reference,
  container_reference: "CSQU3054383",
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  actual_time_of_departure: iso(departure),
  estimated_time_of_arrival: iso(arrival),
  mock_tracking: { scenario: "ocean_basic" }
})

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const a = yield* effect
    return [a, performance.now() - start] as const
  })

const seed = (records: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    yield* (yield* OrganisationStore.OrganisationStore).insert({
      id: org,
      name: "Bench (UAT)",
      environment: "uat",
      live_organisation_id: null,
      created_at: now0
    })
    for (let i = 0; i < records.length; i += 500) {
      yield* (yield* Ingest.Ingest).submit({
        organisation_id: org,
        environment: "uat",
        body: records.slice(i, i + 500),
        form: "any"
      })
    }
    yield* (yield* Worker.Worker).drain
  })

const round = (backend: Backend) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now0)
    const D = now0 - 10 * hour - 30 * 60_000
    const [, seedMs] = yield* timed(
      seed(Array.from({ length: voyages }, (_, i) => record(`V-${i}`, D, now0 + 20 * day)))
    )
    yield* TestClock.adjust("1 hour")
    const [queued, tickMs] = yield* timed((yield* Scheduler.Scheduler).tick)
    const [, drainMs] = yield* timed((yield* Worker.Worker).drain)
    const pending = (yield* (yield* JobQueue.JobQueue).pending(10)).length
    return { backend, queued, seedMs, tickMs, drainMs, pending }
  }).pipe(Effect.provide(service(backend, 60)), Effect.provide(TestContext.TestContext))

const catchUp = (backend: Backend) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now0)
    yield* seed([record("LONG", now0 - 30 * day, now0 + 30 * day)])
    const scheduler = yield* Scheduler.Scheduler
    const worker = yield* Worker.Worker
    const times: Array<number> = []
    for (let i = 0; i < catchUpJobs; i++) {
      const [, ms] = yield* timed(Effect.zipRight(scheduler.tick, worker.drain))
      times.push(ms)
    }
    return { backend, times }
  }).pipe(Effect.provide(service(backend, 1)), Effect.provide(TestContext.TestContext))

const maths = () => {
  const a = { lat: 51.9225, lng: 4.4792 }
  const b = { lat: 31.2304, lng: 121.4737 }
  const n = 1_000_000
  let sink = 0
  const start = performance.now()
  for (let i = 0; i < n; i++) sink += Positions.interpolate(a, b, i / n).lat
  const ms = performance.now() - start
  return { n, ms, sink }
}

const main = Effect.gen(function*() {
  const m = maths()
  const rounds = [yield* round("memory"), yield* round("sqlite")]
  const catchUps = [yield* catchUp("memory"), yield* catchUp("sqlite")]
  const cpu = (readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? cpus()[0]?.model ?? "?")
    .trim()
  const f = (x: number) => x.toFixed(1)
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN
  const [rm, rs] = rounds as [typeof rounds[0], typeof rounds[0]]
  const [cm, cs] = catchUps as [typeof catchUps[0], typeof catchUps[0]]
  const lines = [
    "# LOCATION_UPDATE benchmark",
    "",
    `Machine: ${cpus().length} CPUs (nproc), ${
      (totalmem() / 2 ** 30).toFixed(1)
    } GiB memory, ${cpu}. Node ${process.version}.`,
    `Date: ${
      new Date().toISOString()
    }. Command: \`npx tsx --conditions=@tradeflow/source bench/location-updates/bench.ts\` (BENCH_VOYAGES=${voyages}).`,
    "",
    "## Great-circle maths",
    "",
    `\`Positions.interpolate\`: ${m.n.toLocaleString("en")} points in ${f(m.ms)} ms = ${
      f((m.ms * 1e6) / m.n)
    } ns per point.`,
    "",
    `## Scheduler round: ${voyages.toLocaleString("en")} voyages due one position each`,
    "",
    "| Storage | seed (post + process the voyages) ms | tick ms | Advance jobs queued | drain ms | per job ms | pending after |",
    "|---|---|---|---|---|---|---|",
    ...rounds.map((r) =>
      `| ${r.backend} | ${f(r.seedMs)} | ${f(r.tickMs)} | ${r.queued} | ${f(r.drainMs)} | ${
        (r.drainMs / Math.max(1, r.queued)).toFixed(2)
      } | ${r.pending} |`
    ),
    "",
    `Ratio SQLite / memory: tick ${f(rs.tickMs / rm.tickMs)}x, drain ${f(rs.drainMs / rm.drainMs)}x.`,
    "",
    `## Catch-up: a 60-day voyage with a 1-minute interval, 30 days in (43,200 positions due)`,
    "",
    `Each round is one tick and one drain: one Advance job rendering ${Positions.maxPositionsPerJob} positions.`,
    "",
    "| Storage | job times ms | median ms | positions per second |",
    "|---|---|---|---|",
    ...catchUps.map((c) =>
      `| ${c.backend} | ${c.times.map(f).join(", ")} | ${f(median(c.times))} | ${
        Math.round(Positions.maxPositionsPerJob / (median(c.times) / 1000)).toLocaleString("en")
      } |`
    ),
    "",
    `Ratio SQLite / memory (median job): ${f(median(cs.times) / median(cm.times))}x.`,
    ""
  ]
  const out = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.md")
  writeFileSync(out, lines.join("\n"))
  console.log(lines.join("\n"))
})

Effect.runPromise(main).finally(() => rmSync(root, { recursive: true, force: true }))
