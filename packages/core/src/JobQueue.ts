/**
 * Port: the durable queue between the downstream API and the processing worker.
 *
 * `enqueue` returns only once the job is durably committed; that is what makes a 202 safe.
 *
 * @module
 */
import { Context, Effect, type Option, type Stream } from "effect"
import type { Environment } from "./Environment.js"
import type { Enqueue, EnqueueOutcome, Idempotency, Job, JobResult, NewJob } from "./Job.js"
import type { StorageError } from "./StorageError.js"

/** A job leased to a worker; `attempt` fences its completion (see `TradeflowStore.commit`). */
export interface ClaimedJob extends Job {
  readonly attempt: number
  /**
   * The size of its stored payload in bytes (`JobSummary.payload_bytes`), where the queue knows it;
   * without it, the worker cuts a claim's commits by job count and rendered size alone.
   */
  readonly payload_bytes?: number
}

/** A job a claim marked dead instead of claiming it again. */
export interface DeadJob {
  readonly id: number
  readonly organisation_id: string
  /** How often it was claimed. */
  readonly attempt: number
  /** The last failure recorded for it, if any. */
  readonly error: string | null
}

/** What a claim answers: the jobs it leased, and the ones it marked dead (each in ascending id). */
export interface Claim {
  readonly jobs: ReadonlyArray<ClaimedJob>
  readonly dead: ReadonlyArray<DeadJob>
}

/** The states of an unfinished job the console lists. */
export type JobState = "pending" | "dead"

/** A job as the console lists it: what it is and how it fared, never its payload. */
export interface JobSummary {
  readonly id: number
  readonly organisation_id: string
  readonly environment: Environment
  /** The payload's tag: `Upsert`, `Delete` or `Advance`. */
  readonly kind: string
  /** The size of the stored payload, in bytes (UTF-8 JSON). */
  readonly payload_bytes: number
  readonly received_at: number
  /** How often it was claimed (0: never). */
  readonly attempt: number
  /** The last failure recorded for it; for a dead job, why it died. */
  readonly error: string | null
}

/** The queue's backlog: what metrics show of it. */
export interface JobBacklog {
  /** Jobs pending (claimed or not). */
  readonly pending: number
  /** When the first pending job in queue order was accepted (epoch ms); null when none is pending. */
  readonly oldest_received_at: number | null
  /** Per organisation with pending jobs, how many it has (in no particular order). */
  readonly organisations: ReadonlyArray<number>
}

/** What {@link JobQueue} `claim` leases. */
export interface ClaimOptions {
  readonly worker: string
  /** How many organisations' oldest jobs to claim at most. */
  readonly limit: number
  readonly leaseMillis: number
  /** How often a job may be claimed (default: no limit). */
  readonly maxAttempts?: number
  /** The consecutive jobs claimed with an organisation's oldest (default: none). */
  readonly follow?: {
    /** Jobs per organisation in all, the oldest included. */
    readonly jobs: number
    /** Payload bytes per organisation in all; the oldest job is claimed whatever its size. */
    readonly bytes: number
  }
}

/** How a retry went. */
export type RetryOutcome = "retried" | "not-found" | "not-dead"

/** How a job ended. */
export type JobOutcome =
  | { readonly _tag: "Done"; readonly result: JobResult }
  | { readonly _tag: "Failed"; readonly error: string }

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
  /** The backlog: how many jobs are pending, since when, and how they spread over organisations. */
  readonly backlog: Effect.Effect<JobBacklog, StorageError>
  /**
   * Leases work to `worker`: for up to `limit` organisations, the organisation's OLDEST pending
   * job, unless another worker holds a live lease on it. Only an organisation's oldest pending job
   * is ever claimable, so an organisation's jobs run one at a time, in queue order, whichever
   * process runs them. Each claim increments the job's `attempt` and leases it until
   * now + `leaseMillis`; a job whose lease ran out is claimable again (by anyone) with the next
   * attempt. Claims are atomic across processes sharing the database.
   *
   * - The attempt is counted (committed) before the job's payload is read, so a job that crashes
   *   the process, even while it is loaded, has used up an attempt.
   * - A job claimed `maxAttempts` times already (default: no limit) is not claimed again: the
   *   claim marks it dead (it never runs again unless `retry`), answers it in `dead`, and the
   *   organisation's next job takes its place.
   * - No job of an organisation is claimed while another job of it holds a live lease.
   * - A job that was claimed before (a crash, a lost lease, a failure, a release) is claimed
   *   alone: a job that crashes its process only takes its own attempts with it.
   * - With `follow`, an organisation whose oldest job is claimed for the first time also has the
   *   jobs queued right after it claimed with it, in queue order, up to the first one that was
   *   claimed before: at most `follow.jobs` jobs of the organisation in all, and no follower that
   *   would take their payloads (`JobSummary.payload_bytes`, the oldest's included) past
   *   `follow.bytes`. Followers are leased like the oldest job but answered at attempt 0: no
   *   attempt is counted for them (a crash while they are held costs the oldest job an attempt,
   *   and each of them its own once it is its organisation's oldest), so a crash costs no more
   *   attempts than without them. A worker runs them after the oldest, in order (see
   *   `TradeflowStore.commitAll`), fenced at attempt 0.
   */
  readonly claim: (options: ClaimOptions) => Effect.Effect<Claim, StorageError>
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
   * Marks a job that cannot be processed dead, with `error` (its outcome is `Failed`; it runs
   * again only on `retry`). With `attempt`, only if the job is still pending at that attempt
   * (fenced like a commit). Answers whether it ended the job.
   */
  readonly fail: (id: number, error: string, attempt?: number) => Effect.Effect<boolean, StorageError>
  /**
   * Records why an attempt failed without ending the job: it stays leased until its lease runs
   * out, then it is claimed again (and the error shows in `list`). Only if the job is still pending
   * at that attempt. Answers whether it recorded the error.
   */
  readonly recordFailure: (id: number, attempt: number, error: string) => Effect.Effect<boolean, StorageError>
  /** The organisation's jobs in this state, in queue order (ascending id), at most `limit`. */
  readonly list: (options: {
    readonly organisation_id: string
    readonly state: JobState
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<JobSummary>, StorageError>
  /**
   * Makes a dead job pending again with no attempt counted and no error. It keeps its place in the
   * queue (its id), so it runs before the organisation's jobs queued after it that are still
   * pending. Signals `wakeups` when it retried a job.
   */
  readonly retry: (id: number) => Effect.Effect<RetryOutcome, StorageError>
  /** The organisation of a job (pending, done or dead), if it is still stored. */
  readonly organisationOf: (id: number) => Effect.Effect<Option.Option<string>, StorageError>
  /**
   * Signals that work may be waiting: an element after jobs were enqueued (by this process or,
   * where the adapter can tell, another one sharing the database). At most one element per
   * committed enqueue; consumers still poll as a fallback.
   */
  readonly wakeups: Stream.Stream<void, StorageError>
}>() {}

/** The error a claim gives a dead job that recorded no failure of its own (each attempt crashed or lost its lease). */
export const attemptLimitReached = (maxAttempts: number): string =>
  `the attempt limit (${maxAttempts}) was reached: no attempt finished (the process stopped, or lost the lease, each time)`

/** `maxAttempts` of a claim as a positive integer within a 32-bit column (no limit: the largest). */
export const attemptLimit = (maxAttempts: number | undefined): number =>
  maxAttempts === undefined || !(maxAttempts < 2_147_483_647) ? 2_147_483_647 : Math.max(1, Math.floor(maxAttempts))

/** A queue from everything but `enqueue`, which is derived: `enqueueAll` of one entry. */
export const withEnqueue = (queue: Omit<JobQueue["Type"], "enqueue">): JobQueue["Type"] => ({
  ...queue,
  enqueue: (job, idempotency) =>
    Effect.map(
      queue.enqueueAll([idempotency === undefined ? { job } : { job, idempotency }]),
      (outcomes) => outcomes[0]!
    )
})
