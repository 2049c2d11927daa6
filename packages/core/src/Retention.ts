/**
 * Service: retention. What the service keeps only for a while is deleted once it is old enough:
 * idempotency keys after 24 hours, done jobs after 7 days, webhook delivery attempts after 30 days,
 * dead jobs and dead deliveries after 30 days (every age configurable). Pruning runs in the
 * background every 10 minutes, in batches of 500 rows, each its own short transaction, with a turn
 * of the event loop between batches: it never holds the storage or the thread for long.
 *
 * @module
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { turn } from "./internal/eventLoop.js"
import * as Readiness from "./Readiness.js"
import { type PruneKind, pruneKinds, RetentionStore } from "./RetentionStore.js"
import type { StorageError } from "./StorageError.js"

/** How long each kind is kept. */
export interface RetentionAges {
  readonly idempotencyKeys: Duration.DurationInput
  readonly doneJobs: Duration.DurationInput
  readonly deliveryAttempts: Duration.DurationInput
  /** Dead jobs and dead deliveries. */
  readonly dead: Duration.DurationInput
}

/** The documented defaults. */
export const defaultAges: RetentionAges = {
  idempotencyKeys: Duration.hours(24),
  doneJobs: Duration.days(7),
  deliveryAttempts: Duration.days(30),
  dead: Duration.days(30)
}

/** Options of {@link layer}. */
export interface RetentionOptions {
  readonly ages?: Partial<RetentionAges> | undefined
  /** How often pruning runs (default 10 minutes). */
  readonly interval?: Duration.DurationInput | undefined
  /** Rows deleted per transaction (default 500). */
  readonly batchSize?: number | undefined
  /** false: no background fiber; pruning runs only on `prune` (tests, or a host with its own timer). */
  readonly background?: boolean | undefined
  /** The background fiber waits for this first (a server starts it once it listens). */
  readonly startAfter?: Effect.Effect<void> | undefined
}

/** How many rows one pruning deleted, per kind. */
export type Pruned = Readonly<Record<PruneKind, number>>

export class Retention extends Context.Tag("@tradeflow/core/Retention")<Retention, {
  /** Deletes everything older than its age now, batch after batch; answers how many rows per kind. */
  readonly prune: Effect.Effect<Pruned, StorageError>
}>() {}

const ageOf = (ages: RetentionAges, kind: PruneKind): Duration.DurationInput => {
  switch (kind) {
    case "idempotency_keys":
      return ages.idempotencyKeys
    case "done_jobs":
      return ages.doneJobs
    case "delivery_attempts":
      return ages.deliveryAttempts
    case "dead_jobs":
    case "dead_deliveries":
      return ages.dead
  }
}

/**
 * Retention over the `RetentionStore` port; with `background` (default) it prunes for the lifetime
 * of the layer. A scoped layer: its fiber stops when the scope the host builds it in closes.
 */
export const layer = (options: RetentionOptions = {}): Layer.Layer<Retention, never, RetentionStore> =>
  Layer.scoped(
    Retention,
    Effect.gen(function*() {
      const store = yield* RetentionStore
      const ages = { ...defaultAges, ...options.ages }
      const batchSize = Math.max(1, options.batchSize ?? 500)
      const pruneKind = (kind: PruneKind, now: number) =>
        Effect.gen(function*() {
          const before = now - Duration.toMillis(ageOf(ages, kind))
          let total = 0
          for (;;) {
            const deleted = yield* store.prune(kind, before, batchSize)
            total += deleted
            if (deleted < batchSize) return total
            yield* turn
          }
        })
      const prune = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const pruned: Record<string, number> = {}
        for (const kind of pruneKinds) pruned[kind] = yield* pruneKind(kind, now)
        return pruned as Pruned
      }).pipe(Effect.withSpan("Retention.prune"))

      if (options.background ?? true) {
        yield* Readiness.background(
          "retention",
          options.startAfter,
          prune.pipe(
            Effect.catchAll((e) => Effect.logWarning("retention: storage unavailable, retrying", e)),
            Effect.zipRight(Effect.sleep(options.interval ?? Duration.minutes(10))),
            Effect.forever
          )
        )
      }
      return Retention.of({ prune })
    })
  )
