import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer, Option, TestClock } from "effect"
import type { LocationUpdate } from "../src/ApiMessage.js"
import { Ingest } from "../src/Ingest.js"
import { JobQueue } from "../src/JobQueue.js"
import * as Locations from "../src/Locations.js"
import { OrganisationStore } from "../src/OrganisationStore.js"
import * as Positions from "../src/Positions.js"
import { layer as schedulerLayer, Scheduler, type SchedulerOptions } from "../src/Scheduler.js"
import * as Service from "../src/Service.js"
import * as Storage from "../src/Storage.js"
import * as TrackingConfig from "../src/TrackingConfig.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import * as Worker from "../src/Worker.js"
import { makeTradeflow } from "../test-kit/StorageContract.js"
import { messages } from "./ProcessorKit.js"

const hour = 3_600_000
const day = 24 * hour
const now0 = Date.UTC(2026, 10, 22, 10, 17, 23, 456)
const org = "org-uat"
const iso = (ms: number) => new Date(ms).toISOString()

const record = (reference: string, departure: number, arrival: number) => ({
  tradeflow_reference: reference,
  container_reference: "CSQU3054383",
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  actual_time_of_departure: iso(departure),
  estimated_time_of_arrival: iso(arrival),
  mock_tracking: { scenario: "ocean_basic" }
})

/** Sets the clock first: the layer's background fibers must not replay the years before `now0`. */
const at = <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.zipRight(TestClock.setTime(now0), body)

const setup = Effect.gen(function*() {
  yield* Effect.flatMap(
    OrganisationStore,
    (s) => s.insert({ id: org, name: "Acme (UAT)", environment: "uat", live_organisation_id: null, created_at: now0 })
  )
})

const submit = (records: ReadonlyArray<unknown>) =>
  Effect.flatMap(Ingest, (i) => i.submit({ organisation_id: org, environment: "uat", body: records, form: "any" }))

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

const positions = (reference: string) =>
  Effect.map(
    messages(org),
    (ms) =>
      ms.flatMap(({ message: m }) =>
        m.type === "LOCATION_UPDATE" && m.tradeflow_reference === reference
          ? [{ payload: m.payload as LocationUpdate, hash: m.hash }]
          : []
      )
  )

const nextAt = (reference: string) =>
  Effect.flatMap(TradeflowStore, (s) => s.get(org, reference)).pipe(
    Effect.map((t) => Option.getOrThrow(t).next_position_at)
  )

const grid = (departure: number, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => Positions.formatEventDate(departure + (from + i) * hour))

/**
 * `Service.layerMemory` with options: the default worker polls every second, and the test clock
 * steps through every sleep, so simulated hours pass faster with a slower poll.
 */
const memoryService = (worker: Worker.WorkerOptions, scheduler: SchedulerOptions = {}) =>
  Service.layer(worker, scheduler).pipe(
    Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
  )

describe("Scheduler", () => {
  it.effect("with the memory service in the background, positions appear as the clock moves, in order, each once, until arrival", () =>
    at(
      Effect.gen(function*() {
        yield* setup
        const D = now0 - 10 * hour
        yield* submit([record("LONG", D, now0 + 2 * day), record("SHORT", D, now0 + 2 * hour)])
        yield* drain
        assert.deepStrictEqual((yield* positions("LONG")).map((p) => p.payload.event_date), grid(D, 1, 10))
        assert.deepStrictEqual((yield* positions("SHORT")).map((p) => p.payload.event_date), grid(D, 1, 10))
        assert.strictEqual(yield* nextAt("LONG"), D + 11 * hour)

        yield* TestClock.adjust("3 hours")
        yield* drain
        const long = yield* positions("LONG")
        assert.deepStrictEqual(long.map((p) => p.payload.event_date), grid(D, 1, 13))
        assert.strictEqual(new Set(long.map((p) => p.hash)).size, 13)
        assert.strictEqual(yield* nextAt("LONG"), D + 14 * hour)
        assert.deepStrictEqual((yield* positions("SHORT")).map((p) => p.payload.event_date), grid(D, 1, 12))
        assert.strictEqual(yield* nextAt("SHORT"), null)

        yield* TestClock.adjust("2 hours")
        yield* drain
        assert.strictEqual((yield* positions("SHORT")).length, 12)
        assert.deepStrictEqual((yield* positions("LONG")).map((p) => p.payload.event_date), grid(D, 1, 15))
        const pending = yield* Effect.flatMap(JobQueue, (q) => q.pending(100))
        assert.deepStrictEqual(pending, [])
      }).pipe(Effect.provide(memoryService({ pollInterval: "1 hour" })))
    ))

  it.effect("fast: the background scheduler releases one step of the journey a minute, and each renders as it is released", () =>
    at(
      Effect.gen(function*() {
        yield* setup
        yield* submit([{
          tradeflow_reference: "FAST",
          container_reference: "CSQU3054383",
          port_of_loading: "NLRTM",
          port_of_discharge: "CNSHA",
          estimated_time_of_departure: iso(now0 + 10 * day),
          estimated_time_of_arrival: iso(now0 + 40 * day),
          mock_tracking: { scenario: "ocean_basic", speed: "fast" }
        }])
        yield* drain
        const seen = (from: number) =>
          Effect.map(messages(org), (ms) =>
            ms.slice(from).map(({ message: m }) =>
              m.type === "BASIC_STATUS"
                ? `${m.payload.status} ${m.payload.status_code ?? ""}`.trim()
                : m.type === "CONTAINER_MILESTONE"
                ? `CM ${m.payload.status_code} ${m.payload.actual ? "actual" : "predicted"} ${m.payload.event_date}`
                : m.type === "SHIPMENT_CHANGE"
                ? `SC ${m.payload.change.move_type} ${
                  m.payload.change.actual ? "actual" : "predicted"
                } ${m.payload.change.reading}`
                : m.type
            ))
        const D = now0 + 10 * day
        const A = now0 + 40 * day
        const expected = [
          [`CM GE actual ${iso(D - 3 * day)}`, "EVENT GE"],
          [`CM GN actual ${iso(D - 2 * day)}`, "EVENT GN"],
          [`CM AE actual ${iso(D - day)}`, "EVENT AE"],
          [`SC departure actual ${iso(D)}`, "EVENT VD"],
          [`CM VA predicted ${iso(A)}`, "EVENT VA", `SC arrival predicted ${iso(A)}`, "EVENT VA"],
          [`CM UV predicted ${iso(A + day)}`, "EVENT UV"],
          [`CM GT predicted ${iso(A + 2 * day)}`, "EVENT GT"],
          [`CM GR predicted ${iso(A + 7 * day)}`, "EVENT GR"]
        ]
        assert.deepStrictEqual(yield* seen(0), ["TRADEFLOW_CREATED", ...expected[0]!])
        let count = 3
        for (const step of expected.slice(1)) {
          yield* TestClock.adjust("59 seconds")
          yield* drain
          assert.deepStrictEqual(yield* seen(count), [])
          yield* TestClock.adjust("1 second")
          yield* drain
          assert.deepStrictEqual(yield* seen(count), step)
          count += step.length
        }
        yield* TestClock.adjust("1 hour")
        yield* drain
        assert.strictEqual((yield* messages(org)).length, count)
        assert.strictEqual(yield* nextAt("FAST"), D + hour)
      }).pipe(Effect.provide(memoryService({ pollInterval: "1 hour" })))
    ))

  it.effect("normal releases a step an hour, slow a day", () =>
    at(
      Effect.gen(function*() {
        yield* setup
        const post = (reference: string, speed: string) => ({
          tradeflow_reference: reference,
          container_reference: "CSQU3054383",
          port_of_loading: "NLRTM",
          mock_tracking: { scenario: "ocean_basic", speed }
        })
        yield* submit([post("NORMAL", "normal"), post("SLOW", "slow")])
        yield* drain
        const pendingSteps = (reference: string) =>
          Effect.map(
            Effect.flatMap(TradeflowStore, (s) => s.get(org, reference)),
            (t) => Option.getOrThrow(t).mock_release?.pending.length
          )
        assert.deepStrictEqual([yield* pendingSteps("NORMAL"), yield* pendingSteps("SLOW")], [3, 3])
        yield* TestClock.adjust("59 minutes")
        yield* drain
        assert.deepStrictEqual([yield* pendingSteps("NORMAL"), yield* pendingSteps("SLOW")], [3, 3])
        yield* TestClock.adjust("1 minute")
        yield* drain
        assert.deepStrictEqual([yield* pendingSteps("NORMAL"), yield* pendingSteps("SLOW")], [2, 3])
        yield* TestClock.adjust("23 hours")
        yield* drain
        assert.deepStrictEqual([yield* pendingSteps("NORMAL"), yield* pendingSteps("SLOW")], [0, 2])
      }).pipe(Effect.provide(memoryService({ pollInterval: "1 hour" }, { interval: "1 hour" })))
    ))

  it.effect("tick queues one Advance job per due tradeflow, not again while it is pending, and none when nothing is due", () =>
    at(
      Effect.gen(function*() {
        yield* setup
        const scheduler = yield* Scheduler
        const queue = yield* JobQueue
        const D = now0 - 10 * hour
        yield* submit([
          record("A", D, now0 + day),
          record("B", D - 30 * 60_000, now0 + day),
          record("C", D, now0 + day)
        ])
        yield* drain
        assert.strictEqual(yield* scheduler.tick, 0)

        yield* TestClock.adjust("45 minutes")
        assert.strictEqual(yield* scheduler.tick, 1)
        assert.strictEqual(yield* scheduler.tick, 0)
        const jobs = yield* queue.pending(10)
        assert.deepStrictEqual(jobs.map((j) => [j.organisation_id, j.environment, j.payload]), [
          [org, "uat", { _tag: "Advance", reference: "B" }]
        ])
        yield* drain
        assert.strictEqual((yield* positions("B")).length, 11)
        assert.strictEqual(yield* scheduler.tick, 0)

        yield* TestClock.adjust("1 hour")
        assert.strictEqual(yield* scheduler.tick, 3)
        yield* drain
        assert.deepStrictEqual(
          [(yield* positions("A")).length, (yield* positions("B")).length, (yield* positions("C")).length],
          [11, 12, 11]
        )
      }).pipe(Effect.provide(memoryService({ background: false })))
    ))

  it.effect("tick queues at most batchSize tradeflows, soonest first; the rest follow", () =>
    at(
      Effect.gen(function*() {
        yield* setup
        const scheduler = yield* Scheduler
        const queue = yield* JobQueue
        const D = now0 - 10 * hour
        yield* submit([
          record("A", D, now0 + day),
          record("B", D - 30 * 60_000, now0 + day),
          record("C", D - 15 * 60_000, now0 + day)
        ])
        yield* drain
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(yield* scheduler.tick, 2)
        assert.deepStrictEqual(
          (yield* queue.pending(10)).map((j) => j.payload._tag === "Advance" && j.payload.reference),
          ["B", "C"]
        )
        yield* drain
        assert.strictEqual(yield* scheduler.tick, 1)
        yield* drain
        assert.strictEqual(yield* scheduler.tick, 0)
        assert.deepStrictEqual([yield* nextAt("A"), yield* nextAt("B"), yield* nextAt("C")], [
          D + 12 * hour,
          D - 30 * 60_000 + 12 * hour,
          D - 15 * 60_000 + 12 * hour
        ])
      }).pipe(Effect.provide(memoryService({ background: false }, { batchSize: 2 })))
    ))

  it.scoped("the background scheduler ticks only once startAfter has completed", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const context = yield* Layer.build(
        schedulerLayer({ startAfter: Deferred.await(gate) }).pipe(
          Layer.provideMerge(Worker.layer({ background: false })),
          Layer.provideMerge(Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer()))
        )
      )
      const queue = Context.get(context, JobQueue)
      const enqueued = yield* queue.enqueue({
        organisation_id: org,
        environment: "uat",
        payload: { _tag: "Delete", reference: null, hard: false },
        received_at: 0
      })
      assert.strictEqual(enqueued._tag, "Enqueued")
      const committed = yield* Context.get(context, TradeflowStore).commit({
        job_id: enqueued._tag === "Enqueued" ? enqueued.id : 0,
        organisation_id: org,
        upserts: [{ ...makeTradeflow(org, "TF-DUE", []), next_position_at: 0 }],
        deletes: [],
        messages: [],
        result: { count: 0 }
      })
      assert.isTrue(committed)
      const advances = Effect.map(queue.pending(100), (jobs) => jobs.filter((j) => j.payload._tag === "Advance").length)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* advances, 0)
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* advances, 1)
    }))
})
