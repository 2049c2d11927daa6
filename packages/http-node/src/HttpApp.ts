/**
 * The HTTP application: the {@link Api} served on an `HttpServer`, over the core services.
 *
 * @module
 */
import {
  Etag,
  FileSystem,
  HttpApiBuilder,
  HttpApiScalar,
  type HttpApp as PlatformHttpApp,
  HttpPlatform,
  type HttpRouter,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi,
  Path
} from "@effect/platform"
import {
  Accounts,
  AutomationAdmin,
  DcsaPublisher,
  DeliveryAdmin,
  Documents,
  Ingest,
  JobAdmin,
  RateLimitStore,
  Readiness,
  Schemes,
  TrackingAdmin,
  TrackingPush,
  Upstream,
  Users,
  WebhookDestination,
  WidgetSearch
} from "@tradeflow/core"
import { Context, Effect, Layer, Scope } from "effect"
import { Api } from "./Api.js"
import { HttpConfig } from "./HttpConfig.js"
import * as HttpMetrics from "./HttpMetrics.js"
import { metricsHost, requestHost } from "./internal/hosts.js"
import { openApiDocument } from "./internal/openapi.js"
import { MountPrefix, normalizePrefix, underPrefix } from "./internal/prefix.js"
import { problemMiddleware } from "./internal/problemMiddleware.js"
import { requestLog } from "./internal/requestLog.js"
import { requestMetrics } from "./internal/requestMetrics.js"
import { routeGroups } from "./internal/routeGroups.js"
import { isWebPath, makeWebApp } from "./internal/webApp.js"

export { maxIdempotencyKeyLength } from "./Api.js"

const openApiRoute = (document: OpenApi.OpenAPISpec) =>
  HttpApiBuilder.Router.use((router) =>
    router.get("/openapi.json", Effect.sync(() => HttpServerResponse.unsafeJson(document)))
  )

/** Where the API is served: "" (the root) or a path such as `/tracking`. */
export interface MountOptions {
  /**
   * The path every route, the docs page and the OpenAPI `servers` are under: "" (the default)
   * or `/<segment>[/<segment>…]` without a trailing slash.
   */
  readonly prefix?: string | undefined
}

/**
 * The core services the API calls, the `WebhookDestination` check of new automations'
 * URLs (`Ssrf.layer` of `@tradeflow/webhook`) and the `RateLimitStore` the rate limits per key
 * count in (a storage port: every storage layer provides it).
 */
export type Services =
  | Accounts.Accounts
  | AutomationAdmin.AutomationAdmin
  | DcsaPublisher.DcsaPublisher
  | DeliveryAdmin.DeliveryAdmin
  | Schemes.Schemes
  | Documents.Documents
  | Ingest.Ingest
  | JobAdmin.JobAdmin
  | TrackingAdmin.TrackingAdmin
  | TrackingPush.TrackingPush
  | Upstream.Upstream
  | WidgetSearch.WidgetSearch
  | WebhookDestination.WebhookDestination
  | Users.Users
  | Readiness.Readiness
  | RateLimitStore.RateLimitStore

/**
 * What the routes are built with: every handler and middleware captures its build context and
 * merges it into each request's context, so that context holds these and nothing else.
 */
const serviceTags = [
  Scope.Scope,
  HttpConfig,
  Accounts.Accounts,
  AutomationAdmin.AutomationAdmin,
  DcsaPublisher.DcsaPublisher,
  DeliveryAdmin.DeliveryAdmin,
  Schemes.Schemes,
  Documents.Documents,
  Ingest.Ingest,
  JobAdmin.JobAdmin,
  TrackingAdmin.TrackingAdmin,
  TrackingPush.TrackingPush,
  Upstream.Upstream,
  WidgetSearch.WidgetSearch,
  WebhookDestination.WebhookDestination,
  Users.Users,
  Readiness.Readiness,
  RateLimitStore.RateLimitStore
] as const

/** The routes under `prefix`; the docs page shows the document `GET /openapi.json` answers. */
const routesLayer = (prefix: string) => {
  const document = openApiDocument(prefix)
  return Layer.mergeAll(HttpApiScalar.layer({ path: "/docs" }), openApiRoute(document), problemMiddleware).pipe(
    Layer.provideMerge(HttpApiBuilder.api(Api.annotate(OpenApi.Transform, () => document))),
    Layer.provide(routeGroups),
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
    const context = yield* Layer.build(routesLayer(prefix)).pipe(
      Effect.mapInputContext((context: Context.Context<Scope.Scope | HttpConfig | Services>) =>
        Context.pick(...serviceTags)(context)
      )
    )
    const api = yield* Effect.provide(HttpApiBuilder.httpApp, context)
    const web = yield* Effect.provide(makeWebApp, context)
    const settings = yield* HttpConfig
    const metrics = yield* HttpMetrics.makeResponse
    const app: typeof api = requestLog(settings.requestLog)(requestMetrics(Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) =>
        request.method === "GET" && request.url.split("?")[0] === "/metrics" &&
          metricsHost(settings, requestHost(settings, request.headers))
          ? metrics
          : isWebPath(request.url)
          ? web
          : api
    )))
    if (prefix === "") return app
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const url = underPrefix(prefix, request.url)
      return url === undefined
        ? Effect.fail(new HttpServerError.RouteNotFound({ request }))
        : app.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, request.modify({ url })),
          Effect.provideService(MountPrefix, prefix)
        )
    })
  })

/**
 * The served API (root and `/v3`), the console, `GET /openapi.json` and `GET /docs`. Provide an
 * `HttpServer` with its default services (for example `NodeHttpServer.layer(createServer, { port })`; its requests
 * run with those alone in their context),
 * {@link HttpConfig} and the {@link Services} (for example `Service.layerMemory` and `Ssrf.layer`).
 */
export const layer: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | HttpConfig | Services
> = Layer.scopedDiscard(Effect.gen(function*() {
  const app = yield* makeApp()
  yield* HttpServer.serveEffect(app).pipe(
    Effect.mapInputContext((
      context: Context.Context<HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | Scope.Scope>
    ) =>
      Context.pick(
        HttpServer.HttpServer,
        HttpPlatform.HttpPlatform,
        Etag.Generator,
        FileSystem.FileSystem,
        Path.Path,
        Scope.Scope
      )(context)
    )
  )
}))
