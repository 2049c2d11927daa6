/**
 * The mock tracking scenarios of the UAT sandbox: a registry from scenario name to generator
 * (each a `MockJourney*` module), and the release schedule of `mock_tracking.speed`.
 *
 * A generator answers the whole journey: its events in journey order, grouped in steps (one
 * happening each: a milestone of every container, a vessel move, a changed prediction). `instant`
 * applies every step at once; the other speeds release step k at the journey's start + k · the
 * speed's interval, so what is released is always a prefix of the journey.
 *
 * @module
 */
import { Clock, Effect, Option } from "effect"
import type { Scenario } from "./MockJourney.js"
import * as MockJourneyDelayedEta from "./MockJourneyDelayedEta.js"
import * as MockJourneyOceanBasic from "./MockJourneyOceanBasic.js"
import * as MockJourneyOceanFull from "./MockJourneyOceanFull.js"
import * as MockJourneyRolledShipment from "./MockJourneyRolledShipment.js"
import type { MockEvent } from "./Tradeflow.js"
import type { MockSpeed } from "./TradeflowRecord.js"

/** The `empty` scenario: a journey without events (the tradeflow is tracked, nothing is known yet). */
export const empty: Scenario = (input) =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    containers: input.containers,
    departure: MockJourneyOceanBasic.departureOf(input, now),
    arrival: MockJourneyOceanBasic.arrivalOf(input, now),
    events: []
  }))

/** Every scenario by name. */
export const scenarios: ReadonlyMap<string, Scenario> = new Map<string, Scenario>([
  [MockJourneyOceanBasic.name, MockJourneyOceanBasic.generate],
  [MockJourneyOceanFull.name, MockJourneyOceanFull.generate],
  [MockJourneyRolledShipment.name, MockJourneyRolledShipment.generate],
  [MockJourneyDelayedEta.name, MockJourneyDelayedEta.generate],
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
