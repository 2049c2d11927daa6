/**
 * Port: the durable queue between the downstream API and the processing worker.
 *
 * `enqueue` returns only once the job is durably committed; that is what makes a 202 safe.
 *
 * @since 0.1.0
 */
import { Context, Effect, type Option, type Stream } from "effect"
import type { Enqueue, EnqueueOutcome, Idempotency, Job, JobResult, NewJob } from "./Job.js"
import type { StorageError } from "./StorageError.js"

/** A job leased to a worker; `attempt` fences its completion (see `TradeflowStore.commit`). */
export interface ClaimedJob extends Job {
  readonly attempt: number
}

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
  /**
   * Commits several jobs in ONE transaction (a group commit): each entry as `enqueue` would, in
   * order, so a later entry sees the idempotency keys of earlier ones. All or nothing; outcomes in
   * entry order.
   */
  readonly enqueueAll: (entries: ReadonlyArray<Enqueue>) => Effect.Effect<ReadonlyArray<EnqueueOutcome>, StorageError>
  /** Unprocessed jobs in queue order (ascending id), at most `limit` (claimed or not). */
  readonly pending: (limit: number) => Effect.Effect<ReadonlyArray<Job>, StorageError>
  /**
   * Leases work to `worker`: for up to `limit` organisations, the organisation's OLDEST pending
   * job, unless another worker holds a live lease on it. Only an organisation's oldest pending job
   * is ever claimable, so an organisation's jobs run one at a time, in queue order, whichever
   * process runs them. Each claim increments the job's `attempt` and leases it until
   * now + `leaseMillis`; a job whose lease ran out is claimable again (by anyone) with the next
   * attempt. Claims are atomic across processes sharing the database. Result in ascending id.
   */
  readonly claim: (options: {
    readonly worker: string
    readonly limit: number
    readonly leaseMillis: number
  }) => Effect.Effect<ReadonlyArray<ClaimedJob>, StorageError>
  /**
   * Extends the leases `worker` still holds on these jobs (at this attempt) to now + `leaseMillis`;
   * `leaseMillis: 0` releases them (claimable again at once, with the next attempt).
   */
  readonly heartbeat: (options: {
    readonly worker: string
    readonly jobs: ReadonlyArray<{ readonly id: number; readonly attempt: number }>
    readonly leaseMillis: number
  }) => Effect.Effect<void, StorageError>
  /** How a job ended; none while it is pending. */
  readonly outcome: (id: number) => Effect.Effect<Option.Option<JobOutcome>, StorageError>
  /**
   * Ends a job that cannot be processed (it is not retried). With `attempt`, only if the job is
   * still pending at that attempt (fenced like a commit). Answers whether it ended the job.
   */
  readonly fail: (id: number, error: string, attempt?: number) => Effect.Effect<boolean, StorageError>
  /**
   * Signals that work may be waiting: an element after jobs were enqueued (by this process or,
   * where the adapter can tell, another one sharing the database). At most one element per
   * committed enqueue; consumers still poll as a fallback.
   */
  readonly wakeups: Stream.Stream<void, StorageError>
}>() {}

/** A queue from everything but `enqueue`, which is derived: `enqueueAll` of one entry. */
export const withEnqueue = (queue: Omit<JobQueue["Type"], "enqueue">): JobQueue["Type"] => ({
  ...queue,
  enqueue: (job, idempotency) =>
    Effect.map(
      queue.enqueueAll([idempotency === undefined ? { job } : { job, idempotency }]),
      (outcomes) => outcomes[0]!
    )
})
