import { type HttpApp, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Clock, Effect, Exit, Metric, MetricBoundaries, Option } from "effect"
import { Api, ApiV3 } from "../Api.js"
import { routeOf, routeTable } from "./routes.js"
import { isWebPath } from "./webApp.js"

const requests = Metric.counter("tradeflow_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

const duration = Metric.histogram(
  "tradeflow_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from a request's arrival to its response, by method, route template and status"
)

const routes = routeTable([Api, ApiV3], [["GET", "/openapi.json"], ["GET", "/docs"], ["GET", "/metrics"]])

/** The router path of the API route (or `/openapi.json`, `/docs`, `/metrics`) serving a request, if any. */
export const apiRouteOf = (method: string, url: string): string | undefined =>
  routeOf(routes, method, url.split("?")[0] || "/")

/** The route template of a request: a route's router path, `/app/*` for the web app, else `unmatched`. */
export const routeLabel = (method: string, url: string): string =>
  apiRouteOf(method, url) ?? (isWebPath(url) ? "/app/*" : "unmatched")

const known = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const series = new Map<string, { readonly requests: typeof requests; readonly duration: typeof duration }>()

const seriesOf = (method: string, route: string, status: number) => {
  const key = `${method} ${route} ${status}`
  let found = series.get(key)
  if (found === undefined) {
    const tag = <M extends Metric.Metric<any, any, any>>(metric: M) =>
      metric.pipe(
        Metric.tagged("method", method),
        Metric.tagged("route", route),
        Metric.tagged("status", String(status))
      ) as M
    found = { requests: tag(requests), duration: tag(duration) }
    series.set(key, found)
  }
  return found
}

/**
 * Counts each answered request (`tradeflow_http_requests_total`) and observes its latency
 * (`tradeflow_http_request_duration_seconds`) by method, route template (never the raw path) and
 * status; a failure the app lets through counts as 500, one outside the app's prefix not at all.
 */
export const requestMetrics = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) =>
      Effect.flatMap(Clock.currentTimeNanos, (start) =>
        Effect.onExit(app, (exit) => {
          const status = Exit.isSuccess(exit)
            ? exit.value.status
            : Cause.isInterruptedOnly(exit.cause) ||
                Option.exists(Cause.failureOption(exit.cause), HttpServerError.isServerError)
            ? undefined
            : 500
          if (status === undefined) return Effect.void
          const method = known.has(request.method) ? request.method : "other"
          const metrics = seriesOf(method, routeLabel(request.method, request.url), status)
          return Effect.flatMap(Clock.currentTimeNanos, (end) =>
            Effect.zipRight(
              Metric.increment(metrics.requests),
              Metric.update(metrics.duration, Number(end - start) / 1e9)
            ))
        }))
  )
