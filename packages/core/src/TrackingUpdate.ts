/**
 * How tracking changes a tradeflow, pure functions: its targets are created with it (when a
 * configured source routes it), stopped and resumed with its lifecycle, and what a source answers
 * for a target is merged into its journey while the target's schedule moves on (see
 * `TrackingTarget`).
 *
 * - A tradeflow is tracked in production, and in UAT when it has no mock journey (UAT mirrors
 *   production); a source routes it by carrier SCAC, else by container owner code
 *   (`TrackingSource.route`). The routed source stays its source.
 * - Its targets: each container (alone when the source accepts that, else with the first booking or
 *   bill of lading as the source asks), each booking and each bill of lading the source accepts.
 *   A reference added later gets a target of its own, due at once.
 * - Deactivating the tradeflow stops its targets; reactivating it resumes those it stopped.
 * - An answer for a stopped target, or for a target of a deactivated tradeflow, changes nothing.
 *
 * @module
 */
import { Option } from "effect"
import type { Environment } from "./Environment.js"
import type { TrackJob } from "./Job.js"
import { changedEvents, type TrackingStatus } from "./RenderMessages.js"
import { concerns, type QueryKind, queryKinds, route, type TargetQuery, type TrackingSource } from "./TrackingSource.js"
import type { RawEvent } from "./TrackingStore.js"
import * as TrackingTarget from "./TrackingTarget.js"
import type { TrackedEvent, Tradeflow } from "./Tradeflow.js"
import * as TradeflowMerge from "./TradeflowMerge.js"

/** Whether a tradeflow is to be tracked by a source: active, and in production or without a mock journey. */
export const trackable = (t: Tradeflow, environment: Environment): boolean =>
  t.active && (environment === "production" || t.mock_signature === null)

/** The queries of the targets a source is asked about for a tradeflow (see the module notes). */
export const queriesOf = (
  source: Pick<TrackingSource, "queries">,
  t: Tradeflow
): ReadonlyArray<readonly [QueryKind, TargetQuery]> => {
  const accepts = (kind: QueryKind) => source.queries.includes(kind)
  const booking = t.booking_references[0]
  const bill = t.bill_of_lading_references[0]
  const out: Array<readonly [QueryKind, TargetQuery]> = []
  for (const { reference: equipment } of t.containers) {
    const kind = queryKinds.find((k) =>
      accepts(k) && (k === "equipment" ||
        (k === "booking+equipment" && booking !== undefined) ||
        (k === "bill_of_lading+equipment" && bill !== undefined))
    )
    if (kind === "equipment") out.push([kind, { equipment }])
    else if (kind === "booking+equipment") out.push([kind, { equipment, booking }])
    else if (kind === "bill_of_lading+equipment") out.push([kind, { equipment, bill_of_lading: bill }])
  }
  if (accepts("booking")) { for (const b of t.booking_references) out.push(["booking", { booking: b }]) }
  if (accepts("bill_of_lading")) {
    for (const b of t.bill_of_lading_references) out.push(["bill_of_lading", { bill_of_lading: b }])
  }
  return out
}

const describeQuery = (target: TrackingTarget.TrackingTarget): string =>
  [
    target.equipment === undefined ? [] : [`container ${target.equipment}`],
    target.booking === undefined ? [] : [`booking ${target.booking}`],
    target.bill_of_lading === undefined ? [] : [`bill of lading ${target.bill_of_lading}`]
  ].flat().join(" with ")

const stopReasons: Record<TrackingTarget.StopReason, string> = {
  empty_returned: "the empty container was returned",
  no_new_events: "no new event for too long",
  deactivated: "the tradeflow was deactivated",
  not_found: "the source does not know it",
  source_removed: "its source is no longer configured"
}

const stoppedStatus = (target: TrackingTarget.TrackingTarget): TrackingStatus => ({
  status: "TRACKING_STOPPED",
  message: `Tracking of ${describeQuery(target)} by ${target.source} stopped: ${
    target.stop_reason === null ? "stopped" : stopReasons[target.stop_reason]
  }`,
  container_reference: target.equipment ?? null
})

/**
 * The tradeflow with its tracking brought up to date after an upsert (see the module notes), and
 * the statuses to report. The state itself comes back when nothing changed.
 */
export const track = (
  t: Tradeflow,
  environment: Environment,
  sources: ReadonlyArray<TrackingSource>,
  now: number
): { readonly next: Tradeflow; readonly statuses: ReadonlyArray<TrackingStatus> } => {
  const tracking = t.tracking
  if (!t.active) {
    if (tracking === null || tracking.targets.every((target) => target.state === "stopped")) {
      return { next: t, statuses: [] }
    }
    return {
      next: {
        ...t,
        tracking: {
          ...tracking,
          targets: tracking.targets.map((target) => TrackingTarget.stop(target, "deactivated"))
        }
      },
      statuses: []
    }
  }
  if (!trackable(t, environment)) return { next: t, statuses: [] }
  const source = tracking === null
    ? Option.getOrUndefined(route(sources, {
      carrier_scac: t.details.carrier_scac,
      containers: t.containers.map((c) => c.reference)
    }))
    : sources.find((s) => s.id === tracking.source)
  if (source === undefined) return { next: t, statuses: [] }
  const known = new Map((tracking?.targets ?? []).map((target) => [target.id, target] as const))
  let changed = tracking === null
  const targets = (tracking?.targets ?? []).map((target) => {
    if (target.stop_reason !== "deactivated") return target
    changed = true
    return { ...target, state: "pending" as const, stop_reason: null, next_check_at: now }
  })
  for (const [kind, query] of queriesOf(source, t)) {
    const target = TrackingTarget.make(source.id, kind, query, now)
    if (known.has(target.id)) continue
    known.set(target.id, target)
    targets.push(target)
    changed = true
  }
  if (!changed) return { next: t, statuses: [] }
  const statuses: Array<TrackingStatus> = tracking === null
    ? [{
      status: "TRACKING_STARTED",
      message: `Tracking started: ${source.id} is asked about ${targets.map(describeQuery).join(", ")}`,
      container_reference: null
    }]
    : []
  return { next: { ...t, tracking: { source: source.id, targets } }, statuses }
}

/** The milestones a target's state is read from: those of its source, for its container (and its shipment's). */
const milestonesOf = (t: Tradeflow, target: TrackingTarget.TrackingTarget): ReadonlyArray<TrackedEvent> =>
  t.events.filter((e) =>
    e.source === target.source &&
    (target.equipment === undefined || e.container_reference === null || e.container_reference === target.equipment)
  )

/**
 * The outcome of a job as it applies: a consumer push (no target) keeps only the events a target of
 * the tradeflow that is still tracked concerns (its targets may have stopped, or lost the reference,
 * since the push was queued), and applies not at all when none is left.
 */
const pushedToLiveTargets = (
  job: TrackJob,
  targets: ReadonlyArray<TrackingTarget.TrackingTarget>
): TrackJob["outcome"] | undefined => {
  const outcome = job.outcome
  if (job.target_id !== null || outcome._tag !== "Fetched") return outcome
  const events = outcome.events.filter((e) =>
    targets.some((target) => target.state !== "stopped" && concerns(target, e))
  )
  return events.length === 0 ? undefined : events.length === outcome.events.length ? outcome : { ...outcome, events }
}

/** When the service last recorded a reading of any of these milestones; null when there is none. */
const lastRecorded = (milestones: ReadonlyArray<TrackedEvent>): number | null => {
  let last: number | null = null
  for (const m of milestones) {
    if (last === null || m.predicted_at > last) last = m.predicted_at
    for (const h of m.history) if (h.predicted_at > last) last = h.predicted_at
  }
  return last
}

/** What applying a source's answer does. */
export interface Applied {
  /** The tradeflow after it; the state itself when nothing changed. */
  readonly next: Tradeflow
  /** Whether its journey changed (new milestones or readings): the tradeflow's `updated_at` moves then. */
  readonly journeyChanged: boolean
  readonly statuses: ReadonlyArray<TrackingStatus>
  /** The raw events of the answer, to keep. */
  readonly rawEvents: ReadonlyArray<RawEvent>
}

/**
 * Applies what a source answered for one target of the tradeflow (a `Track` job): the events
 * merged (see `TradeflowMerge.mergeTracking`), the target's freshness and next check moved on (see
 * `TrackingTarget`), a BASIC_STATUS when it stops or is not found. `jitter` in [0, 1) spreads
 * backoffs.
 */
export const apply = (
  t: Tradeflow,
  job: TrackJob,
  options: { readonly now: number; readonly cadence: TrackingTarget.Cadence; readonly jitter: number }
): Applied => {
  const unchanged: Applied = { next: t, journeyChanged: false, statuses: [], rawEvents: [] }
  const tracking = t.tracking
  if (!t.active || tracking === null || tracking.source !== job.source) return unchanged
  const index = job.target_id === null ? -1 : tracking.targets.findIndex((target) => target.id === job.target_id)
  const target = tracking.targets[index]
  if (job.target_id !== null && (target === undefined || target.state === "stopped")) return unchanged
  const { now } = options
  const outcome = pushedToLiveTargets(job, tracking.targets)
  if (outcome === undefined) return unchanged
  let merged = t
  const rawEvents: Array<RawEvent> = []
  if (outcome._tag === "Fetched" && outcome.events.length > 0) {
    merged = TradeflowMerge.mergeTracking(t, outcome.events, now)
    for (const e of outcome.events) {
      if (e.raw === null) continue
      rawEvents.push({
        tradeflow_reference: t.reference,
        source: e.source,
        event_id: e.event_id,
        updated_at: e.updated_at,
        received_at: job.checked_at,
        raw: e.raw
      })
    }
  }
  const journeyChanged = merged.retracted_events !== t.retracted_events ||
    (merged.events !== t.events && changedEvents(t, merged).length > 0)
  const statuses: Array<TrackingStatus> = []
  const nextTarget = (current: TrackingTarget.TrackingTarget): TrackingTarget.TrackingTarget => {
    if (outcome._tag === "FetchFailed" && outcome.kind !== "not_found") {
      return outcome.kind === "unknown_source"
        ? TrackingTarget.stop({ ...current, last_check_at: job.checked_at }, "source_removed")
        : TrackingTarget.afterFailure(
          current,
          {
            kind: outcome.kind,
            message: outcome.message,
            checked_at: job.checked_at,
            retry_after_millis: outcome.retry_after_millis
          },
          options.cadence,
          options.jitter
        )
    }
    if (outcome._tag === "FetchFailed" || outcome.status === "not-found") {
      const after = TrackingTarget.afterNotFound(current, job.checked_at, options.cadence)
      if (current.not_found_since === null) {
        statuses.push({
          status: "TRACKING_NOT_FOUND",
          message: `${current.source} does not know ${describeQuery(current)}`,
          container_reference: current.equipment ?? null
        })
      }
      return after
    }
    const milestones = milestonesOf(merged, current)
    return TrackingTarget.afterFetch(current, {
      now,
      checked_at: job.checked_at,
      milestones,
      port_of_discharge: merged.details.port_of_discharge,
      last_recorded: lastRecorded(milestones),
      high_water: outcome.high_water
    }, options.cadence)
  }
  const targets = tracking.targets.map((current, i) => {
    if (i !== index) return current
    const next = nextTarget(current)
    if (next.state === "stopped" && current.state !== "stopped") statuses.push(stoppedStatus(next))
    return next
  })
  const next: Tradeflow = { ...merged, tracking: { ...tracking, targets } }
  return { next, journeyChanged, statuses, rawEvents }
}

/** The vessel of a tracked voyage under way, as its carrier names it. */
export interface UnderWay {
  readonly name: string | undefined
  readonly imo: string | undefined
  readonly mmsi: string | undefined
}

/**
 * The vessel of a tradeflow's voyage under way by its carriers' events: an actual vessel departure
 * (not of a mock journey) with no actual arrival after it. Undefined when none is under way.
 */
export const underWay = (t: Tradeflow): UnderWay | undefined => {
  const moves = t.events.filter((e) => e.source !== "mock" && e.source !== "import" && e.actual)
  const departed = moves.filter((e) => e.status_code === "VD" && e.event_date !== null)
    .sort((a, b) => (a.event_date ?? 0) - (b.event_date ?? 0)).at(-1)
  if (departed === undefined) return undefined
  const arrived = moves.some((e) =>
    e.status_code === "VA" && e.event_date !== null && e.event_date >= (departed.event_date ?? 0)
  )
  return arrived ? undefined : {
    name: departed.vessel ?? t.details.vessel,
    imo: departed.vessel_imo,
    mmsi: departed.vessel_mmsi
  }
}
