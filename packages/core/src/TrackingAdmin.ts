/**
 * Service: what the console shows of a tradeflow's tracking, and a refresh on demand. The status
 * lists each target with its source, references, state, last and next check, last event, failures
 * and last error (`ApiMessage.TrackingTargetInfo`), and whether its source is paused. A refresh asks
 * the source about every target that is not stopped now, in the background (see `Tracker`), at
 * most once a minute per tradeflow.
 *
 * @module
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { TrackingTargetInfo } from "./ApiMessage.js"
import { TradeflowNotFound } from "./DownstreamError.js"
import { trackingInfo } from "./RenderDocument.js"
import type { StorageError } from "./StorageError.js"
import { Tracker } from "./Tracker.js"
import * as TrackingTarget from "./TrackingTarget.js"
import { TradeflowStore } from "./TradeflowStore.js"

/** The tradeflow has no target that is still tracked. */
export class NotTracked extends Schema.TaggedError<NotTracked>()("NotTracked", {
  reference: Schema.String
}) {}

/** The tradeflow was refreshed (or checked) less than a minute ago. */
export class RefreshTooSoon extends Schema.TaggedError<RefreshTooSoon>()("RefreshTooSoon", {
  reference: Schema.String,
  retry_after_seconds: Schema.Int
}) {}

/** How often a tradeflow may be refreshed at most. */
export const refreshInterval = 60_000

/** A tradeflow's tracking, as the console shows it. */
export const TrackingStatus = Schema.Struct({
  source: Schema.NullOr(Schema.String).annotations({
    description: "The tracking source that tracks the tradeflow; null when none does"
  }),
  source_paused: Schema.NullOr(Schema.Struct({
    since: Schema.String,
    until: Schema.String,
    message: Schema.String
  })).annotations({
    description: "Set while the source is paused after refusing our credentials (in this process)"
  }),
  targets: Schema.Array(TrackingTargetInfo)
}).annotations({ identifier: "TrackingStatus", description: "How a tradeflow is tracked" })
export type TrackingStatus = typeof TrackingStatus.Type

export class TrackingAdmin extends Context.Tag("@tradeflow/core/TrackingAdmin")<TrackingAdmin, {
  /** The tracking of the organisation's tradeflow (active or not). */
  readonly status: (
    organisationId: string,
    reference: string
  ) => Effect.Effect<TrackingStatus, TradeflowNotFound | StorageError>
  /**
   * Asks the source about every target of the tradeflow that is not stopped, now (in the
   * background); answers the status before the answers arrive.
   */
  readonly refresh: (
    organisationId: string,
    reference: string
  ) => Effect.Effect<TrackingStatus, TradeflowNotFound | NotTracked | RefreshTooSoon | StorageError>
}>() {}

const iso = (ms: number) => new Date(ms).toISOString()

/** The tracking administration over the tradeflow store and the tracker. */
export const layer: Layer.Layer<TrackingAdmin, never, TradeflowStore | Tracker> = Layer.effect(
  TrackingAdmin,
  Effect.gen(function*() {
    const store = yield* TradeflowStore
    const tracker = yield* Tracker
    const refreshed = new Map<string, number>()

    const find = (organisationId: string, reference: string) =>
      Effect.flatMap(store.get(organisationId, reference), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(new TradeflowNotFound({ reference })),
          onSome: Effect.succeed
        }))

    const statusOf = (t: { readonly tracking: Parameters<typeof trackingInfo>[0] | null }) =>
      Effect.map(tracker.paused, (paused): TrackingStatus => {
        if (t.tracking === null) return { source: null, source_paused: null, targets: [] }
        const pause = paused.get(t.tracking.source)
        return {
          ...trackingInfo(t.tracking),
          source_paused: pause === undefined
            ? null
            : { since: iso(pause.since), until: iso(pause.until), message: pause.message }
        }
      })

    return TrackingAdmin.of({
      status: Effect.fn("TrackingAdmin.status")(function*(organisationId: string, reference: string) {
        return yield* statusOf(yield* find(organisationId, reference))
      }),
      refresh: Effect.fn("TrackingAdmin.refresh")(function*(organisationId: string, reference: string) {
        const t = yield* find(organisationId, reference)
        const live = (t.tracking?.targets ?? []).filter((target) => target.state !== "stopped")
        if (t.tracking === null || live.length === 0) return yield* new NotTracked({ reference })
        const now = yield* Clock.currentTimeMillis
        const key = JSON.stringify([organisationId, reference])
        const last = Math.max(
          refreshed.get(key) ?? -Infinity,
          ...live.map((target) => target.last_check_at ?? -Infinity)
        )
        if (now - last < refreshInterval) {
          return yield* new RefreshTooSoon({
            reference,
            retry_after_seconds: Math.max(1, Math.ceil((last + refreshInterval - now) / 1000))
          })
        }
        refreshed.set(key, now)
        for (const [k, at] of refreshed) if (now - at >= refreshInterval) refreshed.delete(k)
        yield* tracker.refresh(live.map((target) => ({
          organisation_id: organisationId,
          tradeflow_reference: reference,
          target_id: target.id,
          source: target.source,
          query: TrackingTarget.queryOf(target),
          high_water: target.high_water,
          next_check_at: now
        })))
        return yield* statusOf(t)
      })
    })
  })
)
