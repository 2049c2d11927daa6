/**
 * The mock tracking scenarios of the UAT sandbox: a registry from scenario name to generator, and
 * the release schedule of `mock_tracking.speed`.
 *
 * A generator answers the whole journey: its events in journey order, grouped in steps (one
 * happening each: a milestone of every container, a vessel move, a changed prediction). `instant`
 * applies every step at once; the other speeds release step k at the journey's start + k · the
 * speed's interval, so what is released is always a prefix of the journey.
 *
 * @module
 */
import { Clock, Effect, Option } from "effect"
import * as DelayedEta from "./DelayedEta.js"
import type { Locations } from "./Locations.js"
import * as OceanBasic from "./OceanBasic.js"
import * as OceanFull from "./OceanFull.js"
import * as RolledShipment from "./RolledShipment.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent as MockEventSchema } from "./Tradeflow.js"
import type { MockSpeed } from "./TradeflowRecord.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** What a scenario is generated from: the merged tradeflow, with the dates as they were sent. */
export interface MockInput {
  readonly organisation_id: string
  readonly reference: string
  /** The tradeflow's container numbers (may be empty). */
  readonly containers: ReadonlyArray<string>
  readonly port_of_loading?: string | undefined
  readonly port_of_discharge?: string | undefined
  readonly estimated_time_of_departure?: string | undefined
  readonly actual_time_of_departure?: string | undefined
  readonly estimated_time_of_arrival?: string | undefined
  readonly actual_time_of_arrival?: string | undefined
}

/**
 * A generated event (see `Tradeflow.MockEvent`). `container_reference` null is a vessel move of
 * the shipment, which renders as a SHIPMENT_CHANGE.
 */
export type MockEvent = MockEventSchema

/** A generated journey. */
export interface MockJourney {
  /** The containers the events are for: the input's, or the one picked when it had none. */
  readonly containers: ReadonlyArray<string>
  /** Resolved departure and arrival instants (epoch milliseconds). */
  readonly departure: number
  readonly arrival: number
  /**
   * Every event in journey order: steps 0, 1, 2, ... with no gap, the events of a step adjacent
   * (its container events in container order, then its vessel moves).
   */
  readonly events: ReadonlyArray<MockEvent>
}

/** What a scenario needs: the organisation's containers (to pick one) and the location directory. */
export type ScenarioContext = TradeflowStore | Locations

/** A scenario generator. Time comes from `Clock`, randomness from `Random`. */
export type Scenario = (input: MockInput) => Effect.Effect<MockJourney, StorageError, ScenarioContext>

/** The `empty` scenario: a journey without events (the tradeflow is tracked, nothing is known yet). */
export const empty: Scenario = (input) =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    containers: input.containers,
    departure: OceanBasic.departureOf(input, now),
    arrival: OceanBasic.arrivalOf(input, now),
    events: []
  }))

/** Every scenario by name. */
export const scenarios: ReadonlyMap<string, Scenario> = new Map<string, Scenario>([
  [OceanBasic.name, OceanBasic.generate],
  [OceanFull.name, OceanFull.generate],
  [RolledShipment.name, RolledShipment.generate],
  [DelayedEta.name, DelayedEta.generate],
  ["empty", empty]
])

/** Names of the scenarios the sandbox generates; any other name is ignored with a warning. */
export const scenarioNames: ReadonlyArray<string> = [...scenarios.keys()]

/** The scenario of that name, if there is one. */
export const lookup = (name: string): Option.Option<Scenario> => Option.fromNullable(scenarios.get(name))

/** A speed that releases a journey over time. */
export type ReleaseSpeed = Exclude<MockSpeed, "instant">

/** The time between two steps of each speed, in ms: a minute, an hour, a day. */
export const releaseIntervals: Readonly<Record<ReleaseSpeed, number>> = {
  fast: 60_000,
  normal: 3_600_000,
  slow: 86_400_000
}

/** The instant step `step` of a journey started at `startedAt` is released at. */
export const releaseAt = (speed: ReleaseSpeed, startedAt: number, step: number): number =>
  startedAt + step * releaseIntervals[speed]

/**
 * How many of `events` (in journey order) are released at `now` for a journey started at
 * `startedAt`: the length of the released prefix.
 */
export const releasedCount = (
  events: ReadonlyArray<MockEvent>,
  speed: ReleaseSpeed,
  startedAt: number,
  now: number
): number => {
  const i = events.findIndex((e) => releaseAt(speed, startedAt, e.step) > now)
  return i < 0 ? events.length : i
}

/** The events grouped by step, in order. */
export const steps = (events: ReadonlyArray<MockEvent>): ReadonlyArray<ReadonlyArray<MockEvent>> => {
  const out: Array<Array<MockEvent>> = []
  let current: Array<MockEvent> | undefined
  let step: number | undefined
  for (const e of events) {
    if (current === undefined || e.step !== step) {
      current = []
      out.push(current)
      step = e.step
    }
    current.push(e)
  }
  return out
}
