/**
 * Port: the index of tracked targets by next check, which the `Tracker` claims due targets from,
 * and the raw events of tracking sources as received.
 *
 * A target itself lives in its tradeflow's document (`Tradeflow.tracking`); every commit that
 * writes a tradeflow writes the index of its targets with it (in the same transaction), and a
 * hard delete removes both, with the tradeflow's raw events.
 *
 * @module
 */
import { Context, type Effect } from "effect"
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

export class TrackingStore extends Context.Tag("@tradeflow/core/TrackingStore")<TrackingStore, {
  /**
   * Leases up to `limit` targets due at `now` (next check at or before it, not leased), round-robin
   * across organisations: every organisation's most overdue target first, then every
   * organisation's second, and so on. Several processes sharing a database never claim the same
   * target while its lease runs. A commit that moves a target's next check ends its lease.
   */
  readonly claim: (options: ClaimTargets) => Effect.Effect<ReadonlyArray<DueTarget>, StorageError>
  /** The raw events kept for a tradeflow, oldest received first, at most `limit`. */
  readonly rawEvents: (
    organisationId: string,
    reference: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<RawEvent>, StorageError>
}>() {}
