import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema, TestClock } from "effect"
import { ApiMessage, type LocationUpdate, LocationUpdateDate } from "../src/ApiMessage.js"
import * as Positions from "../src/Positions.js"
import * as Processor from "../src/Processor.js"
import { Tradeflow } from "../src/Tradeflow.js"
import { layer, messages, post, run, tradeflow } from "./ProcessorKit.js"

const hour = 3_600_000
const day = 24 * hour
const eps = 1e-9

const latArb = fc.double({ min: -90, max: 90, noNaN: true })
const lngArb = fc.double({ min: -180, max: 180, noNaN: true })
const pointArb = fc.record({ lat: latArb, lng: lngArb })
const fractionArb = fc.double({ min: 0, max: 1, noNaN: true })

/** Pairs whose great circle is well defined and whose route is shorter than half the earth. */
const routeArb = fc.tuple(pointArb, pointArb).filter(([a, b]) => {
  const omega = Positions.centralAngle(a, b)
  return omega > 1e-6 && omega < Math.PI - 1e-6
})

describe("Positions: great circle", () => {
  it.prop("endpoints are exact", [pointArb, pointArb], ([a, b]) => {
    assert.deepStrictEqual(Positions.interpolate(a, b, 0), a)
    assert.deepStrictEqual(Positions.interpolate(a, b, 1), b)
  })

  it.prop(
    "every point lies on the great circle, within [-90, 90] x [-180, 180]",
    [routeArb, fractionArb],
    ([[a, b], f]) => {
      const p = Positions.interpolate(a, b, f)
      assert.isBelow(Math.abs(Positions.crossTrackAngle(a, b, p)), eps)
      assert.isTrue(p.lat >= -90 && p.lat <= 90 && p.lng >= -180 && p.lng <= 180)
    }
  )

  it.prop(
    "the point at fraction f is f of the way along the route, and (1 - f) from its end",
    [routeArb, fractionArb],
    ([[a, b], f]) => {
      const omega = Positions.centralAngle(a, b)
      const p = Positions.interpolate(a, b, f)
      assert.approximately(Positions.centralAngle(a, p), f * omega, 1e-7)
      assert.approximately(Positions.centralAngle(p, b), (1 - f) * omega, 1e-7)
    }
  )

  it.prop("along-track progress is monotone in the fraction", [
    routeArb,
    fc.array(fractionArb, { minLength: 2, maxLength: 20 })
  ], ([[a, b], fs]) => {
    const along = [...fs].sort((x, y) => x - y).map((f) =>
      Positions.alongTrackAngle(a, b, Positions.interpolate(a, b, f))
    )
    for (let i = 1; i < along.length; i++) assert.isAtLeast(along[i]! + eps, along[i - 1]!)
    assert.isAtLeast(along[0]!, -eps)
  })

  it.prop(
    "a route across the antimeridian stays on the short side, longitudes within [-180, 180]",
    [
      fc.double({ min: -60, max: 60, noNaN: true }),
      fc.double({ min: 150, max: 179.9, noNaN: true }),
      fc.double({ min: -60, max: 60, noNaN: true }),
      fc.double({ min: -179.9, max: -150, noNaN: true }),
      fc.array(fractionArb, { minLength: 1, maxLength: 20 })
    ],
    ([lat1, lng1, lat2, lng2, fs]) => {
      const a = { lat: lat1, lng: lng1 }
      const b = { lat: lat2, lng: lng2 }
      for (const f of fs) {
        const p = Positions.interpolate(a, b, f)
        assert.isTrue(p.lng >= -180 && p.lng <= 180)
        assert.isTrue(p.lng >= lng1 - 1e-9 || p.lng <= lng2 + 1e-9, `${p.lng} left the route ${lng1}..${lng2}`)
      }
    }
  )

  it("Rotterdam to Shanghai: the midpoint is where the great circle says, not on the rhumb line", () => {
    const rtm = { lat: 51.95, lng: 4.14 }
    const sha = { lat: 31.23, lng: 121.47 }
    const mid = Positions.interpolate(rtm, sha, 0.5)
    assert.isAbove(mid.lat, 55)
    assert.approximately(Positions.distanceMetres(rtm, sha) / 1000, 8_900, 150)
  })

  it("antipodal points (no unique great circle) get a deterministic route, over a pole", () => {
    const p = Positions.interpolate({ lat: 0, lng: 0 }, { lat: 0, lng: 180 }, 0.5)
    assert.approximately(Math.abs(p.lat), 90, 1e-9)
    assert.deepStrictEqual(Positions.interpolate({ lat: 0, lng: 0 }, { lat: 0, lng: 180 }, 0.5), p)
  })
})

describe("Positions: event_date", () => {
  const pattern = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/
  it.prop(
    "YYYY-MM-DD HH:MM:SS.ffffff in UTC, the same instant",
    [fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) })],
    ([ms]) => {
      const s = Positions.formatEventDate(ms)
      assert.match(s, pattern)
      assert.isTrue(Schema.is(LocationUpdateDate)(s))
      assert.strictEqual(Date.parse(`${s.slice(0, 10)}T${s.slice(11, 23)}Z`), ms)
      assert.strictEqual(s.slice(-3), "000")
    }
  )
  it("example", () => {
    assert.strictEqual(Positions.formatEventDate(Date.UTC(2026, 0, 2, 3, 4, 5, 67)), "2026-01-02 03:04:05.067000")
  })
})

const timingArb = fc.record({
  departure: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
  duration: fc.integer({ min: -day, max: 40 * day }),
  intervalMs: fc.integer({ min: 1, max: 24 * 60 }).map((m) => m * 60_000)
}).map(({ departure, duration, intervalMs }) => ({ departure, arrival: departure + duration, intervalMs }))
const offsetArb = fc.integer({ min: -5 * day, max: 50 * day })

describe("Positions: schedule", () => {
  it.prop(
    "count = floor(elapsed / interval): instants D + k·I, k ≥ 1, up to min(now, A)",
    [timingArb, offsetArb],
    ([timing, offset]) => {
      const now = timing.departure + offset
      const first = Positions.firstInstant(timing)
      const due = first === null ? { instants: [], next: null } : Positions.due(timing, first, now, Infinity)
      const elapsed = Math.min(now, timing.arrival) - timing.departure
      const expected = timing.arrival > timing.departure ? Math.max(0, Math.floor(elapsed / timing.intervalMs)) : 0
      assert.strictEqual(due.instants.length, expected)
      assert.strictEqual(Positions.countBy(timing, now), expected)
      due.instants.forEach((t, i) => assert.strictEqual(t, timing.departure + (i + 1) * timing.intervalMs))
      for (const t of due.instants) assert.isTrue(t <= now && t <= timing.arrival && t > timing.departure)
      if (due.next !== null) {
        assert.isTrue(due.next > Math.min(now, timing.arrival) && due.next <= timing.arrival)
        assert.strictEqual((due.next - timing.departure) % timing.intervalMs, 0)
      } else if (first !== null) {
        assert.isAbove(timing.departure + (expected + 1) * timing.intervalMs, timing.arrival)
      }
    }
  )

  it.prop("in chunks of at most `limit`, continuing at `next`, the same instants, each once", [
    timingArb,
    offsetArb,
    fc.integer({ min: 10, max: 500 })
  ], ([timing, offset, limit]) => {
    const now = timing.departure + offset
    const whole = Positions.due(timing, timing.departure, now, Infinity).instants
    const chunks: Array<number> = []
    let from: number | null = Positions.firstInstant(timing)
    for (let guard = 0; from !== null && from <= now && guard <= whole.length; guard++) {
      const step = Positions.due(timing, from, now, limit)
      assert.isAtMost(step.instants.length, limit)
      chunks.push(...step.instants)
      from = step.next
    }
    assert.deepStrictEqual(chunks, whole)
  })
})

const C1 = "CSQU3054383"
const now0 = Date.UTC(2026, 10, 22, 10, 17, 23, 456)
const iso = (ms: number) => new Date(ms).toISOString()
const voyage = (overrides: Record<string, unknown> = {}) => ({
  tradeflow_reference: "PO-1",
  container_reference: C1,
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  actual_time_of_departure: iso(now0 - 10 * hour),
  estimated_time_of_arrival: iso(now0 + 2 * day),
  mock_tracking: { scenario: "ocean_basic" },
  ...overrides
})
const positions = (reference?: string) =>
  Effect.map(
    messages(),
    (ms) =>
      ms.flatMap(({ message: m, stored }) =>
        m.type === "LOCATION_UPDATE" && (reference === undefined || m.tradeflow_reference === reference)
          ? [{ payload: m.payload as LocationUpdate, hash: m.hash, stored }]
          : []
      )
  )
const eventDate = (ms: number) => Positions.formatEventDate(ms)

describe("Processor: positions", () => {
  it.effect("a voyage under way renders its elapsed positions along the great circle, and schedules the next", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const commit = yield* post([voyage()])
      const ps = yield* positions()
      const D = now0 - 10 * hour
      assert.deepStrictEqual(
        ps.map((p) => p.payload.event_date),
        Array.from({ length: 10 }, (_, i) => eventDate(D + (i + 1) * hour))
      )
      assert.strictEqual((yield* tradeflow("PO-1")).next_position_at, D + 11 * hour)
      const rtm = { lat: 51.9225, lng: 4.4792 }
      const sha = { lat: 31.2304, lng: 121.4737 }
      const t = yield* tradeflow("PO-1")
      assert.isTrue(ps.every((p) => p.payload.vessel_name.startsWith("MOCK ")))
      assert.isTrue(ps.every((p) => p.stored.container_reference === null && p.stored.type === "LOCATION_UPDATE"))
      assert.strictEqual(new Set(ps.map((p) => p.hash)).size, 10)
      const A = now0 + 2 * day
      ps.forEach((p, i) => {
        const exact = Positions.interpolate(rtm, sha, ((i + 1) * hour) / (A - D))
        assert.approximately(p.payload.lat, exact.lat, 5e-7)
        assert.approximately(p.payload.lng, exact.lng, 5e-7)
      })
      assert.strictEqual(t.active, true)
      const decoded = commit.messages.filter((m) => m.type === "LOCATION_UPDATE").map((m) =>
        Schema.decodeUnknownSync(Schema.parseJson(ApiMessage))(m.body)
      )
      assert.strictEqual(decoded.length, 10)
    }).pipe(Effect.provide(layer())))

  it.effect("Advance renders what became due, once; a duplicate renders nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([voyage()])
      const early = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.deepStrictEqual([early.messages, early.upserts, early.result], [[], [], { count: 0 }])
      yield* TestClock.adjust("2 hours")
      const advanced = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.strictEqual(advanced.result.count, 2)
      const again = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.deepStrictEqual([again.messages, again.result], [[], { count: 0 }])
      const ps = yield* positions()
      const D = now0 - 10 * hour
      assert.deepStrictEqual(
        ps.map((p) => p.payload.event_date),
        Array.from({ length: 12 }, (_, i) => eventDate(D + (i + 1) * hour))
      )
      assert.strictEqual((yield* tradeflow("PO-1")).next_position_at, D + 13 * hour)
      const unknown = yield* run({ _tag: "Advance", reference: "NOPE" })
      assert.deepStrictEqual(unknown.result, { count: 0 })
    }).pipe(Effect.provide(layer())))

  it.effect("the same position rendered twice has the same hash (positions are deterministic)", () =>
    Effect.gen(function*() {
      const once = Effect.gen(function*() {
        yield* TestClock.setTime(now0)
        yield* post([voyage()])
        return (yield* positions()).map((p) => [p.hash, p.payload] as const)
      })
      const a = yield* Effect.provide(once, layer())
      const b = yield* Effect.provide(Effect.zipRight(TestClock.adjust("3 minutes"), once), layer())
      assert.deepStrictEqual(a, b)
    }))

  it.effect("production tradeflows, voyages without both ports and deactivated tradeflows get none", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([voyage({ tradeflow_reference: "PROD" })], "production")
      const { port_of_discharge: _pod, ...withoutPod } = voyage({ tradeflow_reference: "NO-POD" })
      yield* post([withoutPod])
      yield* post([voyage({ tradeflow_reference: "UNKNOWN-PORT", port_of_discharge: "ZZZZZ" })])
      yield* post([voyage({ tradeflow_reference: "NOT-YET", actual_time_of_departure: iso(now0 - 30 * 60_000) })])
      yield* post([
        voyage({
          tradeflow_reference: "DONE",
          actual_time_of_departure: iso(now0 - 3 * day),
          estimated_time_of_arrival: iso(now0 - day - 30 * 60_000)
        })
      ])
      for (const r of ["PROD", "NO-POD", "UNKNOWN-PORT", "DONE"]) {
        if (r !== "DONE") assert.deepStrictEqual(yield* positions(r), [], r)
        assert.strictEqual((yield* tradeflow(r)).next_position_at, null, r)
      }
      assert.strictEqual((yield* tradeflow("NOT-YET")).next_position_at, now0 + 30 * 60_000)
      assert.strictEqual((yield* positions("DONE")).length, 47)

      yield* post([voyage({ tradeflow_reference: "OFF" })])
      assert.strictEqual((yield* positions("OFF")).length, 10)
      yield* run({ _tag: "Delete", reference: "OFF", hard: false })
      assert.strictEqual((yield* tradeflow("OFF")).next_position_at, null)
      yield* TestClock.adjust("5 hours")
      const off = yield* run({ _tag: "Advance", reference: "OFF" })
      assert.deepStrictEqual(off.result, { count: 0 })
      assert.strictEqual((yield* positions("OFF")).length, 10)

      yield* post([voyage({ tradeflow_reference: "OFF" })])
      const resumed = yield* positions("OFF")
      assert.strictEqual(resumed.length, 15)
      assert.strictEqual(new Set(resumed.map((p) => p.hash)).size, 15)
    }).pipe(Effect.provide(layer())))

  it.effect("a re-generated journey (new arrival) recomputes its positions", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([voyage()])
      yield* TestClock.adjust("1 minute")
      yield* post([voyage({ estimated_time_of_arrival: iso(now0 + 5 * day) })])
      const ps = yield* positions()
      assert.strictEqual(ps.length, 20)
      const D = now0 - 10 * hour
      assert.deepStrictEqual(
        ps.slice(10).map((p) => p.payload.event_date),
        Array.from({ length: 10 }, (_, i) => eventDate(D + (i + 1) * hour))
      )
      assert.notDeepEqual(ps[10]!.payload, ps[0]!.payload)
      assert.strictEqual((yield* tradeflow("PO-1")).next_position_at, D + 11 * hour)
    }).pipe(Effect.provide(layer())))

  it.effect("a tradeflow stored before next_location_at existed continues its positions at next_position_at", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([voyage()])
      const t = yield* tradeflow("PO-1")
      const json = JSON.parse(Schema.encodeSync(Schema.parseJson(Tradeflow))(t)) as Record<string, unknown>
      delete json["next_location_at"]
      delete json["mock_release"]
      const old = Schema.decodeUnknownSync(Tradeflow)(json)
      assert.deepStrictEqual([old.next_location_at, old.mock_release, old.next_position_at], [
        undefined,
        null,
        t.next_position_at
      ])
      yield* TestClock.adjust("2 hours")
      const moved = yield* Processor.advance(old, now0 + 2 * hour)
      const D = now0 - 10 * hour
      assert.deepStrictEqual(
        moved.messages.map((m) =>
          (Schema.decodeUnknownSync(Schema.parseJson(ApiMessage))(m.body).payload as LocationUpdate).event_date
        ),
        [eventDate(D + 11 * hour), eventDate(D + 12 * hour)]
      )
      assert.deepStrictEqual([moved.next.next_location_at, moved.next.next_position_at], [D + 13 * hour, D + 13 * hour])
    }).pipe(Effect.provide(layer())))

  it.prop(
    "dueAcross: the instants of every leg, soonest first, in chunks of `limit` that continue at `next`, each once",
    [
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 60 })),
        { minLength: 1, maxLength: 3 }
      ),
      fc.integer({ min: 0, max: 900 }),
      fc.integer({ min: 1, max: 50 })
    ],
    ([specs, now, limit]) => {
      const legs = specs.map(([departure, length, intervalMs]) => ({
        departure,
        arrival: departure + length,
        intervalMs
      }))
      const all = legs
        .flatMap((timing) =>
          Array.from({ length: Positions.countBy(timing, now) }, (_, k) => Positions.instantAt(timing, k + 1))
        )
        .sort((a, b) => a - b)
      const seen: Array<number> = []
      let from = -Infinity
      for (let guard = 0; guard < 1_000; guard++) {
        const chunk = Positions.dueAcross(legs, from, now, limit)
        if (chunk.instants.length > limit) {
          assert.strictEqual(
            new Set(chunk.instants.map((i) => i.instant)).size,
            1,
            "only one shared instant may exceed the limit"
          )
        }
        seen.push(...chunk.instants.map((i) => i.instant))
        if (chunk.next === null || chunk.next > now) break
        from = chunk.next
      }
      assert.deepStrictEqual(seen, all)
    }
  )

  it.effect("a departure in the year 1000 moves to 365 days ago, and positions start at most 7 days back", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([
        voyage({ actual_time_of_departure: "1000-01-01T00:00:00Z", estimated_time_of_arrival: iso(now0 + 2 * day) })
      ])
      const ps = yield* positions()
      assert.strictEqual(ps.length, 7 * 24 + 1)
      assert.strictEqual(ps[0]!.payload.event_date, eventDate(now0 - Positions.maxBackfillMillis))
      assert.strictEqual(ps.at(-1)!.payload.event_date, eventDate(now0))
      const departure = (yield* tradeflow("PO-1")).events.find((e) => e.status_code === "VD")
      assert.strictEqual(departure?.event_date, now0 - 365 * day)
      assert.strictEqual((yield* tradeflow("PO-1")).next_position_at, now0 + hour)
      yield* TestClock.adjust("30 days")
      const resumed = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.isAtMost(resumed.result.count, 7 * 24 + 1)
    }).pipe(Effect.provide(layer())))

  it.effect("a voyage not advanced for longer than 7 days resumes 7 days back: older instants are skipped", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([
        voyage({ actual_time_of_departure: iso(now0 - 2 * day), estimated_time_of_arrival: iso(now0 + 60 * day) })
      ])
      assert.strictEqual((yield* positions()).length, 48)
      yield* TestClock.adjust("20 days")
      const resumed = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.strictEqual(resumed.result.count, 7 * 24 + 1)
      const ps = yield* positions()
      assert.strictEqual(ps[48]!.payload.event_date, eventDate(now0 + 20 * day - Positions.maxBackfillMillis))
    }).pipe(Effect.provide(layer())))

  it.effect("a long voyage with a tiny interval renders at most 1,000 positions per job and continues", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      const D = now0 - 5 * day
      yield* post([voyage({ actual_time_of_departure: iso(D), estimated_time_of_arrival: iso(now0 + 60 * day) })])
      assert.strictEqual((yield* positions()).length, Positions.maxPositionsPerJob)
      assert.strictEqual((yield* tradeflow("PO-1")).next_position_at, D + 1001 * 60_000)
      const next = yield* run({ _tag: "Advance", reference: "PO-1" })
      assert.strictEqual(next.result.count, 1000)
      const ps = yield* positions()
      assert.strictEqual(ps.length, 2000)
      assert.deepStrictEqual(
        ps.slice(998, 1002).map((p) => p.payload.event_date),
        [999, 1000, 1001, 1002].map((k) => eventDate(D + k * 60_000))
      )
    }).pipe(Effect.provide(layer({ locationIntervalMinutes: 1 }))))
})
