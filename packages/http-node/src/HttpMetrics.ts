/**
 * The metrics endpoint: Effect's metric registry (`Metric.snapshot`) in the Prometheus text format,
 * the queue and outbox backlogs and the process's memory and event-loop delay sampled at each
 * scrape. `HttpApp.makeApp` answers `GET /metrics` on the hosts of `HttpConfig`'s `metricsHosts`;
 * {@link makeApp} and {@link layer} serve it on a listener of its own.
 *
 * @module
 */
import { type HttpApp, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { DeliveryAdmin, JobAdmin, ServiceMetrics } from "@tradeflow/core"
import { Clock, Effect, Layer, Metric, type Scope } from "effect"
import { noResource } from "./internal/errors.js"
import { makeProcessSampler } from "./internal/processMetrics.js"
import { contentType, render } from "./internal/prometheus.js"

const backlogTimeout = "2 seconds"

/**
 * The `GET /metrics` response, built in the current scope (the event-loop monitor runs as long as
 * it): each call samples the backlogs through `JobAdmin` and `DeliveryAdmin` (a storage failure, or no
 * answer within 2 seconds, is logged and leaves their gauges as they were) and the process, then renders every metric.
 */
export const makeResponse: Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse>,
  never,
  Scope.Scope | JobAdmin.JobAdmin | DeliveryAdmin.DeliveryAdmin
> = Effect.gen(function*() {
  const jobs = yield* JobAdmin.JobAdmin
  const deliveries = yield* DeliveryAdmin.DeliveryAdmin
  const sampleProcess = yield* makeProcessSampler
  const sampleBacklogs = Effect.all([jobs.backlog, deliveries.backlog, Clock.currentTimeMillis]).pipe(
    Effect.timeoutFail({ duration: backlogTimeout, onTimeout: () => `no answer within ${backlogTimeout}` }),
    Effect.flatMap(([queue, outbox, now]) => ServiceMetrics.sampleBacklogs(queue, outbox, now)),
    Effect.catchAll((error) => Effect.logWarning("metrics: the backlogs could not be read", error))
  )
  return Effect.gen(function*() {
    yield* sampleBacklogs
    yield* sampleProcess
    const body = render(yield* Metric.snapshot)
    return HttpServerResponse.text(body, { contentType, headers: { "cache-control": "no-store" } })
  })
})

/** An app answering `GET /metrics` only (404 on anything else), built in the current scope. */
export const makeApp: Effect.Effect<
  HttpApp.Default,
  never,
  Scope.Scope | JobAdmin.JobAdmin | DeliveryAdmin.DeliveryAdmin
> = Effect.map(
  makeResponse,
  (respond) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => request.method === "GET" && request.url.split("?")[0] === "/metrics" ? respond : noResource(request)
    )
)

/** {@link makeApp} served on an `HttpServer` of its own (a metrics port). */
export const layer: Layer.Layer<never, never, HttpServer.HttpServer | JobAdmin.JobAdmin | DeliveryAdmin.DeliveryAdmin> =
  Layer.scopedDiscard(Effect.flatMap(makeApp, HttpServer.serveEffect))
