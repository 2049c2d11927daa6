import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { TrackingPush } from "@tradeflow/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as Problem from "../Problem.js"
import { RequestBodies } from "./body.js"
import { toProblem } from "./errors.js"

/**
 * What tracking sources push: a subscription's callback, its raw body verified against the
 * subscription's secret, and a consumer push, authenticated by its source's token, each before
 * anything of it is stored (see `TrackingPush`); refused ones are 401, authenticated ones whose body
 * cannot be read 400.
 */
export const trackingGroup = HttpApiBuilder.group(
  Api,
  "tracking",
  (handlers) =>
    Effect.gen(function*() {
      const bodies = yield* RequestBodies
      const push = yield* TrackingPush.TrackingPush
      const refusedProblem = (source: string) => (refused: { readonly message: string }) =>
        Effect.logWarning(`tracking: a push to ${source} was refused`, refused.message).pipe(
          Effect.zipRight(Effect.fail(Problem.make(401, "the push is not authenticated for this source")))
        )
      const unreadableProblem = (unreadable: { readonly message: string }) =>
        Effect.fail(Problem.make(400, `the push cannot be read: ${unreadable.message}`))
      return handlers.handleRaw("subscriptionCallback", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const body = yield* bodies.readBytes
          yield* push.callback(path.source, { headers: request.headers, body }).pipe(
            Effect.catchTags({
              PushRefused: refusedProblem(path.source),
              PushUnreadable: unreadableProblem,
              StorageError: (error) => Effect.flatMap(toProblem(error), Effect.fail)
            })
          )
          return HttpServerResponse.empty({ status: 204 })
        })).handleRaw("consumerEvents", ({ path }) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            const body = yield* bodies.readBytes
            const answer = yield* push.consume(path.source, { headers: request.headers, body }).pipe(
              Effect.catchTags({
                PushRefused: refusedProblem(path.source),
                PushUnreadable: unreadableProblem,
                StorageError: (error) => Effect.flatMap(toProblem(error), Effect.fail)
              })
            )
            return HttpServerResponse.unsafeJson(answer, { headers: { "api-version": "3.0.0" } })
          }))
    })
)
