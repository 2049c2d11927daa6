/**
 * The `ocean_full` mock scenario: the whole container cycle with a transshipment to a second
 * vessel. D is the departure, A the arrival (resolved as in `MockJourneyOceanBasic`), M the midpoint
 * D + ⌊(A − D) / 2⌋, T the transshipment port. In journey order:
 *
 * | Step | Where | Code | When | Actual | Vessel |
 * |---|---|---|---|---|---|
 * | 0 | port of loading | GE gate out empty | D − 3 days | yes | |
 * | 1 | port of loading | GN gate in full | D − 2 days | yes | |
 * | 2 | port of loading | AE loaded on vessel | D − 1 day | yes | |
 * | 3 | port of loading | VD vessel departure (vessel move) | D | yes | first |
 * | 4 | T | VA vessel arrival (vessel move) | M − 2 days | no | first |
 * | 5 | T | UV unloaded from vessel | M − 1 day | no | |
 * | 6 | T | AE loaded on vessel | M + 1 day | no | |
 * | 7 | T | VD vessel departure (vessel move) | M + 2 days | no | second |
 * | 8 | port of discharge | VA vessel arrival (each container, then the vessel move) | A | no | second |
 * | 9 | port of discharge | UV unloaded from vessel | A + 1 day | no | |
 * | 10 | port of discharge | GT gate out full | A + 2 days | no | |
 * | 11 | port of discharge | GR empty equipment returned | A + 7 days | no | |
 *
 * The first vessel is the tradeflow's own (its `vessel`, else its mock vessel); the second is
 * another mock vessel, named on the events it sails. Steps of a port that was not sent are left
 * out; the transshipment (steps 4 to 7) needs both ports. T is the hub of {@link hubs} (other than
 * both ports) that lengthens the great-circle route least, or one picked by the reference when the
 * directory does not know both ports.
 *
 * @module
 */
import { Effect, Option } from "effect"
import { fnv1a } from "./internal/vessel.js"
import type { Location } from "./Location.js"
import { Locations } from "./Locations.js"
import type { MockInput, MockJourney } from "./MockJourney.js"
import {
  afterArrival,
  day,
  eachContainer,
  fact,
  type JourneyArgs,
  mockVesselName,
  numberSteps,
  polSequence,
  resolve
} from "./MockJourneyOceanBasic.js"
import { distanceMetres } from "./Positions.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent } from "./Tradeflow.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** The scenario name. */
export const name = "ocean_full"

/** Transshipment hubs, in order of preference. */
export const hubs: ReadonlyArray<string> = [
  "SGSIN",
  "MYTPP",
  "MYPKG",
  "LKCMB",
  "AEJEA",
  "OMSLL",
  "EGPSD",
  "GRPIR",
  "MTMAR",
  "ESALG",
  "MAPTM",
  "ESVLC",
  "PABLB",
  "PAMIT",
  "JMKIN",
  "BSFPO",
  "KRPUS",
  "HKHKG",
  "TWKHH"
]

/** The transshipment port of a route (see the module notes). */
export const transshipmentPort = (
  pol: string,
  pod: string,
  reference: string
): Effect.Effect<string, StorageError, Locations> =>
  Effect.gen(function*() {
    const locations = yield* Locations
    const candidates: Array<Location> = []
    for (const code of hubs) {
      if (code === pol || code === pod) continue
      const found = yield* locations.lookup(code)
      if (Option.isSome(found)) candidates.push(found.value)
    }
    const from = yield* locations.lookup(pol)
    const to = yield* locations.lookup(pod)
    if (candidates.length === 0) return hubs.find((code) => code !== pol && code !== pod) ?? "SGSIN"
    if (Option.isNone(from) || Option.isNone(to)) return candidates[fnv1a(reference) % candidates.length]!.unlocode
    const detour = (h: Location) =>
      distanceMetres(from.value.coordinates, h.coordinates) + distanceMetres(h.coordinates, to.value.coordinates)
    return candidates.reduce((best, h) => detour(h) < detour(best) ? h : best).unlocode
  })

/** The journey's events for resolved instants, containers and transshipment port (pure). */
export const journey = (
  args: JourneyArgs & {
    readonly transshipment?: string | undefined
    /** The second vessel's name. */
    readonly vessel: string
  }
): ReadonlyArray<MockEvent> => {
  const { arrival: A, containers, departure: D, port_of_discharge: pod, port_of_loading: pol, vessel } = args
  const ts = pol !== undefined && pod !== undefined ? args.transshipment : undefined
  const M = D + Math.floor((A - D) / 2)
  const second = ts === undefined ? undefined : vessel
  return numberSteps([
    ...(pol === undefined ? [] : [
      ...polSequence.map(([code, offset]) => eachContainer(containers, code, pol, D + offset, true)),
      [fact("VD", null, pol, D, true)]
    ]),
    ...(ts === undefined ? [] : [
      [fact("VA", null, ts, M - 2 * day, false)],
      eachContainer(containers, "UV", ts, M - day, false),
      eachContainer(containers, "AE", ts, M + day, false),
      [fact("VD", null, ts, M + 2 * day, false, vessel)]
    ]),
    ...(pod === undefined ? [] : [
      [...eachContainer(containers, "VA", pod, A, false), fact("VA", null, pod, A, false, second)],
      ...afterArrival(containers, pod, A)
    ])
  ])
}

/** Generates the `ocean_full` journey. */
export const generate = (input: MockInput): Effect.Effect<MockJourney, StorageError, TradeflowStore | Locations> =>
  Effect.gen(function*() {
    const resolved = yield* resolve(input)
    const pol = input.port_of_loading
    const pod = input.port_of_discharge
    const transshipment = pol !== undefined && pod !== undefined
      ? yield* transshipmentPort(pol, pod, input.reference)
      : undefined
    const events = journey({
      ...resolved,
      port_of_loading: pol,
      port_of_discharge: pod,
      transshipment,
      vessel: mockVesselName(input.reference, 1)
    })
    return { ...resolved, events }
  }).pipe(Effect.withSpan("MockJourneyOceanFull.generate"))
