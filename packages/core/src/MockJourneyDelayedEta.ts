/**
 * The `delayed_eta` mock scenario: the arrival is postponed twice before the vessel arrives. D is
 * the departure, A the arrival (resolved as in `MockJourneyOceanBasic`): the arrival sent is the final one.
 * In journey order:
 *
 * | Step | Where | Code | When | Actual |
 * |---|---|---|---|---|
 * | 0 | port of loading | GE gate out empty | D − 3 days | yes |
 * | 1 | port of loading | GN gate in full | D − 2 days | yes |
 * | 2 | port of loading | AE loaded on vessel | D − 1 day | yes |
 * | 3 | port of loading | VD vessel departure (vessel move) | D | yes |
 * | 4 | port of discharge | VA vessel arrival (each container, then the vessel move): first ETA | A − 5 days | no |
 * | 5 | port of discharge | the same, postponed | A − 2 days | no |
 * | 6 | port of discharge | the same, postponed again | A | no |
 * | 7 | port of discharge | UV unloaded from vessel | A + 1 day | no |
 * | 8 | port of discharge | GT gate out full | A + 2 days | no |
 * | 9 | port of discharge | GR empty equipment returned | A + 7 days | no |
 *
 * Each postponement is a new prediction of the arrival: a SHIPMENT_CHANGE, a CONTAINER_MILESTONE
 * per container, and one more entry in their predicted-date `history`. Events at a port that was
 * not sent are left out.
 *
 * @module
 */
import { Effect } from "effect"
import type { MockInput, MockJourney } from "./MockJourney.js"
import {
  afterArrival,
  day,
  eachContainer,
  fact,
  type JourneyArgs,
  numberSteps,
  polSequence,
  resolve
} from "./MockJourneyOceanBasic.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent } from "./Tradeflow.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** The scenario name. */
export const name = "delayed_eta"

/** The predicted arrivals, as offsets from the final one: the first ETA and the two postponements. */
export const etaOffsets: ReadonlyArray<number> = [-5 * day, -2 * day, 0]

/** The journey's events for resolved instants and containers (pure). */
export const journey = (args: JourneyArgs): ReadonlyArray<MockEvent> => {
  const { arrival: A, containers, departure: D, port_of_discharge: pod, port_of_loading: pol } = args
  return numberSteps([
    ...(pol === undefined ? [] : [
      ...polSequence.map(([code, offset]) => eachContainer(containers, code, pol, D + offset, true)),
      [fact("VD", null, pol, D, true)]
    ]),
    ...(pod === undefined ? [] : [
      ...etaOffsets.map((
        offset
      ) => [...eachContainer(containers, "VA", pod, A + offset, false), fact("VA", null, pod, A + offset, false)]),
      ...afterArrival(containers, pod, A)
    ])
  ])
}

/** Generates the `delayed_eta` journey. */
export const generate = (input: MockInput): Effect.Effect<MockJourney, StorageError, TradeflowStore> =>
  Effect.gen(function*() {
    const resolved = yield* resolve(input)
    const events = journey({
      ...resolved,
      port_of_loading: input.port_of_loading,
      port_of_discharge: input.port_of_discharge
    })
    return { ...resolved, events }
  }).pipe(Effect.withSpan("MockJourneyDelayedEta.generate"))
