import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option, Random, TestClock } from "effect"
import { builtinPorts } from "../src/internal/builtinPorts.js"
import * as Iso6346 from "../src/Iso6346.js"
import * as Locations from "../src/Locations.js"
import * as OceanBasic from "../src/MockJourneyOceanBasic.js"
import * as OceanFull from "../src/MockJourneyOceanFull.js"
import * as Scenarios from "../src/MockJourneys.js"
import * as Positions from "../src/Positions.js"
import { descriptions, type StatusCode } from "../src/StatusCode.js"
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

/**
 * The scenario tables of docs/behaviour.md, written out independently of the generators: steps of
 * rows [port, code, container events or the vessel move, base instant, offset in days, actual,
 * vessel (1: the scenario's other mock vessel)].
 */
type Port = "pol" | "ts" | "pod"
type Row = readonly [Port, StatusCode, "containers" | "move", "D" | "M" | "A", number, boolean, 1?]
const pol = (code: StatusCode, offset: number): Row => ["pol", code, "containers", "D", offset, true]
const pod = (code: StatusCode, offset: number): Row => ["pod", code, "containers", "A", offset, false]
const vd: Row = ["pol", "VD", "move", "D", 0, true]
const va = (offset: number, vessel?: 1): ReadonlyArray<Row> => [
  ["pod", "VA", "containers", "A", offset, false],
  vessel === undefined ? ["pod", "VA", "move", "A", offset, false] : ["pod", "VA", "move", "A", offset, false, vessel]
]
const tails: ReadonlyArray<ReadonlyArray<Row>> = [[pod("UV", 1)], [pod("GT", 2)], [pod("GR", 7)]]

const tables: Record<string, ReadonlyArray<ReadonlyArray<Row>>> = {
  ocean_basic: [[pol("GE", -3)], [pol("GN", -2)], [pol("AE", -1)], [vd], va(0), ...tails],
  ocean_full: [
    [pol("GE", -3)],
    [pol("GN", -2)],
    [pol("AE", -1)],
    [vd],
    [["ts", "VA", "move", "M", -2, false]],
    [["ts", "UV", "containers", "M", -1, false]],
    [["ts", "AE", "containers", "M", 1, false]],
    [["ts", "VD", "move", "M", 2, false, 1]],
    va(0, 1),
    ...tails
  ],
  rolled_shipment: [
    [pol("GE", -10)],
    [pol("GN", -9)],
    [va(-7)[0]!, ["pol", "VD", "move", "D", -7, false, 1], ["pod", "VA", "move", "A", -7, false, 1]],
    [va(0)[0]!, ["pol", "VD", "move", "D", 0, false], va(0)[1]!],
    [pol("AE", -1)],
    [vd],
    ...tails
  ],
  delayed_eta: [[pol("GE", -3)], [pol("GN", -2)], [pol("AE", -1)], [vd], va(-5), va(-2), va(0), ...tails],
  empty: []
}

const codes = builtinPorts.map((l) => l.unlocode)
const validContainers = ["CSQU3054383", "MSKU9070323", "TGHU8512390", "MSCU6639870"].filter(Iso6346.isValid)
const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) })

const inputArb = fc.record({
  scenario: fc.constantFrom(...Scenarios.scenarioNames),
  now: instant,
  pol: fc.option(fc.constantFrom("NLRTM", "CNSHA", "DEHAM", "SGSIN", "XXABC")),
  pod: fc.option(fc.constantFrom("USNYC", "SGSIN", "CNSHA", "BRSSZ", "XXDEF")),
  containers: fc.uniqueArray(fc.constantFrom(...validContainers), { maxLength: 3 }),
  existing: fc.uniqueArray(fc.constantFrom(...validContainers), { maxLength: 2 }),
  departure: fc.option(instant),
  arrival: fc.option(instant),
  reference: fc.string({ minLength: 1, maxLength: 12 })
})
type Input = typeof inputArb extends fc.Arbitrary<infer A> ? A : never

const iso = (ms: number | null) => ms === null ? undefined : new Date(ms).toISOString()

const generate = (i: Input) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(i.now)
    return yield* Option.getOrThrow(Scenarios.lookup(i.scenario))({
      organisation_id: "org",
      reference: i.reference,
      containers: i.containers,
      port_of_loading: i.pol ?? undefined,
      port_of_discharge: i.pod ?? undefined,
      estimated_time_of_departure: iso(i.departure),
      estimated_time_of_arrival: iso(i.arrival)
    }).pipe(Effect.provide(Layer.merge(storeWith(i.existing), Locations.layerBuiltin)))
  })

describe("Scenarios: every journey follows its table", () => {
  it.effect.prop(
    "order, spacing, actual flags, vessels and steps, for any dates, ports and containers",
    [inputArb],
    ([i]) =>
      Effect.gen(function*() {
        const journey = yield* generate(i)
        const within = (t: number) => Math.min(i.now + 365 * day, Math.max(i.now - 365 * day, t))
        const D = i.departure === null || i.departure === undefined ? i.now - day : within(i.departure)
        const A = i.arrival === null || i.arrival === undefined ? i.now + 30 * day : within(i.arrival)
        assert.deepStrictEqual([journey.departure, journey.arrival], [D, A])
        const ts = journey.events.find((e) => e.status_code === "UV" && e.location !== i.pod && e.location !== i.pol)
          ?.location
        const ports: Record<Port, string | undefined> = {
          pol: i.pol ?? undefined,
          pod: i.pod ?? undefined,
          ts: i.pol !== null && i.pod !== null ? ts : undefined
        }
        const bases = { D, A, M: D + Math.floor((A - D) / 2) }
        const other = OceanBasic.mockVesselName(i.reference, 1)
        const expected = tables[i.scenario]!
          .map((rows) =>
            rows.flatMap(([port, code, what, base, offset, actual, vessel]) => {
              const location = ports[port]
              if (location === undefined) return []
              const vesselName = vessel === 1 && (i.scenario !== "ocean_full" || ports.ts !== undefined)
                ? other
                : undefined
              const e = (container: string | null) => ({
                status_code: code,
                message: descriptions[code],
                container_reference: container,
                location,
                event_date: bases[base] + offset * day,
                actual,
                ...(vesselName === undefined ? {} : { vessel: vesselName })
              })
              return what === "move" ? [e(null)] : journey.containers.map(e)
            })
          )
          .filter((rows) => rows.length > 0)
          .flatMap((rows, step) => rows.map((e) => ({ step, ...e })))
        assert.deepStrictEqual(journey.events, expected)
        if (i.scenario === "ocean_full" && i.pol !== null && i.pod !== null) assert.isDefined(ts)
      }),
    { fastCheck: { numRuns: 400 } }
  )

  it.effect.prop(
    "every container is an ISO 6346 number: the ones sent, else one of the organisation's, else a generated one",
    [inputArb, fc.integer()],
    ([i, seed]) =>
      Effect.gen(function*() {
        const journey = yield* generate({ ...i, containers: [] }).pipe(Effect.withRandom(Random.make(seed)))
        if (i.scenario === "empty") return assert.deepStrictEqual(journey.containers, [])
        assert.strictEqual(journey.containers.length, 1)
        assert.isTrue(Iso6346.isValid(journey.containers[0]!))
        if (i.existing.length > 0) assert.include(i.existing, journey.containers[0])
        for (const e of journey.events) {
          if (e.container_reference !== null) assert.isTrue(Iso6346.isValid(e.container_reference))
        }
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect.prop(
    "ocean_full transships at a hub other than both ports, the one that lengthens the route least",
    [fc.constantFrom(...codes), fc.constantFrom(...codes), fc.string()],
    ([from, to, reference]) =>
      Effect.gen(function*() {
        const ts = yield* OceanFull.transshipmentPort(from, to, reference)
        assert.include(OceanFull.hubs, ts)
        assert.notInclude([from, to], ts)
        const locations = yield* Locations.Locations
        const at = (code: string) => Effect.map(locations.lookup(code), Option.getOrThrow)
        const a = (yield* at(from)).coordinates
        const b = (yield* at(to)).coordinates
        const detour = (c: { lat: number; lng: number }) =>
          Positions.distanceMetres(a, c) + Positions.distanceMetres(c, b)
        const mine = detour((yield* at(ts)).coordinates)
        for (const hub of OceanFull.hubs) {
          if (hub !== from && hub !== to) assert.isAtMost(mine, detour((yield* at(hub)).coordinates))
        }
      }).pipe(Effect.provide(Locations.layerBuiltin)),
    { fastCheck: { numRuns: 100 } }
  )
})

describe("Scenarios: release schedule", () => {
  const speedArb = fc.constantFrom("fast" as const, "normal" as const, "slow" as const)

  it.effect.prop(
    "what a speed has released is always a prefix of the journey in order, one step per interval",
    [inputArb, speedArb, instant, fc.array(fc.integer({ min: 0, max: 40 * day }), { maxLength: 30 })],
    ([i, speed, start, offsets]) =>
      Effect.gen(function*() {
        const journey = yield* generate(i)
        const interval = Scenarios.releaseIntervals[speed]
        const steps = Scenarios.steps(journey.events)
        assert.deepStrictEqual(steps.flat(), journey.events)
        steps.forEach((s, k) => assert.isTrue(s.every((e) => e.step === k)))
        assert.strictEqual(Scenarios.releasedCount(journey.events, speed, start, start), steps[0]?.length ?? 0)
        let before = 0
        for (const t of [...offsets].sort((a, b) => a - b).map((o) => start + o)) {
          const n = Scenarios.releasedCount(journey.events, speed, start, t)
          assert.isAtLeast(n, before)
          before = n
          const released = journey.events.slice(0, n)
          const stepsReleased = Math.min(steps.length, Math.floor((t - start) / interval) + 1)
          assert.strictEqual(new Set(released.map((e) => e.step)).size, stepsReleased)
          assert.isTrue(released.every((e) => Scenarios.releaseAt(speed, start, e.step) <= t))
          const next = journey.events[n]
          if (next !== undefined) assert.isAbove(Scenarios.releaseAt(speed, start, next.step), t)
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it("fast is a minute, normal an hour, slow a day", () => {
    assert.deepStrictEqual(Scenarios.releaseIntervals, { fast: 60_000, normal: 3_600_000, slow: day })
    assert.strictEqual(Scenarios.releaseAt("fast", 1_000, 3), 181_000)
  })
})
