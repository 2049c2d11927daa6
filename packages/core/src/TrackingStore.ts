/**
 * Port: the index of tracked targets by next check, which the `Tracker` claims due targets from,
 * the subscriptions sources hold for targets, and the raw events of tracking sources as received.
 *
 * A target itself lives in its tradeflow's document (`Tradeflow.tracking`); every commit that
 * writes a tradeflow writes the index of its targets with it (in the same transaction), and a
 * hard delete removes both, with the tradeflow's raw events.
 *
 * @module
 */
import { Context, type Effect, type Option } from "effect"
import type { StorageError } from "./StorageError.js"
import type { TargetQuery } from "./TrackingSource.js"

/** A due target, as `claim` leases it. */
export interface DueTarget {
  readonly organisation_id: string
  readonly tradeflow_reference: string
  readonly target_id: string
  readonly source: string
  /** What the target asks its source. */
  readonly query: TargetQuery
  /** The target's high-water mark (see `TrackingTarget`). */
  readonly high_water: number | null
  /** The due instant it was claimed at (epoch ms). */
  readonly next_check_at: number
}

/** One version of an event of a tracking source, as received (written with the commit that merged it). */
export interface RawEvent {
  readonly tradeflow_reference: string
  readonly source: string
  readonly event_id: string
  readonly updated_at: number
  /** When we received it (epoch ms). */
  readonly received_at: number
  /** The event as the source sent it (JSON text). */
  readonly raw: string
}

/** What `claim` asks. */
export interface ClaimTargets {
  readonly now: number
  readonly limit: number
  /** How long the claimed targets stay leased: no other claim takes them meanwhile. */
  readonly leaseMillis: number
  /** Sources whose targets are not claimed (paused ones). */
  readonly exclude?: ReadonlyArray<string> | undefined
}

/**
 * A subscription a tracking source holds for a target (DCSA 2.2 event subscriptions): its id at
 * the source, the target it serves, and the shared secret its callbacks are signed with (base64).
 */
export interface StoredSubscription {
  readonly source: string
  readonly subscription_id: string
  readonly organisation_id: string
  readonly tradeflow_reference: string
  readonly target_id: string
  /** The shared secret, base64 (stored encrypted when secrets at rest are configured). */
  readonly secret: string
  readonly created_at: number
}

export class TrackingStore extends Context.Tag("@tradeflow/core/TrackingStore")<TrackingStore, {
  /**
   * Leases up to `limit` targets due at `now` (next check at or before it, not leased), round-robin
   * across organisations: every organisation's most overdue target first, then every
   * organisation's second, and so on. Several processes sharing a database never claim the same
   * target while its lease runs. A commit that moves a target's next check ends its lease.
   */
  readonly claim: (options: ClaimTargets) => Effect.Effect<ReadonlyArray<DueTarget>, StorageError>
  /** Keeps a subscription (replacing one of the same source and id). */
  readonly putSubscription: (subscription: StoredSubscription) => Effect.Effect<void, StorageError>
  /** The subscription of a source with this id, if it is kept. */
  readonly subscription: (source: string, subscriptionId: string) => Effect.Effect<
    Option.Option<StoredSubscription>,
    StorageError
  >
  /** The subscriptions kept for these targets of a tradeflow. */
  readonly subscriptionsOf: (
    organisationId: string,
    reference: string
  ) => Effect.Effect<ReadonlyArray<StoredSubscription>, StorageError>
  /**
   * Subscriptions whose target no longer needs them (stopped, or gone with its tradeflow), at most
   * `limit`, oldest first: to be removed at their source, then here.
   */
  readonly staleSubscriptions: (limit: number) => Effect.Effect<ReadonlyArray<StoredSubscription>, StorageError>
  /** Forgets a subscription; one not kept is no failure. */
  readonly removeSubscription: (source: string, subscriptionId: string) => Effect.Effect<void, StorageError>
  /**
   * The targets of `source` (of every organisation, stopped ones included) that ask about any of
   * these references: a container (`equipment`), a booking or a bill of lading; each once. A
   * reference matches a target asking about the same kind of reference with the same text (exact,
   * case included); a target asking about a combination (`booking+equipment`) is found by either.
   * In no particular order. `stopped` is true when the target has no next check; a stopped target's
   * `next_check_at` is then 0 (it has none), any other's is its next check, as `claim` would answer it.
   */
  readonly targetsAbout: (
    source: string,
    references: {
      readonly equipment: ReadonlyArray<string>
      readonly booking: ReadonlyArray<string>
      readonly bill_of_lading: ReadonlyArray<string>
    }
  ) => Effect.Effect<ReadonlyArray<DueTarget & { readonly stopped: boolean }>, StorageError>
  /** The raw events kept for a tradeflow, oldest received first, at most `limit`. */
  readonly rawEvents: (
    organisationId: string,
    reference: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<RawEvent>, StorageError>
}>() {}
