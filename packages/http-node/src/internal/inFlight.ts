import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import type { HttpSettings } from "../HttpConfig.js"
import * as Problem from "../Problem.js"

const upstreamPath = /^(\/v3)?\/upstream\/?$/

/**
 * Requests in flight per credential: a request carrying an `Authorization` value that already has
 * `maxInFlightPerKey` requests in flight (or, for `GET /upstream`, `maxUpstreamInFlightPerKey`
 * upstream requests) is answered 429 with `Retry-After: 1` before anything is read. The count
 * covers the whole request, body included, and is released however the request ends.
 */
export const inFlightLimit = (settings: HttpSettings) => {
  const all = new Map<string, number>()
  const upstream = new Map<string, number>()
  const enter = (counts: Map<string, number>, key: string, limit: number): boolean => {
    const current = counts.get(key) ?? 0
    if (current >= limit) return false
    counts.set(key, current + 1)
    return true
  }
  const leave = (counts: Map<string, number>, key: string) => {
    const current = counts.get(key) ?? 1
    if (current <= 1) counts.delete(key)
    else counts.set(key, current - 1)
  }
  const busy = (limit: number, what: string) =>
    Effect.succeed(Problem.toResponse(
      Problem.make(429, `at most ${limit} ${what} may be in flight at once for one key; retry when one has finished`),
      { "retry-after": "1" }
    ))
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const key = request.headers["authorization"]?.trim()
      if (key === undefined || key === "") return app
      const isUpstream = upstreamPath.test(request.url.split("?")[0] ?? "")
      if (isUpstream && !enter(upstream, key, settings.maxUpstreamInFlightPerKey)) {
        return busy(settings.maxUpstreamInFlightPerKey, "upstream requests")
      }
      if (!enter(all, key, settings.maxInFlightPerKey)) {
        if (isUpstream) leave(upstream, key)
        return busy(settings.maxInFlightPerKey, "requests")
      }
      return Effect.ensuring(
        app,
        Effect.sync(() => {
          leave(all, key)
          if (isUpstream) leave(upstream, key)
        })
      )
    })
}
