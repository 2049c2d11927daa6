/**
 * Work accepted by the downstream API and committed to the durable queue before the 202.
 *
 * @module
 */
import { Schema } from "effect"
import { Environment } from "./Environment.js"
import { RecordGroup } from "./TradeflowRecord.js"

/** Upsert the tradeflows of a validated request, grouped by reference in request order. */
export const UpsertJob = Schema.TaggedStruct("Upsert", {
  groups: Schema.Array(RecordGroup)
})

/** Deactivate (`hard: false`) or delete one tradeflow, or every one (`reference: null`). */
export const DeleteJob = Schema.TaggedStruct("Delete", {
  reference: Schema.NullOr(Schema.String),
  hard: Schema.Boolean
})

/**
 * Render the vessel positions of a tradeflow's voyage that are due (LOCATION_UPDATE), queued by
 * the `Scheduler`. Processing it twice renders nothing new.
 */
export const AdvanceJob = Schema.TaggedStruct("Advance", {
  reference: Schema.String
})

export const JobPayload = Schema.Union(UpsertJob, DeleteJob, AdvanceJob)
export type JobPayload = typeof JobPayload.Type

/** A job as it is enqueued. */
export const NewJob = Schema.Struct({
  organisation_id: Schema.String,
  environment: Environment,
  payload: JobPayload,
  received_at: Schema.Number
})
export type NewJob = typeof NewJob.Type

/** A job as it is read back from the queue; `id` orders the queue. */
export const Job = Schema.Struct({
  id: Schema.Number,
  ...NewJob.fields
})
export type Job = typeof Job.Type

/**
 * What a processed job reports back: an upsert the number of groups, a delete how many tradeflows
 * it affected, an advance how many positions it rendered.
 */
export const JobResult = Schema.Struct({
  count: Schema.Number
})
export type JobResult = typeof JobResult.Type

/** The idempotency record stored with a job (DECISIONS.md §3). */
export interface Idempotency {
  readonly key: string
  readonly request_hash: string
  /** The JSON body of the first answer, replayed for a repeat. */
  readonly response: string
}

/** One job to enqueue, with its idempotency record if the request carried a key. */
export interface Enqueue {
  readonly job: NewJob
  readonly idempotency?: Idempotency
}

/** The outcome of an enqueue. */
export type EnqueueOutcome =
  | { readonly _tag: "Enqueued"; readonly id: number }
  | { readonly _tag: "Replayed"; readonly response: string }
  | { readonly _tag: "KeyReused" }
