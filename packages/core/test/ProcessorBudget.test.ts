import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck as fc, Fiber, Layer, Option, Ref, TestClock } from "effect"
import { turn } from "../src/internal/eventLoop.js"
import * as Projection from "../src/internal/projection.js"
import { JobQueue } from "../src/JobQueue.js"
import { MessageStore } from "../src/MessageStore.js"
import * as Processor from "../src/Processor.js"
import * as RenderBudget from "../src/RenderBudget.js"
import * as RenderMessages from "../src/RenderMessages.js"
import * as StoredMessage from "../src/StoredMessage.js"
import type { TrackedEvent } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import * as Worker from "../src/Worker.js"
import { groups, layer, org } from "./ProcessorKit.js"

const containerNumber = (i: number) => `ABCU${String(i).padStart(7, "0")}`

/** One production record of `containers` containers and `events` container events. */
const bigRecord = (reference: string, containers: number, events: number) => ({
  tradeflow_reference: reference,
  container_reference: Array.from({ length: containers }, (_, i) => containerNumber(i)),
  port_of_loading: "CNSHA",
  port_of_discharge: "NLRTM",
  events: Array.from({ length: events }, (_, i) => ({
    message: "Gate out empty",
    container_reference: containerNumber(i),
    location_name: "CNSHA",
    event_date: "2026-01-01T00:00:00Z",
    actual: true
  }))
})

const upsertJob = (id: number, records: ReadonlyArray<unknown>) => ({
  id,
  organisation_id: org,
  environment: "production" as const,
  payload: { _tag: "Upsert" as const, groups: groups(records) },
  received_at: 0
})

/** A fiber that counts event-loop turns (it needs a macrotask each time), as another tenant's I/O would. */
const ticker = Effect.gen(function*() {
  const ticks = yield* Ref.make(0)
  const fiber = yield* Effect.fork(Effect.forever(Effect.zipRight(turn, Ref.update(ticks, (n) => n + 1))))
  return { ticks, fiber }
})

describe("Processor: the event loop turns inside one large group", () => {
  it.effect("the merge of one group of 4,000 containers pauses every 256 items, and another fiber runs meanwhile", () =>
    Effect.gen(function*() {
      const turns = yield* Ref.make(0)
      const { fiber, ticks } = yield* ticker
      const budget = RenderBudget.budget({
        sliceMillis: 0,
        turn: Effect.zipRight(turn, Ref.update(turns, (n) => n + 1))
      })
      const commit = yield* Processor.processJob(upsertJob(1, [bigRecord("BIG", 4_000, 0)]), budget)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(commit.upserts[0]?.containers.length, 4_000)
      assert.strictEqual(commit.messages.length, 1)
      const paused = yield* Ref.get(turns)
      assert.isAtLeast(paused, 1 + 4_000 / TradeflowMerge.pauseEvery)
      assert.isAtLeast(yield* Ref.get(ticks), paused - 1)
    }).pipe(Effect.provide(layer())))

  it.effect("the render of one group pauses after each message, and another fiber runs meanwhile", () =>
    Effect.gen(function*() {
      const turns = yield* Ref.make(0)
      const { fiber, ticks } = yield* ticker
      const budget = RenderBudget.budget({
        sliceMillis: 0,
        turn: Effect.zipRight(turn, Ref.update(turns, (n) => n + 1))
      })
      const commit = yield* Processor.processJob(upsertJob(1, [bigRecord("BIG", 300, 300)]), budget)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(commit.messages.length, 1 + 2 * 300)
      const paused = yield* Ref.get(turns)
      assert.isAtLeast(paused, commit.messages.length)
      assert.isAtLeast(yield* Ref.get(ticks), paused - 1)
      assert.deepStrictEqual(budget.used(), {
        messages: commit.messages.length,
        bytes: commit.messages.reduce((n, m) => n + StoredMessage.byteLength(m.body), 0)
      })
    }).pipe(Effect.provide(layer())))
})

describe("Processor: per-job render caps", () => {
  it.effect("a job rendering past the byte cap fails in the worker; nothing of it is committed", () =>
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const store = yield* TradeflowStore
      const log = yield* MessageStore
      const { id: _id, ...smallJob } = upsertJob(0, [bigRecord("SMALL", 1, 1)])
      const small = yield* queue.enqueue(smallJob)
      const big = yield* queue.enqueue({
        organisation_id: org,
        environment: "production",
        payload: { _tag: "Upsert", groups: groups([bigRecord("HUGE", 1_000, 250), bigRecord("AFTER", 1, 1)]) },
        received_at: 0
      })
      assert.strictEqual(small._tag, "Enqueued")
      assert.strictEqual(big._tag, "Enqueued")
      const worker = yield* Worker.Worker
      yield* worker.drain
      const outcome = yield* queue.outcome(big._tag === "Enqueued" ? big.id : -1)
      assert.isTrue(Option.isSome(outcome) && outcome.value._tag === "Failed")
      if (Option.isSome(outcome) && outcome.value._tag === "Failed") {
        assert.include(outcome.value.error, `per-job cap of ${RenderBudget.maxBytesPerJob.toLocaleString("en")} bytes`)
      }
      assert.isTrue(Option.isNone(yield* store.get(org, "HUGE")))
      assert.isTrue(Option.isNone(yield* store.get(org, "AFTER")))
      assert.isTrue(Option.isSome(yield* store.get(org, "SMALL")))
      const stored = yield* log.list({ organisation_id: org, take: "oldest", limit: 100_000 })
      assert.deepStrictEqual([...new Set(stored.map((m) => m.tradeflow_reference))], ["SMALL"])
    }).pipe(Effect.provide(Worker.layer({ background: false }).pipe(Layer.provideMerge(layer())))))

  it.effect("the message cap: the job dies with RenderCapExceeded once one message too many is rendered", () =>
    Effect.gen(function*() {
      const budget = RenderBudget.budget({ maxMessages: 10 })
      const exit = yield* Effect.exit(Processor.processJob(upsertJob(1, [bigRecord("BIG", 20, 20)]), budget))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const defect = Cause.dieOption(exit.cause)
        assert.isTrue(Option.isSome(defect) && defect.value instanceof RenderBudget.RenderCapExceeded)
      }
      assert.strictEqual(budget.used().messages, 11)
    }).pipe(Effect.provide(layer())))

  it.effect("positions only take the room left in the budget; the rest stay due", () =>
    Effect.gen(function*() {
      const job = upsertJob(1, [{
        tradeflow_reference: "VOY",
        container_reference: containerNumber(1),
        port_of_loading: "CNSHA",
        port_of_discharge: "NLRTM",
        estimated_time_of_departure: "2026-01-01T00:00:00Z",
        estimated_time_of_arrival: "2026-01-20T00:00:00Z",
        mock_tracking: { scenario: "ocean_basic" }
      }])
      yield* TestClock.setTime(Date.UTC(2026, 0, 1))
      const t = yield* Effect.map(Processor.processJob({ ...job, environment: "uat" }), (c) => c.upserts[0]!)
      const budget = RenderBudget.budget({ maxMessages: 5 })
      const now = Date.UTC(2026, 0, 10)
      const p = yield* RenderMessages.positionUpdates(t, "start", now, 1_000, budget)
      assert.strictEqual(p.messages.length, 4)
      assert.strictEqual(budget.used().messages, 4)
      assert.isTrue(p.next_position_at !== null && p.next_position_at < now)
    }).pipe(Effect.provide(layer())))
})

describe("Projection.dwellIndex", () => {
  const reference = (events: ReadonlyArray<TrackedEvent>, container: string, code: string) => {
    const matching = events.filter((e) =>
      e.container_reference === container && e.status_code === code && e.event_date !== null
    )
    return (matching.filter((e) => e.actual).pop() ?? matching.pop())?.event_date
  }
  const event = fc.record({
    container_reference: fc.constantFrom("C1", "C2", null),
    status_code: fc.constantFrom("UV", "GT", "VA", null),
    event_date: fc.option(fc.integer({ min: 0, max: 10 * 86_400_000 }), { nil: null }),
    actual: fc.boolean()
  }).map((e): TrackedEvent => ({
    ...e,
    key: "k",
    message: "m",
    location: null,
    source: "import",
    predicted_at: 0,
    history: []
  }))

  it.prop("each container's dwell details are those of its last actual UV / GT, else its last one", [
    fc.array(event, { maxLength: 12 })
  ], ([events]) => {
    const t = { ...TradeflowMerge.empty(org, "R", 0), events }
    const settings = { demurrageFreeDays: 3, detentionFreeDays: 5, locationIntervalMinutes: 60 }
    const dwell = Projection.dwellIndex(t, settings as never)
    for (const c of ["C1", "C2"]) {
      const uv = reference(events, c, "UV")
      const gt = reference(events, c, "GT")
      assert.deepStrictEqual(dwell(c), {
        demurrage_free_time_expires: uv == null ? null : Projection.iso(uv + 3 * 86_400_000),
        detention_free_time_expires: gt == null ? null : Projection.iso(gt + 5 * 86_400_000)
      })
    }
  })
})
