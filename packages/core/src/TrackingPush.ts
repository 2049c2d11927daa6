/**
 * Service: events a tracking source pushes. A callback of a DCSA 2.2 event subscription names its
 * subscription (`Subscription-ID`) and is signed with its secret (`Notification-Signature`): it is
 * verified against the subscription the `Tracker` took for a target (`TrackingStore`), in constant
 * time, and its events are queued durably as a `Track` job of the target's tradeflow before it is
 * answered; the worker merges them as it merges polled events (the target's high-water mark stays:
 * polling still covers everything). A callback that is unsigned, forged, or names a subscription we
 * do not hold stores nothing.
 *
 * @module
 */
import { Clock, Context, Effect, Either, Encoding, Layer, Option, Redacted } from "effect"
import { JobQueue } from "./JobQueue.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StorageError } from "./StorageError.js"
import { type PushedRequest, PushRefused, TrackingSources } from "./TrackingSource.js"
import { TrackingStore } from "./TrackingStore.js"
import { Worker } from "./Worker.js"

export class TrackingPush extends Context.Tag("@tradeflow/core/TrackingPush")<TrackingPush, {
  /**
   * Verifies a callback of `source`'s subscriptions and queues its events for the subscription's
   * target; succeeds once they are stored (an empty callback queues nothing).
   */
  readonly callback: (source: string, request: PushedRequest) => Effect.Effect<void, PushRefused | StorageError>
}>() {}

/** The push service over the storage ports and the process's `TrackingSources` (none: every push is refused). */
export const layer: Layer.Layer<TrackingPush, never, TrackingStore | JobQueue | OrganisationStore | Worker> = Layer
  .effect(
    TrackingPush,
    Effect.gen(function*() {
      const store = yield* TrackingStore
      const queue = yield* JobQueue
      const organisations = yield* OrganisationStore
      const worker = yield* Worker
      const sources = yield* Effect.serviceOption(TrackingSources)
      const refused = (source: string, message: string) => new PushRefused({ source, message })

      return TrackingPush.of({
        callback: Effect.fn("TrackingPush.callback")(function*(source: string, request: PushedRequest) {
          const push = Option.flatMap(
            Option.flatMap(sources, (registry) => registry.get(source)),
            (s) => s.push?._tag === "Subscription" ? Option.some(s.push) : Option.none()
          )
          if (Option.isNone(push)) return yield* refused(source, `no source ${source} pushes by subscription here`)
          const id = push.value.subscriptionOf(request)
          if (Option.isNone(id)) return yield* refused(source, "the push names no subscription")
          const stored = yield* store.subscription(source, id.value)
          if (Option.isNone(stored)) return yield* refused(source, `no subscription ${id.value} is held`)
          const secret = Encoding.decodeBase64(stored.value.secret)
          if (Either.isLeft(secret)) return yield* refused(source, "the subscription's secret cannot be read")
          const pushed = yield* push.value.verify(request, { id: id.value, secret: Redacted.make(secret.right) })
          if (pushed.events.length === 0 && pushed.malformed.length === 0) return
          const subscription = stored.value
          const now = yield* Clock.currentTimeMillis
          const environment = Option.match(yield* organisations.get(subscription.organisation_id), {
            onNone: () => "production" as const,
            onSome: (o) => o.environment
          })
          yield* queue.enqueue({
            organisation_id: subscription.organisation_id,
            environment,
            payload: {
              _tag: "Track",
              reference: subscription.tradeflow_reference,
              target_id: subscription.target_id,
              source,
              checked_at: now,
              outcome: {
                _tag: "Fetched",
                status: pushed.events.length > 0 ? "found" : "awaiting",
                events: pushed.events,
                malformed: pushed.malformed,
                high_water: null
              }
            },
            received_at: now
          })
          yield* worker.wake
        })
      })
    })
  )
