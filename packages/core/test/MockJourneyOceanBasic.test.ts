import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option, TestClock } from "effect"
import * as Iso6346 from "../src/Iso6346.js"
import * as OceanBasic from "../src/MockJourneyOceanBasic.js"
import * as Scenarios from "../src/MockJourneys.js"
import { TradeflowStore } from "../src/TradeflowStore.js"

const day = 86_400_000

/** A TradeflowStore whose organisation has exactly these containers. */
const storeWith = (containers: ReadonlyArray<string>) =>
  Layer.succeed(
    TradeflowStore,
    TradeflowStore.of({
      get: () => Effect.succeed(Option.none()),
      getMany: () => Effect.succeed(new Map()),
      list: () => Effect.succeed([]),
      sizes: () => Effect.succeed(new Map()),
      held: () => Effect.succeed({ containers: [], events: [] }),
      lookup: () => Effect.succeed([]),
      containers: () => Effect.succeed(containers),
      due: () => Effect.succeed([]),
      commit: () => Effect.succeed(true),
      commitAll: () => Effect.succeed(true)
    })
  )

/** ISO 8601 with an explicit offset, as a client in another timezone would send it. */
const isoWithOffset = (ms: number, offsetMinutes: number): string => {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 23)
  const sign = offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(offsetMinutes)
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
}

const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) })
const offset = fc.integer({ min: -12 * 60, max: 14 * 60 })
/** Which of the two date fields of a side are sent: none, estimated, actual or both. */
const sent = fc.record({
  estimated: fc.option(fc.tuple(instant, offset)),
  actual: fc.option(fc.tuple(instant, offset))
})
const validContainers = ["CSQU3054383", "MSKU9070323", "TGHU8512390", "MSCU6639870"].filter(Iso6346.isValid)

const inputArb = fc.record({
  now: instant,
  pol: fc.option(fc.constantFrom("NLRTM", "CNSHA", "DEHAM")),
  pod: fc.option(fc.constantFrom("USNYC", "SGSIN", "CNSHA")),
  containers: fc.uniqueArray(fc.constantFrom(...validContainers), { maxLength: 3 }),
  existing: fc.uniqueArray(fc.constantFrom(...validContainers), { maxLength: 3 }),
  departure: sent,
  arrival: sent,
  reference: fc.string({ minLength: 1, maxLength: 12 })
})

const asString = (v: readonly [number, number] | null) => v === null ? undefined : isoWithOffset(v[0], v[1])

describe("OceanBasic", () => {
  it("is the registered ocean_basic scenario", () => {
    assert.deepStrictEqual(Scenarios.scenarioNames, [
      "ocean_basic",
      "ocean_full",
      "rolled_shipment",
      "delayed_eta",
      "empty"
    ])
    assert.strictEqual(Option.getOrThrow(Scenarios.lookup("ocean_basic")), OceanBasic.generate)
    assert.isTrue(Option.isNone(Scenarios.lookup("ocean_fancy")))
  })

  it.effect.prop(
    "generates exactly the SERVICE.md journey for every combination of omitted inputs",
    [inputArb],
    ([i]) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(i.now)
        const journey = yield* OceanBasic.generate({
          organisation_id: "org",
          reference: i.reference,
          containers: i.containers,
          port_of_loading: i.pol ?? undefined,
          port_of_discharge: i.pod ?? undefined,
          estimated_time_of_departure: asString(i.departure.estimated),
          actual_time_of_departure: asString(i.departure.actual),
          estimated_time_of_arrival: asString(i.arrival.estimated),
          actual_time_of_arrival: asString(i.arrival.actual)
        }).pipe(Effect.provide(storeWith(i.existing)))

        const within = (t: number) => Math.min(i.now + 365 * day, Math.max(i.now - 365 * day, t))
        const sentD = i.departure.actual?.[0] ?? i.departure.estimated?.[0]
        const sentA = i.arrival.actual?.[0] ?? i.arrival.estimated?.[0]
        const D = sentD === undefined ? i.now - day : within(sentD)
        const A = sentA === undefined ? i.now + 30 * day : within(sentA)
        assert.strictEqual(journey.departure, D)
        assert.strictEqual(journey.arrival, A)

        if (i.containers.length > 0) assert.deepStrictEqual(journey.containers, i.containers)
        else {
          assert.strictEqual(journey.containers.length, 1)
          const picked = journey.containers[0]!
          assert.isTrue(Iso6346.isValid(picked))
          if (i.existing.length > 0) assert.include(i.existing, picked)
        }

        type Row = [string | null, string, string, number, boolean]
        const expected: Array<[number, ...Row]> = []
        let n = 0
        const step = (rows: ReadonlyArray<Row>) => {
          for (const row of rows) expected.push([n, ...row])
          n++
        }
        const each = (code: string, port: string, date: number, actual: boolean): Array<Row> =>
          journey.containers.map((c) => [c, code, port, date, actual])
        if (i.pol !== null) {
          step(each("GE", i.pol, D - 3 * day, true))
          step(each("GN", i.pol, D - 2 * day, true))
          step(each("AE", i.pol, D - day, true))
          step([[null, "VD", i.pol, D, true]])
        }
        if (i.pod !== null) {
          step([...each("VA", i.pod, A, false), [null, "VA", i.pod, A, false]])
          step(each("UV", i.pod, A + day, false))
          step(each("GT", i.pod, A + 2 * day, false))
          step(each("GR", i.pod, A + 7 * day, false))
        }
        assert.deepStrictEqual(
          journey.events.map((e) => [e.step, e.container_reference, e.status_code, e.location, e.event_date, e.actual]),
          expected
        )
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("sent dates more than 365 days from now move to that bound", () =>
    Effect.gen(function*() {
      const now = Date.UTC(2026, 10, 22, 10)
      yield* TestClock.setTime(now)
      const j = yield* OceanBasic.generate({
        organisation_id: "org",
        reference: "PO1",
        containers: ["CSQU3054383"],
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA",
        actual_time_of_departure: "1000-01-01T00:00:00Z",
        estimated_time_of_arrival: "9999-12-31T23:59:59Z"
      }).pipe(Effect.provide(storeWith([])))
      assert.strictEqual(new Date(j.departure).toISOString(), "2025-11-22T10:00:00.000Z")
      assert.strictEqual(new Date(j.arrival).toISOString(), "2027-11-22T10:00:00.000Z")
    }))

  it.effect("defaults are relative to the clock: yesterday and 30 days from now", () =>
    Effect.gen(function*() {
      const now = Date.UTC(2026, 10, 22, 10)
      yield* TestClock.setTime(now)
      const j = yield* OceanBasic.generate({
        organisation_id: "org",
        reference: "PO1",
        containers: ["CSQU3054383"],
        port_of_loading: "NLRTM",
        port_of_discharge: "CNSHA"
      }).pipe(Effect.provide(storeWith([])))
      assert.strictEqual(new Date(j.departure).toISOString(), "2026-11-21T10:00:00.000Z")
      assert.strictEqual(new Date(j.arrival).toISOString(), "2026-12-22T10:00:00.000Z")
      assert.deepStrictEqual(j.events.map((e) => e.message), [
        "Gate out empty",
        "Gate in full",
        "Loaded on vessel",
        "Vessel departure",
        "Vessel arrival",
        "Vessel arrival",
        "Unloaded from vessel",
        "Gate out full",
        "Empty equipment returned"
      ])
    }))

  it.effect("an actual date wins over an estimated one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 15))
      const j = yield* OceanBasic.generate({
        organisation_id: "org",
        reference: "PO1",
        containers: ["CSQU3054383"],
        estimated_time_of_departure: "2026-01-01T00:00:00Z",
        actual_time_of_departure: "2026-01-02T00:00:00+01:00",
        estimated_time_of_arrival: "2026-02-01T00:00:00Z",
        actual_time_of_arrival: "2026-02-03"
      }).pipe(Effect.provide(storeWith([])))
      assert.strictEqual(j.departure, Date.UTC(2026, 0, 1, 23))
      assert.strictEqual(j.arrival, Date.UTC(2026, 1, 3))
      assert.deepStrictEqual(j.events, [])
    }))

  it.prop("the mock vessel is a function of the reference, with a 7-digit IMO (valid check digit) and 9-digit MMSI", [
    fc.string()
  ], ([reference]) => {
    const v = OceanBasic.mockVessel(reference)
    assert.deepStrictEqual(OceanBasic.mockVessel(reference), v)
    assert.match(v.imo_number, /^\d{7}$/)
    assert.match(v.mmsi_number, /^\d{9}$/)
    const digits = v.imo_number.split("").map(Number)
    const sum = digits.slice(0, 6).reduce((s, d, k) => s + d * (7 - k), 0)
    assert.strictEqual(sum % 10, digits[6])
    assert.isTrue(v.name.length > 0)
  })
})
