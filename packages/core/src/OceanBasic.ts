/**
 * The `ocean_basic` mock scenario (SERVICE.md, "Mock tracking scenarios"):
 *
 * | Side | Code | When | Actual |
 * |---|---|---|---|
 * | port of loading | GE gate out empty | departure - 3 days | yes |
 * | port of loading | GN gate in full | departure - 2 days | yes |
 * | port of loading | AE loaded on vessel | departure - 1 day | yes |
 * | port of discharge | VA vessel arrival | arrival | no |
 * | port of discharge | UV unloaded from vessel | arrival + 1 day | no |
 * | port of discharge | GT gate out full | arrival + 2 days | no |
 * | port of discharge | GR empty equipment returned | arrival + 7 days | no |
 *
 * Each container gets the events of the sides whose port is given. The vessel itself departs
 * the port of loading at the departure (actual) and arrives at the port of discharge at the
 * arrival (predicted): two container-less events that render as SHIPMENT_CHANGE messages.
 *
 * Departure = `actual_time_of_departure ?? estimated_time_of_departure ??` now - 1 day; arrival =
 * `actual_time_of_arrival ?? estimated_time_of_arrival ??` now + 30 days. Without a container,
 * a random container of the organisation is picked, or a valid ISO 6346 number generated.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Random } from "effect"
import type { Vessel } from "./ApiMessage.js"
import { fnv1a, vesselNamed } from "./internal/vessel.js"
import * as Iso6346 from "./Iso6346.js"
import type { MockEvent, MockInput, MockJourney } from "./Scenarios.js"
import { descriptions, type StatusCode } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import { parseIsoDateTime } from "./TradeflowRecord.js"
import { TradeflowStore } from "./TradeflowStore.js"

const day = 86_400_000

/** The scenario name. */
export const name = "ocean_basic"

/** Events at the port of loading: code and offset from the departure. All actual. */
export const polSequence: ReadonlyArray<readonly [StatusCode, number]> = [["GE", -3 * day], ["GN", -2 * day], ["AE", -day]]

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

/** The departure instant: actual, else estimated, else now - 1 day. */
export const departureOf = (input: MockInput, now: number): number => {
  const sent = input.actual_time_of_departure ?? input.estimated_time_of_departure
  return sent === undefined ? now + defaultDepartureOffset : parseIsoDateTime(sent)
}

/** The arrival instant: actual, else estimated, else now + 30 days. */
export const arrivalOf = (input: MockInput, now: number): number => {
  const sent = input.actual_time_of_arrival ?? input.estimated_time_of_arrival
  return sent === undefined ? now + defaultArrivalOffset : parseIsoDateTime(sent)
}

const event = (
  code: StatusCode,
  container: string | null,
  location: string,
  date: number,
  actual: boolean
): MockEvent => ({ status_code: code, message: descriptions[code], container_reference: container, location, event_date: date, actual })

/** The journey's events for resolved instants and containers (pure). */
export const journey = (args: {
  readonly containers: ReadonlyArray<string>
  readonly port_of_loading?: string | undefined
  readonly port_of_discharge?: string | undefined
  readonly departure: number
  readonly arrival: number
}): ReadonlyArray<MockEvent> => {
  const { arrival, departure, port_of_discharge: pod, port_of_loading: pol } = args
  const events: Array<MockEvent> = []
  for (const c of args.containers) {
    if (pol !== undefined) for (const [code, offset] of polSequence) events.push(event(code, c, pol, departure + offset, true))
    if (pod !== undefined) for (const [code, offset] of podSequence) events.push(event(code, c, pod, arrival + offset, false))
  }
  if (pol !== undefined) events.push(event("VD", null, pol, departure, true))
  if (pod !== undefined) events.push(event("VA", null, pod, arrival, false))
  return events
}

/** A container for a tradeflow that has none: a random one of the organisation, else a new valid number. */
export const pickContainer = (organisationId: string): Effect.Effect<string, StorageError, TradeflowStore> =>
  Effect.gen(function* () {
    const store = yield* TradeflowStore
    const existing = yield* store.containers(organisationId)
    if (existing.length === 0) return yield* Iso6346.generate
    return existing[yield* Random.nextIntBetween(0, existing.length)] ?? (yield* Iso6346.generate)
  })

/** Generates the `ocean_basic` journey. */
export const generate = (input: MockInput): Effect.Effect<MockJourney, StorageError, TradeflowStore> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const containers = input.containers.length > 0 ? input.containers : [yield* pickContainer(input.organisation_id)]
    const departure = departureOf(input, now)
    const arrival = arrivalOf(input, now)
    const events = journey({
      containers,
      port_of_loading: input.port_of_loading,
      port_of_discharge: input.port_of_discharge,
      departure,
      arrival
    })
    return { containers, departure, arrival, events }
  }).pipe(Effect.withSpan("OceanBasic.generate"))

const vesselNames = [
  "MOCK ATLANTIC", "MOCK PACIFIC", "MOCK MERIDIAN", "MOCK HORIZON", "MOCK NAVIGATOR", "MOCK AURORA",
  "MOCK EQUATOR", "MOCK MONSOON", "MOCK TRADEWIND", "MOCK ALBATROSS", "MOCK CORMORANT", "MOCK NORTHSTAR",
  "MOCK SEAFARER", "MOCK MARINER", "MOCK ORION", "MOCK POLARIS"
]

/** The mock vessel of a tradeflow reference: the same reference always sails the same vessel. */
export const mockVessel = (reference: string): Vessel =>
  vesselNamed(vesselNames[fnv1a(reference) % vesselNames.length] ?? "MOCK ATLANTIC")
