/**
 * Port: deleting what has been kept long enough, a small batch at a time (see `Retention`).
 *
 * @module
 */
import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/**
 * What can be pruned, and the instant each is aged by: idempotency keys by their creation; done and
 * dead jobs by their acceptance (`received_at`); delivery attempts by their time; dead deliveries
 * by their creation (with their attempts).
 */
export type PruneKind = "idempotency_keys" | "done_jobs" | "dead_jobs" | "delivery_attempts" | "dead_deliveries"

/** Every kind, in the order `Retention` prunes them. */
export const pruneKinds: ReadonlyArray<PruneKind> = [
  "idempotency_keys",
  "done_jobs",
  "dead_jobs",
  "delivery_attempts",
  "dead_deliveries"
]

export class RetentionStore extends Context.Tag("@tradeflow/core/RetentionStore")<RetentionStore, {
  /**
   * Deletes at most `limit` rows of `kind` older than `before` (epoch ms, exclusive), oldest first,
   * in one short transaction; answers how many it deleted (fewer than `limit`: nothing older is left).
   */
  readonly prune: (kind: PruneKind, before: number, limit: number) => Effect.Effect<number, StorageError>
}>() {}
