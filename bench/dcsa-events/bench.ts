/**
 * DCSA events benchmark (issue 15 §8): what one `GET /dcsa/v2/events` costs the server, since
 * `DcsaPublisher` reads every tradeflow of the organisation per request (`TradeflowStore.list`) and
 * projects, filters and sorts every reading.
 *
 * In process, per storage (memory, SQLite in a temporary file) and per size (BENCH_SIZES, default
 * 1,000 and 10,000 tradeflows in one organisation): the tradeflows are written through
 * `TradeflowStore.commit` (500 a commit), each a journey of eight milestones (GE, GN, AE, VD, VA, UV,
 * GT, GR at CNSHA and NLRTM) whose arrival has three readings (two ETAs and the actual one), with a
 * container, a booking and a bill of lading of its own: ten published events a tradeflow. Then
 * BENCH_REPEAT (default 7) rounds of each request, every one timed alone (wall clock; the work is
 * synchronous apart from the store's read, so the time is also how long it holds the event loop),
 * and `TradeflowStore.list` alone, the floor every request pays.
 *
 * `npx tsx --conditions=@tradeflow/source bench/dcsa-events/bench.ts [memory|sqlite|both]`, or
 * bundled as `npm start` bundles the server (tsx's `keepNames` slows every closure down; see
 * RESULTS.md). Env: BENCH_SIZES (comma list), BENCH_REPEAT. Prints JSON lines and a Markdown table;
 * writes nothing into the repository.
 */
import {
  Cursor,
  DcsaPublisher,
  JobQueue,
  Storage,
  type Tradeflow,
  TradeflowMerge,
  TradeflowStore
} from "@tradeflow/core"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { machineLine } from "../Harness.js"

const sizes = (process.env["BENCH_SIZES"] ?? "1000,10000").split(",").map(Number)
const repeat = Number(process.env["BENCH_REPEAT"] ?? 7)
const selected = (process.argv[2] ?? "both").toLowerCase()
const storages = selected === "both" ? ["memory", "sqlite"] as const : [selected as "memory" | "sqlite"]

const organisation = "org_bench_dcsa"
const T0 = Date.UTC(2026, 0, 1)
const day = 86_400_000

const reading = (event_date: number, predicted_at: number, actual: boolean) => ({
  actual,
  source: "import",
  event_date,
  predicted_at
})

/** Tradeflow i: an ocean journey of eight milestones, the arrival with three readings. */
const tradeflowOf = (i: number): Tradeflow.Tradeflow => {
  const container = `BNCU${String(i).padStart(7, "0")}`
  const recorded = T0 + i * 60_000
  const milestone = (status: string, location: string, history: ReadonlyArray<ReturnType<typeof reading>>) => {
    const fields = {
      message: status,
      status_code: status,
      container_reference: status === "VD" || status === "VA" ? null : container,
      location,
      source: "import"
    }
    const current = history[history.length - 1]!
    return {
      key: TradeflowMerge.eventKey(fields),
      ...fields,
      event_date: current.event_date,
      actual: current.actual,
      predicted_at: current.predicted_at,
      history
    }
  }
  return {
    ...TradeflowMerge.empty(organisation, `PO-${i}`, recorded),
    containers: [{ reference: container }],
    booking_references: [`BK-${i}`],
    bill_of_lading_references: [`BL-${i}`],
    details: { vessel: "EVER GIVEN", port_of_loading: "CNSHA", port_of_discharge: "NLRTM" },
    events: [
      milestone("GE", "CNSHA", [reading(T0 - 3 * day, recorded, true)]),
      milestone("GN", "CNSHA", [reading(T0 - 2 * day, recorded, true)]),
      milestone("AE", "CNSHA", [reading(T0 - day, recorded, true)]),
      milestone("VD", "CNSHA", [reading(T0, recorded, true)]),
      milestone("VA", "NLRTM", [
        reading(T0 + 30 * day, recorded, false),
        reading(T0 + 31 * day, recorded + day, false),
        reading(T0 + 31 * day + 3_600_000, recorded + 31 * day, true)
      ]),
      milestone("UV", "NLRTM", [reading(T0 + 32 * day, recorded, false)]),
      milestone("GT", "NLRTM", [reading(T0 + 33 * day, recorded, false)]),
      milestone("GR", "NLRTM", [reading(T0 + 40 * day, recorded, false)])
    ]
  }
}

const fill = (count: number) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    const store = yield* TradeflowStore.TradeflowStore
    for (let from = 0; from < count; from += 500) {
      const outcome = yield* queue.enqueue({
        organisation_id: organisation,
        environment: "production",
        payload: { _tag: "Delete", reference: null, hard: false },
        received_at: T0
      })
      if (outcome._tag !== "Enqueued") return yield* Effect.dieMessage("enqueue failed")
      const upserts = Array.from({ length: Math.min(500, count - from) }, (_, k) => tradeflowOf(from + k))
      yield* store.commit({
        job_id: outcome.id,
        organisation_id: organisation,
        upserts,
        deletes: [],
        messages: [],
        result: { count: 0 }
      })
    }
  })

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return { ms: performance.now() - start, value }
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

interface Row {
  readonly storage: string
  readonly tradeflows: number
  readonly request: string
  readonly events: number
  readonly p50: number
  readonly max: number
}

const measure = (storage: string, tradeflows: number) =>
  Effect.gen(function*() {
    yield* fill(tradeflows)
    const publisher = yield* DcsaPublisher.DcsaPublisher
    const store = yield* TradeflowStore.TradeflowStore
    const second = yield* publisher.events({ organisation_id: organisation, limit: DcsaPublisher.maxLimit })
    const cases: ReadonlyArray<readonly [string, Effect.Effect<number, unknown>]> = [
      ["TradeflowStore.list alone", Effect.map(store.list(organisation), (all) => all.length)],
      [
        "first page, limit 100",
        Effect.map(publisher.events({ organisation_id: organisation }), (p) => p.events.length)
      ],
      [
        "first page, limit 1000",
        Effect.map(publisher.events({ organisation_id: organisation, limit: 1000 }), (p) => p.events.length)
      ],
      [
        "next page (cursor after 1,000 events)",
        Effect.map(
          publisher.events({ organisation_id: organisation, cursor: second.next_cursor }),
          (p) => p.events.length
        )
      ],
      [
        "one booking (carrierBookingReference)",
        Effect.map(
          publisher.events({ organisation_id: organisation, carrierBookingReference: "BK-7" }),
          (p) => p.events.length
        )
      ],
      [
        "eventType=TRANSPORT, eventCreatedDateTime:gte the last day",
        Effect.map(
          publisher.events({
            organisation_id: organisation,
            eventTypes: ["TRANSPORT"],
            eventCreatedDateTime: [{ operator: "gte", at: T0 + tradeflows * 60_000 - day }]
          }),
          (p) => p.events.length
        )
      ]
    ]
    const rows: Array<Row> = []
    for (const [request, run] of cases) {
      const times: Array<number> = []
      let events = 0
      for (let i = 0; i < repeat; i++) {
        const { ms, value } = yield* timed(run)
        times.push(ms)
        events = value
      }
      times.sort((a, b) => a - b)
      const row = {
        storage,
        tradeflows,
        request,
        events,
        p50: Math.round(percentile(times, 0.5) * 10) / 10,
        max: Math.round(times[times.length - 1]! * 10) / 10
      }
      console.log(JSON.stringify(row))
      rows.push(row)
    }
    return rows
  })

const publisherOver = <E>(storage: Layer.Layer<Storage.Storage, E>) =>
  DcsaPublisher.layer.pipe(Layer.provide(Cursor.layerSecret("bench")), Layer.provideMerge(storage))

const run = Effect.gen(function*() {
  console.log(machineLine())
  const rows: Array<Row> = []
  for (const storage of storages) {
    for (const size of sizes) {
      if (storage === "memory") {
        rows.push(...yield* measure(storage, size).pipe(Effect.provide(publisherOver(Storage.layerMemory))))
      } else {
        const dir = mkdtempSync(join(tmpdir(), "bench-dcsa-"))
        rows.push(
          ...yield* measure(storage, size).pipe(
            Effect.provide(publisherOver(SqliteStorage.layer({ filename: join(dir, "bench.sqlite") }))),
            Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
          )
        )
      }
    }
  }
  console.log("\n| storage | tradeflows | request | events | p50 ms | max ms |\n|---|---:|---|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.storage} | ${r.tradeflows.toLocaleString("en")} | ${r.request} | ${r.events} | ${r.p50} | ${r.max} |`
    )
  }
})

Effect.runPromise(Effect.scoped(run)).catch((error) => {
  console.error(error)
  process.exit(1)
})
