/**
 * The security middlewares of the API: API keys (downstream, upstream), widget keys (the deprecated
 * widget search) and the console's operator token. {@link HttpApp} provides their implementations.
 *
 * @module
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import type { Accounts, Environment, Users, WidgetSearch } from "@tradeflow/core"
import { Context, Schema } from "effect"
import { Forbidden, MisdirectedRequest, Unauthorized } from "./Problem.js"

/** The authenticated caller of a downstream or upstream request and the environment of its host. */
export class CurrentCaller extends Context.Tag("@tradeflow/http-node/CurrentCaller")<CurrentCaller, {
  readonly caller: Accounts.Caller
  readonly environment: Environment.Environment
}>() {}

/**
 * The raw `Authorization` header is the API key (`Bearer <key>` is accepted too). The host decides
 * the environment: unknown host 421, missing or unknown key 401, revoked key or a key of the other
 * environment 403.
 */
export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("@tradeflow/http-node/ApiKeyAuth", {
  failure: Schema.Union(Unauthorized, Forbidden, MisdirectedRequest),
  provides: CurrentCaller,
  security: { apiKey: HttpApiSecurity.apiKey({ key: "Authorization", in: "header" }) }
}) {}

/** The organisation a widget key reads. */
export class CurrentWidgetCaller extends Context.Tag("@tradeflow/http-node/CurrentWidgetCaller")<
  CurrentWidgetCaller,
  WidgetSearch.WidgetCaller
>() {}

/**
 * `Authorization: Basic <widget key>`: the raw key after `Basic ` (also `base64(<key>:)` or
 * `base64(<key>)`). Unknown host 421, missing, unknown or revoked key 401, a key of an
 * organisation of the other environment 403.
 */
export class WidgetKeyAuth extends HttpApiMiddleware.Tag<WidgetKeyAuth>()("@tradeflow/http-node/WidgetKeyAuth", {
  failure: Schema.Union(Unauthorized, Forbidden, MisdirectedRequest),
  provides: CurrentWidgetCaller,
  security: {
    widgetKey: HttpApiSecurity.apiKey({ key: "Authorization", in: "header" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "Basic <widget key>: the key itself after Basic (or base64 of <key>:)"
      )
    )
  }
}) {}

/** Who calls the console: the holder of the console token (every permission) or a signed-in user. */
export class ConsoleActor extends Context.Tag("@tradeflow/http-node/ConsoleActor")<ConsoleActor, Users.Actor>() {}

/**
 * `Authorization: Bearer <console token>`, compared in constant time, or else the session cookie of
 * the web application (`tf_session`), whose user's roles then decide each route (403 otherwise);
 * a state-changing request on a session must come from the site itself (`Sec-Fetch-Site:
 * same-origin` or a matching `Origin`), else 403. 401 without either.
 */
export class ConsoleAuth extends HttpApiMiddleware.Tag<ConsoleAuth>()("@tradeflow/http-node/ConsoleAuth", {
  failure: Schema.Union(Unauthorized, Forbidden),
  provides: ConsoleActor,
  security: {
    consoleToken: HttpApiSecurity.bearer,
    session: HttpApiSecurity.apiKey({ key: "tf_session", in: "cookie" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The session cookie of the web application (/app)")
    )
  }
}) {}
