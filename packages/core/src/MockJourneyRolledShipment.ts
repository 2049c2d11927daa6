/**
 * The `rolled_shipment` mock scenario: the cargo was booked on an earlier vessel and rolled to the
 * tradeflow's own vessel, a week later. D is the departure, A the arrival (resolved as in
 * `MockJourneyOceanBasic`): the dates sent are those of the vessel the cargo finally sails on. In journey order:
 *
 * | Step | Where | Code | When | Actual | Vessel |
 * |---|---|---|---|---|---|
 * | 0 | port of loading | GE gate out empty | D − 10 days | yes | |
 * | 1 | port of loading | GN gate in full | D − 9 days | yes | |
 * | 2 | both ports | booked: VA of each container and the vessel moves VD, VA | VD at D − 7 days, VA at A − 7 days | no | first |
 * | 3 | both ports | rolled: the same events moved | VD at D, VA at A | no | the tradeflow's |
 * | 4 | port of loading | AE loaded on vessel | D − 1 day | yes | |
 * | 5 | port of loading | VD vessel departure (vessel move) | D | yes | the tradeflow's |
 * | 6 | port of discharge | UV unloaded from vessel | A + 1 day | no | |
 * | 7 | port of discharge | GT gate out full | A + 2 days | no | |
 * | 8 | port of discharge | GR empty equipment returned | A + 7 days | no | |
 *
 * The roll (step 3) is a new prediction of the departure and of the arrival: the predicted-date
 * `history` of both shows the first vessel's date and the later one, and each renders a
 * SHIPMENT_CHANGE naming the later vessel. The first vessel is another mock vessel, named on the
 * events it was to sail. Events at a port that was not sent are left out.
 *
 * @module
 */
import { Effect } from "effect"
import type { MockInput, MockJourney } from "./MockJourney.js"
import {
  afterArrival,
  day,
  eachContainer,
  type Fact,
  fact,
  type JourneyArgs,
  mockVesselName,
  numberSteps,
  resolve
} from "./MockJourneyOceanBasic.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent } from "./Tradeflow.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** The scenario name. */
export const name = "rolled_shipment"

/** How much later the cargo sails than first booked. */
export const roll = 7 * day

/** The journey's events for resolved instants and containers (pure). */
export const journey = (
  args: JourneyArgs & {
    /** The name of the vessel the cargo was first booked on. */
    readonly vessel: string
  }
): ReadonlyArray<MockEvent> => {
  const { arrival: A, containers, departure: D, port_of_discharge: pod, port_of_loading: pol } = args
  const booking = (shift: number, vessel?: string): ReadonlyArray<Fact> => [
    ...(pod === undefined ? [] : eachContainer(containers, "VA", pod, A - shift, false)),
    ...(pol === undefined ? [] : [fact("VD", null, pol, D - shift, false, vessel)]),
    ...(pod === undefined ? [] : [fact("VA", null, pod, A - shift, false, vessel)])
  ]
  return numberSteps([
    ...(pol === undefined ? [] : [
      eachContainer(containers, "GE", pol, D - 10 * day, true),
      eachContainer(containers, "GN", pol, D - 9 * day, true)
    ]),
    booking(roll, args.vessel),
    booking(0),
    ...(pol === undefined ? [] : [
      eachContainer(containers, "AE", pol, D - day, true),
      [fact("VD", null, pol, D, true)]
    ]),
    ...(pod === undefined ? [] : [
      ...afterArrival(containers, pod, A)
    ])
  ])
}

/** Generates the `rolled_shipment` journey. */
export const generate = (input: MockInput): Effect.Effect<MockJourney, StorageError, TradeflowStore> =>
  Effect.gen(function*() {
    const resolved = yield* resolve(input)
    const events = journey({
      ...resolved,
      port_of_loading: input.port_of_loading,
      port_of_discharge: input.port_of_discharge,
      vessel: mockVesselName(input.reference, 1)
    })
    return { ...resolved, events }
  }).pipe(Effect.withSpan("MockJourneyRolledShipment.generate"))
