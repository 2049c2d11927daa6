import type { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type {
  AccountError,
  AutomationAdmin,
  DeliveryAdmin,
  DownstreamError,
  JobAdmin,
  Scheme,
  StorageError,
  TrackingAdmin,
  Upstream,
  UserError,
  WidgetSearch
} from "@tradeflow/core"
import { Cause, Effect } from "effect"
import * as Problem from "../Problem.js"
import { clientPath } from "./prefix.js"

/** Every error a core service can answer the HTTP layer with. */
export type CoreError =
  | DownstreamError.ValidationError
  | DownstreamError.TooManyRecords
  | DownstreamError.IdempotencyKeyReused
  | DownstreamError.IdempotencyKeyInFlight
  | DownstreamError.ConfirmationRequired
  | DownstreamError.TradeflowNotFound
  | AccountError.Unauthenticated
  | AccountError.KeyRevoked
  | AccountError.OrganisationNotFound
  | AccountError.ApiKeyNotFound
  | AccountError.InvalidOrganisationRequest
  | AutomationAdmin.InvalidAutomation
  | AutomationAdmin.AutomationNotFound
  | DeliveryAdmin.DeliveryNotFound
  | DeliveryAdmin.DeliveryNotRetryable
  | JobAdmin.JobNotFound
  | JobAdmin.JobNotDead
  | TrackingAdmin.NotTracked
  | TrackingAdmin.RefreshTooSoon
  | Upstream.Cursor.InvalidCursor
  | WidgetSearch.WidgetKeyNotFound
  | WidgetSearch.WidgetNoMatch
  | Scheme.UnknownScheme
  | Scheme.SchemeError
  | StorageError.StorageError
  | UserError.SignInFailed
  | UserError.NotSignedIn
  | UserError.NotPermitted
  | UserError.InvitationUnusable
  | UserError.InvalidUserRequest
  | UserError.MemberNotFound

/** The answer to an internal failure: the cause is logged, never sent. */
export const internalError = (cause: Cause.Cause<unknown>): Effect.Effect<Problem.Problem> =>
  Effect.logError("request failed", cause).pipe(
    Effect.as(Problem.make(500, "the server failed to answer this request; the failure was logged"))
  )

const schemeStatus = { malformed: 400, unsupported_media_type: 415, too_large: 413, invalid: 422 } as const

const schemeTitle = {
  malformed: "the payload cannot be read by this scheme; nothing was queued",
  unsupported_media_type: "this scheme does not take this media type; nothing was queued",
  too_large: "the payload is larger than this scheme takes; nothing was queued",
  invalid: "the payload does not satisfy the scheme's or the record rules; nothing was queued"
} as const

/** The 404 of a request no resource answers, naming the path its client asked for. */
export const noResource = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(clientPath(request), (path) => Problem.toResponse(Problem.make(404, `no resource at ${path}`)))

/** The 404 of an id nothing has: a string id is quoted, a numeric one is not. */
export const noneWithId = (what: string, id: string | number): Problem.Problem =>
  Problem.make(404, `no ${what} with id ${typeof id === "number" ? id : JSON.stringify(id)}`)

/** Maps a core error to its problem (DECISIONS.md §2). */
export const toProblem = (error: CoreError): Effect.Effect<Problem.Problem> => {
  switch (error._tag) {
    case "ValidationError":
      return Effect.succeed(
        Problem.make(422, "the request does not satisfy the record rules; nothing was queued", error.errors)
      )
    case "TooManyRecords":
      return Effect.succeed(Problem.make(413, `at most ${error.limit} records per request (got ${error.count})`))
    case "IdempotencyKeyReused":
      return Effect.succeed(Problem.make(422, "the Idempotency-Key was already used with a different body"))
    case "IdempotencyKeyInFlight":
      return Effect.succeed(Problem.make(409, "a request with this Idempotency-Key is still in flight"))
    case "ConfirmationRequired":
      return Effect.succeed(Problem.make(400, `a production wildcard delete requires ${error.parameter}=PRODUCTION`, [
        { path: error.parameter, message: "must be PRODUCTION" }
      ]))
    case "TradeflowNotFound":
      return Effect.succeed(Problem.make(404, `no tradeflow with reference ${JSON.stringify(error.reference)}`))
    case "Unauthenticated":
      return Effect.succeed(Problem.make(401, error.detail))
    case "KeyRevoked":
      return Effect.succeed(Problem.make(403, "the API key was revoked"))
    case "OrganisationNotFound":
      return Effect.succeed(noneWithId("organisation", error.id))
    case "ApiKeyNotFound":
      return Effect.succeed(noneWithId("API key", error.id))
    case "InvalidOrganisationRequest":
      return Effect.succeed(Problem.make(422, error.detail))
    case "InvalidAutomation":
      return Effect.succeed(
        Problem.make(422, "the automation does not satisfy the rules; nothing was stored", error.errors)
      )
    case "AutomationNotFound":
      return Effect.succeed(noneWithId("automation", error.id))
    case "DeliveryNotFound":
      return Effect.succeed(noneWithId("delivery", error.id))
    case "DeliveryNotRetryable":
      return Effect.succeed(Problem.make(
        409,
        `delivery ${error.id} is neither failed nor dead; only a failed or dead delivery can be retried`
      ))
    case "JobNotFound":
      return Effect.succeed(noneWithId("job", error.id))
    case "JobNotDead":
      return Effect.succeed(Problem.make(409, `job ${error.id} is not dead; only a dead job can be retried`))
    case "NotTracked":
      return Effect.succeed(Problem.make(409, `no tracking source tracks ${JSON.stringify(error.reference)} any more`))
    case "RefreshTooSoon":
      return Effect.succeed(Problem.make(
        429,
        `${
          JSON.stringify(error.reference)
        } was refreshed or checked less than a minute ago; retry in ${error.retry_after_seconds} s`
      ))
    case "InvalidCursor":
      return Effect.succeed(Problem.make(400, `cursor: ${error.detail}`, [{ path: "cursor", message: error.detail }]))
    case "WidgetKeyNotFound":
      return Effect.succeed(noneWithId("widget key", error.id))
    case "WidgetNoMatch":
      return Effect.succeed(
        Problem.make(404, `no tradeflow of this organisation matches ${JSON.stringify(error.query)}`)
      )
    case "UnknownScheme":
      return Effect.succeed(Problem.make(
        404,
        `no integration scheme ${JSON.stringify(error.scheme)}; known: ${error.known.join(", ")}`
      ))
    case "SchemeError":
      return Effect.succeed(Problem.make(schemeStatus[error.reason], schemeTitle[error.reason], error.errors))
    case "SignInFailed":
      return Effect.succeed(Problem.make(401, "the e-mail or the password is wrong"))
    case "NotSignedIn":
      return Effect.succeed(Problem.make(401, "sign in first: no session, or it ended"))
    case "NotPermitted":
      return Effect.succeed(Problem.make(
        403,
        error.role === null
          ? "you are not a member of this organisation"
          : `a ${error.role} may not ${error.action.replace("_", " ")} in this organisation`
      ))
    case "InvitationUnusable":
      return Effect.succeed(Problem.make(410, "this invitation link is unknown, used already or expired"))
    case "InvalidUserRequest":
      return Effect.succeed(
        Problem.make(422, error.detail, [{ path: `/${error.field}`, message: error.detail }])
      )
    case "MemberNotFound":
      return Effect.succeed(noneWithId("member", error.id))
    case "StorageError":
      return Effect.logError("storage unavailable", Cause.fail(error)).pipe(
        Effect.as(Problem.make(503, "the database is unavailable or failed; retry (with the same Idempotency-Key)"))
      )
  }
}

/** Turns the core errors of an effect into problems. */
export const mapCoreErrors = <A, R>(
  effect: Effect.Effect<A, CoreError, R>
): Effect.Effect<A, Problem.Problem, R> =>
  Effect.catchAll(effect, (error) => Effect.flatMap(toProblem(error), Effect.fail))
