/**
 * RFC 9457 problem details: the body of every error response of the API.
 *
 * @module
 */
import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { DownstreamError } from "@tradeflow/core"
import { Schema } from "effect"

const problemFields = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  errors: Schema.optional(Schema.Array(DownstreamError.Issue))
}

/** The media type of a problem document. */
export const mediaType = "application/problem+json"

/** The problem document as it appears on the wire (`application/problem+json`). */
export const ProblemDocument = Schema.Struct(problemFields).pipe(
  HttpApiSchema.withEncoding({ kind: "Json", contentType: mediaType })
).annotations({ identifier: "Problem", description: "RFC 9457 problem details" })
export type ProblemDocument = typeof ProblemDocument.Type

/** The failure every handler and middleware of the API fails with; rendered by {@link toResponse}. */
export class Problem extends Schema.TaggedError<Problem>()("Problem", problemFields) {}

const titles: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  410: "Gone",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable"
}

/** The standard title of a status. */
export const titleOf = (status: number): string => titles[status] ?? "Error"

/** Builds a problem; `type` is `about:blank` as RFC 9457 recommends when the status says it all. */
export const make = (status: number, detail: string, errors?: ReadonlyArray<DownstreamError.Issue>): Problem =>
  new Problem({
    type: "about:blank",
    title: titleOf(status),
    status,
    detail,
    ...(errors === undefined ? {} : { errors })
  })

/** A problem response as a host that writes responses itself (Node, `fetch`) needs it. */
export interface Parts {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The status, headers and JSON body of a problem response: `Content-Type: application/problem+json`,
 * `Retry-After: 1` on a 503, then `headers`.
 */
export const toParts = (problem: Problem, headers?: Record<string, string>): Parts => ({
  status: problem.status,
  headers: {
    "content-type": mediaType,
    ...(problem.status === 503 ? { "retry-after": "1" } : {}),
    ...headers
  },
  body: JSON.stringify({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    ...(problem.errors === undefined ? {} : { errors: problem.errors })
  })
})

/** Renders a problem as an `application/problem+json` response (see {@link toParts}). */
export const toResponse = (
  problem: Problem,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse => {
  const parts = toParts(problem, headers)
  return HttpServerResponse.text(parts.body, { status: parts.status, headers: parts.headers })
}

/** Documentation schemas of the problem responses, one per status. */
export const BadRequest = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 400 }))
export const Unauthorized = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 401 }))
export const Forbidden = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 403 }))
export const NotFound = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 404 }))
export const Conflict = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 409 }))
export const Gone = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 410 }))
export const ContentTooLarge = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 413 }))
export const UnsupportedMediaType = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 415 }))
export const MisdirectedRequest = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 421 }))
export const UnprocessableContent = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 422 }))
export const TooManyRequests = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 429 }))
export const InternalServerError = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 500 }))
export const ServiceUnavailable = ProblemDocument.annotations(HttpApiSchema.annotations({ status: 503 }))
