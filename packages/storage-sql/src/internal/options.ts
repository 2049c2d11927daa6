import type { Effect, Stream } from "effect"

/** A wake-up signal: `notify` (inside the writing transaction) reaches every `stream` subscriber. */
export interface Wakeup {
  readonly notify: Effect.Effect<void, unknown>
  readonly stream: Stream.Stream<void>
}

/** What the driver layer gives the shared implementation. */
export interface SqlStorageOptions {
  /** Signalled by a committed enqueue or retried job. */
  readonly jobWakeups: Wakeup
  /** Signalled by a commit that writes deliveries, a delivery enqueued or retried. */
  readonly deliveryWakeups: Wakeup
  /** Runs writes of lease state only, which may skip durability (SQLite: `synchronous = NORMAL`). */
  readonly relaxed?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown, R>
  /** The migrator's table and the latest migration id this build knows, for `StorageHealth` (readiness). */
  readonly migrations: { readonly table: string; readonly latest: number }
}

/**
 * The first key of every PostgreSQL advisory lock the storage takes: `(namespace, 0)` for migrations
 * and schema creation, `(namespace, hashtext(organisation))` for an organisation's enqueues.
 */
export const advisoryNamespace = 7_411_001
