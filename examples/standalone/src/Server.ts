/**
 * The standalone server: the HTTP API over SQLite or PostgreSQL, configured by the environment
 * variables of DECISIONS.md §1. With PostgreSQL, several server processes may share one database.
 */
import { HttpServer, HttpServerError } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import {
  Cursor,
  Locations,
  Retention,
  SecretsAtRest,
  Service,
  type Storage,
  type StorageError,
  TrackingConfig,
  Upstream,
  VesselPositions,
  Worker
} from "@tradeflow/core"
import { HttpApp, HttpConfig, HttpMetrics, SmtpMailer } from "@tradeflow/http-node"
import { PgStorage } from "@tradeflow/storage-pg"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { AisNmeaTcp } from "@tradeflow/tracking-ais"
import { DcsaSource } from "@tradeflow/tracking-dcsa"
import { DeliveryWorker, RetrySchedule, Ssrf, WebhookClient } from "@tradeflow/webhook"
import { Config, ConfigError, Deferred, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as AdminBootstrap from "./AdminBootstrap.js"
import * as ConsoleToken from "./ConsoleToken.js"
import * as TrackingSourcesFile from "./TrackingSourcesFile.js"

/** The database a `DATABASE_URL` names. */
export type Database =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted }

/**
 * Reads `sqlite:<path>`, `sqlite::memory:` and `postgres://…` / `postgresql://…` (the URL is used
 * as given, e.g. `?options=-c%20search_path%3Dtracking` selects a schema); anything else is a
 * configuration error.
 */
export const parseDatabaseUrl = (url: string): Either.Either<Database, string> => {
  if (url.startsWith("sqlite:")) {
    const filename = url.slice("sqlite:".length).replace(/^\/\//, "")
    return filename === ""
      ? Either.left("DATABASE_URL: sqlite: needs a path")
      : Either.right({ _tag: "Sqlite", filename })
  }
  if (/^postgres(ql)?:\/\//.test(url)) return Either.right({ _tag: "Postgres", url: Redacted.make(url) })
  return Either.left(`DATABASE_URL: expected sqlite:<path> or sqlite::memory:, got ${url.split(":")[0]}:…`)
}

/** The database of `DATABASE_URL` (default `sqlite:./data/tracking.sqlite`), read by {@link parseDatabaseUrl}. */
export const databaseConfig = Config.string("DATABASE_URL").pipe(
  Config.withDefault("sqlite:./data/tracking.sqlite"),
  Config.mapOrFail((url) =>
    Either.mapLeft(parseDatabaseUrl(url), (message) => ConfigError.InvalidData(["DATABASE_URL"], message))
  )
)

/** Storage chosen by `DATABASE_URL` (and `SQLITE_SYNCHRONOUS`, or `PG_MAX_CONNECTIONS`). */
export const storageLayerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const db = yield* databaseConfig
  const storage = (layer: Layer.Layer<Storage.Storage, StorageError.StorageError>) => layer
  if (db._tag === "Postgres") {
    const maxConnections = yield* Config.integer("PG_MAX_CONNECTIONS").pipe(Config.withDefault(10))
    return storage(PgStorage.layer({ url: db.url, maxConnections }))
  }
  const synchronous = yield* Config.literal("FULL", "NORMAL")("SQLITE_SYNCHRONOUS").pipe(
    Config.withDefault("FULL" as const)
  )
  return storage(SqliteStorage.layer({ filename: db.filename, synchronous }))
}))

/**
 * Secrets at rest (`SECRETS_KEY`, 32 bytes as 64 hex digits or base64): webhook signing secrets and
 * the stored cursor secret encrypted with AES-256-GCM over the configured storage; unset, they are
 * stored in plaintext. A malformed key, a key other than the one the stored secrets were
 * encrypted with, or no key once they are encrypted, stops the start.
 */
export const secretsLayerConfig = SecretsAtRest.layerConfig(Config.option(Config.redacted("SECRETS_KEY"))).pipe(
  Layer.catchAll((error) =>
    Layer.fail(
      error._tag === "SecretsKeyError"
        ? new SecretsAtRest.SecretsKeyError({ message: `SECRETS_KEY: ${error.message}` })
        : error
    )
  ),
  Layer.provideMerge(storageLayerConfig)
)

/** Tracking settings from `DEMURRAGE_FREE_DAYS`, `DETENTION_FREE_DAYS`, `LOCATION_INTERVAL_MINUTES`. */
export const trackingLayerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const d = TrackingConfig.defaults
  return TrackingConfig.layer({
    demurrageFreeDays: yield* Config.integer("DEMURRAGE_FREE_DAYS").pipe(Config.withDefault(d.demurrageFreeDays)),
    detentionFreeDays: yield* Config.integer("DETENTION_FREE_DAYS").pipe(Config.withDefault(d.detentionFreeDays)),
    locationIntervalMinutes: yield* Config.integer("LOCATION_INTERVAL_MINUTES").pipe(
      Config.withDefault(d.locationIntervalMinutes)
    )
  })
}))

/**
 * The tracking sources of `TRACKING_SOURCES_FILE` (see `TrackingSourcesFile`): one DCSA source per
 * profile, over undici; none when the variable is unset. The start-up log names them.
 */
export const trackingSourcesLayerConfig = Layer.unwrapEffect(Effect.map(
  TrackingSourcesFile.profilesConfig,
  (profiles) =>
    DcsaSource.layer(profiles).pipe(
      Layer.orDie,
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.tap(() => Effect.logInfo(TrackingSourcesFile.describe(profiles)))
    )
))

/**
 * Live vessel positions from the raw AIS NMEA 0183 feed at `AIS_NMEA_TCP` (`host:port`), for the
 * LOCATION_UPDATEs of tracked production tradeflows under way; unset: none (UAT mock voyages keep
 * their synthetic positions). A malformed address stops the start.
 */
export const vesselPositionsLayerConfig = Layer.unwrapEffect(Effect.map(
  Config.string("AIS_NMEA_TCP").pipe(Config.withDefault("")),
  (address) =>
    address.trim() === ""
      ? Layer.empty
      : VesselPositions.layer().pipe(
        Layer.provide(AisNmeaTcp.layerConfig(Config.string("AIS_NMEA_TCP"))),
        Layer.tap(() => Effect.logInfo(`vessel positions: AIS NMEA feed at ${address.trim()}`))
      )
))

/** A comma-separated host list (`HttpConfig.parseHosts`), `fallback` when unset. */
const hosts = (name: string, fallback: ReadonlyArray<string>) =>
  Config.string(name).pipe(Config.withDefault(fallback.join(",")), Config.map(HttpConfig.parseHosts))

/**
 * The webhook destinations accepted, by automations and their deliveries: `WEBHOOK_ALLOW_PRIVATE=true`
 * allows private addresses and plain `http://` (development, tests); `WEBHOOK_HTTP_ALLOWLIST`
 * (comma-separated host names) allows plain `http://` to those hosts only.
 */
export const destinationConfig = Config.all({
  allowPrivate: Config.boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  httpHosts: hosts("WEBHOOK_HTTP_ALLOWLIST", [])
}).pipe(Config.map(({ allowPrivate, httpHosts }) => ({ allowPrivate, allowHttp: allowPrivate, httpHosts })))

/**
 * Webhook push: the destination check of new automations (`Ssrf.layer` over {@link destinationConfig})
 * and a delivery worker to the same destinations, unless `WEBHOOK_ENABLED=false`.
 * `WEBHOOK_LEASE_MILLIS` (default 60000, at least 20000) is how long an attempt stays leased to
 * this process (after a crash, other processes retry its deliveries once it runs out);
 * `WEBHOOK_BATCH_SIZE` (default 256, the batch that meets the throughput goal of BENCHMARKS.md) how
 * many deliveries one round attempts at once; `WEBHOOK_RETRY_HORIZON_SECONDS` (default 259200, 3 days)
 * how long a failing delivery is retried before it is dead. The worker starts once `startAfter`
 * has completed.
 */
export const webhookLayerConfig = (startAfter: Effect.Effect<void> = Effect.void) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const background = yield* Config.boolean("WEBHOOK_ENABLED").pipe(Config.withDefault(true))
    const destinations = yield* destinationConfig
    const leaseMillis = yield* Config.integer("WEBHOOK_LEASE_MILLIS").pipe(Config.withDefault(60_000))
    const batchSize = yield* Config.integer("WEBHOOK_BATCH_SIZE").pipe(Config.withDefault(256))
    const retryHorizon = Duration.seconds(
      yield* positive("WEBHOOK_RETRY_HORIZON_SECONDS", Duration.toSeconds(RetrySchedule.horizon))
    )
    return DeliveryWorker.layer({ background, leaseMillis, batchSize, startAfter, retryHorizon }).pipe(
      Layer.provide(WebhookClient.layer({ allowPrivate: destinations.allowPrivate })),
      Layer.provideMerge(Ssrf.layer(destinations))
    )
  }))

const positive = (name: string, fallback: number) =>
  Config.nested(
    Config.integer().pipe(Config.validate({ message: "expected a positive integer", validation: (n) => n > 0 })),
    name
  )
    .pipe(Config.withDefault(fallback))

const widgetSunset = Config.string("WIDGET_SUNSET").pipe(
  Config.withDefault(""),
  Config.mapOrFail((value) =>
    value.trim() === ""
      ? Either.right(null)
      : Either.mapLeft(HttpConfig.parseSunset(value), (message) => ConfigError.InvalidData(["WIDGET_SUNSET"], message))
  )
)

const rateLimit = (name: string, fallback: HttpConfig.RateLimitPolicy | null) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) =>
      value.trim() === ""
        ? Either.right(fallback)
        : Either.mapLeft(HttpConfig.parseRateLimit(value), (message) => ConfigError.InvalidData([name], message))
    )
  )

const rateLimits = (defaults: HttpConfig.RateLimits) =>
  Config.all({
    production: Config.all({
      apiKey: rateLimit("RATE_LIMIT_API_PRODUCTION", defaults.production.apiKey),
      widgetKey: rateLimit("RATE_LIMIT_WIDGET_PRODUCTION", defaults.production.widgetKey)
    }),
    uat: Config.all({
      apiKey: rateLimit("RATE_LIMIT_API_UAT", defaults.uat.apiKey),
      widgetKey: rateLimit("RATE_LIMIT_WIDGET_UAT", defaults.uat.widgetKey)
    })
  })

const retiredWidgetLimits = Effect.forEach(["WIDGET_SEARCH_RATE", "WIDGET_SEARCH_BURST"], (name) =>
  Effect.flatMap(
    Config.option(Config.string(name)),
    Option.match({
      onNone: () => Effect.void,
      onSome: () =>
        Effect.logWarning(
          `${name} is no longer read: widget searches are limited per widget key by RATE_LIMIT_WIDGET_PRODUCTION and RATE_LIMIT_WIDGET_UAT`
        )
    })
  ), { discard: true })

/**
 * The HTTP settings from `PRODUCTION_HOSTS`, `UAT_HOSTS`, `CONSOLE_TOKEN` / `CONSOLE_TOKEN_FILE`
 * (see {@link ConsoleToken.load}), `CONSOLE_HOSTS`, `CONSOLE_AUTH_FAILURES` (failed console
 * authentications per client per minute), `TRUST_PROXY`, `MAX_BODY_BYTES`, `BODY_TIMEOUT_MILLIS`,
 * `MAX_BUFFERED_BODY_BYTES`, `MAX_IN_FLIGHT_PER_KEY`, `MAX_UPSTREAM_IN_FLIGHT_PER_KEY`,
 * `WIDGET_SUNSET` (an invalid date-time is a
 * configuration error), `RATE_LIMIT_API_PRODUCTION`, `RATE_LIMIT_API_UAT`,
 * `RATE_LIMIT_WIDGET_PRODUCTION` and `RATE_LIMIT_WIDGET_UAT` (requests per key and window, as
 * `HttpConfig.parseRateLimit` reads them: `<requests>/<seconds>` or `off`; anything else is a
 * configuration error), `ALLOW_HTTP_SESSIONS` (web sessions over plain http on any host). The
 * retired `WIDGET_SEARCH_RATE` and `WIDGET_SEARCH_BURST` are ignored with a warning. Every request is
 * logged (`HttpSettings.requestLog`).
 */
export const httpLayerConfig = Layer.unwrapEffect(
  Effect.map(Effect.zipRight(retiredWidgetLimits, ConsoleToken.load), (consoleToken) =>
    HttpConfig.layerConfig({
      consoleToken: Config.succeed(consoleToken),
      productionHosts: hosts("PRODUCTION_HOSTS", HttpConfig.defaultProductionHosts),
      uatHosts: hosts("UAT_HOSTS", HttpConfig.defaultUatHosts),
      consoleHosts: hosts("CONSOLE_HOSTS", []),
      consoleFailures: {
        failures: positive("CONSOLE_AUTH_FAILURES", HttpConfig.defaultConsoleFailures.failures),
        windowMillis: Config.succeed(HttpConfig.defaultConsoleFailures.windowMillis)
      },
      trustProxy: Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
      maxBodyBytes: Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(HttpConfig.defaultMaxBodyBytes)),
      bodyTimeoutMillis: positive("BODY_TIMEOUT_MILLIS", HttpConfig.defaultBodyTimeoutMillis),
      maxBufferedBodyBytes: positive("MAX_BUFFERED_BODY_BYTES", HttpConfig.defaultMaxBufferedBodyBytes),
      maxInFlightPerKey: positive("MAX_IN_FLIGHT_PER_KEY", HttpConfig.defaultMaxInFlightPerKey),
      maxUpstreamInFlightPerKey: positive(
        "MAX_UPSTREAM_IN_FLIGHT_PER_KEY",
        HttpConfig.defaultMaxUpstreamInFlightPerKey
      ),
      widgetSunset,
      rateLimits: rateLimits(HttpConfig.defaultRateLimits),
      metricsHosts: hosts("METRICS_HOSTS", []),
      allowHttpSessions: Config.boolean("ALLOW_HTTP_SESSIONS").pipe(Config.withDefault(false)),
      requestLog: Config.succeed(true)
    }))
)

const maxAttempts = Config.integer("WORKER_MAX_ATTEMPTS").pipe(
  Config.withDefault(Worker.defaultMaxAttempts),
  Config.validate({ message: "WORKER_MAX_ATTEMPTS: expected an integer of at least 1", validation: (n) => n >= 1 })
)

/**
 * Every service over the configured storage, the tracking sources of `TRACKING_SOURCES_FILE` and
 * the webhook delivery worker. `WORKER_ENABLED=false` runs no background worker (nor tracker):
 * the process only accepts work, and another process (or a later start) processes it.
 * `WORKER_LEASE_MILLIS` (default 10000) is how long a claimed job stays leased to this process
 * without a heartbeat (after a crash, other processes take its jobs over once it runs out);
 * `WORKER_CONCURRENCY` (default 1) how many organisations' jobs one process runs at once;
 * `WORKER_JOBS_PER_COMMIT` (default 64) how many consecutive jobs of one organisation it commits together, and
 * `WORKER_BYTES_PER_COMMIT` (default `Worker`'s) how many bytes of their payloads at most;
 * `WORKER_COMMITS_PER_CLAIM` how many such commits one claim takes (one is written while the jobs
 * of the next are processed; default 2 on PostgreSQL, 1 on SQLite, whose commits run on the
 * process's own thread);
 * `WORKER_MAX_ATTEMPTS` (default 5) how often a job may be taken up (a crash, a lost lease or a
 * failed commit each count) before it is dead. `CURSOR_SECRET` (when set and not empty) signs
 * upstream cursors instead of the secret stored in the database. The workers and the scheduler start once
 * `startAfter` has completed. `UPSTREAM_MAX_BYTES` (default 8 MiB) caps the message bytes of one
 * upstream answer. The tracker looks for due targets every `TRACKING_INTERVAL_MILLIS` (default 5000),
 * leases what it claims for `TRACKING_LEASE_MILLIS` (default 120000: how soon a fetch of a crashed
 * process is made again) and makes at most `TRACKING_CONCURRENCY` (default 8) fetches at once.
 * `PUBLIC_BASE_URL` (unset: none) is the base of the callback URLs given to sources that push by
 * subscription (`<PUBLIC_BASE_URL>/tracking/sources/<id>/callback`); without it they are only polled.
 */
export const servicesLayerConfig = (startAfter: Effect.Effect<void> = Effect.void) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const background = yield* Config.boolean("WORKER_ENABLED").pipe(Config.withDefault(true))
    const leaseMillis = yield* Config.integer("WORKER_LEASE_MILLIS").pipe(Config.withDefault(10_000))
    const concurrency = yield* Config.integer("WORKER_CONCURRENCY").pipe(Config.withDefault(1))
    const jobsPerCommit = yield* Config.integer("WORKER_JOBS_PER_COMMIT").pipe(
      Config.withDefault(64),
      Config.validate({ message: "expected an integer of at least 1", validation: (n) => n >= 1 })
    )
    const bytesPerCommit = yield* Config.option(
      Config.integer("WORKER_BYTES_PER_COMMIT").pipe(
        Config.validate({ message: "expected an integer of at least 0", validation: (n) => n >= 0 })
      )
    )
    const { _tag: storage } = yield* databaseConfig
    const commitsPerClaim = yield* Config.integer("WORKER_COMMITS_PER_CLAIM").pipe(
      Config.withDefault(storage === "Postgres" ? 2 : 1),
      Config.validate({ message: "expected an integer of at least 1", validation: (n) => n >= 1 })
    )
    const maxBytes = yield* Config.integer("UPSTREAM_MAX_BYTES").pipe(Config.withDefault(Upstream.defaultMaxBytes))
    const publicBaseUrl = yield* Config.string("PUBLIC_BASE_URL").pipe(
      Config.withDefault(""),
      Config.validate({
        message: "expected an absolute http(s) URL without query or fragment, e.g. https://tracking.example",
        validation: (url) => url === "" || /^https?:\/\/[^\s?#]+$/.test(url)
      })
    )
    const tracker = {
      interval: Duration.millis(yield* positive("TRACKING_INTERVAL_MILLIS", 5_000)),
      leaseMillis: yield* positive("TRACKING_LEASE_MILLIS", 120_000),
      concurrency: yield* positive("TRACKING_CONCURRENCY", 8),
      ...(publicBaseUrl === "" ? {} : { publicBaseUrl })
    }
    const d = Retention.defaultAges
    const age = (name: string, unit: "hours" | "days", fallback: Duration.DurationInput) =>
      Config.integer(name).pipe(
        Config.withDefault(unit === "hours" ? Duration.toHours(fallback) : Duration.toHours(fallback) / 24),
        Config.validate({ message: "expected a positive integer", validation: (n) => n > 0 }),
        Config.map((n) => unit === "hours" ? Duration.hours(n) : Duration.days(n))
      )
    const ages = {
      idempotencyKeys: yield* age("RETAIN_IDEMPOTENCY_KEYS_HOURS", "hours", d.idempotencyKeys),
      doneJobs: yield* age("RETAIN_DONE_JOBS_DAYS", "days", d.doneJobs),
      deliveryAttempts: yield* age("RETAIN_DELIVERY_ATTEMPTS_DAYS", "days", d.deliveryAttempts),
      dead: yield* age("RETAIN_DEAD_DAYS", "days", d.dead)
    }
    return webhookLayerConfig(startAfter).pipe(Layer.provideMerge(
      Service.layer(
        {
          background,
          leaseMillis,
          concurrency,
          jobsPerCommit,
          ...Option.isSome(bytesPerCommit) ? { bytesPerCommit: bytesPerCommit.value } : {},
          commitsPerClaim,
          maxAttempts: yield* maxAttempts,
          startAfter,
          upstream: { maxBytes }
        },
        {},
        { ages },
        tracker
      ).pipe(
        Layer.provide(Cursor.layerConfig(Config.option(Config.redacted("CURSOR_SECRET"))))
      )
    ))
  })).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        secretsLayerConfig,
        Locations.layerBuiltin,
        trackingLayerConfig,
        trackingSourcesLayerConfig,
        vesselPositionsLayerConfig
      )
    )
  )

const unavailable = JSON.stringify({
  type: "about:blank",
  title: "Service Unavailable",
  status: 503,
  detail: "the server is shutting down; retry on a new connection"
})

/**
 * An `HttpServer` listening on `host`:`port` that shuts down gracefully when its scope closes
 * (SIGTERM or SIGINT, see `main.ts`): the port stops accepting connections, idle connections are
 * closed, a request arriving on an open connection is answered 503 with `Connection: close` and
 * `Retry-After: 1`, and the requests in flight finish, answered with `Connection: close`. After
 * `graceMillis` every connection left is closed (its request is interrupted: no answer).
 *
 * It holds at most `maxConnections` connections (more are closed as they arrive), and a connection
 * on which nothing is read or written for `idleTimeoutMillis` is closed: a client that stops
 * sending, or stops reading its answer, holds no memory for longer than that.
 */
export const gracefulServer = (options: {
  readonly port: number
  readonly host: string
  readonly graceMillis: number
  readonly maxConnections?: number | undefined
  readonly idleTimeoutMillis?: number | undefined
}) =>
  Effect.gen(function*() {
    let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined
    let closing = false
    const inFlight = new Set<ServerResponse>()
    const server = createServer((request, response) => {
      if (handler === undefined || closing) {
        response.writeHead(503, {
          "content-type": "application/problem+json",
          "content-length": Buffer.byteLength(unavailable),
          connection: "close",
          "retry-after": "1"
        })
        response.end(unavailable)
        return
      }
      inFlight.add(response)
      response.once("close", () => {
        inFlight.delete(response)
        if (closing) {
          setImmediate(() => {
            if (!request.complete) request.socket.destroy()
            server.closeIdleConnections()
          })
        }
      })
      handler(request, response)
    })
    if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections
    if (options.idleTimeoutMillis !== undefined) {
      server.setTimeout(options.idleTimeoutMillis, (socket) => socket.destroy())
    }
    yield* Effect.async<void, HttpServerError.ServeError>((resume) => {
      const onError = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
      server.once("error", onError)
      server.listen({ port: options.port, host: options.host }, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    yield* Effect.addFinalizer(() =>
      Effect.logInfo(`shutdown: stopped accepting, ${inFlight.size} request(s) in flight`).pipe(
        Effect.zipRight(Effect.async<boolean>((resume) => {
          closing = true
          for (const response of inFlight) if (!response.headersSent) response.setHeader("connection", "close")
          const timer = setTimeout(() => server.closeAllConnections(), options.graceMillis)
          server.close(() => {
            clearTimeout(timer)
            resume(Effect.succeed(inFlight.size === 0))
          })
        })),
        Effect.flatMap((drained) =>
          drained
            ? Effect.logInfo("shutdown: every request answered")
            : Effect.logWarning("shutdown: grace period over, open requests interrupted")
        )
      )
    )
    const address = server.address()
    return HttpServer.make({
      address: typeof address === "object" && address !== null
        ? { _tag: "TcpAddress", hostname: address.address, port: address.port }
        : { _tag: "UnixAddress", path: String(address) },
      serve: (app, middleware) =>
        Effect.gen(function*() {
          handler = yield* NodeHttpServer.makeHandler(app, middleware!)
          yield* Effect.addFinalizer(() => Effect.sync(() => void (handler = undefined)))
        })
    })
  })

/**
 * The standalone server listening on `HOST`:`PORT` (default 0.0.0.0:8080), e-mailing invitations
 * through the SMTP server of `SMTP_URL` (from `MAIL_FROM`, then required; `SMTP_REQUIRE_TLS=false`
 * lets an `smtp://` server that offers no STARTTLS be used) when it is set, with at most
 * `MAX_CONNECTIONS` (default 1024) connections and `SOCKET_IDLE_TIMEOUT_MILLIS` (default 60000) of
 * inactivity per connection (see {@link gracefulServer}). With `METRICS_PORT` set, a second
 * listener on `METRICS_HOST` (default 127.0.0.1) answers `GET /metrics` alone. Storage and services
 * are built (migrations included) before the port opens, so no request arrives at a server that
 * cannot answer it yet. The job worker, the scheduler and the delivery worker start only once the
 * port listens: health checks are answered before any job runs, even one that crashes the process.
 *
 * Closing it (SIGTERM or SIGINT) is a graceful shutdown: the HTTP server drains as
 * {@link gracefulServer} says, for at most `SHUTDOWN_GRACE_MILLIS` (default 30000); then the job
 * and delivery workers stop (an interrupted job or delivery attempt writes nothing and is claimed
 * again once its lease runs out) and the storage closes.
 */
export const layerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const port = yield* Config.port("PORT").pipe(Config.withDefault(8080))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("0.0.0.0"))
  const graceMillis = yield* Config.integer("SHUTDOWN_GRACE_MILLIS").pipe(Config.withDefault(30_000))
  const maxConnections = yield* Config.integer("MAX_CONNECTIONS").pipe(Config.withDefault(1024))
  const idleTimeoutMillis = yield* Config.integer("SOCKET_IDLE_TIMEOUT_MILLIS").pipe(Config.withDefault(60_000))
  const listening = yield* Deferred.make<void>()
  const smtp = yield* Config.option(Config.redacted("SMTP_URL"))
  const mail = Option.isNone(smtp) ? Layer.empty : SmtpMailer.layer({
    url: smtp.value,
    ...Option.match(yield* Config.option(Config.boolean("SMTP_REQUIRE_TLS")), {
      onNone: () => ({}),
      onSome: (requireTls) => ({ requireTls })
    }),
    from: yield* Config.string("MAIL_FROM").pipe(
      Config.validate({
        message: "expected a sender such as Tradeflow <no-reply@tracking.example>",
        validation: (v) => v.includes("@")
      })
    )
  })
  const http = HttpApp.layer.pipe(
    Layer.provide(mail),
    HttpServer.withLogAddress,
    Layer.provide(Layer.merge(
      Layer.scoped(
        HttpServer.HttpServer,
        gracefulServer({ port, host, graceMillis, maxConnections, idleTimeoutMillis })
      ),
      NodeHttpServer.layerContext
    )),
    Layer.provide(httpLayerConfig)
  )
  const metricsPort = yield* Config.option(Config.port("METRICS_PORT"))
  const metrics = Option.isNone(metricsPort) ? Layer.empty : HttpMetrics.layer.pipe(
    HttpServer.withLogAddress,
    Layer.provide(Layer.scoped(
      HttpServer.HttpServer,
      gracefulServer({
        port: metricsPort.value,
        host: yield* Config.string("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
        graceMillis,
        maxConnections: 64,
        idleTimeoutMillis
      })
    ))
  )
  return Layer.effectDiscard(Deferred.succeed(listening, undefined)).pipe(
    Layer.provide(Layer.merge(http, metrics)),
    Layer.provide(Layer.effectDiscard(AdminBootstrap.bootstrap)),
    Layer.provide(servicesLayerConfig(Deferred.await(listening)))
  )
}))
