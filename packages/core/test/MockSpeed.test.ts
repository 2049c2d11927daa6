import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, FastCheck as fc, Option, TestClock } from "effect"
import * as Scenarios from "../src/MockJourneys.js"
import type { MockEvent, Tradeflow } from "../src/Tradeflow.js"
import * as TradeflowMerge from "../src/TradeflowMerge.js"
import { C1, C2, layer, messages, org, post, run, statuses, tradeflow } from "./ProcessorKit.js"

const minute = 60_000
const day = 86_400_000
const now0 = Date.UTC(2026, 10, 22, 10)
const iso = (ms: number) => new Date(ms).toISOString()

/** The mock events of a state, without the instants they were received at. */
const facts = (t: Tradeflow) =>
  t.events.filter((e) => e.source === "mock").map((e) => ({
    key: e.key,
    event_date: e.event_date,
    actual: e.actual,
    vessel: e.vessel,
    history: e.history.map((h) => [h.event_date, h.actual])
  }))

/** The mock events a prefix of a journey leaves when applied at once. */
const factsOf = (prefix: ReadonlyArray<MockEvent>) =>
  facts(TradeflowMerge.releaseMockEvents(TradeflowMerge.empty(org, "X", 0), prefix, 0))

/** The EVENT statuses rendered so far, as (container, code, location, date, actual). */
const rendered = Effect.map(
  messages(),
  (ms) =>
    ms.flatMap(({ message: m }) =>
      m.type === "BASIC_STATUS" && m.payload.status === "EVENT"
        ? [[
          m.payload.container_reference,
          m.payload.status_code,
          m.payload.location?.unlocode ?? null,
          m.payload.event_date,
          m.payload.actual
        ]]
        : []
    )
)

/** What rendering a prefix one step at a time shows: each step's events in event-date order. */
const expectedRendering = (prefix: ReadonlyArray<MockEvent>) =>
  Scenarios.steps(prefix).flatMap((step) =>
    [...step].sort((a, b) => a.event_date - b.event_date).map((
      e
    ) => [e.container_reference, e.status_code, e.location, iso(e.event_date), e.actual])
  )

const record = (scenario: string, extra: Record<string, unknown> = {}) => ({
  tradeflow_reference: "R",
  container_reference: [C1, C2],
  port_of_loading: "NLRTM",
  port_of_discharge: "USNYC",
  mock_tracking: { scenario },
  ...extra
})

/** The scheduler's part: an Advance when the tradeflow is due. */
const advanceIfDue = Effect.gen(function*() {
  const t = yield* tradeflow("R")
  const now = yield* Clock.currentTimeMillis
  if (t.next_position_at !== null && t.next_position_at <= now) yield* run({ _tag: "Advance", reference: "R" })
})

const journeyOf = (scenario: string, t: Tradeflow) =>
  Option.getOrThrow(Scenarios.lookup(scenario))({
    organisation_id: org,
    reference: "R",
    containers: t.containers.map((c) => c.reference),
    port_of_loading: t.details.port_of_loading,
    port_of_discharge: t.details.port_of_discharge,
    estimated_time_of_departure: t.details.estimated_time_of_departure,
    estimated_time_of_arrival: t.details.estimated_time_of_arrival
  })

const dateArb = fc.integer({ min: now0 - 60 * day, max: now0 + 60 * day }).map(iso)

describe("mock_tracking.speed", () => {
  it.effect.prop(
    "releases never reorder: the state is always the journey's prefix due so far, rendered step by step, and ends as instant would",
    [
      fc.constantFrom(...Scenarios.scenarioNames),
      fc.constantFrom("fast" as const, "normal" as const, "slow" as const),
      fc.record({ estimated_time_of_departure: dateArb, estimated_time_of_arrival: dateArb }, { requiredKeys: [] }),
      fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 1, maxLength: 12 })
    ],
    ([scenario, speed, dates, steps]) =>
      Effect.gen(function*() {
        const interval = Scenarios.releaseIntervals[speed]
        yield* TestClock.setTime(now0)
        yield* post([record(scenario, { ...dates, mock_tracking: { scenario, speed } })])
        yield* post(
          [record(scenario, { ...dates, mock_tracking: { scenario, speed: "instant" } })],
          "uat",
          "org-instant"
        )
        const journey = yield* journeyOf(scenario, yield* tradeflow("R"))
        const check = Effect.gen(function*() {
          const t = yield* tradeflow("R")
          const now = yield* Clock.currentTimeMillis
          const n = Scenarios.releasedCount(journey.events, speed, now0, now)
          assert.deepStrictEqual(t.mock_release?.pending, journey.events.slice(n))
          assert.deepStrictEqual(facts(t), factsOf(journey.events.slice(0, n)))
          assert.deepStrictEqual(yield* rendered, expectedRendering(journey.events.slice(0, n)))
          const next = journey.events[n]
          assert.strictEqual(t.next_position_at !== null && t.next_position_at <= now, false)
          if (next !== undefined) assert.isAtMost(t.next_position_at!, Scenarios.releaseAt(speed, now0, next.step))
        })
        yield* check
        for (const k of steps) {
          yield* TestClock.adjust(Math.round(k * interval))
          yield* advanceIfDue
          yield* check
        }
        yield* TestClock.adjust(interval * (journey.events.length + 1))
        yield* advanceIfDue
        yield* check
        const instant = yield* tradeflow("R", "org-instant")
        assert.deepStrictEqual(facts(yield* tradeflow("R")), facts(instant))
      }).pipe(Effect.provide(layer({ locationIntervalMinutes: 7 * 24 * 60 }))),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect("instant renders each prediction of a journey: three arrivals of delayed_eta, as today for ocean_basic", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([record("delayed_eta", { estimated_time_of_arrival: iso(now0 + 30 * day) })])
      const t = yield* tradeflow("R")
      assert.strictEqual(t.mock_release, null)
      assert.deepStrictEqual(facts(t), factsOf((yield* journeyOf("delayed_eta", t)).events))
      const arrivals = (yield* rendered).filter(([c, code]) => c === null && code === "VA").map(([, , , date]) => date)
      assert.deepStrictEqual(arrivals, [iso(now0 + 25 * day), iso(now0 + 28 * day), iso(now0 + 30 * day)])
    }).pipe(Effect.provide(layer())))

  it.effect("a re-post with the same inputs leaves the replay alone; new inputs re-plan it at the same pace", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const fast = { scenario: "ocean_basic", speed: "fast" }
      yield* post([record("ocean_basic", { mock_tracking: fast, estimated_time_of_arrival: iso(now0 + 30 * day) })])
      yield* TestClock.adjust(2 * minute + 1)
      yield* advanceIfDue
      assert.strictEqual((yield* tradeflow("R")).mock_release?.pending[0]?.step, 3)
      const same = yield* post([
        record("ocean_basic", { mock_tracking: fast, estimated_time_of_arrival: iso(now0 + 30 * day) })
      ])
      assert.deepStrictEqual([same.upserts, same.messages], [[], []])

      yield* post([record("ocean_basic", { mock_tracking: fast, estimated_time_of_arrival: iso(now0 + 33 * day) })])
      const replanned = yield* tradeflow("R")
      assert.strictEqual(replanned.mock_release?.started_at, now0)
      assert.strictEqual(replanned.mock_release?.pending[0]?.step, 3)
      yield* TestClock.adjust(5 * minute)
      yield* advanceIfDue
      const va = (yield* tradeflow("R")).events.find((e) => e.status_code === "VA" && e.container_reference === null)
      assert.strictEqual(va?.event_date, now0 + 33 * day)

      yield* post([
        record("ocean_basic", {
          mock_tracking: { scenario: "ocean_basic", speed: "slow" },
          estimated_time_of_arrival: iso(now0 + 33 * day)
        })
      ])
      const slow = yield* tradeflow("R")
      assert.strictEqual(slow.mock_release?.started_at, now0 + 7 * minute + 1)
      assert.deepStrictEqual(slow.events.filter((e) => e.source === "mock").map((e) => e.status_code), ["GE", "GE"])
    }).pipe(Effect.provide(layer())))

  it.effect("a deactivated tradeflow releases nothing; reactivated, it releases what fell due meanwhile", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const fast = { scenario: "ocean_basic", speed: "fast" }
      yield* post([record("ocean_basic", { mock_tracking: fast, estimated_time_of_departure: iso(now0 + 10 * day) })])
      yield* post([
        record("ocean_basic", { mock_tracking: fast, estimated_time_of_departure: iso(now0 + 10 * day), active: false })
      ])
      const off = yield* tradeflow("R")
      assert.deepStrictEqual([off.next_position_at, off.mock_release?.pending[0]?.step], [null, 1])
      yield* TestClock.adjust(3 * minute)
      const before = (yield* messages()).length
      yield* post([record("ocean_basic", { mock_tracking: fast, estimated_time_of_departure: iso(now0 + 10 * day) })])
      assert.deepStrictEqual(statuses((yield* messages()).slice(before)), ["TRADEFLOW_REACTIVATED"])
      const on = yield* tradeflow("R")
      assert.strictEqual(on.next_position_at, now0 + minute)
      yield* advanceIfDue
      const released = yield* tradeflow("R")
      assert.strictEqual(released.mock_release?.pending[0]?.step, 4)
      assert.deepStrictEqual(
        (yield* rendered).map(([c, code]) => `${c ?? "vessel"} ${code}`),
        [`${C1} GE`, `${C2} GE`, `${C1} GN`, `${C2} GN`, `${C1} AE`, `${C2} AE`, "vessel VD"]
      )
    }).pipe(Effect.provide(layer())))

  it.effect("empty generates nothing, at any speed, and is never due", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([record("empty", { mock_tracking: { scenario: "empty", speed: "fast" } })])
      const t = yield* tradeflow("R")
      assert.deepStrictEqual([t.events, t.next_position_at, t.mock_release?.pending], [[], null, []])
      assert.deepStrictEqual(statuses(yield* messages()), ["TRADEFLOW_CREATED"])
    }).pipe(Effect.provide(layer())))
})
