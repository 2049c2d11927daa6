import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { TrackingPush } from "@tradeflow/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as Problem from "../Problem.js"
import { RequestBodies } from "./body.js"
import { toProblem } from "./errors.js"

/**
 * What tracking sources push: a subscription's callback, its raw body verified against the
 * subscription's secret before anything of it is stored (see `TrackingPush`).
 */
export const trackingGroup = HttpApiBuilder.group(
  Api,
  "tracking",
  (handlers) =>
    Effect.gen(function*() {
      const bodies = yield* RequestBodies
      const push = yield* TrackingPush.TrackingPush
      return handlers.handleRaw("subscriptionCallback", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const body = yield* bodies.readBytes
          yield* push.callback(path.source, { headers: request.headers, body }).pipe(
            Effect.catchTags({
              PushRefused: (refused) =>
                Effect.logWarning(`tracking: a push to ${path.source} was refused`, refused.message).pipe(
                  Effect.zipRight(
                    Effect.fail(Problem.make(401, "the push is not signed by a subscription this service holds"))
                  )
                ),
              StorageError: (error) => Effect.flatMap(toProblem(error), Effect.fail)
            })
          )
          return HttpServerResponse.empty({ status: 204 })
        }))
    })
)
