/**
 * Service: the processing worker. It claims queued jobs from the {@link JobQueue}, processes
 * them and commits each job atomically, fenced by the attempt it was claimed at.
 *
 * Only an organisation's oldest pending job is ever claimable, so an organisation's jobs run one
 * at a time and in the order they were accepted, whichever worker (or process) runs them. A
 * claimed job is leased to this worker: while it is processed, a heartbeat renews the lease
 * every `leaseMillis / 3`. A worker that dies stops renewing; once its lease runs out, any
 * worker claims the job again with the next attempt, and a late commit of the old attempt writes
 * nothing. A worker that is interrupted (a graceful shutdown) releases the leases of the jobs it
 * has not finished, so another worker or the next start takes them at once.
 *
 * Every claim counts an attempt, so a job that keeps crashing its process, or keeps failing to
 * commit, ends: once claimed `maxAttempts` times it is marked dead instead of claimed again, and
 * its organisation's later jobs go on. A storage error while a job is processed or committed (a
 * dropped connection, a busy database) is first retried within the same attempt, up to 4 times
 * over about 3 seconds while the lease is kept alive, so a passing outage never uses up a job's
 * attempts; only an error that outlasts those retries ends the attempt. A job whose processing raises a defect is dead at once.
 * Dead jobs are listed and retried through `JobQueue.list` / `JobQueue.retry` (the console).
 *
 * @module
 */
import {
  Cause,
  Context,
  Duration,
  Effect,
  Fiber,
  Layer,
  Option,
  PubSub,
  Queue,
  Ref,
  Schedule,
  type Scope,
  Stream
} from "effect"
import type { AutomationStore } from "./AutomationStore.js"
import { type ClaimedJob, type JobOutcome, JobQueue } from "./JobQueue.js"
import type { Locations } from "./Locations.js"
import { processJob } from "./Processor.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import { TradeflowStore } from "./TradeflowStore.js"

export class Worker extends Context.Tag("@tradeflow/core/Worker")<Worker, {
  /** Tells the worker that a job was queued. */
  readonly wake: Effect.Effect<void>
  /** Waits until a job has ended (by this worker or any other one sharing the storage). */
  readonly await: (jobId: number) => Effect.Effect<JobOutcome, StorageError>
  /**
   * Claims and processes jobs until nothing is claimable, then returns. Jobs leased by another
   * live worker are not claimable, so they may still be pending when `drain` returns; so may a
   * job whose commit failed with a storage error (it is claimed again once its lease runs out).
   */
  readonly drain: Effect.Effect<void, StorageError>
}>() {}

/** Options of the worker. */
export interface WorkerOptions {
  /** How often the queue is polled when nothing wakes the worker (default 1 second). */
  readonly pollInterval?: Duration.DurationInput
  /** Jobs claimed per round, at most one per organisation (default 100). */
  readonly batchSize?: number
  /** How long a claim leases a job; renewed every third of it while the job runs (default 10 seconds). */
  readonly leaseMillis?: number
  /** How many claimed jobs (all of different organisations) run at once (default 1). */
  readonly concurrency?: number
  /** false: no background fiber; jobs run only on `drain` (tests, or a host that drives processing itself). */
  readonly background?: boolean
  /**
   * How often a job may be claimed (default {@link defaultMaxAttempts}): a job that was claimed
   * this often without finishing (its process crashed, its lease ran out, or its commit failed)
   * is marked dead at its next claim instead of running again.
   */
  readonly maxAttempts?: number
  /**
   * The background fiber (and the scheduler's, see `Service.layer`) starts only once this effect
   * has completed: a server passes "the port listens", so health checks are answered before any
   * job runs.
   */
  readonly startAfter?: Effect.Effect<void>
}

/** The default attempt limit of a job. */
export const defaultMaxAttempts = 5

/** The longest failure text stored with a job. */
export const maxFailureLength = 2_000

const describe = (failure: unknown, depth: number): string => {
  if (typeof failure !== "object" || failure === null) return String(failure)
  const f = failure as {
    readonly _tag?: unknown
    readonly message?: unknown
    readonly operation?: unknown
    readonly cause?: unknown
  }
  const message = typeof f.message === "string" && f.message !== "" ? f.message : undefined
  const parts = typeof f._tag === "string" && (message === undefined || !(failure instanceof Error))
    ? [f.operation === undefined ? f._tag : `${f._tag} (${String(f.operation)})`]
    : []
  if (message !== undefined) parts.push(message)
  if (f.cause !== undefined && depth < 4 && (parts.length === 0 || typeof f._tag === "string")) {
    parts.push(describe(f.cause, depth + 1))
  }
  return parts.length === 0 ? String(failure) : parts.join(": ")
}

/**
 * A failure as stored with a job: its message (or tag and operation) and causes, without NUL characters
 * (no database keeps them), at most {@link maxFailureLength} characters.
 */
export const failureText = (failure: unknown): string => {
  const clean = describe(failure, 0).replace(/\u0000/g, "")
  return clean.length > maxFailureLength ? `${clean.slice(0, maxFailureLength - 1)}…` : clean
}

const logUnlessInterrupted = (message: string) => (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning(message, cause)

/**
 * Keeps `drain` running for the lifetime of the scope: at once, then after every element of
 * `signal` or `wakeups`, and at least every `pollInterval`. Failures are logged (prefixed with
 * `label`) and survived; a failed `wakeups` stream is subscribed again. Shared by the job worker
 * and the webhook delivery worker.
 */
export const background = (options: {
  readonly drain: Effect.Effect<void, unknown>
  readonly wakeups: Stream.Stream<void, unknown>
  readonly signal: Queue.Queue<void>
  readonly pollInterval: Duration.DurationInput
  readonly label: string
  /** The loops start only once this has completed (default: at once). */
  readonly startAfter?: Effect.Effect<void> | undefined
}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { drain, label, pollInterval, signal, wakeups } = options
    const started = options.startAfter ?? Effect.void
    yield* started.pipe(
      Effect.zipRight(wakeups.pipe(
        Stream.runForEach(() => Queue.offer(signal, undefined)),
        Effect.catchAllCause(logUnlessInterrupted(`${label}: wakeups stream failed, resubscribing`)),
        Effect.zipRight(Effect.sleep(pollInterval)),
        Effect.forever
      )),
      Effect.forkScoped
    )
    yield* started.pipe(
      Effect.zipRight(drain.pipe(
        Effect.catchAllCause(logUnlessInterrupted(`${label}: round failed, retrying`)),
        Effect.zipRight(Effect.raceFirst(Queue.take(signal), Effect.sleep(pollInterval))),
        Effect.forever
      )),
      Effect.forkScoped
    )
  })

/** Retries of a job's processing and commit within one attempt after a storage error: 4, backing off from 200 ms. */
const storageRetries = Schedule.exponential(Duration.millis(200)).pipe(Schedule.intersect(Schedule.recurs(4)))

/**
 * The worker over the storage ports; with `background` (default) it runs for the lifetime of the
 * layer. A scoped layer: its fibers are forked in the scope the host builds it in, and stop when
 * that scope closes (jobs in progress release their leases); nothing outlives it.
 */
export const layer = (
  options: WorkerOptions = {}
): Layer.Layer<Worker, never, JobQueue | TradeflowStore | AutomationStore | Locations | TrackingConfig> =>
  Layer.scoped(
    Worker,
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const store = yield* TradeflowStore
      const context = yield* Effect.context<TradeflowStore | AutomationStore | Locations | TrackingConfig>()
      const pollInterval = options.pollInterval ?? Duration.seconds(1)
      const batchSize = Math.max(1, options.batchSize ?? 100)
      const leaseMillis = Math.max(1, options.leaseMillis ?? 10_000)
      const concurrency = Math.max(1, options.concurrency ?? 1)
      const maxAttempts = Math.max(1, options.maxAttempts ?? defaultMaxAttempts)
      const worker = `worker-${globalThis.crypto.randomUUID()}`
      const signal = yield* Queue.sliding<void>(1)
      const ended = yield* PubSub.unbounded<number>()
      const lock = yield* Effect.makeSemaphore(1)

      const runJob = (job: ClaimedJob): Effect.Effect<void> =>
        processJob(job).pipe(
          Effect.flatMap((commit) => store.commit({ ...commit, attempt: job.attempt })),
          Effect.retry(storageRetries),
          Effect.provide(context),
          Effect.tap((committed) =>
            committed ? Effect.void : Effect.logWarning("worker: lease lost, commit refused", job.id, job.attempt)
          ),
          Effect.catchAllDefect((defect) =>
            Effect.logError("job failed, it is dead", job.id, defect).pipe(
              Effect.zipRight(queue.fail(job.id, failureText(defect), job.attempt))
            )
          ),
          Effect.zipRight(PubSub.publish(ended, job.id)),
          Effect.catchAll((error) =>
            Effect.logWarning(
              `worker: storage error, the job is claimed again once its lease runs out (attempt ${job.attempt} of ${maxAttempts})`,
              job.id,
              error
            ).pipe(
              Effect.zipRight(queue.recordFailure(job.id, job.attempt, failureText(error))),
              Effect.catchAll(() => Effect.void)
            )
          ),
          Effect.asVoid,
          Effect.withSpan("Worker.runJob", { attributes: { job: job.id, attempt: job.attempt } })
        )

      const runBatch = (jobs: ReadonlyArray<ClaimedJob>) =>
        Effect.gen(function*() {
          const running = yield* Ref.make(new Map(jobs.map((j) => [j.id, { id: j.id, attempt: j.attempt }] as const)))
          const heartbeat = yield* Effect.gen(function*() {
            const held = [...(yield* Ref.get(running)).values()]
            if (held.length > 0) yield* queue.heartbeat({ worker, jobs: held, leaseMillis })
          }).pipe(
            Effect.catchAll((error) => Effect.logWarning("worker: heartbeat failed", error)),
            Effect.delay(Duration.millis(leaseMillis / 3)),
            Effect.forever,
            Effect.fork
          )
          const release = Effect.flatMap(
            Ref.get(running),
            (held) =>
              held.size === 0 ? Effect.void : queue.heartbeat({ worker, jobs: [...held.values()], leaseMillis: 0 })
          ).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("worker: releasing leases failed; they run out instead", error)
            )
          )
          yield* Effect.forEach(jobs, (job) =>
            runJob(job).pipe(Effect.zipRight(Ref.update(running, (m) => {
              const next = new Map(m)
              next.delete(job.id)
              return next
            }))), { concurrency, discard: true }).pipe(
              Effect.ensuring(Fiber.interrupt(heartbeat)),
              Effect.onInterrupt(() => release)
            )
        })

      const drain: Effect.Effect<void, StorageError> = lock.withPermits(1)(Effect.gen(function*() {
        while (true) {
          const { dead, jobs } = yield* queue.claim({ worker, limit: batchSize, leaseMillis, maxAttempts })
          for (const job of dead) {
            yield* Effect.logError(
              `job ${job.id} of organisation ${job.organisation_id} is dead after ${job.attempt} attempts: ${
                job.error ?? ""
              }`
            )
            yield* PubSub.publish(ended, job.id)
          }
          if (jobs.length === 0 && dead.length === 0) return
          yield* runBatch(jobs)
        }
      })).pipe(Effect.withSpan("Worker.drain"))

      if (options.background ?? true) {
        yield* background({
          drain,
          wakeups: queue.wakeups,
          signal,
          pollInterval,
          label: "worker",
          startAfter: options.startAfter
        })
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
    })
  )
