import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { WidgetSearch } from "@tradeflow/core"
import { Clock, Effect } from "effect"
import type { HttpSettings } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { MountPrefix } from "./prefix.js"

const base64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * The widget key of an `Authorization` value: `Basic <key>`, or `Basic <base64 of "<key>:" or
 * "<key>">`. Undefined when the value is not of the Basic scheme.
 */
export const widgetKeyOf = (authorization: string): string | undefined => {
  const match = /^basic\s+(\S+)$/i.exec(authorization.trim())
  const credentials = match?.[1]
  if (credentials === undefined) return undefined
  if (credentials.startsWith(WidgetSearch.keyPrefix) || !base64.test(credentials)) return credentials
  const decoded = Buffer.from(credentials, "base64").toString("utf8")
  const key = decoded.endsWith(":") ? decoded.slice(0, -1) : decoded
  return key.startsWith(WidgetSearch.keyPrefix) ? key : credentials
}

const widgetPath = /^(?:\/v3)?\/api\/v2\/widget-search\/?$/

/**
 * Wraps the app so that every response of the widget search path (errors included) carries
 * `Deprecation: true` and, with a configured sunset, `Sunset: <HTTP date>`; from the sunset on
 * (by the Effect `Clock`) the path answers 410 whatever the request, naming the upstream feed
 * under the {@link MountPrefix}.
 */
export const deprecateWidgetSearch =
  (settings: HttpSettings) => <E, R>(app: HttpApp.HttpApp<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => widgetPath.test(request.url.split("?")[0] ?? "") ? deprecated(settings, app) : app
    )

const deprecated = <E, R>(
  settings: HttpSettings,
  app: HttpApp.HttpApp<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const sunset = settings.widgetSunset
    const headers: Record<string, string> = sunset === null
      ? { deprecation: "true" }
      : { deprecation: "true", sunset: sunset.toUTCString() }
    const gone = sunset !== null && (yield* Clock.currentTimeMillis) >= sunset.getTime()
    const response = gone
      ? Problem.toResponse(Problem.make(
        410,
        `the widget search was retired on ${sunset.toISOString()}; use GET ${yield* MountPrefix}/upstream (filter by tradeflow= or container=) instead`
      ))
      : yield* app
    return HttpServerResponse.setHeaders(response, headers)
  })
