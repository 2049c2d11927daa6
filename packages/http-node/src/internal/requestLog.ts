import { type HttpApp, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Clock, Effect, Exit, FiberRef, Option } from "effect"
import { apiRouteOf } from "./requestMetrics.js"

/** What a request learns about itself while it is answered: the organisation it acts for. */
interface RequestFacts {
  organisationId: string | undefined
}

const currentRequestFacts = FiberRef.unsafeMake<RequestFacts | undefined>(undefined)

/** Records the organisation the current request acts for (its log line names it). */
export const noteOrganisation = (organisationId: string): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRequestFacts), (facts) => {
    if (facts !== undefined) facts.organisationId = organisationId
  })

/** The `http.route` the router put on the request's span (a web application page), if any. */
const routedOf = (span: Option.Option<{ attributes: ReadonlyMap<string, unknown> }>): string | undefined => {
  const routed = Option.getOrUndefined(span)?.attributes.get("http.route")
  return typeof routed === "string" ? routed : undefined
}

const statusOf = (exit: Exit.Exit<{ readonly status: number }, unknown>): number =>
  Exit.isSuccess(exit)
    ? exit.value.status
    : Cause.isInterruptedOnly(exit.cause)
    ? 499
    : Option.match(Cause.failureOption(exit.cause), {
      onNone: () => 500,
      onSome: (error) => HttpServerError.isServerError(error) && error._tag === "RouteNotFound" ? 404 : 500
    })

/**
 * Around the whole app: the request's server span keeps no URL that may carry a secret (its
 * `url.full`, `url.path` and `url.query` become the route template, or `unmatched`, and a
 * `Referer` header, which may name a page with a token in its path, is redacted), and with
 * `log` one info line per request (`Request answered`) annotated with its route template,
 * method, status, duration and the organisation the request acted for once authenticated.
 */
export const requestLog = (log: boolean) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeMillis
    const span = yield* Effect.option(Effect.currentSpan)
    const scrub = (route: string | undefined) =>
      Option.map(span, (span) => {
        span.attribute("url.full", route ?? "unmatched")
        span.attribute("url.path", route ?? "unmatched")
        if (request.url.includes("?")) span.attribute("url.query", "redacted")
        if (request.headers["referer"] !== undefined) span.attribute("http.request.header.referer", "<redacted>")
        if (route !== undefined) span.attribute("http.route", route)
      })
    const apiRoute = apiRouteOf(request.method, request.url)
    scrub(apiRoute)
    const facts: RequestFacts = { organisationId: undefined }
    return yield* Effect.locally(app, currentRequestFacts, facts).pipe(Effect.onExit((exit) =>
      Effect.gen(function*() {
        const route = apiRoute ?? routedOf(span)
        scrub(route)
        if (!log) return
        const finished = yield* Clock.currentTimeMillis
        yield* Effect.logInfo("Request answered").pipe(
          Effect.annotateLogs({
            route: route ?? "unmatched",
            method: request.method,
            status: statusOf(exit),
            duration_ms: finished - started,
            ...(facts.organisationId === undefined ? {} : { organisation_id: facts.organisationId })
          })
        )
      })
    ))
  })
