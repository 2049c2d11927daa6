import {
  HttpApiBuilder,
  HttpApiError,
  type HttpApp as PlatformHttpApp,
  HttpServerError,
  HttpServerRequest
} from "@effect/platform"
import { type DownstreamError, RateLimitStore } from "@tradeflow/core"
import { Cause, Effect, Option } from "effect"
import { Api, ApiV3 } from "../Api.js"
import { HttpConfig } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { consoleGuard } from "./consoleGuard.js"
import { internalError, noResource } from "./errors.js"
import { inFlightLimit } from "./inFlight.js"
import { clientPath } from "./prefix.js"
import { rateLimit } from "./rateLimit.js"
import { allowedMethods, routeTable } from "./routes.js"
import { deprecateWidgetSearch } from "./widget.js"

/** One issue per path, its messages joined (a union reports one issue per member). */
const mergeIssues = (issues: ReadonlyArray<DownstreamError.Issue>): ReadonlyArray<DownstreamError.Issue> => {
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    const messages = byPath.get(issue.path) ?? []
    if (!messages.includes(issue.message)) messages.push(issue.message)
    byPath.set(issue.path, messages)
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages.join("; or ") }))
}

const extraRoutes: ReadonlyArray<readonly [string, string]> = [["GET", "/openapi.json"], ["GET", "/docs"]]

const decodeIssues = (error: HttpApiError.HttpApiDecodeError): ReadonlyArray<DownstreamError.Issue> => {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }))
  const meaningful = issues.filter((issue) => !/^Expected undefined, actual /.test(issue.message))
  return mergeIssues(meaningful.length > 0 ? meaningful : issues)
}

const routes = routeTable([Api, ApiV3], extraRoutes)

/**
 * Turns every failure into a problem response: declared problems as they are, unknown routes
 * into 404 (405 with `Allow` when the path exists), parameter decode errors into 400, anything
 * else into a logged 500.
 */
const problems = (app: PlatformHttpApp.Default) =>
  Effect.catchAllCause(app, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error: unknown = failure.value
      if (error instanceof Problem.Problem) return Effect.succeed(Problem.toResponse(error))
      if (error instanceof HttpApiError.HttpApiDecodeError) {
        const issues = decodeIssues(error)
        const names = [...new Set(issues.map((i) => i.path).filter((p) => p !== ""))]
        return Effect.succeed(Problem.toResponse(Problem.make(
          400,
          names.length === 0 ? "the request parameters are invalid" : `invalid request parameter: ${names.join(", ")}`,
          issues
        )))
      }
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        const { request } = error
        const allowed = allowedMethods(routes, (request.url.split("?")[0] ?? "/") || "/")
        if (allowed.length === 0) return noResource(request)
        return Effect.map(clientPath(request), (path) =>
          Problem.toResponse(
            Problem.make(405, `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`),
            { allow: allowed.join(", ") }
          ))
      }
    }
    return Effect.map(internalError(cause), (problem) => Problem.toResponse(problem))
  })

const readablePath = (url: string): boolean => {
  try {
    decodeURIComponent(url.split("?")[0] ?? "")
    return true
  } catch {
    return false
  }
}

/**
 * A URL no route can read is a 400: one carrying U+0000 (`%00`) in its path or query (no storage
 * keeps the character), or one whose path holds a malformed percent-encoding (`%E0%A4%A`, `%zz`).
 */
const refuseUnreadableUrl = <E, R>(app: PlatformHttpApp.Default<E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    /%00|\u0000/.test(request.url)
      ? Effect.succeed(
        Problem.toResponse(Problem.make(400, "the URL holds the NUL character (%00) in its path or query"))
      )
      : readablePath(request.url)
      ? app
      : Effect.succeed(Problem.toResponse(Problem.make(400, "the URL path holds a malformed percent-encoding"))))

/**
 * Every failure as a problem response, then the rate limits per key (`rateLimit`), the widget
 * search marked deprecated (see `deprecateWidgetSearch`), the requests in flight per key
 * (`inFlightLimit`) and the console's door (`consoleGuard`); unreadable URLs are refused first.
 */
export const problemMiddleware = HttpApiBuilder.middleware(Effect.gen(function*() {
  const settings = yield* HttpConfig
  const guard = consoleGuard(settings)
  const rateLimited = yield* rateLimit(settings, yield* RateLimitStore.RateLimitStore)
  const limit = inFlightLimit(settings)
  return (app: PlatformHttpApp.Default) =>
    guard(limit(deprecateWidgetSearch(settings)(rateLimited(problems(refuseUnreadableUrl(app))))))
}))
