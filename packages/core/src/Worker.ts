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
  Clock,
  Context,
  Duration,
  Effect,
  Exit,
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
import type { Automation } from "./Automation.js"
import { AutomationStore } from "./AutomationStore.js"
import type { Job } from "./Job.js"
import { type ClaimedJob, type JobOutcome, JobQueue } from "./JobQueue.js"
import type { Locations } from "./Locations.js"
import { processJob } from "./Processor.js"
import * as Readiness from "./Readiness.js"
import * as ServiceMetrics from "./ServiceMetrics.js"
import type { StorageError } from "./StorageError.js"
import type { TrackingConfig } from "./TrackingConfig.js"
import type { Tradeflow } from "./Tradeflow.js"
import { type Commit, TradeflowStore } from "./TradeflowStore.js"

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
  /** Organisations whose jobs are claimed per round (default 100). */
  readonly batchSize?: number
  /**
   * Consecutive jobs of one organisation committed together, in one transaction (default 64; 1: each
   * job in a transaction of its own). Each is processed against the state the ones before it left,
   * and each ends as it would alone (done with its result, or dead). A claim takes up to
   * `commitsPerClaim` such commits.
   */
  readonly jobsPerCommit?: number
  /**
   * The payload bytes of the jobs committed together, at most (default 1 MiB: about eight jobs of 500
   * records); a larger job runs alone. A commit rewrites every page it touches in the indexes keyed by
   * a hash (tradeflow keys, message hashes), so fewer, larger commits write fewer pages per record.
   */
  readonly bytesPerCommit?: number
  /**
   * The rendered text (message bodies and webhook documents, in UTF-16 code units: about bytes) of
   * the jobs committed together, at most (default 16 MiB); a part ends with the job that reaches it.
   * Payload bytes say little about what a job renders (an event for a tradeflow of many containers
   * renders a message per container), and a part's rendering is held in memory until it commits.
   */
  readonly renderedPerCommit?: number
  /**
   * Commits of an organisation's consecutive jobs taken in one claim (default 2): the claim leases
   * up to this many times `jobsPerCommit` jobs and `bytesPerCommit` bytes, and while one commit is
   * written the jobs of the next are processed (each commit starts once the one before it has
   * ended, and none starts after one failed).
   */
  readonly commitsPerClaim?: number
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
    yield* Readiness.background(
      label,
      started,
      drain.pipe(
        Effect.catchAllCause(logUnlessInterrupted(`${label}: round failed, retrying`)),
        Effect.zipRight(Effect.raceFirst(Queue.take(signal), Effect.sleep(pollInterval))),
        Effect.forever
      )
    )
  })

/**
 * Whether processing the job reads the organisation's state beyond the tradeflows it names (every
 * tradeflow for a Delete of all, the containers a mock journey may reuse): such a job runs only
 * after the jobs before it are committed.
 */
const readsOrganisation = (job: Job): boolean =>
  job.payload._tag === "Delete"
    ? job.payload.reference === null
    : job.payload._tag === "Upsert" && job.environment === "uat" &&
      job.payload.groups.some((g) => g.records.some((r) => r.mock_tracking !== undefined))

/** The rendered text of a commit (message bodies and webhook documents), in UTF-16 code units. */
const renderedLength = (commit: Commit): number => {
  let length = 0
  for (const message of commit.messages) length += message.body.length
  if (commit.outbox !== undefined) {
    for (const document of commit.outbox.documents.values()) {
      length += document.length
    }
  }
  return length
}

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
      const automations = yield* AutomationStore
      const context = yield* Effect.context<TradeflowStore | AutomationStore | Locations | TrackingConfig>()
      const pollInterval = options.pollInterval ?? Duration.seconds(1)
      const batchSize = Math.max(1, options.batchSize ?? 100)
      const leaseMillis = Math.max(1, options.leaseMillis ?? 10_000)
      const concurrency = Math.max(1, options.concurrency ?? 1)
      const maxAttempts = Math.max(1, options.maxAttempts ?? defaultMaxAttempts)
      const perCommit = {
        jobs: Math.max(1, options.jobsPerCommit ?? 64),
        bytes: Math.max(0, options.bytesPerCommit ?? 1_048_576),
        rendered: Math.max(0, options.renderedPerCommit ?? 16 * 1024 * 1024)
      }
      const commitsPerClaim = Math.max(1, options.commitsPerClaim ?? 2)
      const follow = { jobs: perCommit.jobs * commitsPerClaim, bytes: perCommit.bytes * commitsPerClaim }
      const worker = `worker-${globalThis.crypto.randomUUID()}`
      const signal = yield* Queue.sliding<void>(1)
      const ended = yield* PubSub.unbounded<number>()
      const lock = yield* Effect.makeSemaphore(1)

      const logFailure = (job: ClaimedJob, error: unknown) =>
        Effect.logWarning(
          `worker: storage error, the job is claimed again once its lease runs out (attempt ${job.attempt} of ${maxAttempts})`,
          job.id,
          error
        ).pipe(
          Effect.zipRight(queue.recordFailure(job.id, job.attempt, failureText(error))),
          Effect.catchAll(() => Effect.void)
        )

      /** Marks the job dead; answers whether it did (false: its lease is lost, or the storage failed). */
      const kill = (job: ClaimedJob, cause: Cause.Cause<unknown>): Effect.Effect<boolean> =>
        Effect.logError("job failed, it is dead", job.id, Cause.squash(cause)).pipe(
          Effect.zipRight(queue.fail(job.id, failureText(Cause.squash(cause)), job.attempt)),
          Effect.tap((killed) => killed ? PubSub.publish(ended, job.id) : Effect.void),
          Effect.catchAll((error) => Effect.as(logFailure(job, error), false))
        )

      const release = (jobs: ReadonlyArray<ClaimedJob>) =>
        jobs.length === 0 ? Effect.void : queue.heartbeat({
          worker,
          jobs: jobs.map((j) => ({ id: j.id, attempt: j.attempt })),
          leaseMillis: 0
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning("worker: releasing leases failed; they run out instead", error))
        )

      /**
       * Commits processed jobs together; answers whether the jobs after them may go on (`true`), or
       * must stop (`false`: the lease is lost, or the storage keeps failing). When the commit raises
       * a defect, the jobs are committed one by one to find the one that does: it is dead, and the
       * jobs after it (processed on top of its changes) are answered, to be processed again.
       */
      const flush = (
        done: ReadonlyArray<readonly [ClaimedJob, Commit]>,
        after: ReadonlyArray<ClaimedJob>
      ): Effect.Effect<boolean | ReadonlyArray<ClaimedJob>> =>
        Effect.gen(function*() {
          let alone = done.length === 1
          for (let from = 0; from < done.length;) {
            const part = alone ? done.slice(from, from + 1) : done
            const exit = yield* store.commitAll(part.map(([, commit]) => commit)).pipe(
              Effect.retry(storageRetries),
              Effect.exit
            )
            if (Exit.isSuccess(exit)) {
              if (!exit.value) {
                yield* Effect.logWarning(
                  "worker: lease lost, commit refused",
                  part.map(([job]) => [job.id, job.attempt])
                )
                return false
              }
              const now = yield* Clock.currentTimeMillis
              yield* Effect.forEach(
                part,
                ([job, commit]) =>
                  Effect.zipRight(
                    ServiceMetrics.recordCommit(job.received_at, now, commit.messages),
                    PubSub.publish(ended, job.id)
                  ),
                { discard: true }
              )
              from += part.length
              continue
            }
            const failure = Cause.failureOption(exit.cause)
            if (Option.isSome(failure)) {
              yield* Effect.forEach(done.slice(from), ([job]) => logFailure(job, failure.value), { discard: true })
              return false
            }
            if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
            if (!alone) {
              alone = true
              continue
            }
            if (!(yield* kill(part[0]![0], exit.cause))) return false
            return [...done.slice(from + 1).map(([job]) => job), ...after]
          }
          return true
        })

      /**
       * Runs consecutive jobs of one organisation: each processed against the state the ones before
       * it left (read once, then kept in memory), committed in parts of at most `jobsPerCommit` jobs
       * and `bytesPerCommit` bytes; a part is written while the next one is processed, and starts
       * once the part before it has committed. A job whose processing raises a defect is dead alone,
       * after the ones before it are committed; a storage error that outlasts the retries ends the
       * attempt of its job and of those after it.
       */
      const runJobs = (jobs: ReadonlyArray<ClaimedJob>): Effect.Effect<void> =>
        Effect.gen(function*() {
          const states = new Map<string, Option.Option<Tradeflow>>()
          const enabled = new Map<string, ReadonlyArray<Automation>>()
          const cached = Context.make(TradeflowStore, {
            ...store,
            get: (organisationId, reference) => {
              const known = states.get(reference)
              return known !== undefined ? Effect.succeed(known) : store.get(organisationId, reference)
            },
            getMany: (organisationId, references) =>
              Effect.gen(function*() {
                const unknown = references.filter((r) => !states.has(r))
                const read = unknown.length === 0 ? new Map() : yield* store.getMany(organisationId, unknown)
                for (const r of unknown) states.set(r, Option.fromNullable(read.get(r)))
                const found = new Map<string, Tradeflow>()
                for (const r of references) {
                  const t = states.get(r)
                  if (t !== undefined && Option.isSome(t)) found.set(r, t.value)
                }
                return found
              })
          }).pipe(
            Context.add(AutomationStore, {
              ...automations,
              enabled: (organisationId) => {
                const known = enabled.get(organisationId)
                return known !== undefined
                  ? Effect.succeed(known)
                  : Effect.tap(automations.enabled(organisationId), (a) => enabled.set(organisationId, a))
              }
            })
          )
          const processing = Context.merge(context, cached)
          const named = jobs.flatMap((job) =>
            job.payload._tag === "Upsert"
              ? job.payload.groups.map((g) => g.tradeflow_reference)
              : job.payload.reference === null
              ? []
              : [job.payload.reference]
          )
          if (jobs.length > 1 && named.length > 0) {
            yield* Context.get(cached, TradeflowStore).getMany(jobs[0]!.organisation_id, named).pipe(
              Effect.retry(storageRetries),
              Effect.catchAll(() => Effect.void)
            )
          }
          let done: Array<readonly [ClaimedJob, Commit]> = []
          let doneBytes = 0
          let doneRendered = 0
          let writing: Fiber.Fiber<boolean | ReadonlyArray<ClaimedJob>> | undefined
          const settle = Effect.suspend(() => {
            const fiber = writing
            writing = undefined
            return fiber === undefined ? Effect.succeed<boolean | ReadonlyArray<ClaimedJob>>(true) : Fiber.join(fiber)
          })
          const detach = () => {
            const part = done
            done = []
            doneBytes = 0
            doneRendered = 0
            return part
          }
          /** Commits the jobs processed so far and waits for it (and for the commit before them). */
          const commitNow = (after: ReadonlyArray<ClaimedJob>) =>
            Effect.flatMap(settle, (settled) => settled === true ? flush(detach(), after) : Effect.succeed(settled))
          const rerun = (flushed: boolean | ReadonlyArray<ClaimedJob>) =>
            typeof flushed === "boolean" ? Effect.void : runJobs(flushed)
          for (const [i, job] of jobs.entries()) {
            if ((done.length > 0 || writing !== undefined) && readsOrganisation(job)) {
              const flushed = yield* commitNow(jobs.slice(i))
              if (flushed !== true) return yield* rerun(flushed)
              states.clear()
            }
            const exit = yield* processJob(job).pipe(
              Effect.retry(storageRetries),
              Effect.provide(processing),
              Effect.exit
            )
            if (Exit.isSuccess(exit)) {
              const commit = { ...exit.value, attempt: job.attempt }
              done.push([job, commit])
              doneBytes += job.payload_bytes ?? 0
              doneRendered += renderedLength(commit)
              for (const reference of commit.deletes) states.set(reference, Option.none())
              for (const t of commit.upserts) states.set(t.reference, Option.some(t))
              const next = jobs[i + 1]
              if (
                next !== undefined && done.length < perCommit.jobs && doneRendered < perCommit.rendered &&
                doneBytes + (next.payload_bytes ?? 0) <= perCommit.bytes
              ) continue
              const settled = yield* settle
              if (settled !== true) return yield* rerun(settled)
              writing = yield* Effect.fork(flush(detach(), jobs.slice(i + 1)))
              continue
            }
            const flushed = yield* commitNow(jobs.slice(i))
            if (flushed !== true) return yield* rerun(flushed)
            const failure = Cause.failureOption(exit.cause)
            if (Option.isSome(failure)) return yield* logFailure(job, failure.value)
            if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
            if (!(yield* kill(job, exit.cause))) return
          }
          yield* rerun(yield* settle)
        }).pipe(
          Effect.withSpan("Worker.runJobs", {
            attributes: { organisation: jobs[0]?.organisation_id, jobs: jobs.length, first: jobs[0]?.id }
          })
        )

      const runBatch = (jobs: ReadonlyArray<ClaimedJob>) =>
        Effect.gen(function*() {
          const running = yield* Ref.make(new Map(jobs.map((j) => [j.id, j] as const)))
          const heartbeat = yield* Effect.gen(function*() {
            const held = [...(yield* Ref.get(running)).values()]
            if (held.length > 0) yield* queue.heartbeat({ worker, jobs: held, leaseMillis })
          }).pipe(
            Effect.catchAll((error) => Effect.logWarning("worker: heartbeat failed", error)),
            Effect.delay(Duration.millis(leaseMillis / 3)),
            Effect.forever,
            Effect.fork
          )
          const releaseAll = Effect.flatMap(Ref.get(running), (held) => release([...held.values()]))
          const groups = new Map<string, Array<ClaimedJob>>()
          for (const job of jobs) {
            const group = groups.get(job.organisation_id)
            if (group === undefined) groups.set(job.organisation_id, [job])
            else group.push(job)
          }
          yield* Effect.forEach(groups.values(), (group) =>
            runJobs(group).pipe(Effect.zipRight(Ref.update(running, (m) => {
              const next = new Map(m)
              for (const job of group) next.delete(job.id)
              return next
            }))), { concurrency, discard: true }).pipe(
              Effect.ensuring(Fiber.interrupt(heartbeat)),
              Effect.onInterrupt(() => releaseAll)
            )
        })

      const drain: Effect.Effect<void, StorageError> = lock.withPermits(1)(Effect.gen(function*() {
        while (true) {
          const { dead, jobs } = yield* queue.claim({ worker, limit: batchSize, leaseMillis, maxAttempts, follow })
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
          label: "job worker",
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
