import { Effect, FastCheck as fc, Layer, Option, Schema } from "effect"
import { type ApiMessage, ApiMessageFromJson } from "../src/ApiMessage.js"
import type { Environment } from "../src/Environment.js"
import type { JobPayload } from "../src/Job.js"
import { JobQueue } from "../src/JobQueue.js"
import * as Locations from "../src/Locations.js"
import { MessageStore } from "../src/MessageStore.js"
import * as Processor from "../src/Processor.js"
import * as Storage from "../src/Storage.js"
import * as TrackingConfig from "../src/TrackingConfig.js"
import { TradeflowRecord } from "../src/TradeflowRecord.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import { isoDateTime, mockTracking, unlocode } from "../testing/index.js"

/** Memory storage, the built-in directory and tracking settings. */
export const layer = (settings: Partial<TrackingConfig.TrackingSettings> = {}) =>
  Layer.mergeAll(Storage.layerMemory, Locations.layerBuiltin, TrackingConfig.layer(settings))

export const org = "org-1"

/** Enqueues, processes and commits a job; returns the commit. */
export const run = (payload: JobPayload, environment: Environment = "uat", organisationId = org) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue
    const store = yield* TradeflowStore
    const job = { organisation_id: organisationId, environment, payload, received_at: 1_000 }
    const enqueued = yield* queue.enqueue(job)
    if (enqueued._tag !== "Enqueued") return yield* Effect.dieMessage("not enqueued")
    const commit = yield* Processor.processJob({ id: enqueued.id, ...job })
    const applied = yield* store.commit(commit)
    if (!applied) return yield* Effect.dieMessage("not committed")
    return commit
  })

/** Groups raw records by reference, in first-seen order. */
export const groups = (records: ReadonlyArray<unknown>) => {
  const decoded = records.map((r) => Schema.decodeUnknownSync(TradeflowRecord)(r))
  const byRef = new Map<string, Array<TradeflowRecord>>()
  for (const r of decoded) {
    const list = byRef.get(r.tradeflow_reference) ?? []
    list.push(r)
    byRef.set(r.tradeflow_reference, list)
  }
  return [...byRef].map(([tradeflow_reference, records]) => ({ tradeflow_reference, records }))
}

/** Posts raw records as one upsert job. */
export const post = (records: ReadonlyArray<unknown>, environment: Environment = "uat", organisationId = org) =>
  run({ _tag: "Upsert", groups: groups(records) }, environment, organisationId)

/** Every stored message of the organisation, oldest first, decoded. */
export const messages = (organisationId = org) =>
  Effect.gen(function*() {
    const store = yield* MessageStore
    const stored = yield* store.list({ organisation_id: organisationId, take: "oldest", limit: 100_000 })
    return stored.map((m) => ({ stored: m, message: Schema.decodeUnknownSync(ApiMessageFromJson)(m.body) }))
  })

/** The stored tradeflow. */
export const tradeflow = (reference: string, organisationId = org) =>
  Effect.flatMap(TradeflowStore, (s) => s.get(organisationId, reference)).pipe(Effect.map(Option.getOrThrow))

/** The BASIC_STATUS statuses of decoded messages. */
export const statuses = (ms: ReadonlyArray<{ readonly message: ApiMessage }>) =>
  ms.flatMap(({ message: m }) => m.type === "BASIC_STATUS" ? [m.payload.status] : [])

/** Two valid container numbers. */
export const C1 = "CSQU3054383"
export const C2 = "MSKU9070323"

const unlocodes = fc.oneof(unlocode, fc.constant("XXABC"))
const places = fc.oneof(unlocode, fc.constantFrom("XXABC", "Some depot"))
/**
 * Arbitrary raw records over a few references, containers, known and unknown UN/LOCODEs, free-text
 * places, mapped and unmapped event names, every scenario (and an unknown one) at several speeds
 * and both activity states.
 */
export const recordArb = fc.record({
  tradeflow_reference: fc.constantFrom("R1", "R2", "R3"),
  container_reference: fc.uniqueArray(fc.constantFrom(C1, C2, "TGHU8512390"), { maxLength: 2 }),
  booking_reference: fc.constantFrom("BK1", "BK2")
}).chain((base) =>
  fc.record({
    port_of_loading: unlocodes,
    port_of_discharge: unlocodes,
    estimated_time_of_departure: isoDateTime,
    actual_time_of_arrival: isoDateTime,
    vessel: fc.constantFrom("EVER GIVEN", "MSC OSCAR"),
    carrier_name: fc.constantFrom("Maersk", "MSC"),
    mock_tracking: fc.oneof(mockTracking, fc.constant({ scenario: "nope" })),
    active: fc.boolean(),
    events: fc.array(
      fc.record({
        message: fc.constantFrom("LOAD", "Vessel arrival", "DISC", "gate out", "Weird thing", "Customs hold", "DEPA"),
        container_reference: fc.constantFrom(C1, C2),
        location_name: places,
        event_date: isoDateTime,
        actual: fc.boolean()
      }, { requiredKeys: ["message"] }),
      { maxLength: 3 }
    )
  }, { requiredKeys: [] }).map((extra) => ({ ...base, ...extra }))
)
