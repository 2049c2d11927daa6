import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Ingest, Schemes } from "@tradeflow/core"
import { Effect } from "effect"
import { type Api, type ApiV3, maxIdempotencyKeyLength, type RemoveParams } from "../Api.js"
import { CurrentCaller } from "../Authentication.js"
import * as Problem from "../Problem.js"
import { RequestBodies } from "./body.js"
import { mapCoreErrors } from "./errors.js"

const idempotencyKey = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<string | undefined, Problem.Problem> => {
  const key = request.headers["idempotency-key"]
  return key === undefined || key.length <= maxIdempotencyKeyLength
    ? Effect.succeed(key)
    : Effect.fail(
      Problem.make(400, `the Idempotency-Key header holds more than ${maxIdempotencyKeyLength} characters`, [
        { path: "Idempotency-Key", message: `must be at most ${maxIdempotencyKeyLength} characters, got ${key.length}` }
      ])
    )
}

/**
 * The 202 of an accepted post, written as the endpoint's `Accepted` schema would encode it (the
 * value already has its shape), without walking every tradeflow of it through the schema again.
 */
const acceptedResponse = (accepted: Ingest.Accepted): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(accepted, { status: 202 })

const submit = (form: "array" | "any") =>
  Effect.gen(function*() {
    const bodies = yield* RequestBodies
    const ingest = yield* Ingest.Ingest
    return Effect.gen(function*() {
      const { caller, environment } = yield* CurrentCaller
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = yield* idempotencyKey(request)
      const body = yield* bodies.readJson
      if (Array.isArray(body) && body.length > Ingest.maxRecords) {
        return yield* Problem.make(413, `at most ${Ingest.maxRecords} records per request (got ${body.length})`)
      }
      return acceptedResponse(
        yield* mapCoreErrors(ingest.submit({
          organisation_id: caller.organisation.id,
          environment,
          body,
          form,
          ...(key === undefined ? {} : { idempotency_key: key })
        }))
      )
    })
  })

const submitScheme = Effect.gen(function*() {
  const bodies = yield* RequestBodies
  const ingest = yield* Ingest.Ingest
  const schemes = yield* Schemes.Schemes
  return ({ path }: { readonly path: { readonly scheme: string } }) =>
    Effect.gen(function*() {
      const { caller, environment } = yield* CurrentCaller
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = yield* idempotencyKey(request)
      const body = yield* bodies.readBytes
      const query = Object.fromEntries(new URL(request.url, "http://localhost").searchParams)
      const records = yield* mapCoreErrors(schemes.decode(path.scheme, {
        contentType: request.headers["content-type"] ?? "",
        body,
        query
      }))
      return acceptedResponse(
        yield* mapCoreErrors(ingest.submit({
          organisation_id: caller.organisation.id,
          environment,
          body: records,
          form: "array",
          ...(key === undefined ? {} : { idempotency_key: key })
        }))
      )
    })
})

const remove = Effect.gen(function*() {
  const ingest = yield* Ingest.Ingest
  return ({ path, urlParams }: {
    readonly path: { readonly reference: string }
    readonly urlParams: typeof RemoveParams.Type
  }) =>
    Effect.gen(function*() {
      const { caller, environment } = yield* CurrentCaller
      return yield* mapCoreErrors(ingest.remove({
        organisation_id: caller.organisation.id,
        environment,
        reference: path.reference === "*" ? null : path.reference,
        hard: urlParams.hard === "true",
        ...(urlParams.confirm === undefined ? {} : { confirm: urlParams.confirm })
      }))
    })
})

/** The downstream routes of `api`: records in (JSON, tradeflows, an integration scheme) and removals. */
export const downstreamGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(api as typeof Api, "downstream", (handlers) =>
    Effect.gen(function*() {
      const submitArray = yield* submit("array")
      const submitAny = yield* submit("any")
      const removeHandler = yield* remove
      const schemeHandler = yield* submitScheme
      return handlers
        .handleRaw("submit", () => submitArray)
        .handleRaw("submitTradeflows", () => submitAny)
        .handleRaw("submitScheme", schemeHandler)
        .handle("remove", removeHandler)
    }))
