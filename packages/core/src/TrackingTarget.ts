/**
 * A tracked target: what one source is asked about for one tradeflow (a container, a booking, a
 * bill of lading, or a combination its carrier needs), with its freshness and its schedule.
 *
 * Targets live in the tradeflow's document (`Tradeflow.tracking`), so they change with the
 * tradeflow, in the order of its jobs; storage keeps an index of them by next check
 * (`TrackingStore.claim`).
 *
 * The schedule (defaults of {@link defaultCadence}, configurable):
 * - nothing found yet: every 6 hours;
 * - before departure: every 12 hours;
 * - in transit: every 24 hours, and every 6 hours within 48 hours of a predicted departure or arrival;
 * - at the port of discharge until gate out: every 6 hours;
 * - from gate out to empty return: every 12 hours;
 * - stopped 3 days after an actual empty return, after 30 days without a new event, when the
 *   tradeflow is deactivated or deleted, at once when the source does not know a container, and
 *   after 7 days of daily retries when it does not know a booking or bill of lading.
 * - failures: rate limited waits the source's retry-after; a transient failure backs off
 *   exponentially with jitter (5 minutes, doubling, at most 12 hours).
 *
 * @module
 */
import { Duration, Schema } from "effect"
import type { QueryKind, TargetQuery } from "./TrackingSource.js"

/** Where a target stands. */
export const TargetState = Schema.Literal(
  /** Created, not fetched yet: due at once. */
  "pending",
  /** Fetched, and the source knows nothing yet (or does not know a booking or bill of lading yet). */
  "awaiting",
  "before_departure",
  "in_transit",
  /** Arrived at the port of discharge, not gated out yet. */
  "at_discharge",
  /** Gated out full, the empty container not returned yet. */
  "delivered",
  /** The empty container is back: checked until 3 days after the return. */
  "returned",
  "stopped"
)
export type TargetState = typeof TargetState.Type

/** Why a target stopped. */
export const StopReason = Schema.Literal(
  "empty_returned",
  "no_new_events",
  "deactivated",
  "not_found",
  /** Its source is no longer configured. */
  "source_removed"
)
export type StopReason = typeof StopReason.Type

/** One tracked target of a tradeflow. */
export const TrackingTarget = Schema.Struct({
  /** `<kind>:<references>`: unique within the tradeflow and its source. */
  id: Schema.String,
  source: Schema.String,
  kind: Schema.Literal("equipment", "booking", "bill_of_lading", "booking+equipment", "bill_of_lading+equipment"),
  equipment: Schema.optional(Schema.String),
  booking: Schema.optional(Schema.String),
  bill_of_lading: Schema.optional(Schema.String),
  state: TargetState,
  stop_reason: Schema.NullOr(StopReason),
  /** Epoch ms; null when stopped. */
  next_check_at: Schema.NullOr(Schema.Number),
  last_check_at: Schema.NullOr(Schema.Number),
  /** When the last new event of this target was merged (epoch ms). */
  last_event_at: Schema.NullOr(Schema.Number),
  /** The latest event version seen (the source's `updated_at`, epoch ms). */
  high_water: Schema.NullOr(Schema.Number),
  /** Consecutive failed fetches. */
  failures: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  /** Since when the source has answered "not found" for a booking or bill of lading. */
  not_found_since: Schema.NullOr(Schema.Number),
  created_at: Schema.Number
})
export type TrackingTarget = typeof TrackingTarget.Type

/** How often a target is checked, by state, and when it stops (see the module notes). */
export interface Cadence {
  readonly awaiting: Duration.DurationInput
  readonly beforeDeparture: Duration.DurationInput
  readonly inTransit: Duration.DurationInput
  /** In transit within {@link Cadence.nearWindow} of a predicted departure or arrival. */
  readonly nearMove: Duration.DurationInput
  readonly nearWindow: Duration.DurationInput
  readonly atDischarge: Duration.DurationInput
  readonly delivered: Duration.DurationInput
  /** How long after an actual empty return tracking goes on. */
  readonly afterReturn: Duration.DurationInput
  /** Tracking stops after this long without a new event. */
  readonly quietStop: Duration.DurationInput
  /** How often a booking or bill of lading the source does not know yet is retried, and for how long. */
  readonly notFoundRetry: Duration.DurationInput
  readonly notFoundStop: Duration.DurationInput
  /** The first and the longest wait after a transient failure (doubling between them, with jitter). */
  readonly backoffFirst: Duration.DurationInput
  readonly backoffMax: Duration.DurationInput
}

/** The defaults of the module notes. */
export const defaultCadence: Cadence = {
  awaiting: Duration.hours(6),
  beforeDeparture: Duration.hours(12),
  inTransit: Duration.hours(24),
  nearMove: Duration.hours(6),
  nearWindow: Duration.hours(48),
  atDischarge: Duration.hours(6),
  delivered: Duration.hours(12),
  afterReturn: Duration.days(3),
  quietStop: Duration.days(30),
  notFoundRetry: Duration.days(1),
  notFoundStop: Duration.days(7),
  backoffFirst: Duration.minutes(5),
  backoffMax: Duration.hours(12)
}

const millis = (d: Duration.DurationInput): number => Duration.toMillis(d)

/** The id of a target asking `query` as `kind`. */
export const targetId = (kind: QueryKind, query: TargetQuery): string =>
  `${kind}:${JSON.stringify([query.equipment ?? null, query.booking ?? null, query.bill_of_lading ?? null])}`

/** The references of a query, without the absent ones. */
const references = (query: TargetQuery): TargetQuery => ({
  ...(query.equipment === undefined ? {} : { equipment: query.equipment }),
  ...(query.booking === undefined ? {} : { booking: query.booking }),
  ...(query.bill_of_lading === undefined ? {} : { bill_of_lading: query.bill_of_lading })
})

/** What a target asks its source. */
export const queryOf = (target: TrackingTarget): TargetQuery => references(target)

/** A new target, due at once. */
export const make = (source: string, kind: QueryKind, query: TargetQuery, now: number): TrackingTarget => ({
  id: targetId(kind, query),
  source,
  kind,
  ...references(query),
  state: "pending",
  stop_reason: null,
  next_check_at: now,
  last_check_at: null,
  last_event_at: null,
  high_water: null,
  failures: 0,
  last_error: null,
  not_found_since: null,
  created_at: now
})

/** A target stopped for `reason`. */
export const stop = (target: TrackingTarget, reason: StopReason): TrackingTarget =>
  target.state === "stopped" ? target : { ...target, state: "stopped", stop_reason: reason, next_check_at: null }

/**
 * The wait after the `failures`-th transient failure in a row: `backoffFirst` doubled per earlier
 * failure, at most `backoffMax`, times a jitter factor in [0.5, 1] (`jitter` in [0, 1)).
 */
export const backoff = (cadence: Cadence, failures: number, jitter: number): number => {
  const base = Math.min(millis(cadence.backoffMax), millis(cadence.backoffFirst) * 2 ** Math.max(0, failures - 1))
  return Math.round(base * (0.5 + jitter / 2))
}

/** The milestones of a target's journey that its state is read from. */
export interface Milestone {
  readonly status_code: string | null
  readonly container_reference: string | null
  readonly location: string | null
  readonly event_date: number | null
  readonly actual: boolean
}

/**
 * The state of a target from the milestones its source reported for it (for a container: its own
 * and the shipment's, those without a container) and the tradeflow's port of discharge.
 */
export const stateOf = (
  milestones: ReadonlyArray<Milestone>,
  portOfDischarge: string | undefined
): Exclude<TargetState, "pending" | "stopped"> => {
  if (milestones.length === 0) return "awaiting"
  const actual = (code: string, where?: (m: Milestone) => boolean) =>
    milestones.some((m) => m.actual && m.status_code === code && (where === undefined || where(m)))
  if (actual("GR")) return "returned"
  if (actual("GT")) return "delivered"
  const atPod = (m: Milestone) => portOfDischarge === undefined || m.location === portOfDischarge
  if (actual("UV", atPod) || actual("VA", atPod)) return "at_discharge"
  if (actual("VD")) return "in_transit"
  return "before_departure"
}

/** What a processed fetch tells of a target. */
export interface Checked {
  readonly now: number
  readonly checked_at: number
  /** The milestones of the target after the merge. */
  readonly milestones: ReadonlyArray<Milestone>
  readonly port_of_discharge: string | undefined
  /**
   * When the service last recorded a reading of the target's milestones (epoch ms; null when it has
   * none), whichever fetch or push brought it: another target of the tradeflow asking about the same
   * events, or a carrier pushing them, keeps this one fresh too.
   */
  readonly last_recorded: number | null
  readonly high_water: number | null
}

/**
 * The target after a successful fetch: its state from the milestones, its next check from the
 * cadence (see the module notes), stopped once its journey is over or quiet for too long.
 */
export const afterFetch = (target: TrackingTarget, checked: Checked, cadence: Cadence): TrackingTarget => {
  const lastEvent = checked.last_recorded === null
    ? target.last_event_at
    : Math.max(target.last_event_at ?? checked.last_recorded, checked.last_recorded)
  const base: TrackingTarget = {
    ...target,
    last_check_at: checked.checked_at,
    last_event_at: lastEvent,
    high_water: target.high_water === null
      ? checked.high_water
      : checked.high_water === null
      ? target.high_water
      : Math.max(target.high_water, checked.high_water),
    failures: 0,
    last_error: null,
    not_found_since: null
  }
  if (target.state === "stopped") return base
  const state = stateOf(checked.milestones, checked.port_of_discharge)
  if (checked.now - (lastEvent ?? target.created_at) >= millis(cadence.quietStop)) {
    return stop({ ...base, state }, "no_new_events")
  }
  const at = checked.now
  switch (state) {
    case "awaiting":
      return { ...base, state, next_check_at: at + millis(cadence.awaiting) }
    case "before_departure":
      return { ...base, state, next_check_at: at + millis(cadence.beforeDeparture) }
    case "in_transit": {
      const window = millis(cadence.nearWindow)
      const near = checked.milestones.some((m) =>
        !m.actual && (m.status_code === "VD" || m.status_code === "VA") && m.event_date !== null &&
        Math.abs(m.event_date - at) <= window
      )
      return { ...base, state, next_check_at: at + millis(near ? cadence.nearMove : cadence.inTransit) }
    }
    case "at_discharge":
      return { ...base, state, next_check_at: at + millis(cadence.atDischarge) }
    case "delivered":
      return { ...base, state, next_check_at: at + millis(cadence.delivered) }
    case "returned": {
      const returned = Math.max(
        ...checked.milestones.filter((m) => m.actual && m.status_code === "GR").map((m) => m.event_date ?? at)
      )
      const end = returned + millis(cadence.afterReturn)
      return at >= end
        ? stop({ ...base, state }, "empty_returned")
        : { ...base, state, next_check_at: Math.min(end, at + millis(cadence.delivered)) }
    }
  }
}

/**
 * The target after its source answered that it does not know it: a container stops at once; a
 * booking or bill of lading is retried daily until 7 days after the first such answer.
 */
export const afterNotFound = (target: TrackingTarget, checkedAt: number, cadence: Cadence): TrackingTarget => {
  const base = { ...target, last_check_at: checkedAt, failures: 0, last_error: null }
  if (target.kind === "equipment" || target.kind.endsWith("+equipment")) return stop(base, "not_found")
  const since = target.not_found_since ?? checkedAt
  return checkedAt - since >= millis(cadence.notFoundStop)
    ? stop({ ...base, not_found_since: since }, "not_found")
    : { ...base, state: "awaiting", not_found_since: since, next_check_at: checkedAt + millis(cadence.notFoundRetry) }
}

/** How a fetch failed (see `TrackingSource`'s errors). */
export type FailureKind = "unauthorized" | "rate_limited" | "transient" | "malformed" | "not_found"

/**
 * The target after a failed fetch: rate limited waits `retryAfterMillis`; any other failure backs
 * off exponentially with jitter (`jitter` in [0, 1)), by the count of consecutive failures, which
 * a rate-limited wait (a turn, not a failure of the target) leaves as it is. A target that has
 * failed on past the quiet stop (30 days without a new event) stops, as one that answers nothing
 * new does.
 */
export const afterFailure = (
  target: TrackingTarget,
  failure: {
    readonly kind: FailureKind
    readonly message: string
    readonly checked_at: number
    readonly retry_after_millis?: number | undefined
  },
  cadence: Cadence,
  jitter: number
): TrackingTarget => {
  if (target.state === "stopped") return target
  if (failure.checked_at - (target.last_event_at ?? target.created_at) >= millis(cadence.quietStop)) {
    return stop({
      ...target,
      last_check_at: failure.checked_at,
      last_error: `${failure.kind}: ${failure.message}`.slice(0, 500)
    }, "no_new_events")
  }
  const limited = failure.kind === "rate_limited"
  const failures = limited ? target.failures : target.failures + 1
  const wait = limited && failure.retry_after_millis !== undefined
    ? Math.max(0, failure.retry_after_millis)
    : backoff(cadence, Math.max(1, failures), jitter)
  return {
    ...target,
    last_check_at: failure.checked_at,
    failures,
    last_error: `${failure.kind}: ${failure.message}`.slice(0, 500),
    next_check_at: failure.checked_at + wait
  }
}
