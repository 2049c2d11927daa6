/**
 * The `ocean_basic` mock scenario (SERVICE.md, "Mock tracking scenarios"), in journey order:
 *
 * | Step | Side | Code | When | Actual |
 * |---|---|---|---|---|
 * | 0 | port of loading | GE gate out empty | departure - 3 days | yes |
 * | 1 | port of loading | GN gate in full | departure - 2 days | yes |
 * | 2 | port of loading | AE loaded on vessel | departure - 1 day | yes |
 * | 3 | port of loading | VD vessel departure (vessel move) | departure | yes |
 * | 4 | port of discharge | VA vessel arrival (each container, then the vessel move) | arrival | no |
 * | 5 | port of discharge | UV unloaded from vessel | arrival + 1 day | no |
 * | 6 | port of discharge | GT gate out full | arrival + 2 days | no |
 * | 7 | port of discharge | GR empty equipment returned | arrival + 7 days | no |
 *
 * Each container gets the events of the sides whose port is given; the steps of a missing side
 * are left out (the others are numbered on without a gap). The vessel moves are container-less
 * events that render as SHIPMENT_CHANGE messages.
 *
 * Departure = `actual_time_of_departure ?? estimated_time_of_departure ??` now - 1 day; arrival =
 * `actual_time_of_arrival ?? estimated_time_of_arrival ??` now + 30 days, each moved into 365 days
 * around now (see {@link mockWindowMillis}). Without a container,
 * a random container of the organisation is picked, or a valid ISO 6346 number generated.
 *
 * The other scenarios build on the helpers of this module.
 *
 * @module
 */
import { Clock, Effect, Random } from "effect"
import type { Vessel } from "./ApiMessage.js"
import { fnv1a, vesselNamed } from "./internal/vessel.js"
import * as Iso6346 from "./Iso6346.js"
import type { MockInput, MockJourney } from "./MockJourney.js"
import { descriptions, type StatusCode } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent } from "./Tradeflow.js"
import { parseIsoDateTime } from "./TradeflowRecord.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** A day in milliseconds. */
export const day = 86_400_000

/** The scenario name. */
export const name = "ocean_basic"

/** Events at the port of loading: code and offset from the departure. All actual. */
export const polSequence: ReadonlyArray<readonly [StatusCode, number]> = [["GE", -3 * day], ["GN", -2 * day], [
  "AE",
  -day
]]

/** Events at the port of discharge: code and offset from the arrival. All predicted. */
export const podSequence: ReadonlyArray<readonly [StatusCode, number]> = [
  ["VA", 0],
  ["UV", day],
  ["GT", 2 * day],
  ["GR", 7 * day]
]

/** Departure default: yesterday. */
export const defaultDepartureOffset = -day
/** Arrival default: 30 days from now. */
export const defaultArrivalOffset = 30 * day

/**
 * How far from now the dates of a mock journey may lie: 365 days. A sent departure or arrival
 * further away is moved to that bound (validation warns about it).
 */
export const mockWindowMillis = 365 * day

/** An instant moved into the mock window around `now`. */
export const intoMockWindow = (instant: number, now: number): number =>
  Math.min(now + mockWindowMillis, Math.max(now - mockWindowMillis, instant))

/** The departure instant: actual, else estimated, else now - 1 day; within the mock window. */
export const departureOf = (input: MockInput, now: number): number => {
  const sent = input.actual_time_of_departure ?? input.estimated_time_of_departure
  return sent === undefined ? now + defaultDepartureOffset : intoMockWindow(parseIsoDateTime(sent), now)
}

/** The arrival instant: actual, else estimated, else now + 30 days; within the mock window. */
export const arrivalOf = (input: MockInput, now: number): number => {
  const sent = input.actual_time_of_arrival ?? input.estimated_time_of_arrival
  return sent === undefined ? now + defaultArrivalOffset : intoMockWindow(parseIsoDateTime(sent), now)
}

/** A journey event before its step is numbered. */
export type Fact = Omit<MockEvent, "step">

/** One fact: a container event, or a vessel move when `container` is null. */
export const fact = (
  code: StatusCode,
  container: string | null,
  location: string,
  date: number,
  actual: boolean,
  vessel?: string
): Fact => ({
  status_code: code,
  message: descriptions[code],
  container_reference: container,
  location,
  event_date: date,
  actual,
  ...(vessel === undefined ? {} : { vessel })
})

/** The same event for every container, in container order. */
export const eachContainer = (
  containers: ReadonlyArray<string>,
  code: StatusCode,
  location: string,
  date: number,
  actual: boolean,
  vessel?: string
): ReadonlyArray<Fact> => containers.map((c) => fact(code, c, location, date, actual, vessel))

/** Numbers the non-empty steps 0, 1, 2, ... in order: the journey's events. */
export const numberSteps = (steps: ReadonlyArray<ReadonlyArray<Fact> | undefined>): ReadonlyArray<MockEvent> =>
  steps
    .filter((s): s is ReadonlyArray<Fact> => s !== undefined && s.length > 0)
    .flatMap((s, step) => s.map((f) => ({ step, ...f })))

/** What a scenario's pure journey is computed from: resolved instants and containers, and the ports sent. */
export interface JourneyArgs {
  readonly containers: ReadonlyArray<string>
  readonly port_of_loading?: string | undefined
  readonly port_of_discharge?: string | undefined
  readonly departure: number
  readonly arrival: number
}

/** The steps after the vessel's arrival at the port of discharge: unloaded, gate out, empty returned. */
export const afterArrival = (
  containers: ReadonlyArray<string>,
  pod: string,
  arrival: number
): ReadonlyArray<ReadonlyArray<Fact>> =>
  podSequence.filter(([code]) => code !== "VA").map(([code, offset]) =>
    eachContainer(containers, code, pod, arrival + offset, false)
  )

/** The journey's events for resolved instants and containers (pure). */
export const journey = (args: JourneyArgs): ReadonlyArray<MockEvent> => {
  const { arrival, containers, departure, port_of_discharge: pod, port_of_loading: pol } = args
  return numberSteps([
    ...(pol === undefined ? [] : [
      ...polSequence.map(([code, offset]) => eachContainer(containers, code, pol, departure + offset, true)),
      [fact("VD", null, pol, departure, true)]
    ]),
    ...(pod === undefined ? [] : podSequence.map(([code, offset]) => [
      ...eachContainer(containers, code, pod, arrival + offset, false),
      ...(code === "VA" ? [fact("VA", null, pod, arrival, false)] : [])
    ]))
  ])
}

/** A container for a tradeflow that has none: a random one of the organisation, else a new valid number. */
export const pickContainer = (organisationId: string): Effect.Effect<string, StorageError, TradeflowStore> =>
  Effect.gen(function*() {
    const store = yield* TradeflowStore
    const existing = yield* store.containers(organisationId)
    if (existing.length === 0) return yield* Iso6346.generate
    return existing[yield* Random.nextIntBetween(0, existing.length)] ?? (yield* Iso6346.generate)
  })

/** The resolved inputs of a journey: its containers (one picked when none was sent), departure and arrival. */
export const resolve = (
  input: MockInput
): Effect.Effect<Pick<MockJourney, "containers" | "departure" | "arrival">, StorageError, TradeflowStore> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const containers = input.containers.length > 0 ? input.containers : [yield* pickContainer(input.organisation_id)]
    return { containers, departure: departureOf(input, now), arrival: arrivalOf(input, now) }
  })

/** Generates the `ocean_basic` journey. */
export const generate = (input: MockInput): Effect.Effect<MockJourney, StorageError, TradeflowStore> =>
  Effect.gen(function*() {
    const resolved = yield* resolve(input)
    const events = journey({
      ...resolved,
      port_of_loading: input.port_of_loading,
      port_of_discharge: input.port_of_discharge
    })
    return { ...resolved, events }
  }).pipe(Effect.withSpan("MockJourneyOceanBasic.generate"))

const vesselNames = [
  "MOCK ATLANTIC",
  "MOCK PACIFIC",
  "MOCK MERIDIAN",
  "MOCK HORIZON",
  "MOCK NAVIGATOR",
  "MOCK AURORA",
  "MOCK EQUATOR",
  "MOCK MONSOON",
  "MOCK TRADEWIND",
  "MOCK ALBATROSS",
  "MOCK CORMORANT",
  "MOCK NORTHSTAR",
  "MOCK SEAFARER",
  "MOCK MARINER",
  "MOCK ORION",
  "MOCK POLARIS"
]

/**
 * The name of a mock vessel of a tradeflow reference: `n` = 0 is the tradeflow's own vessel, 1, 2,
 * ... other vessels of its journey (all different while `n` < 16).
 */
export const mockVesselName = (reference: string, n = 0): string =>
  vesselNames[(fnv1a(reference) + n) % vesselNames.length] ?? "MOCK ATLANTIC"

/** The mock vessel of a tradeflow reference: the same reference always sails the same vessel. */
export const mockVessel = (reference: string): Vessel => vesselNamed(mockVesselName(reference))
