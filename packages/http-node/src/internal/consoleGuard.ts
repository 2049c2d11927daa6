import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Clock, Effect } from "effect"
import type { HttpSettings } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { noResource } from "./errors.js"
import * as FailureLimit from "./failureLimit.js"
import { clientAddress, consoleHost, requestHost } from "./hosts.js"

const maxClients = 10_000

/**
 * The console's door: on a host that is not a console host (when some are configured) every
 * console path is a 404, and a client whose console authentications failed too often (settings'
 * `consoleFailures`) gets 429 with `Retry-After` until its window ends, whatever token it sends.
 * One guard per application; its memory holds at most 10,000 clients.
 */
export const consoleGuard = (settings: HttpSettings) => {
  const failures = FailureLimit.make({ ...settings.consoleFailures, maxClients })
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const path = request.url.split("?")[0] ?? "/"
      if (path !== "/console" && !path.startsWith("/console/")) return app
      if (!consoleHost(settings, requestHost(settings, request.headers))) {
        return noResource(request)
      }
      const client = clientAddress(settings, request.headers, request.remoteAddress)
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const wait = failures.retryAfter(client, now)
        if (wait !== undefined) {
          return Effect.succeed(Problem.toResponse(
            Problem.make(429, `too many failed console authentications from this client; retry in ${wait} s`),
            { "retry-after": String(wait) }
          ))
        }
        return Effect.tap(
          app,
          (response) => response.status === 401 ? Effect.sync(() => failures.fail(client, now)) : Effect.void
        )
      })
    })
}
