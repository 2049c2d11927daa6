/**
 * The HTTP application: the {@link Api} served on an `HttpServer`, over the core services.
 *
 * @module
 */
import {
  HttpApiBuilder,
  HttpApiError,
  HttpApiScalar,
  type HttpApp as PlatformHttpApp,
  type HttpRouter,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
import {
  Accounts,
  ApiMessage,
  Automations,
  Deliveries,
  Documents,
  DownstreamError,
  Ingest,
  Jobs,
  Schemes,
  TradeflowRecord,
  Upstream,
  Validation,
  WidgetSearch,
  type Worker
} from "@tradeflow/core"
import { Ssrf } from "@tradeflow/webhook"
import { Cause, Effect, Either, Layer, Option, Redacted, Schema, type Scope } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { Api, ApiV3, NewApiKey, NewAutomation, NewOrganisation, type RemoveParams, type UpstreamParams } from "./Api.js"
import { ApiKeyAuth, ConsoleAuth, CurrentCaller, CurrentWidgetCaller, WidgetKeyAuth } from "./Authentication.js"
import { HttpConfig } from "./HttpConfig.js"
import { RequestBodies } from "./internal/body.js"
import { consoleGuard } from "./internal/consoleGuard.js"
import { attachment } from "./internal/contentDisposition.js"
import { internalError, mapCoreErrors } from "./internal/errors.js"
import { hostEnvironment, requestHost } from "./internal/hosts.js"
import { inFlightLimit } from "./internal/inFlight.js"
import { openApiDocument } from "./internal/openapi.js"
import { normalizePrefix, underPrefix } from "./internal/prefix.js"
import { allowedMethods, routeTable } from "./internal/routes.js"
import { deprecateWidgetSearch, limitWidgetSearch, widgetKeyOf } from "./internal/widget.js"
import * as Problem from "./Problem.js"

/** The most records one downstream request may carry. */
export const maxRecords = 10_000

/** The environment the request's host selects: 421 for a host of neither list. */
const hostOf = (settings: HttpConfig["Type"]) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const host = requestHost(settings, request.headers)
    const environment = hostEnvironment(settings, host)
    if (Option.isNone(environment)) {
      return yield* Problem.make(
        421,
        `the host ${JSON.stringify(host ?? "")} is neither a production nor a UAT host of this server`
      )
    }
    return environment.value
  })

/** 403 when a key of one environment is used on a host of the other. */
const sameEnvironment = (key: string, host: string) =>
  key === host ? Effect.void : Problem.make(403, `the token environment (${key}) does not match the host (${host})`)

const apiKeyAuthLayer = Layer.effect(
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
          return { caller, environment }
        })
    })
  })
)

const widgetKeyAuthLayer = Layer.effect(
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
          return caller
        })
    })
  })
)

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

const consoleAuthLayer = Layer.effect(
  ConsoleAuth,
  Effect.gen(function*() {
    const settings = yield* HttpConfig
    const expected = digest(Redacted.value(settings.consoleToken))
    return ConsoleAuth.of({
      consoleToken: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const match = /^bearer\s+(.+)$/i.exec((request.headers["authorization"] ?? "").trim())
          const token = match?.[1]?.trim() ?? ""
          if (token === "" || !timingSafeEqual(digest(token), expected)) {
            return yield* Problem.make(401, "the console requires Authorization: Bearer <console token>")
          }
        })
    })
  })
)

/** One issue per path, its messages joined (a union reports one issue per member). */
const mergeIssues = (issues: ReadonlyArray<Problem.ProblemIssue>): ReadonlyArray<Problem.ProblemIssue> => {
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    const messages = byPath.get(issue.path) ?? []
    if (!messages.includes(issue.message)) messages.push(issue.message)
    byPath.set(issue.path, messages)
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages.join("; or ") }))
}

/**
 * Decodes a console body: 422 naming each field, as the record rules do (`name must be a string,
 * got an array`), never with the value sent (Schema's formatter prints it whole, recursively: a
 * stack overflow at some thousand levels of nesting, megabytes for a large value).
 */
const decodeBody = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Effect.Effect<A, Problem.Problem> =>
  Schema.decodeUnknown(schema, { errors: "all" })(body).pipe(
    Effect.mapError((error) => {
      const { issues, total } = Validation.collectIssues(error, { input: body, room: DownstreamError.maxIssues })
      return Problem.make(
        422,
        "the request body does not match the expected shape",
        DownstreamError.listIssues(issues, total)
      )
    })
  )

/** The longest `Idempotency-Key` accepted. */
export const maxIdempotencyKeyLength = 255

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

const submit = (form: "array" | "any") =>
  Effect.gen(function*() {
    const bodies = yield* RequestBodies
    const ingest = yield* Ingest.Ingest
    return Effect.gen(function*() {
      const { caller, environment } = yield* CurrentCaller
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = yield* idempotencyKey(request)
      const body = yield* bodies.readJson
      if (Array.isArray(body) && body.length > maxRecords) {
        return yield* Problem.make(413, `at most ${maxRecords} records per request (got ${body.length})`)
      }
      return yield* mapCoreErrors(ingest.submit({
        organisation_id: caller.organisation.id,
        environment,
        body,
        form,
        ...(key === undefined ? {} : { idempotency_key: key })
      }))
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
      return yield* mapCoreErrors(ingest.submit({
        organisation_id: caller.organisation.id,
        environment,
        body: records,
        form: "array",
        ...(key === undefined ? {} : { idempotency_key: key })
      }))
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

const upstreamFilters = (organisation_id: string, urlParams: typeof UpstreamParams.Type): Upstream.UpstreamFilters => ({
  organisation_id,
  ...(urlParams.tradeflow === undefined ? {} : { tradeflow: urlParams.tradeflow }),
  ...(urlParams.container === undefined ? {} : { container: urlParams.container }),
  ...(urlParams.type === undefined ? {} : { types: urlParams.type.split(",").map((t) => t.trim()) }),
  ...(urlParams.latest === undefined ? {} : { latest: urlParams.latest === "true" }),
  ...(urlParams.excludes === undefined ? {} : { exclude_shipment: true })
})

/**
 * The UTF-8 bytes of `<prefix>[<body>,<body>,…]<suffix>`, written straight into one buffer from the
 * stored JSON bodies (no page-sized string in between).
 */
const jsonArrayBytes = (messages: ReadonlyArray<{ readonly body: string }>, prefix = "", suffix = ""): Uint8Array => {
  let length = Buffer.byteLength(prefix) + Buffer.byteLength(suffix) + 1 + Math.max(1, messages.length)
  for (let i = 0; i < messages.length; i++) length += Buffer.byteLength(messages[i]!.body)
  const out = Buffer.allocUnsafe(length)
  let at = out.write(prefix, 0)
  out[at++] = 0x5b
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) out[at++] = 0x2c
    at += out.write(messages[i]!.body, at)
  }
  out[at++] = 0x5d
  at += out.write(suffix, at)
  return at === length ? out : out.subarray(0, at)
}

const listUpstream = Effect.gen(function*() {
  const upstream = yield* Upstream.Upstream
  return ({ urlParams }: { readonly urlParams: typeof UpstreamParams.Type }) =>
    Effect.gen(function*() {
      const { caller } = yield* CurrentCaller
      const filters = upstreamFilters(caller.organisation.id, urlParams)
      const since = urlParams.since === undefined ? {} : { since: TradeflowRecord.parseIsoDateTime(urlParams.since) }
      if (urlParams.per_page === undefined) {
        if (urlParams.cursor !== undefined) {
          return yield* Problem.make(400, "cursor: a cursor is only valid together with per_page", [
            { path: "cursor", message: "requires per_page" }
          ])
        }
        const messages = yield* mapCoreErrors(upstream.list({ ...filters, ...since }))
        return HttpServerResponse.uint8Array(jsonArrayBytes(messages), { contentType: "application/json" })
      }
      const page = yield* mapCoreErrors(upstream.page({
        ...filters,
        ...since,
        per_page: Number(urlParams.per_page),
        ...(urlParams.cursor === undefined ? {} : { cursor: urlParams.cursor })
      }))
      return HttpServerResponse.uint8Array(
        jsonArrayBytes(
          page.data,
          `{"data":`,
          `,"next_cursor":${JSON.stringify(page.next_cursor)},"has_more":${page.has_more}}`
        ),
        { contentType: "application/json" }
      )
    })
})

const downstreamGroup = (api: typeof Api | typeof ApiV3) =>
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

const upstreamGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "upstream",
    (handlers) => Effect.map(listUpstream, (list) => handlers.handle("list", list))
  )

const healthGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "health",
    (handlers) => handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
  )

const widgetGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "widget",
    (handlers) =>
      Effect.map(WidgetSearch.WidgetSearch, (widgets) =>
        handlers.handle("search", ({ urlParams }) =>
          Effect.flatMap(CurrentWidgetCaller, ({ organisation }) =>
            mapCoreErrors(widgets.search(organisation.id, urlParams.query)))))
  )

/**
 * Creates an automation: the service's rules plus, unless private destinations are allowed, the
 * destination check (https only, no non-public address literal); all issues in one 422.
 */
const createAutomation = Effect.gen(function*() {
  const settings = yield* HttpConfig
  const bodies = yield* RequestBodies
  const automations = yield* Automations.Automations
  return (organisationId: string) =>
    Effect.gen(function*() {
      const input = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewAutomation, body))
      const rules = yield* Effect.either(Automations.validate(input))
      const issues = Either.isLeft(rules) ? rules.left.errors : []
      const destination = Ssrf.checkUrl(input.url, {
        allowPrivate: settings.webhookAllowPrivate,
        allowHttp: settings.webhookAllowPrivate,
        httpHosts: settings.webhookHttpHosts
      })
      const refused = Either.isLeft(destination) && !issues.some((i) => i.path === "/url")
        ? [{ path: "/url", message: destination.left.message }]
        : []
      if (issues.length + refused.length > 0) {
        return yield* Problem.make(422, "the automation does not satisfy the rules; nothing was stored", [
          ...refused,
          ...issues
        ])
      }
      return yield* mapCoreErrors(automations.create(organisationId, input))
    })
})

/** `f` of a numeric path id (the ids deliveries and jobs have); any other id is a 404 naming `what`. */
const byNumericId = <A, R>(
  id: string,
  what: string,
  f: (id: number) => Effect.Effect<A, Problem.Problem, R>
): Effect.Effect<A, Problem.Problem, R> =>
  /^[0-9]{1,15}$/.test(id) ? f(Number(id)) : Effect.fail(Problem.make(404, `no ${what} with id ${JSON.stringify(id)}`))

const consoleGroup = HttpApiBuilder.group(Api, "console", (handlers) =>
  Effect.gen(function*() {
    const bodies = yield* RequestBodies
    const accounts = yield* Accounts.Accounts
    const documents = yield* Documents.Documents
    const automations = yield* Automations.Automations
    const deliveries = yield* Deliveries.Deliveries
    const jobs = yield* Jobs.Jobs
    const widgets = yield* WidgetSearch.WidgetSearch
    const newAutomation = yield* createAutomation
    return handlers
      .handleRaw("createOrganisation", () =>
        Effect.gen(function*() {
          const { name } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewOrganisation, body))
          const organisation = yield* mapCoreErrors(accounts.createOrganisation(name))
          return { id: organisation.id, name: organisation.name }
        }))
      .handle("listOrganisations", () => mapCoreErrors(accounts.listOrganisations))
      .handleRaw("createApiKey", ({ path }) =>
        Effect.gen(function*() {
          const { environment } = yield* Effect.flatMap(bodies.readJson, (body) => decodeBody(NewApiKey, body))
          return yield* mapCoreErrors(accounts.createApiKey(path.id, environment))
        }))
      .handle("listApiKeys", ({ path }) => mapCoreErrors(accounts.listApiKeys(path.id)))
      .handle("revokeApiKey", ({ path }) => mapCoreErrors(accounts.revokeApiKey(path.id)))
      .handle("createWidgetKey", ({ path }) => mapCoreErrors(widgets.createKey(path.id)))
      .handle("revokeWidgetKey", ({ path }) => mapCoreErrors(widgets.revokeKey(path.id)))
      .handleRaw("createAutomation", ({ path }) => newAutomation(path.id))
      .handle("listAutomations", ({ path }) => mapCoreErrors(automations.list(path.id)))
      .handle("enableAutomation", ({ path }) => mapCoreErrors(automations.enable(path.id)))
      .handle("disableAutomation", ({ path }) => mapCoreErrors(automations.disable(path.id)))
      .handle("rotateAutomationSecret", ({ path }) => mapCoreErrors(automations.rotateSecret(path.id)))
      .handle("deleteAutomation", ({ path }) => mapCoreErrors(automations.remove(path.id)))
      .handle("sendTest", ({ path }) => mapCoreErrors(deliveries.sendTest(path.id)))
      .handle("listDeliveries", ({ path, urlParams }) =>
        mapCoreErrors(deliveries.log(path.id, urlParams.limit === undefined ? undefined : Number(urlParams.limit))))
      .handle("retryDelivery", ({ path }) =>
        byNumericId(path.id, "delivery", (id) =>
          mapCoreErrors(deliveries.retry(id))))
      .handle("listJobs", ({ path, urlParams }) =>
        mapCoreErrors(
          jobs.list(path.id, urlParams.state, urlParams.limit === undefined ? undefined : Number(urlParams.limit))
        ))
      .handle("retryJob", ({ path }) =>
        byNumericId(path.id, "job", (id) =>
          mapCoreErrors(jobs.retry(id))))
      .handle("downloadTradeflow", ({ path }) =>
        Effect.gen(function*() {
          const organisation = yield* mapCoreErrors(accounts.organisation(path.id))
          if (Option.isNone(organisation)) {
            return yield* Problem.make(404, `no organisation with id ${JSON.stringify(path.id)}`)
          }
          const document = yield* mapCoreErrors(documents.download(path.id, path.reference))
          const encoded = yield* Schema.encode(ApiMessage.TradeflowDocument)(document).pipe(Effect.orDie)
          return HttpServerResponse.text(JSON.stringify(encoded), {
            contentType: "application/json",
            headers: { "content-disposition": attachment(path.reference) }
          })
        }))
  }))

const extraRoutes: ReadonlyArray<readonly [string, string]> = [["GET", "/openapi.json"], ["GET", "/docs"]]

const decodeIssues = (error: HttpApiError.HttpApiDecodeError): ReadonlyArray<Problem.ProblemIssue> => {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }))
  const meaningful = issues.filter((issue) => !/^Expected undefined, actual /.test(issue.message))
  return mergeIssues(meaningful.length > 0 ? meaningful : issues)
}

const routes = routeTable([Api, ApiV3], extraRoutes)

/**
 * Turns every failure into a problem response: declared problems as they are, unknown routes
 * into 404 (405 with `Allow` when the path exists), parameter decode errors into 400, anything
 * else into a logged 500.
 */
const problems = (prefix: string) => (app: PlatformHttpApp.Default) =>
  Effect.catchAllCause(app, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error: unknown = failure.value
      if (error instanceof Problem.Problem) return Effect.succeed(Problem.toResponse(error))
      if (error instanceof HttpApiError.HttpApiDecodeError) {
        const issues = decodeIssues(error)
        const names = [...new Set(issues.map((i) => i.path).filter((p) => p !== ""))]
        return Effect.succeed(Problem.toResponse(Problem.make(
          400,
          names.length === 0 ? "the request parameters are invalid" : `invalid request parameter: ${names.join(", ")}`,
          issues
        )))
      }
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        const path = (error.request.url.split("?")[0] ?? "/") || "/"
        const allowed = allowedMethods(routes, path)
        return Effect.succeed(
          allowed.length === 0
            ? Problem.toResponse(Problem.make(404, `no resource at ${prefix}${path}`))
            : Problem.toResponse(
              Problem.make(
                405,
                `${error.request.method} is not allowed on ${prefix}${path}; allowed: ${allowed.join(", ")}`
              ),
              { allow: allowed.join(", ") }
            )
        )
      }
    }
    return Effect.map(internalError(cause), (problem) => Problem.toResponse(problem))
  })

const readablePath = (url: string): boolean => {
  try {
    decodeURIComponent(url.split("?")[0] ?? "")
    return true
  } catch {
    return false
  }
}

/**
 * A URL no route can read is a 400: one carrying U+0000 (`%00`) in its path or query (no storage
 * keeps the character), or one whose path holds a malformed percent-encoding (`%E0%A4%A`, `%zz`).
 */
const refuseUnreadableUrl = <E, R>(app: PlatformHttpApp.Default<E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    /%00|\u0000/.test(request.url)
      ? Effect.succeed(
        Problem.toResponse(Problem.make(400, "the URL holds the NUL character (%00) in its path or query"))
      )
      : readablePath(request.url)
      ? app
      : Effect.succeed(Problem.toResponse(Problem.make(400, "the URL path holds a malformed percent-encoding"))))

/**
 * Every failure as a problem response, then the widget search limited per key
 * (`limitWidgetSearch`) and marked deprecated (see `deprecateWidgetSearch`) and the console's door
 * (`consoleGuard`); unreadable URLs are refused first.
 */
const problemMiddleware = (prefix: string) =>
  HttpApiBuilder.middleware(Effect.map(HttpConfig, (settings) => {
    const guard = consoleGuard(settings, prefix)
    const limit = inFlightLimit(settings)
    const widgetLimit = limitWidgetSearch(settings)
    return (app: PlatformHttpApp.Default) =>
      guard(limit(deprecateWidgetSearch(settings, prefix)(widgetLimit(problems(prefix)(refuseUnreadableUrl(app))))))
  }))

const openApiRoute = (document: OpenApi.OpenAPISpec) =>
  HttpApiBuilder.Router.use((router) =>
    router.get("/openapi.json", Effect.sync(() => HttpServerResponse.unsafeJson(document)))
  )

const groups = Layer.mergeAll(
  downstreamGroup(Api),
  downstreamGroup(ApiV3),
  upstreamGroup(Api),
  upstreamGroup(ApiV3),
  healthGroup(Api),
  healthGroup(ApiV3),
  widgetGroup(Api),
  widgetGroup(ApiV3),
  consoleGroup
).pipe(Layer.provide([apiKeyAuthLayer, widgetKeyAuthLayer, consoleAuthLayer, RequestBodies.layer]))

/** Where the API is served: "" (the root) or a path such as `/tracking`. */
export interface MountOptions {
  /**
   * The path every route, the docs page and the OpenAPI `servers` are under: "" (the default)
   * or `/<segment>[/<segment>…]` without a trailing slash.
   */
  readonly prefix?: string | undefined
}

/** The core services the API calls. */
export type Services =
  | Accounts.Accounts
  | Automations.Automations
  | Deliveries.Deliveries
  | Schemes.Schemes
  | Documents.Documents
  | Ingest.Ingest
  | Jobs.Jobs
  | Upstream.Upstream
  | WidgetSearch.WidgetSearch
  | Worker.Worker

/** The routes under `prefix`; the docs page shows the document `GET /openapi.json` answers. */
const routesLayer = (prefix: string) => {
  const document = openApiDocument(prefix)
  return Layer.mergeAll(HttpApiScalar.layer({ path: "/docs" }), openApiRoute(document), problemMiddleware(prefix)).pipe(
    Layer.provideMerge(HttpApiBuilder.api(Api.annotate(OpenApi.Transform, () => document))),
    Layer.provide(groups),
    Layer.provideMerge(Layer.merge(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer))
  )
}

/**
 * The whole API (root and `/v3`, the console, `GET /openapi.json`, `GET /docs`) under
 * `options.prefix` as an `HttpApp`, built in the current scope. It reads the request's full URL:
 * a request outside the prefix fails with `RouteNotFound`, anything else is answered (unknown
 * routes with a problem). An Effect host serves it with its own server or router, for example
 * `HttpRouter.mountApp("/tracking", app, { includePrefix: true })`.
 */
export const makeApp = (options: MountOptions = {}): Effect.Effect<
  PlatformHttpApp.Default<HttpServerError.RouteNotFound, HttpRouter.HttpRouter.DefaultServices>,
  never,
  Scope.Scope | HttpConfig | Services
> =>
  Effect.gen(function*() {
    const prefix = normalizePrefix(options.prefix)
    const context = yield* Layer.build(routesLayer(prefix))
    const app = yield* Effect.provide(HttpApiBuilder.httpApp, context)
    if (prefix === "") return app
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const url = underPrefix(prefix, request.url)
      return url === undefined
        ? Effect.fail(new HttpServerError.RouteNotFound({ request }))
        : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url }))
    })
  })

/**
 * The served API (root and `/v3`), the console, `GET /openapi.json` and `GET /docs`. Provide an
 * `HttpServer` with its default services (for example `NodeHttpServer.layer(createServer, { port })`),
 * {@link HttpConfig} and the core services (for example `Service.layerMemory`).
 */
export const layer: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | HttpConfig | Services
> = Layer.unwrapScoped(Effect.map(makeApp(), (app) => HttpServer.serve(app)))
