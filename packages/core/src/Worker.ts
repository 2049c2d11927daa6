/**
 * Service: the processing worker. It processes queued jobs in queue order, so per organisation
 * in the order they were accepted, and commits each job atomically.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Layer, Option, PubSub, Queue } from "effect"
import type { Job } from "./Job.js"
import { JobQueue, type JobOutcome } from "./JobQueue.js"
import type { Locations } from "./Locations.js"
import { processJob } from "./Processor.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** @since 0.1.0 */
export class Worker extends Context.Tag("@tradeflow/core/Worker")<Worker, {
  /** Tells the worker that a job was queued. */
  readonly wake: Effect.Effect<void>
  /** Waits until a job has ended. */
  readonly await: (jobId: number) => Effect.Effect<JobOutcome, StorageError>
  /** Processes every pending job, then returns. */
  readonly drain: Effect.Effect<void, StorageError>
}>() {}

/** Options of the worker. */
export interface WorkerOptions {
  /** How often the queue is polled when nothing wakes the worker (default 1 second). */
  readonly pollInterval?: Duration.DurationInput
  /** Jobs read per round (default 100). */
  readonly batchSize?: number
  /** false: no background fiber; jobs run only on `drain` (tests, or a host that drives processing itself). */
  readonly background?: boolean
}

/** The worker over the storage ports; with `background` (default) it runs for the lifetime of the layer. */
export const layer = (
  options: WorkerOptions = {}
): Layer.Layer<Worker, never, JobQueue | TradeflowStore | Locations | TrackingConfig> =>
  Layer.scoped(Worker, Effect.gen(function*() {
    const queue = yield* JobQueue
    const store = yield* TradeflowStore
    const context = yield* Effect.context<TradeflowStore | Locations | TrackingConfig>()
    const pollInterval = options.pollInterval ?? Duration.seconds(1)
    const batchSize = options.batchSize ?? 100
    const signal = yield* Queue.sliding<void>(1)
    const ended = yield* PubSub.unbounded<number>()
    const lock = yield* Effect.makeSemaphore(1)

    const runJob = (job: Job) =>
      processJob(job).pipe(
        Effect.flatMap(store.commit),
        Effect.provide(context),
        Effect.catchAllDefect((defect) =>
          Effect.logError("job failed", job.id, defect).pipe(
            Effect.zipRight(queue.fail(job.id, defect instanceof Error ? defect.message : String(defect)))
          )
        ),
        Effect.zipRight(PubSub.publish(ended, job.id)),
        Effect.withSpan("Worker.runJob", { attributes: { job: job.id } })
      )

    const drain: Effect.Effect<void, StorageError> = lock.withPermits(1)(Effect.gen(function*() {
      while (true) {
        const jobs = yield* queue.pending(batchSize)
        if (jobs.length === 0) return
        for (const job of jobs) yield* runJob(job)
      }
    }))

    if (options.background ?? true) {
      yield* drain.pipe(
        Effect.catchAll((e) => Effect.logWarning("worker: storage unavailable, retrying", e)),
        Effect.zipRight(Effect.raceFirst(Queue.take(signal), Effect.sleep(pollInterval))),
        Effect.forever,
        Effect.forkScoped
      )
    }

    const awaitJob = (jobId: number): Effect.Effect<JobOutcome, StorageError> =>
      Effect.scoped(Effect.gen(function*() {
        const subscription = yield* PubSub.subscribe(ended)
        while (true) {
          const outcome = yield* queue.outcome(jobId)
          if (Option.isSome(outcome)) return outcome.value
          yield* Effect.raceFirst(subscription.take, Effect.sleep(pollInterval))
        }
      }))

    return Worker.of({
      wake: Queue.offer(signal, undefined).pipe(Effect.asVoid),
      await: awaitJob,
      drain
    })
  }))
