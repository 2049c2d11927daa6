/**
 * The API mounted into a host's own server under a prefix: as an `@effect/platform` app, a Node
 * `(req, res, next?)` handler and a web-standard `Request → Response` handler, all served by the
 * runtime that provides the layer (the host's), so that they stop when it does.
 *
 * @module
 */
import { type HttpApp as PlatformHttpApp, HttpApp as WebApp, HttpServerError } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as HttpApp from "./HttpApp.js"
import type { HttpConfig } from "./HttpConfig.js"
import { noResource } from "./internal/errors.js"
import { normalizePrefix, underPrefix } from "./internal/prefix.js"
import * as Problem from "./Problem.js"

/**
 * A Node request handler. With `next` (Express, Connect) a request outside the prefix goes on to
 * `next()`; without it, it is answered 404. Under Express's `app.use(prefix, handler)` the URL is
 * read from `req.originalUrl`, which keeps the prefix Express strips from `req.url`.
 */
export interface NodeHandler {
  (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void): void
}

/** A web-standard handler (a request outside the prefix is answered 404). */
export interface WebHandler {
  (request: Request): Promise<Response>
}

/** The API under one prefix, in the three forms a host can serve. */
export interface Mount {
  /** The prefix, normalised ("" or `/a/b`). */
  readonly prefix: string
  /**
   * The API as an `HttpApp` that reads the full URL (a request outside the prefix fails with
   * `RouteNotFound`): `HttpRouter.mountApp(prefix, app, { includePrefix: true })`.
   */
  readonly app: PlatformHttpApp.Default<HttpServerError.RouteNotFound>
  /** For `node:http`, Express, Connect or Fastify (`reply.hijack()`, then `request.raw`, `reply.raw`). */
  readonly nodeHandler: NodeHandler
  /** For hosts that speak `fetch`'s `Request` and `Response`. */
  readonly webHandler: WebHandler
}

export class HttpMount extends Context.Tag("@tradeflow/http-node/HttpMount")<HttpMount, Mount>() {}

const stopped = Problem.toParts(Problem.make(503, "the tracking service has stopped"))

const notFound = <E, R>(app: PlatformHttpApp.Default<E | HttpServerError.RouteNotFound, R>) =>
  Effect.catchIf(
    app,
    (error): error is HttpServerError.RouteNotFound =>
      HttpServerError.isServerError(error) && error._tag === "RouteNotFound",
    ({ request }) => noResource(request)
  )

/**
 * The API under `options.prefix`, over the core services and {@link HttpConfig} of the runtime
 * that builds the layer. Once that runtime is disposed (its scope closed), both handlers answer
 * 503: stop the host's server first, then dispose the runtime.
 */
export const layer = (
  options: HttpApp.MountOptions = {}
): Layer.Layer<HttpMount, never, HttpConfig | HttpApp.Services> =>
  Layer.scoped(
    HttpMount,
    Effect.gen(function*() {
      const prefix = normalizePrefix(options.prefix)
      const platform = yield* Layer.build(NodeHttpServer.layerContext)
      const app = Effect.provide(yield* HttpApp.makeApp({ prefix }), platform)
      const answered = notFound(app)
      const runtime = yield* Effect.runtime<never>()
      const node = yield* NodeHttpServer.makeHandler(answered)
      const web = WebApp.toWebHandlerRuntime(runtime)(answered)
      let open = true
      yield* Effect.addFinalizer(() => Effect.sync(() => void (open = false)))
      const nodeHandler: NodeHandler = (request, response, next) => {
        const original = (request as { readonly originalUrl?: unknown }).originalUrl
        const url = typeof original === "string" ? original : request.url ?? "/"
        if (next !== undefined && underPrefix(prefix, url) === undefined) return next()
        if (!open) {
          response.writeHead(stopped.status, stopped.headers).end(stopped.body)
          return
        }
        request.url = url
        node(request, response)
      }
      const webHandler: WebHandler = (request) =>
        open
          ? web(request)
          : Promise.resolve(new Response(stopped.body, { status: stopped.status, headers: stopped.headers }))
      return HttpMount.of({ prefix, app, nodeHandler, webHandler })
    })
  )
