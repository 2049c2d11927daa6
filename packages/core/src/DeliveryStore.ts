/**
 * Port: the webhook delivery outbox. Deliveries are written by `TradeflowStore.commit` (see
 * `Delivery.plan`) and by `enqueue` (console test sends); workers lease them with `claim` and
 * record each attempt with `record`.
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Option, type Stream } from "effect"
import type { AttemptResult, ClaimedDelivery, Delivery, DeliveryLogEntry, NewDelivery } from "./Delivery.js"
import type { StorageError } from "./StorageError.js"

/** @since 0.1.0 */
export class DeliveryStore extends Context.Tag("@tradeflow/core/DeliveryStore")<DeliveryStore, {
  /**
   * Leases up to `limit` deliveries to `worker` until `now + leaseMillis`. Only the head of each
   * (automation, tradeflow) is claimable: its lowest-id pending delivery, and only once it is due
   * (`next_attempt_at <= now`), not under a live lease, and its automation is enabled (a test
   * send: whether or not). So one tradeflow's deliveries reach one automation one at a time, in
   * sequence order, whichever process runs them. Each claim increments `claim`; claims are
   * atomic across processes sharing the database. Result in ascending id, with the body to send.
   */
  readonly claim: (options: {
    readonly worker: string
    readonly limit: number
    readonly leaseMillis: number
    readonly now: number
  }) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageError>
  /**
   * Records attempts in one transaction, each only if its delivery is still pending, at that
   * claim, and not yet recorded for it (see `Delivery.afterAttempt`): recording releases the
   * lease (`lease_until` becomes null), and only a leased delivery records. Each recorded
   * attempt is appended to the log. For a
   * non-test delivery its automation follows (see `Delivery.automationAfter`). Answers, per
   * result, whether it was recorded.
   */
  readonly record: (results: ReadonlyArray<AttemptResult>) => Effect.Effect<ReadonlyArray<boolean>, StorageError>
  /** Writes one delivery (a test send), pending and due at its `created_at`. */
  readonly enqueue: (delivery: NewDelivery) => Effect.Effect<Delivery, StorageError>
  readonly get: (id: number) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /** The automation's deliveries in ascending id, at most `limit`. */
  readonly list: (automationId: string, limit: number) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /**
   * Makes a retryable delivery (see `Delivery.retryable`) due at `now` on a fresh retry schedule
   * (`Delivery.retried`). A delivery that is not retryable is left as it is.
   */
  readonly retry: (id: number, now: number) => Effect.Effect<"retried" | "not-retryable" | "not-found", StorageError>
  /** The automation's delivery log: its attempts, newest first, at most `limit`. */
  readonly log: (automationId: string, limit: number) => Effect.Effect<ReadonlyArray<DeliveryLogEntry>, StorageError>
  /**
   * Signals that deliveries may be due: an element after a commit or `enqueue` wrote deliveries,
   * or `retry` made one due (in this process or, where the adapter can tell, another one sharing
   * the database). Consumers still poll as a fallback.
   */
  readonly wakeups: Stream.Stream<void, StorageError>
}>() {}
