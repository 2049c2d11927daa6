/**
 * Port: tradeflow state, and the atomic commit of a processed job.
 *
 * @module
 */
import { Context, type Effect, type Option } from "effect"
import type { Outbox } from "./Delivery.js"
import type { JobResult } from "./Job.js"
import type { StorageError } from "./StorageError.js"
import type { NewMessage } from "./StoredMessage.js"
import type { RawEvent } from "./TrackingStore.js"
import type { Tradeflow } from "./Tradeflow.js"

/** Everything one processed job changes, committed at once. */
export interface Commit {
  readonly job_id: number
  /**
   * The attempt the job was claimed at: the commit applies only while the job is pending at this
   * attempt (a worker whose lease ran out and whose job was claimed again writes nothing).
   * Without it, any pending job commits (single-process use, tests).
   */
  readonly attempt?: number
  readonly organisation_id: string
  /** Tradeflows to insert or replace (whole state). */
  readonly upserts: ReadonlyArray<Tradeflow>
  /**
   * References deleted permanently, with their messages and their messages' deliveries (and log),
   * their tracked targets and raw events.
   */
  readonly deletes: ReadonlyArray<string>
  /**
   * Messages to append, in this order; each gets the organisation's next sequence number. A
   * message whose hash the organisation already has is skipped.
   */
  readonly messages: ReadonlyArray<NewMessage>
  readonly result: JobResult
  /**
   * Raw events of tracking sources merged by this commit, kept as received; a version the
   * organisation already keeps (same tradeflow, source, event id and update time) is not written again.
   */
  readonly raw_events?: ReadonlyArray<RawEvent>
  /** The webhook deliveries of the inserted messages (see `Delivery.plan`), written in the same transaction. */
  readonly outbox?: Outbox
}

/** How much a stored tradeflow holds, as the stored caps count it. */
export interface TradeflowSize {
  readonly containers: number
  /** Imported and mock events. */
  readonly events: number
}

/** A tradeflow found by {@link TradeflowStore} `lookup`: its reference and the instants searches order by. */
export interface Candidate {
  readonly reference: string
  readonly created_at: number
  readonly updated_at: number
}

export class TradeflowStore extends Context.Tag("@tradeflow/core/TradeflowStore")<TradeflowStore, {
  readonly get: (organisationId: string, reference: string) => Effect.Effect<Option.Option<Tradeflow>, StorageError>
  /** The named tradeflows that exist (the others are left out), by reference: one lookup for many. */
  readonly getMany: (
    organisationId: string,
    references: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, Tradeflow>, StorageError>
  /** Every tradeflow of the organisation (active or not), by reference. */
  readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<Tradeflow>, StorageError>
  /**
   * The sizes of the named tradeflows that exist (the others are left out), by reference, read
   * without decoding a document: what the ingest checks the stored caps against.
   */
  readonly sizes: (
    organisationId: string,
    references: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, TradeflowSize>, StorageError>
  /**
   * The organisation's tradeflows (active or not) having any of these keys (`TradeflowKey`), each
   * once, in no particular order: read from an index kept with every write, no document decoded.
   */
  readonly lookup: (
    organisationId: string,
    keys: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Candidate>, StorageError>
  /**
   * Which of these container numbers and event keys (`TradeflowMerge.eventKey`) the tradeflow
   * holds (none when it does not exist), read without decoding its document: what the ingest
   * counts a request's new containers and events with near the stored caps.
   */
  readonly held: (
    organisationId: string,
    reference: string,
    identities: { readonly containers: ReadonlyArray<string>; readonly events: ReadonlyArray<string> }
  ) => Effect.Effect<
    { readonly containers: ReadonlyArray<string>; readonly events: ReadonlyArray<string> },
    StorageError
  >
  /** Distinct container numbers of the organisation's tradeflows, sorted. */
  readonly containers: (organisationId: string) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * The tradeflows whose `next_position_at` is at or before `now` (epoch ms), at most `limit`:
   * voyages due a LOCATION_UPDATE or a mock step. Round-robin across organisations: every
   * organisation's most overdue tradeflow first (soonest first among them), then every
   * organisation's second, and so on; so one organisation with many overdue tradeflows never takes
   * the turn of another's.
   */
  readonly due: (now: number, limit: number) => Effect.Effect<
    ReadonlyArray<{ readonly organisation_id: string; readonly reference: string }>,
    StorageError
  >
  /**
   * Applies a commit and marks its job done with `result`, all in one transaction. A job that is
   * no longer pending (or, with `attempt`, no longer at that attempt) is left as it is and nothing
   * is written (answers false). Messages get their sequence numbers inside the transaction, and an
   * organisation's sequence numbers become visible in ascending order: a reader never sees a
   * number while a lower one of the same organisation can still appear.
   */
  readonly commit: (commit: Commit) => Effect.Effect<boolean, StorageError>
  /**
   * Applies commits of one organisation's consecutive jobs, in order, as `commit` applies each,
   * all in one transaction: each job is done with its result, each message of a later commit
   * numbered after those of the earlier ones, each commit's deliveries planned from the messages
   * it inserted. All or nothing: when any job is no longer pending at its attempt, nothing is
   * written (answers false).
   */
  readonly commitAll: (commits: ReadonlyArray<Commit>) => Effect.Effect<boolean, StorageError>
}>() {}

/** A store from everything but `commit`, which is derived: `commitAll` of one commit. */
export const withCommit = (store: Omit<TradeflowStore["Type"], "commit">): TradeflowStore["Type"] => ({
  ...store,
  commit: (commit) => store.commitAll([commit])
})
