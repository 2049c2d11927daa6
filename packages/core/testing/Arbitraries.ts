/**
 * fast-check arbitraries (from `effect/FastCheck`) for integrators' property tests: valid
 * tradeflow records, ISO 6346 container numbers, UN/LOCODEs of the built-in directory and whole
 * mock journeys per scenario. Built from the core schemas, with the fields whose generic
 * arbitrary would be unrealistic (containers, ports, scenarios) narrowed to valid values.
 *
 * @module
 */
import { Arbitrary, Clock, Effect, FastCheck as fc, Layer, Random, Schema } from "effect"
import { builtinPorts } from "../src/internal/builtinPorts.js"
import * as Iso6346 from "../src/Iso6346.js"
import * as Locations from "../src/Locations.js"
import type * as MockJourney from "../src/MockJourney.js"
import * as MockJourneys from "../src/MockJourneys.js"
import * as Storage from "../src/Storage.js"
import {
  EventInput,
  IsoDateTime,
  MockSpeed,
  type TradeflowRecord,
  TradeflowRecordFields
} from "../src/TradeflowRecord.js"

/**
 * A valid ISO 6346 container number (category U, J or Z, right check digit).
 *
 * @example
 * fc.assert(fc.property(containerNumber, (c) => Iso6346.isValid(c)))
 */
export const containerNumber: fc.Arbitrary<string> = fc.tuple(
  fc.stringMatching(/^[A-Z]{3}$/),
  fc.constantFrom("U", "J", "Z"),
  fc.integer({ min: 0, max: 999_999 })
).map(([owner, category, serial]) => {
  const first10 = `${owner}${category}${String(serial).padStart(6, "0")}`
  return `${first10}${Iso6346.checkDigit(first10)}`
})

/**
 * A UN/LOCODE of the built-in directory (`Locations.layerBuiltin`), so it always resolves.
 *
 * @example
 * fc.sample(unlocode, 3) // e.g. ["NLRTM", "SGSIN", "CNSHA"]
 */
export const unlocode: fc.Arbitrary<string> = fc.constantFrom(...builtinPorts.map((l) => l.unlocode))

/**
 * An ISO 8601 date-time in UTC between 2000 and 2090, as the `IsoDateTime` schema generates it.
 *
 * @example
 * fc.sample(isoDateTime, 1) // e.g. ["2031-04-09T17:22:05.123Z"]
 */
export const isoDateTime: fc.Arbitrary<string> = Arbitrary.make(IsoDateTime)

/**
 * A `mock_tracking` value: a known scenario, with or without a speed.
 *
 * @example
 * fc.sample(mockTracking, 1) // e.g. [{ scenario: "ocean_full", speed: "fast" }]
 */
export const mockTracking: fc.Arbitrary<{ readonly scenario: string; readonly speed?: MockSpeed }> = fc.record({
  scenario: fc.constantFrom(...MockJourneys.scenarioNames),
  speed: Arbitrary.make(MockSpeed)
}, { requiredKeys: ["scenario"] })

const annotated = <A>(arbitrary: fc.Arbitrary<A>) => ({ arbitrary: () => () => arbitrary })
const ContainerNumber = Schema.String.annotations(annotated(containerNumber))
const UnLocode = Schema.String.annotations(annotated(unlocode))
const text = fc.string({ minLength: 1, maxLength: 24 }).map((s) => s.trim()).filter((s) => s.length > 0)
const Text = Schema.String.annotations(annotated(text))
const Reference = Schema.String.annotations(annotated(text.filter((s) => s !== "*")))

/** The record fields with containers, ports, references and scenarios narrowed to valid values. */
const GeneratedRecord = Schema.Struct({
  ...TradeflowRecordFields.fields,
  tradeflow_reference: Reference,
  container_reference: Schema.optional(Schema.Union(ContainerNumber, Schema.Array(ContainerNumber))),
  bill_of_lading_reference: Schema.optional(Schema.Union(Text, Schema.Array(Text))),
  booking_reference: Schema.optional(Schema.Union(Text, Schema.Array(Text))),
  port_of_loading: Schema.optional(UnLocode),
  port_of_discharge: Schema.optional(UnLocode),
  configuration: Schema.optional(Schema.Struct({ enroll_insurance: Schema.optional(Schema.Boolean) })),
  events: Schema.optional(Schema.Array(Schema.Struct({
    ...EventInput.fields,
    message: Text,
    container_reference: Schema.optional(ContainerNumber),
    location_name: Schema.optional(Schema.Union(UnLocode, Text))
  }))),
  mock_tracking: Schema.optional(Schema.Struct({
    scenario: Schema.String.annotations(annotated(fc.constantFrom(...MockJourneys.scenarioNames))),
    speed: Schema.optional(MockSpeed)
  }))
}).pipe(
  Schema.filter((r) =>
    [r.container_reference, r.bill_of_lading_reference, r.booking_reference].some((x) =>
      typeof x === "string" || (x?.length ?? 0) > 0
    )
  )
)

/** A raw tradeflow record as an integrator posts it (the encoded side of `TradeflowRecord`). */
export type TradeflowRecordInput = typeof TradeflowRecord.Encoded

/**
 * A valid tradeflow record as posted to `POST /downstream/tradeflows`: any optional field present
 * or not, `mock_tracking` (a known scenario) present or not, valid container numbers and
 * UN/LOCODEs of the built-in directory, so in UAT it validates without warnings about them.
 *
 * @example
 * it.effect.prop("my mapper accepts any record", [tradeflowRecord], ([record]) =>
 *   Effect.sync(() => assert.isDefined(myMapper(record))))
 */
export const tradeflowRecord: fc.Arbitrary<TradeflowRecordInput> = Arbitrary.make(GeneratedRecord)

/**
 * A valid tradeflow record that the UAT sandbox tracks: at least one container, both ports, and
 * `mock_tracking` with a known scenario.
 *
 * @example
 * const messages = yield* post(fc.sample(trackedRecord, 3))
 */
export const trackedRecord: fc.Arbitrary<TradeflowRecordInput> = fc.tuple(
  tradeflowRecord,
  fc.uniqueArray(containerNumber, { minLength: 1, maxLength: 3 }),
  unlocode,
  unlocode,
  mockTracking
).map(([record, containers, port_of_loading, port_of_discharge, mock_tracking]) => ({
  ...record,
  container_reference: containers,
  port_of_loading,
  port_of_discharge,
  mock_tracking
}))

/** A scenario's journey with what it was generated from. */
export interface JourneyCase {
  readonly scenario: string
  /** The clock when the journey was generated (epoch ms). */
  readonly now: number
  readonly input: MockJourney.MockInput
  readonly journey: MockJourney.MockJourney
}

const fixedClock = (now: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => now,
  currentTimeMillis: Effect.succeed(now),
  unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(now) * 1_000_000n),
  sleep: () => Effect.void
})

const optionalDate = fc.option(isoDateTime, { nil: undefined })

/**
 * Journeys of the named scenario for any clock, dates, ports (known or not) and containers (none
 * to three), with their inputs: what the scenario generator answers.
 *
 * @example
 * fc.assert(fc.property(journeyCase("ocean_full"), ({ journey }) =>
 *   journey.events.every((e, i) => i === 0 || e.step >= journey.events[i - 1]!.step)))
 */
export const journeyCase = (scenario: string): fc.Arbitrary<JourneyCase> => {
  const generate = MockJourneys.scenarios.get(scenario)
  if (generate === undefined) {
    throw new Error(`unknown scenario ${scenario} (known: ${MockJourneys.scenarioNames.join(", ")})`)
  }
  return fc.record({
    now: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }),
    seed: fc.integer(),
    reference: Arbitrary.make(Text),
    containers: fc.uniqueArray(containerNumber, { maxLength: 3 }),
    port_of_loading: fc.option(fc.oneof(unlocode, fc.constant("XXABC")), { nil: undefined }),
    port_of_discharge: fc.option(fc.oneof(unlocode, fc.constant("XXDEF")), { nil: undefined }),
    estimated_time_of_departure: optionalDate,
    actual_time_of_departure: optionalDate,
    estimated_time_of_arrival: optionalDate,
    actual_time_of_arrival: optionalDate
  }).map(({ now, seed, ...rest }) => {
    const input: MockJourney.MockInput = { organisation_id: "org-1", ...rest }
    const journey = Effect.runSync(
      generate(input).pipe(
        Effect.withClock(fixedClock(now)),
        Effect.withRandom(Random.make(seed)),
        Effect.provide(Layer.merge(Storage.layerMemory, Locations.layerBuiltin))
      )
    )
    return { scenario, now, input, journey }
  })
}

/**
 * Whole journeys of the named scenario (see {@link journeyCase}).
 *
 * @example
 * fc.assert(fc.property(journey("delayed_eta"), (j) => j.events.length > 0))
 */
export const journey = (scenario: string): fc.Arbitrary<MockJourney.MockJourney> =>
  journeyCase(scenario).map((c) => c.journey)
