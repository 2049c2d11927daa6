/**
 * Port: tradeflow state, and the atomic commit of a processed job.
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Option } from "effect"
import type { JobResult } from "./Job.js"
import type { StorageError } from "./StorageError.js"
import type { NewMessage } from "./StoredMessage.js"
import type { Tradeflow } from "./Tradeflow.js"

/** Everything one processed job changes, committed at once. */
export interface Commit {
  readonly job_id: number
  readonly organisation_id: string
  /** Tradeflows to insert or replace (whole state). */
  readonly upserts: ReadonlyArray<Tradeflow>
  /** References deleted permanently, with their messages. */
  readonly deletes: ReadonlyArray<string>
  /**
   * Messages to append, in this order; each gets the organisation's next sequence number. A
   * message whose hash the organisation already has is skipped.
   */
  readonly messages: ReadonlyArray<NewMessage>
  readonly result: JobResult
}

/** @since 0.1.0 */
export class TradeflowStore extends Context.Tag("@tradeflow/core/TradeflowStore")<TradeflowStore, {
  readonly get: (organisationId: string, reference: string) => Effect.Effect<Option.Option<Tradeflow>, StorageError>
  /** Every tradeflow of the organisation (active or not), by reference. */
  readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<Tradeflow>, StorageError>
  /** Distinct container numbers of the organisation's tradeflows, sorted. */
  readonly containers: (organisationId: string) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Applies a commit and marks its job done with `result`, all in one transaction. A job that is
   * no longer pending is left as it is and nothing is written (answers false).
   */
  readonly commit: (commit: Commit) => Effect.Effect<boolean, StorageError>
}>() {}
