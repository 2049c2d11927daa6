/**
 * Service: the tracker. Every few seconds it claims the tracked targets that are due
 * (`TrackingStore.claim`: leased, so processes sharing a database never ask about one target at
 * the same time), asks each target's source for the events updated since the target's high-water
 * mark, and queues what the source answered (or how it failed) as a `Track` job of the target's
 * organisation. The worker merges it, in the organisation's order, and moves the target's next
 * check on (see `TrackingUpdate`, `TrackingTarget`); a fetch whose answer is never queued (the
 * process died) is made again once the lease runs out.
 *
 * Without `TrackingSources` in its context the tracker runs no background fiber (a host that
 * configured no source at all); with a registry, even an empty one, it does.
 *
 * A source that pushes by subscription (DCSA 2.2) is asked to subscribe each target when it is
 * first claimed (given `publicBaseUrl`: the callback is {@link callbackPath} under it); the
 * subscription is kept (`TrackingStore`) until its target stops or goes, then removed at the
 * source and here (the tracker looks for such subscriptions at most once a minute). Polling goes on at the target's cadence, subscribed or not.
 *
 * A source that refuses our credentials is paused: its targets are not claimed for `pause`
 * (default 15 minutes), then tried again; `paused` reports it. A target whose source is no longer
 * configured is stopped. Time comes from `Clock` (tests drive it with `TestClock`).
 *
 * @module
 */
import { Clock, Context, Duration, Effect, Encoding, Layer, Option, Redacted, Ref } from "effect"
import { trackJobs } from "./internal/trackJobs.js"
import type { Enqueue, TrackJob } from "./Job.js"
import { JobQueue } from "./JobQueue.js"
import { OrganisationStore } from "./OrganisationStore.js"
import * as Readiness from "./Readiness.js"
import * as ServiceMetrics from "./ServiceMetrics.js"
import type { StorageError } from "./StorageError.js"
import { SourceTransient, type TrackingSourceError, TrackingSources } from "./TrackingSource.js"
import { type DueTarget, TrackingStore } from "./TrackingStore.js"
import { Worker } from "./Worker.js"

const base64 = (bytes: Uint8Array): string => Encoding.encodeBase64(bytes)

/** A source paused after refusing our credentials. */
export interface PausedSource {
  readonly since: number
  readonly until: number
  readonly message: string
}

export class Tracker extends Context.Tag("@tradeflow/core/Tracker")<Tracker, {
  /** Claims the due targets (at most `batchSize`), asks their sources and queues the answers; answers how many it asked. */
  readonly tick: Effect.Effect<number, StorageError>
  /** The sources paused now, by id. */
  readonly paused: Effect.Effect<ReadonlyMap<string, PausedSource>>
  /**
   * Asks the sources about these targets now, whether they are due or not, in the background (in
   * the tracker's scope): their answers are queued as `Track` jobs like those of `tick`.
   */
  readonly refresh: (targets: ReadonlyArray<DueTarget>) => Effect.Effect<void>
}>() {}

/** Options of the tracker. */
export interface TrackerOptions {
  /**
   * How often due targets are looked for (default 5 seconds): a new target is first asked about
   * within it. After a tick that claimed a whole batch, the next one follows at once.
   */
  readonly interval?: Duration.DurationInput | undefined
  /** Targets claimed per tick at most (default 100); the rest follow on the next ticks. */
  readonly batchSize?: number | undefined
  /** Fetches in flight at once (default 8). */
  readonly concurrency?: number | undefined
  /**
   * How long a claimed target stays leased (default 2 minutes): its question is given up before
   * then, so that a slow source is never asked about one target by two processes at once.
   */
  readonly leaseMillis?: number | undefined
  /** How long one fetch may take, pages included, before it counts as a transient failure (default 60 seconds). */
  readonly fetchTimeout?: Duration.DurationInput | undefined
  /** How long a source that refused our credentials is paused (default 15 minutes). */
  readonly pause?: Duration.DurationInput | undefined
  /** false: no background fiber; targets are asked about only on `tick` (tests, or a host with its own timer). */
  readonly background?: boolean | undefined
  /** The background fiber starts only once this effect has completed (for example: the server listens). */
  readonly startAfter?: Effect.Effect<void> | undefined
  /**
   * The public base URL of this service (`https://tracking.example`), under which sources that push
   * by subscription are given their callback URL ({@link callbackPath}); without it no subscription
   * is taken, and those sources are only polled.
   */
  readonly publicBaseUrl?: string | undefined
}

/** The path of the callback a source's subscriptions push to (the HTTP adapter serves it). */
export const callbackPath = (source: string): string => `/tracking/sources/${encodeURIComponent(source)}/callback`

/** A source's failure as a `Track` job's outcome. */
const failed = (error: TrackingSourceError): TrackJob["outcome"] => {
  switch (error._tag) {
    case "SourceUnauthorized":
      return { _tag: "FetchFailed", kind: "unauthorized", message: error.message }
    case "SourceRateLimited":
      return {
        _tag: "FetchFailed",
        kind: "rate_limited",
        message: error.message,
        retry_after_millis: error.retry_after_millis
      }
    case "SourceNotFound":
      return { _tag: "FetchFailed", kind: "not_found", message: error.message }
    case "SourceTransient":
      return { _tag: "FetchFailed", kind: "transient", message: error.message }
    case "SourceMalformed":
      return { _tag: "FetchFailed", kind: "malformed", message: error.message }
  }
}

/**
 * The tracker over the storage ports and the process's `TrackingSources` (a target whose source
 * the registry lacks is stopped). With `background` (default) and a registry it ticks for the
 * lifetime of the layer; a scoped layer, whose fiber stops when the host's scope closes.
 */
export const layer = (
  options: TrackerOptions = {}
): Layer.Layer<Tracker, never, TrackingStore | JobQueue | OrganisationStore | Worker> =>
  Layer.scoped(
    Tracker,
    Effect.gen(function*() {
      const store = yield* TrackingStore
      const queue = yield* JobQueue
      const organisations = yield* OrganisationStore
      const worker = yield* Worker
      const sources = yield* Effect.serviceOption(TrackingSources)
      const interval = options.interval ?? Duration.seconds(5)
      const batchSize = Math.max(1, options.batchSize ?? 100)
      const concurrency = Math.max(1, options.concurrency ?? 8)
      const leaseMillis = Math.max(1, options.leaseMillis ?? 120_000)
      const fetchTimeout = options.fetchTimeout ?? Duration.seconds(60)
      const pauseMillis = Duration.toMillis(options.pause ?? Duration.minutes(15))
      const paused = yield* Ref.make<ReadonlyMap<string, PausedSource>>(new Map())
      const lock = yield* Effect.makeSemaphore(1)
      const sweepMillis = 60_000
      let lastSwept = -Infinity

      const ask = (target: DueTarget, now: number): Effect.Effect<TrackJob["outcome"]> => {
        const source = Option.flatMap(sources, (registry) => registry.get(target.source))
        if (Option.isNone(source)) {
          return Effect.succeed({
            _tag: "FetchFailed",
            kind: "unknown_source",
            message: `no source ${target.source} is configured`
          })
        }
        return source.value.fetch({ query: target.query, since: target.high_water }).pipe(
          Effect.timeoutFail({
            duration: fetchTimeout,
            onTimeout: () => new SourceTransient({ source: target.source, message: "the fetch timed out" })
          }),
          Effect.map((result): TrackJob["outcome"] => ({
            _tag: "Fetched",
            status: result.status,
            events: result.events,
            malformed: result.malformed,
            high_water: result.high_water
          })),
          Effect.catchAll((error) =>
            error._tag === "SourceUnauthorized"
              ? Effect.as(
                Ref.update(
                  paused,
                  (m) => new Map(m).set(target.source, { since: now, until: now + pauseMillis, message: error.message })
                ),
                failed(error)
              ).pipe(
                Effect.tap(() => Effect.logError(`tracking: source ${target.source} refused our credentials, paused`))
              )
              : Effect.succeed(failed(error))
          ),
          Effect.catchAllDefect((defect) =>
            Effect.succeed<TrackJob["outcome"]>({
              _tag: "FetchFailed",
              kind: "transient",
              message: `the source failed: ${String(defect)}`
            })
          )
        )
      }

      const callbackBase = options.publicBaseUrl?.replace(/\/+$/, "")
      const pushOf = (id: string) =>
        Option.flatMap(sources, (registry) =>
          Option.flatMap(registry.get(id), (source) =>
            source.push?._tag === "Subscription" ? Option.some(source.push) : Option.none()))

      /**
       * Subscribes the targets whose source pushes by subscription and that have none yet; a
       * failure is logged, and the target is subscribed at its next check.
       */
      const subscribe = (targets: ReadonlyArray<DueTarget>, now: number): Effect.Effect<void, StorageError> =>
        Effect.gen(function*() {
          if (callbackBase === undefined) {
            return
          }
          const wanted = targets.filter((t) =>
            Option.isSome(pushOf(t.source))
          )
          const held = new Map<string, Set<string>>()
          for (const target of wanted) {
            const key = JSON.stringify([target.organisation_id, target.tradeflow_reference])
            if (!held.has(key)) {
              const kept = yield* store.subscriptionsOf(target.organisation_id, target.tradeflow_reference)
              held.set(key, new Set(kept.map((s) => JSON.stringify([s.source, s.target_id]))))
            }
            if (held.get(key)!.has(JSON.stringify([target.source, target.target_id]))) continue
            const push = Option.getOrThrow(pushOf(target.source))
            yield* push.subscribe(target.query, `${callbackBase}${callbackPath(target.source)}`).pipe(
              Effect.flatMap((subscription) =>
                store.putSubscription({
                  source: target.source,
                  subscription_id: subscription.id,
                  organisation_id: target.organisation_id,
                  tradeflow_reference: target.tradeflow_reference,
                  target_id: target.target_id,
                  secret: base64(Redacted.value(subscription.secret)),
                  created_at: now
                })
              ),
              Effect.catchAll((e) =>
                e._tag === "StorageError"
                  ? Effect.fail(e)
                  : Effect.logWarning(`tracking: ${target.source} refused a subscription`, e.message)
              )
            )
          }
        })

      /** Removes subscriptions whose target no longer needs them, at their source, then here. */
      const unsubscribeStale: Effect.Effect<void, StorageError> = Effect.gen(function*() {
        for (const stale of yield* store.staleSubscriptions(batchSize)) {
          const push = pushOf(stale.source)
          const removed = Option.isNone(push)
            ? Effect.succeed(true)
            : push.value.unsubscribe(stale.subscription_id).pipe(
              Effect.as(true),
              Effect.catchAll((e) =>
                Effect.as(
                  Effect.logWarning(`tracking: ${stale.source} did not remove a subscription`, e.message),
                  false
                )
              )
            )
          if (yield* removed) yield* store.removeSubscription(stale.source, stale.subscription_id)
        }
      })

      /**
       * Asks about the targets and queues their answers as `Track` jobs of their organisations, in one
       * enqueue. Every question ends before the claim's lease does (less a tenth of it, at most 10
       * seconds): a target not answered by then is left out, with no job, so that no other process
       * asks about it while this one still does; once its lease is over it is claimed again.
       */
      const askAll = (targets: ReadonlyArray<DueTarget>, now: number): Effect.Effect<void, StorageError> =>
        Effect.gen(function*() {
          yield* subscribe(targets, now)
          const deadline = now + leaseMillis - Math.min(leaseMillis / 10, 10_000)
          const outcomes = yield* Effect.forEach(
            targets,
            (target) =>
              Effect.flatMap(Clock.currentTimeMillis, (at) =>
                at >= deadline
                  ? Effect.succeedNone
                  : Effect.timeoutOption(
                    Effect.tap(ask(target, now), (outcome) =>
                      ServiceMetrics.recordFetch(
                        Option.isSome(Option.flatMap(sources, (registry) => registry.get(target.source)))
                          ? target.source
                          : "unknown",
                        outcome._tag === "Fetched" ? "fetched" : outcome.kind
                      )),
                    Duration.millis(deadline - at)
                  )),
            { concurrency }
          )
          const trackJob = trackJobs(organisations)
          const entries: Array<Enqueue> = []
          for (const [i, target] of targets.entries()) {
            const outcome = outcomes[i]!
            if (Option.isNone(outcome)) continue
            entries.push({
              job: yield* trackJob(target.organisation_id, {
                reference: target.tradeflow_reference,
                target_id: target.target_id,
                source: target.source,
                checked_at: now,
                outcome: outcome.value
              })
            })
          }
          if (entries.length === 0) return
          yield* queue.enqueueAll(entries)
          yield* worker.wake
        })

      const tick: Effect.Effect<number, StorageError> = lock.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const stillPaused = new Map([...(yield* Ref.get(paused))].filter(([, p]) => p.until > now))
        yield* Ref.set(paused, stillPaused)
        if (now - lastSwept >= sweepMillis) {
          lastSwept = now
          yield* unsubscribeStale
        }
        const due = yield* store.claim({ now, limit: batchSize, leaseMillis, exclude: [...stillPaused.keys()] })
        if (due.length === 0) return 0
        yield* askAll(due, now)
        return due.length
      })).pipe(Effect.withSpan("Tracker.tick"))

      const scope = yield* Effect.scope
      const refresh = (targets: ReadonlyArray<DueTarget>): Effect.Effect<void> =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => askAll(targets, now)),
          Effect.catchAll((e) => Effect.logWarning("tracker: a refresh could not be queued", e)),
          Effect.forkIn(scope),
          Effect.asVoid
        )

      if ((options.background ?? true) && Option.isSome(sources)) {
        yield* Readiness.background(
          "tracker",
          options.startAfter,
          tick.pipe(
            Effect.catchAll((e) => Effect.as(Effect.logWarning("tracker: storage unavailable, retrying", e), 0)),
            Effect.flatMap((asked) => asked >= batchSize ? Effect.yieldNow() : Effect.sleep(interval)),
            Effect.forever
          )
        )
      }

      return Tracker.of({ tick, paused: Ref.get(paused), refresh })
    })
  )
