/**
 * Service: the scheduler of everything that happens as time passes. Voyages produce a
 * LOCATION_UPDATE, and mock journeys released at a `mock_tracking.speed` their next step; the
 * scheduler finds the tradeflows due either (`TradeflowStore.due`, over `next_position_at`) and
 * queues an Advance job for each, which the worker processes like any other job (see `Processor`).
 * With the default interval of a minute, a `fast` journey's steps appear within a minute of their
 * instant.
 *
 * Time comes from `Clock` (tests drive it with `TestClock`). A tradeflow with an Advance job of
 * this scheduler still pending is not queued again; one queued twice anyway (several processes
 * sharing a database) renders nothing the second time. The job carries the environment of the
 * tradeflow's organisation (UAT when the organisation is unknown: mock voyages exist only there).
 *
 * @module
 */
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import type { Environment } from "./Environment.js"
import { JobQueue } from "./JobQueue.js"
import { OrganisationStore } from "./OrganisationStore.js"
import * as Readiness from "./Readiness.js"
import type { StorageError } from "./StorageError.js"
import { TradeflowStore } from "./TradeflowStore.js"
import { Worker } from "./Worker.js"

export class Scheduler extends Context.Tag("@tradeflow/core/Scheduler")<Scheduler, {
  /** Queues an Advance job for each tradeflow due now (at most `batchSize`); answers how many it queued. */
  readonly tick: Effect.Effect<number, StorageError>
}>() {}

/** Options of the scheduler. */
export interface SchedulerOptions {
  /** How often due tradeflows are looked for (default 1 minute): positions and mock steps appear at most this late. */
  readonly interval?: Duration.DurationInput | undefined
  /** Tradeflows queued per tick at most (default 500); the rest follow on the next ticks. */
  readonly batchSize?: number | undefined
  /** false: no background fiber; positions advance only on `tick` (tests, or a host with its own timer). */
  readonly background?: boolean | undefined
  /** The background fiber starts only once this effect has completed (for example: the server listens). */
  readonly startAfter?: Effect.Effect<void> | undefined
}

/**
 * The scheduler over the storage ports; with `background` (default) it ticks for the lifetime of
 * the layer. A scoped layer: its fiber stops when the scope the host builds it in closes.
 */
export const layer = (
  options: SchedulerOptions = {}
): Layer.Layer<Scheduler, never, JobQueue | TradeflowStore | OrganisationStore | Worker> =>
  Layer.scoped(
    Scheduler,
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const store = yield* TradeflowStore
      const organisations = yield* OrganisationStore
      const worker = yield* Worker
      const interval = options.interval ?? Duration.minutes(1)
      const batchSize = options.batchSize ?? 500
      const queued = new Map<string, number>()
      const lock = yield* Effect.makeSemaphore(1)

      const stillPending = (key: string): Effect.Effect<boolean, StorageError> => {
        const id = queued.get(key)
        return id === undefined
          ? Effect.succeed(false)
          : Effect.map(queue.outcome(id), (outcome) => {
            if (Option.isSome(outcome)) queued.delete(key)
            return Option.isNone(outcome)
          })
      }

      const tick: Effect.Effect<number, StorageError> = lock.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const due = yield* store.due(now, batchSize)
        const dueKeys = new Set(due.map((d) => JSON.stringify([d.organisation_id, d.reference])))
        for (const key of queued.keys()) if (!dueKeys.has(key)) queued.delete(key)
        const environments = new Map<string, Environment>()
        let count = 0
        for (const d of due) {
          const key = JSON.stringify([d.organisation_id, d.reference])
          if (yield* stillPending(key)) continue
          let environment = environments.get(d.organisation_id)
          if (environment === undefined) {
            const organisation = yield* organisations.get(d.organisation_id)
            environment = Option.match(organisation, { onNone: () => "uat" as const, onSome: (o) => o.environment })
            environments.set(d.organisation_id, environment)
          }
          const outcome = yield* queue.enqueue({
            organisation_id: d.organisation_id,
            environment,
            payload: { _tag: "Advance", reference: d.reference },
            received_at: now
          })
          if (outcome._tag === "Enqueued") {
            queued.set(key, outcome.id)
            count++
          }
        }
        if (count > 0) yield* worker.wake
        return count
      })).pipe(Effect.withSpan("Scheduler.tick"))

      if (options.background ?? true) {
        yield* Readiness.background(
          "scheduler",
          options.startAfter,
          tick.pipe(
            Effect.catchAll((e) => Effect.logWarning("scheduler: storage unavailable, retrying", e)),
            Effect.zipRight(Effect.sleep(interval)),
            Effect.forever
          )
        )
      }

      return Scheduler.of({ tick })
    })
  )
