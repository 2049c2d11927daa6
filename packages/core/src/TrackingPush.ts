/**
 * Service: events a tracking source pushes. A callback of a DCSA 2.2 event subscription names its
 * subscription (`Subscription-ID`) and is signed with its secret (`Notification-Signature`): it is
 * verified against the subscription the `Tracker` took for a target (`TrackingStore`), in constant
 * time, and its events are queued durably as a `Track` job of the target's tradeflow before it is
 * answered; the worker merges them as it merges polled events (the target's high-water mark stays:
 * polling still covers everything). A callback that is unsigned, forged, or names a subscription we
 * do not hold stores nothing.
 *
 * A source that pushes to our consumer endpoint (DCSA 3.0) authenticates its pushes itself (its
 * `ConsumerPush.read`); each event is queued for the tradeflows whose targets of that source it
 * concerns, in every organisation.
 *
 * @module
 */
import { Clock, Context, Effect, Either, Encoding, Layer, Option, Redacted } from "effect"
import { trackJobs } from "./internal/trackJobs.js"
import type { Enqueue } from "./Job.js"
import { JobQueue } from "./JobQueue.js"
import { OrganisationStore } from "./OrganisationStore.js"
import type { StorageError } from "./StorageError.js"
import { concerns, type PushedRequest, PushRefused, type PushUnreadable, TrackingSources } from "./TrackingSource.js"
import { TrackingStore } from "./TrackingStore.js"
import { Worker } from "./Worker.js"

/** A DCSA feedback element of a consumer push's answer. */
export interface FeedbackElement {
  readonly severity: "ERROR" | "WARN" | "INFO"
  readonly message: string
  readonly propertyPath?: string | undefined
}

/** The answer to a consumer push (DCSA 3.0 `PostEventsResponse`). */
export interface ConsumerAnswer {
  readonly feedbackElements: ReadonlyArray<FeedbackElement>
}

export class TrackingPush extends Context.Tag("@tradeflow/core/TrackingPush")<TrackingPush, {
  /**
   * Verifies a callback of `source`'s subscriptions and queues its events for the subscription's
   * target; succeeds once they are stored (an empty callback queues nothing).
   */
  readonly callback: (
    source: string,
    request: PushedRequest
  ) => Effect.Effect<void, PushRefused | PushUnreadable | StorageError>
  /**
   * Reads what `source` pushed to its consumer endpoint (DCSA 3.0 `POST /events`, authenticated
   * by the source) and queues each event for every target of that source it concerns (its
   * container, bookings and bills of lading; stopped targets left out), in every organisation;
   * succeeds once they are stored, with feedback on each event that could not be read (ERROR) or
   * that no tracked target concerns (WARN).
   */
  readonly consume: (
    source: string,
    request: PushedRequest
  ) => Effect.Effect<ConsumerAnswer, PushRefused | PushUnreadable | StorageError>
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
          yield* queue.enqueue(
            yield* trackJobs(organisations)(subscription.organisation_id, {
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
            })
          )
          yield* worker.wake
        }),
        consume: Effect.fn("TrackingPush.consume")(function*(source: string, request: PushedRequest) {
          const push = Option.flatMap(
            Option.flatMap(sources, (registry) => registry.get(source)),
            (s) => s.push?._tag === "Consumer" ? Option.some(s.push) : Option.none()
          )
          if (Option.isNone(push)) return yield* refused(source, `no source ${source} pushes to a consumer here`)
          const pushed = yield* push.value.read(request)
          const feedback: Array<FeedbackElement> = pushed.malformed.map((m) => ({
            severity: "ERROR" as const,
            message: m.message,
            propertyPath: `$.events[${m.index}]`
          }))
          const events = pushed.events
          const references = {
            equipment: [
              ...new Set(events.flatMap((e) => e.container_reference === null ? [] : [e.container_reference]))
            ],
            booking: [...new Set(events.flatMap((e) => e.bookings))],
            bill_of_lading: [...new Set(events.flatMap((e) => e.bills_of_lading))]
          }
          const targets = events.length === 0
            ? []
            : (yield* store.targetsAbout(source, references)).filter((t) => !t.stopped)
          const now = yield* Clock.currentTimeMillis
          const byTradeflow = new Map<
            string,
            { readonly target: (typeof targets)[number]; readonly events: Set<number> }
          >()
          for (const target of targets) {
            const key = JSON.stringify([target.organisation_id, target.tradeflow_reference])
            const entry = byTradeflow.get(key) ?? { target, events: new Set<number>() }
            events.forEach((e, i) => {
              if (concerns(target.query, e)) entry.events.add(i)
            })
            if (entry.events.size > 0) byTradeflow.set(key, entry)
          }
          const trackJob = trackJobs(organisations)
          const jobs: Array<Enqueue> = []
          const matched = new Set<number>()
          for (const { events: indices, target } of byTradeflow.values()) {
            for (const i of indices) matched.add(i)
            jobs.push({
              job: yield* trackJob(target.organisation_id, {
                reference: target.tradeflow_reference,
                target_id: null,
                source,
                checked_at: now,
                outcome: {
                  _tag: "Fetched",
                  status: "found",
                  events: [...indices].sort((a, b) => a - b).map((i) => events[i]!),
                  malformed: [],
                  high_water: null
                }
              })
            })
          }
          events.forEach((e, i) => {
            if (!matched.has(i)) {
              feedback.push({ severity: "WARN", message: `no tracked target concerns event ${e.event_id}` })
            }
          })
          if (jobs.length > 0) {
            yield* queue.enqueueAll(jobs)
            yield* worker.wake
          }
          return { feedbackElements: feedback }
        })
      })
    })
  )
