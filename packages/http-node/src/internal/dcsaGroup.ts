import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { DcsaPublisher } from "@tradeflow/core"
import { Clock, Effect, Either } from "effect"
import type { Api, ApiV3, DcsaEventsHeaders } from "../Api.js"
import { CurrentCaller } from "../Authentication.js"
import * as Problem from "../Problem.js"
import { mapCoreErrors } from "./errors.js"
import { clientPath } from "./prefix.js"

const versionHeader = { "api-version": DcsaPublisher.apiVersion }

/** The major versions a request's `API-Version` may name (2.2: the major version only; 2.2 and 2.2.0 taken too). */
const acceptedVersion = /^2(?:\.2(?:\.0)?)?$/

/** The name of a query pair (`a=b`), decoded; undefined when it cannot be. */
const nameOf = (pair: string): string | undefined => {
  try {
    return decodeURIComponent((pair.split("=")[0] ?? "").replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/** The request as its client sent it: the path (mount prefix included) and the query, without `?`. */
const requestTarget = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(clientPath(request), (path) => {
    const at = request.url.indexOf("?")
    return { path, query: at < 0 ? "" : request.url.slice(at + 1) }
  })

const urlOf = (path: string, pairs: ReadonlyArray<string>) => pairs.length === 0 ? path : `${path}?${pairs.join("&")}`

const pairsOf = (query: string) => query.split("&").filter((pair) => pair !== "")

/** The URL of the next page: every parameter of the request as sent, its cursor replaced by `cursor`. */
const nextPage = (path: string, query: string, cursor: string): string =>
  urlOf(path, [
    ...pairsOf(query).filter((pair) => nameOf(pair) !== "cursor"),
    `cursor=${encodeURIComponent(cursor)}`
  ])

/**
 * A problem as `GET /dcsa/v2/events` answers it: the API's problem document (RFC 9457), which is
 * also DCSA 2.2's error (`httpMethod`, `requestUri`, `statusCode`, `statusCodeText`,
 * `errorDateTime`, each of `errors` with a `reason`), with `API-Version`.
 */
const dcsaProblem = (request: HttpServerRequest.HttpServerRequest, problem: Problem.Problem) =>
  Effect.gen(function*() {
    const parts = Problem.toParts(problem, versionHeader)
    const { path, query } = yield* requestTarget(request)
    const reason = problem.status < 500 ? "invalidQuery" : "internalError"
    const body = {
      ...JSON.parse(parts.body),
      errors: (problem.errors ?? [{ path: "", message: problem.detail }]).map((issue) => ({ ...issue, reason })),
      httpMethod: request.method,
      requestUri: urlOf(path, pairsOf(query)),
      statusCode: problem.status,
      statusCodeText: problem.title,
      errorDateTime: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
    return HttpServerResponse.text(JSON.stringify(body), { status: parts.status, headers: parts.headers })
  })

const invalid = (errors: ReadonlyArray<{ readonly path: string; readonly message: string }>) =>
  Problem.make(400, `invalid request parameter: ${errors.map((e) => e.path).join(", ")}`, errors)

const listEvents = Effect.gen(function*() {
  const publisher = yield* DcsaPublisher.DcsaPublisher
  return ({ headers, request, urlParams }: {
    readonly urlParams: DcsaPublisher.Parameters
    readonly headers: typeof DcsaEventsHeaders.Type
    readonly request: HttpServerRequest.HttpServerRequest
  }) =>
    Effect.gen(function*() {
      const asked = headers["api-version"]
      if (asked !== undefined && !acceptedVersion.test(asked.trim())) {
        return yield* invalid([{
          path: "API-Version",
          message: `this endpoint speaks DCSA Track & Trace ${DcsaPublisher.apiVersion}: send 2 or leave it out`
        }])
      }
      const { caller } = yield* CurrentCaller
      const query = DcsaPublisher.parse(caller.organisation.id, urlParams)
      if (Either.isLeft(query)) return yield* invalid(query.left.errors)
      const page = yield* mapCoreErrors(publisher.events(query.right))
      const { path, query: sent } = yield* requestTarget(request)
      return HttpServerResponse.unsafeJson(page.events, {
        headers: {
          ...versionHeader,
          "current-page": urlOf(path, pairsOf(sent)),
          ...(page.next_cursor === undefined ? {} : { "next-page": nextPage(path, sent, page.next_cursor) })
        }
      })
    }).pipe(Effect.catchTag("Problem", (problem) => dcsaProblem(request, problem)))
})

/** The DCSA 2.2 events of `api`: `GET /dcsa/v2/events`. */
export const dcsaGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "dcsa",
    (handlers) => Effect.map(listEvents, (list) => handlers.handle("events", list))
  )
