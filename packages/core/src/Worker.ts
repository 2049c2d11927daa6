/**
 * Service: the processing worker. It processes queued jobs in queue order, so per organisation
 * in the order they were accepted, and commits each job atomically.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { JobOutcome } from "./JobQueue.js"
import type { StorageError } from "./StorageError.js"

/** @since 0.1.0 */
export class Worker extends Context.Tag("@tradeflow/core/Worker")<Worker, {
  /** Tells the worker that a job was queued. */
  readonly wake: Effect.Effect<void>
  /** Waits until a job has ended. */
  readonly await: (jobId: number) => Effect.Effect<JobOutcome, StorageError>
  /** Processes every pending job, then returns. */
  readonly drain: Effect.Effect<void, StorageError>
}>() {}
