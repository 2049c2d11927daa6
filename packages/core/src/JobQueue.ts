/**
 * Port: the durable queue between the downstream API and the processing worker.
 *
 * `enqueue` returns only once the job is durably committed; that is what makes a 202 safe.
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Option } from "effect"
import type { EnqueueOutcome, Idempotency, Job, JobResult, NewJob } from "./Job.js"
import type { StorageError } from "./StorageError.js"

/** How a job ended. */
export type JobOutcome =
  | { readonly _tag: "Done"; readonly result: JobResult }
  | { readonly _tag: "Failed"; readonly error: string }

/** @since 0.1.0 */
export class JobQueue extends Context.Tag("@tradeflow/core/JobQueue")<JobQueue, {
  /**
   * Commits a job. With an idempotency record, atomically: a key already stored for the
   * organisation with the same `request_hash` answers `Replayed` (nothing is queued), with another
   * hash `KeyReused`; a new key is stored with the job.
   */
  readonly enqueue: (job: NewJob, idempotency?: Idempotency) => Effect.Effect<EnqueueOutcome, StorageError>
  /** Unprocessed jobs in queue order (ascending id), at most `limit`. */
  readonly pending: (limit: number) => Effect.Effect<ReadonlyArray<Job>, StorageError>
  /** How a job ended; none while it is pending. */
  readonly outcome: (id: number) => Effect.Effect<Option.Option<JobOutcome>, StorageError>
  /** Ends a job that cannot be processed (it is not retried). */
  readonly fail: (id: number, error: string) => Effect.Effect<void, StorageError>
}>() {}
