/**
 * Port: the webhook delivery outbox. Deliveries are written by `TradeflowStore.commit` (see
 * `Delivery.plan`) and by `enqueue` (console test sends); workers lease them with `claim` and
 * record each attempt with `record`.
 *
 * @module
 */
import { Context, Effect, type Option, type Stream } from "effect"
import {
  type AttemptResult,
  type ClaimedDelivery,
  type Delivery,
  type DeliveryLogEntry,
  type NewDelivery,
  storableResult
} from "./Delivery.js"
import type { StorageError } from "./StorageError.js"

/**
 * What `DeliveryStore.claim` leases: up to `limit` deliveries, to `worker`, until `now + leaseMillis`.
 */
export interface ClaimOptions {
  readonly worker: string
  readonly limit: number
  readonly leaseMillis: number
  readonly now: number
}

/**
 * The answer of `DeliveryStore.recordAndClaim`: per result whether it was recorded, and the claim.
 */
export interface RecordedAndClaimed {
  readonly recorded: ReadonlyArray<boolean>
  readonly claimed: ReadonlyArray<ClaimedDelivery>
}

/** The outbox's backlog: what metrics show of it. */
export interface DeliveryBacklog {
  /** Deliveries pending (due, or waiting for their next attempt). */
  readonly pending: number
  /** When the oldest pending delivery (the lowest id) was written (epoch ms); null when none is pending. */
  readonly oldest_created_at: number | null
}

export class DeliveryStore extends Context.Tag("@tradeflow/core/DeliveryStore")<DeliveryStore, {
  /**
   * Leases up to `limit` deliveries to `worker` until `now + leaseMillis`. Only the head of each
   * (automation, tradeflow) is claimable: its lowest-id pending delivery, and only once it is due
   * (`next_attempt_at <= now`), not under a live lease, and its automation is enabled (a test
   * send: whether or not). So one tradeflow's deliveries reach one automation one at a time, in
   * sequence order, whichever process runs them. Each claim increments `claim`; claims are
   * atomic across processes sharing the database. Result in ascending id, with the body to send.
   * A delivery with nothing to send (no body of its own, and its message `seq` no longer stored)
   * is never claimed and holds those after it, like any pending head; it costs no other delivery
   * its claim. The service writes none: deleting a tradeflow deletes its deliveries with its
   * messages, and messages are never pruned.
   */
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageError>
  /**
   * Records attempts, each only if its delivery is still pending, at that claim, and not yet
   * recorded for it (see `Delivery.afterAttempt`): recording releases the lease (`lease_until`
   * becomes null), and only a leased delivery records. Each recorded attempt is appended to the
   * log with its texts made storable (`Delivery.storableResult`), and only the newest
   * `Delivery.keptResponseBodies` attempts of a delivery keep their `response_body`. For a
   * non-test delivery its automation follows (see `Delivery.automationAfter`). One result never
   * keeps another from being recorded (see {@link recordIndependently}). Answers, per result,
   * whether it was recorded.
   */
  readonly record: (results: ReadonlyArray<AttemptResult>) => Effect.Effect<ReadonlyArray<boolean>, StorageError>
  /**
   * `record(results)`, then `claim(options)`: what a worker does between two rounds, in one
   * transaction where the adapter can (one commit instead of two). The claim sees what was just
   * recorded (a delivered head's successor is claimable). Each result is recorded as `record`
   * records it, independently of the others: when the transaction fails, `record` and then `claim`
   * run on their own.
   */
  readonly recordAndClaim: (
    results: ReadonlyArray<AttemptResult>,
    options: ClaimOptions
  ) => Effect.Effect<RecordedAndClaimed, StorageError>
  /** The backlog: how many deliveries are pending, and since when. */
  readonly backlog: Effect.Effect<DeliveryBacklog, StorageError>
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

/**
 * The error an attempt is recorded with when its result could not be stored as it was.
 */
export const unstoredError = "the result of this attempt could not be stored as it was"

/**
 * `DeliveryStore.record` over an adapter's batch write (one transaction for all of `results`),
 * with what every adapter owes: each result made `Delivery.storableResult` first, and each
 * recorded independently of the others. When the batch fails, its results are recorded one at a
 * time; one that still fails is recorded without the texts from outside (no `response_body`,
 * {@link unstoredError} as its error), so it holds up neither its delivery nor the batch. Only
 * when that fails too, which no text of the result causes, does `record` fail; what was recorded
 * before stays recorded.
 */
export const recordIndependently = <E>(
  batch: (results: ReadonlyArray<AttemptResult>) => Effect.Effect<ReadonlyArray<boolean>, E>
) =>
(results: ReadonlyArray<AttemptResult>): Effect.Effect<ReadonlyArray<boolean>, E> => {
  const rows = results.map(storableResult)
  if (rows.length === 0) return Effect.succeed([])
  const bare = (r: AttemptResult) =>
    batch([{ ...r, response_body: null, error: unstoredError }]).pipe(
      Effect.tap(() =>
        Effect.logWarning("DeliveryStore.record: a result was recorded without its texts", r.delivery_id)
      )
    )
  const alone = (r: AttemptResult) =>
    Effect.map(rows.length === 1 ? bare(r) : Effect.catchAll(batch([r]), () => bare(r)), (answer) => answer[0] === true)
  return Effect.catchAll(
    batch(rows),
    (error) =>
      Effect.logWarning("DeliveryStore.record: the batch failed; recording its results one at a time", error).pipe(
        Effect.zipRight(Effect.forEach(rows, alone))
      )
  )
}
