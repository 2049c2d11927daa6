import { HttpServerRequest } from "@effect/platform"
import { Accounts, Users, WidgetSearch } from "@tradeflow/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { ApiKeyAuth, ConsoleAuth, WidgetKeyAuth } from "../Authentication.js"
import { HttpConfig } from "../HttpConfig.js"
import * as Problem from "../Problem.js"
import { mapCoreErrors } from "./errors.js"
import { hostEnvironment, requestHost } from "./hosts.js"
import { noteOrganisation } from "./requestLog.js"
import { sameOrigin } from "./webKit.js"
import { widgetKeyOf } from "./widget.js"

/** The environment the request's host selects: 421 for a host of neither list. */
const hostOf = (settings: HttpConfig["Type"]) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const host = requestHost(settings, request.headers)
    const environment = hostEnvironment(settings, host)
    return Option.isSome(environment) ? Effect.succeed(environment.value) : Problem.make(
      421,
      `the host ${JSON.stringify(host ?? "")} is neither a production nor a UAT host of this server`
    )
  })

/** 403 when a key of one environment is used on a host of the other. */
const sameEnvironment = (key: string, host: string) =>
  key === host ? Effect.void : Problem.make(403, `the token environment (${key}) does not match the host (${host})`)

/** {@link ApiKeyAuth} over the accounts: the caller of an API key, in the environment of the host. */
export const apiKeyAuthLayer = Layer.effect(
  ApiKeyAuth,
  Effect.gen(function*() {
    const settings = yield* HttpConfig
    const accounts = yield* Accounts.Accounts
    return ApiKeyAuth.of({
      apiKey: (raw) =>
        Effect.gen(function*() {
          const environment = yield* hostOf(settings)
          const key = Redacted.value(raw).trim().replace(/^bearer\s+/i, "")
          if (key === "") return yield* Problem.make(401, "the Authorization header must carry an API key")
          const caller = yield* mapCoreErrors(accounts.authenticate(key))
          yield* sameEnvironment(caller.environment, environment)
          yield* noteOrganisation(caller.organisation.id)
          return { caller, environment }
        })
    })
  })
)

/** {@link WidgetKeyAuth} over the widget search: the organisation of a widget key. */
export const widgetKeyAuthLayer = Layer.effect(
  WidgetKeyAuth,
  Effect.gen(function*() {
    const settings = yield* HttpConfig
    const widgets = yield* WidgetSearch.WidgetSearch
    return WidgetKeyAuth.of({
      widgetKey: (raw) =>
        Effect.gen(function*() {
          const environment = yield* hostOf(settings)
          const key = widgetKeyOf(Redacted.value(raw))
          if (key === undefined) {
            return yield* Problem.make(401, "the widget search requires Authorization: Basic <widget key>")
          }
          const caller = yield* mapCoreErrors(widgets.authenticate(key))
          yield* sameEnvironment(caller.organisation.environment, environment)
          yield* noteOrganisation(caller.organisation.id)
          return caller
        })
    })
  })
)

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

const consoleUnauthorized = Problem.make(
  401,
  "the console requires Authorization: Bearer <console token>, or a signed-in session of the web application"
)

const readOnly = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * {@link ConsoleAuth}: the configured console token, compared in constant time (an operator), or
 * else a running session of the web application (its user).
 */
export const consoleAuthLayer = Layer.effect(
  ConsoleAuth,
  Effect.gen(function*() {
    const settings = yield* HttpConfig
    const users = yield* Users.Users
    const expected = digest(Redacted.value(settings.consoleToken))
    return ConsoleAuth.of({
      consoleToken: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const match = /^bearer\s+(.+)$/i.exec((request.headers["authorization"] ?? "").trim())
          const token = match?.[1]?.trim() ?? ""
          if (token === "" || !timingSafeEqual(digest(token), expected)) return yield* Effect.fail(consoleUnauthorized)
          return Users.operatorToken
        }),
      session: (raw) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const token = Redacted.value(raw)
          if (token === "") return yield* Effect.fail(consoleUnauthorized)
          const signed = yield* mapCoreErrors(users.session(token)).pipe(
            Effect.mapError((problem) => problem.status === 401 ? consoleUnauthorized : problem)
          )
          if (!readOnly.has(request.method) && !sameOrigin(settings, request)) {
            return yield* Problem.make(
              403,
              "a request on a session must come from this site (Sec-Fetch-Site or Origin)"
            )
          }
          return Users.asActor(signed.user)
        })
    })
  })
)
