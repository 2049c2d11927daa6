import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { RateLimitStore } from "@tradeflow/core"
import { Clock, Effect, Option, type Scope } from "effect"
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

/**
 * The rate limits of settings' `rateLimits`: a request of the public API carrying a credential
 * (an API key on downstream, upstream and DCSA paths, a widget key on the widget search) counts one
 * hit of its key in the current fixed window of the policy of the host's environment and the kind
 * of key, in the `RateLimitStore` (so every process on one database shares the count), before it
 * is authenticated. Its answer carries `RateLimit-Policy` and `RateLimit`; once the quota is spent
 * it is answered 429 with `Retry-After` (the seconds until the window ends) and nothing runs. The
 * store keeps a SHA-256 digest of the credential, never the credential. Requests without a
 * credential or on a host of neither environment, and every other path, pass untouched; so does a
 * request whose count the store cannot take (logged). Ended windows are removed about once a
 * minute, in the background of `scope`.
 */
export const rateLimit = (settings: HttpSettings, store: RateLimitStore.RateLimitStore["Type"], scope: Scope.Scope) => {
  let nextPrune = 0
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
        const counted = yield* store.hit(key, window).pipe(
          Effect.map(Option.some),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning("rate limits: the request could not be counted", error), Option.none())
          )
        )
        if (Option.isNone(counted)) return yield* app
        const hits = counted.value
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
}
