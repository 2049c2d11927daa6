/**
 * Work accepted by the downstream API and committed to the durable queue before the 202.
 *
 * @module
 */
import { Schema } from "effect"
import { Environment } from "./Environment.js"
import { TrackingEvent } from "./TrackingEvent.js"
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

/** An event of a fetched answer that could not be read (see `TrackingSource.MalformedEvent`). */
export const MalformedEvent = Schema.Struct({
  index: Schema.Number,
  event_id: Schema.NullOr(Schema.String),
  message: Schema.String
})

/** A fetch a source answered (see `TrackingSource.FetchResult`). */
export const Fetched = Schema.TaggedStruct("Fetched", {
  status: Schema.Literal("found", "not-found", "awaiting"),
  events: Schema.Array(TrackingEvent),
  malformed: Schema.Array(MalformedEvent),
  high_water: Schema.NullOr(Schema.Number)
})

/** A fetch that failed (see `TrackingSource`'s errors), or could not be made (`unknown_source`). */
export const FetchFailed = Schema.TaggedStruct("FetchFailed", {
  kind: Schema.Literal("unauthorized", "rate_limited", "transient", "malformed", "not_found", "unknown_source"),
  message: Schema.String,
  retry_after_millis: Schema.optional(Schema.Number)
})

/**
 * What a tracking source answered for one target of a tradeflow (fetched by the `Tracker`, or
 * pushed): merged into the tradeflow, the target's schedule moved on. Processing it twice
 * renders nothing new.
 */
export const TrackJob = Schema.TaggedStruct("Track", {
  reference: Schema.String,
  /** The target fetched; null for events pushed for the whole tradeflow. */
  target_id: Schema.NullOr(Schema.String),
  source: Schema.String,
  /** When the source was asked (or pushed), epoch ms. */
  checked_at: Schema.Number,
  outcome: Schema.Union(Fetched, FetchFailed)
})
export type TrackJob = typeof TrackJob.Type

export const JobPayload = Schema.Union(UpsertJob, DeleteJob, AdvanceJob, TrackJob)
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
 * it affected, an advance how many positions it rendered, a track how many messages it rendered.
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
