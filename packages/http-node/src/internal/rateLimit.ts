import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { RateLimitStore } from "@tradeflow/core"
import { Cause, Clock, Effect, Option, Queue, type Scope } from "effect"
import { createHash } from "node:crypto"
import type { HttpSettings, RateLimitPolicy } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { hostEnvironment, requestHost } from "./hosts.js"
import { widgetKeyOf } from "./widget.js"

const apiKeyPath = /^(?:\/v3)?\/(?:downstream|upstream|dcsa)(?:\/|$)/
const widgetPath = /^(?:\/v3)?\/api\/v2\/widget-search\/?$/

/** How often one application removes the counters of ended windows, and how many at a time. */
const pruneEveryMillis = 60_000
const pruneBatch = 1_000

/** The `RateLimit-Policy` and `RateLimit` header fields (draft-ietf-httpapi-ratelimit-headers). */
export const rateLimitHeaders = (
  policy: RateLimitPolicy,
  hits: number,
  resetSeconds: number
): Record<string, string> => ({
  "ratelimit-policy": `"default";q=${policy.quota};w=${policy.windowSeconds}`,
  "ratelimit": `"default";r=${Math.max(0, policy.quota - hits)};t=${resetSeconds}`
})

/** The fixed window of `policy` holding the instant `now`. */
export const windowOf = (policy: RateLimitPolicy, now: number): RateLimitStore.Window => {
  const millis = policy.windowSeconds * 1000
  const start = Math.floor(now / millis) * millis
  return { start, end: start + millis }
}

const kindName = { apiKey: "API key", widgetKey: "widget key" } as const

/** How long a key's count may go without a write to the store (and without learning the other processes' hits). */
export const syncMillis = 250

/** Counters one application keeps at most (the oldest is forgotten first: a flood of unknown keys). */
const maxCounters = 100_000

/** A key's count in its current window, as this application knows it. */
interface Counter {
  readonly key: string
  readonly window: RateLimitStore.Window
  /** The store's total as last learned, this application's written hits included. */
  shared: number
  /** Hits counted here and not yet written. */
  pending: number
  /** Hits being written. */
  writing: number
  /** When the counter was last written (its total learned). */
  syncedAt: number
}

/**
 * The rate limits of settings' `rateLimits`: a request of the public API carrying a credential
 * (an API key on downstream, upstream and DCSA paths, a widget key on the widget search) counts one
 * hit of its key in the current fixed window of the policy of the host's environment and the kind
 * of key, before it is authenticated, in the `RateLimitStore` that every process on the database
 * shares. A key's hits are written, and its total learned, by the first request after
 * {@link syncMillis} without a write, which waits for it; the requests in between count here and
 * are written together in the background within {@link syncMillis} (one statement for every key).
 * So a key's count is exact within one process, and across processes a key may pass its quota by
 * what the other processes let through within one such interval. Its answer carries
 * `RateLimit-Policy` and `RateLimit`; once the quota is spent it is answered 429 with `Retry-After`
 * (the seconds until the window ends) and nothing runs. The store keeps a SHA-256 digest of the
 * credential, never the credential. Requests without a credential or on a host of neither
 * environment, and every other path, pass untouched. A failed write leaves the hits to the next
 * one (logged at most once a minute; meanwhile this process counts alone); ended windows are
 * removed about once a minute. A background write is scheduled only while hits wait for one (an
 * idle application has no timer), in the current scope; closing it writes what is left.
 */
export const rateLimit = (
  settings: HttpSettings,
  store: RateLimitStore.RateLimitStore["Type"]
): Effect.Effect<<E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const counters = new Map<string, Counter>()
    let nextPrune = 0
    let nextWarning = 0
    const prune = (now: number): Effect.Effect<void> => {
      if (now < nextPrune) return Effect.void
      nextPrune = now + pruneEveryMillis
      const sweep: Effect.Effect<number, unknown> = Effect.flatMap(
        store.prune(now, pruneBatch),
        (removed) => removed < pruneBatch ? Effect.succeed(removed) : sweep
      )
      return Effect.asVoid(Effect.forkIn(
        Effect.catchAllCause(sweep, (cause) => Effect.logWarning("rate limits: removing ended windows failed", cause)),
        scope
      ))
    }
    const write = (batch: ReadonlyArray<Counter>, now: number): Effect.Effect<void> => {
      for (const counter of batch) {
        counter.writing = counter.pending
        counter.pending = 0
        counter.syncedAt = now
      }
      return store.add(batch.map((c) => ({ key: c.key, window: c.window, hits: c.writing }))).pipe(
        Effect.matchCauseEffect({
          onSuccess: (totals) =>
            Effect.sync(() => {
              for (const [i, counter] of batch.entries()) {
                counter.shared = totals[i] ?? counter.shared + counter.writing
                counter.writing = 0
              }
            }),
          onFailure: (cause) =>
            Effect.suspend(() => {
              for (const counter of batch) {
                counter.pending += counter.writing
                counter.writing = 0
              }
              if (Cause.isInterruptedOnly(cause) || now < nextWarning) return Effect.void
              nextWarning = now + pruneEveryMillis
              return Effect.logWarning("rate limits: the counts could not be written; retrying", cause)
            })
        })
      )
    }
    const sync = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const batch = [...counters.values()].filter((c) => c.pending > 0 && c.writing === 0)
      return batch.length === 0 ? Effect.void : write(batch, now)
    })
    const forgetEnded = (now: number) =>
      Effect.sync(() => {
        for (const [name, counter] of counters) {
          if (counter.window.end <= now && counter.pending === 0 && counter.writing === 0) counters.delete(name)
        }
      })
    const due = yield* Queue.sliding<void>(1)
    const schedule = Queue.offer(due, undefined)
    yield* Queue.take(due).pipe(
      Effect.zipRight(Effect.sleep(syncMillis)),
      Effect.zipRight(sync),
      Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, forgetEnded)),
      Effect.zipRight(Effect.suspend(() => [...counters.values()].some((c) => c.pending > 0) ? schedule : Effect.void)),
      Effect.forever,
      Effect.forkIn(scope)
    )
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.timeout(sync, "2 seconds")))
    return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const path = request.url.split("?")[0] ?? "/"
        const kind = widgetPath.test(path) ? "widgetKey" : apiKeyPath.test(path) ? "apiKey" : undefined
        if (kind === undefined) return app
        const authorization = request.headers["authorization"] ?? ""
        const credential = kind === "widgetKey"
          ? widgetKeyOf(authorization)
          : authorization.trim().replace(/^bearer\s+/i, "")
        if (credential === undefined || credential === "") return app
        const environment = hostEnvironment(settings, requestHost(settings, request.headers))
        if (Option.isNone(environment)) return app
        const policy = settings.rateLimits[environment.value][kind]
        if (policy === null) return app
        return Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* prune(now)
          const window = windowOf(policy, now)
          const key = `${environment.value}:${kind}:${createHash("sha256").update(credential, "utf8").digest("base64")}`
          let counter = counters.get(key)
          if (counter === undefined || counter.window.start !== window.start) {
            counter = { key, window, shared: 0, pending: 0, writing: 0, syncedAt: -Infinity }
            if (!counters.has(key) && counters.size >= maxCounters) {
              const oldest = counters.keys().next()
              if (oldest.done !== true) counters.delete(oldest.value)
            }
            counters.set(key, counter)
          }
          counter.pending++
          if (counter.writing === 0 && now - counter.syncedAt >= syncMillis) yield* write([counter], now)
          if (counter.pending > 0) yield* schedule
          const hits = counter.shared + counter.writing + counter.pending
          const reset = Math.max(1, Math.ceil((window.end - now) / 1000))
          const headers = rateLimitHeaders(policy, hits, reset)
          if (hits > policy.quota) {
            return Problem.toResponse(
              Problem.make(
                429,
                `at most ${policy.quota} requests every ${policy.windowSeconds} s for one ${
                  kindName[kind]
                } in ${environment.value}; retry in ${reset} s`
              ),
              { ...headers, "retry-after": String(reset) }
            )
          }
          return HttpServerResponse.setHeaders(yield* app, headers)
        })
      })
  })
