/**
 * Configuration of the HTTP API: which hosts are which environment, the console token and where
 * the console is served, proxy trust, the request body limit, whether webhook destinations may be
 * private and the sunset of the widget search (DECISIONS.md §1).
 *
 * @since 0.1.0
 */
import { TradeflowRecord } from "@tradeflow/core"
import { Config, ConfigError, Context, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** @since 0.1.0 */
export interface HttpSettings {
  /** Host names (port ignored, case-insensitive) of the production environment. */
  readonly productionHosts: ReadonlyArray<string>
  /** Host names of the UAT environment. */
  readonly uatHosts: ReadonlyArray<string>
  /** The operator token of the console API (`Authorization: Bearer <token>`), at least 32 characters. */
  readonly consoleToken: Redacted.Redacted<string>
  /** Host names on which the console is served (404 on any other); empty: every host. */
  readonly consoleHosts: ReadonlyArray<string>
  /** Failed console authentications a client may make per window before it gets 429. */
  readonly consoleFailures: { readonly failures: number; readonly windowMillis: number }
  /** Read the host from `X-Forwarded-Host` instead of `Host`. */
  readonly trustProxy: boolean
  /** The largest accepted request body in bytes. */
  readonly maxBodyBytes: number
  /** How long a request body may take to arrive (408 after). */
  readonly bodyTimeoutMillis: number
  /** Request body bytes the application holds at once across all requests (503 beyond). */
  readonly maxBufferedBodyBytes: number
  /** Requests one credential (the `Authorization` value) may have in flight at once (429 beyond). */
  readonly maxInFlightPerKey: number
  /** Upstream requests (`GET /upstream`) one credential may have in flight at once (429 beyond). */
  readonly maxUpstreamInFlightPerKey: number
  /** Webhook destinations may be loopback/private addresses and plain http (development, tests). */
  readonly webhookAllowPrivate: boolean
  /** Host names webhook destinations may reach over plain http (`WEBHOOK_HTTP_ALLOWLIST`). */
  readonly webhookHttpHosts: ReadonlyArray<string>
  /** From this instant on the widget search answers 410; null while no sunset is announced. */
  readonly widgetSunset: Date | null
  /** Widget searches per key: `perSecond` on average, `burst` at once (429 beyond). */
  readonly widgetSearchLimit: { readonly perSecond: number; readonly burst: number }
}

/** @since 0.1.0 */
export class HttpConfig extends Context.Tag("@tradeflow/http-node/HttpConfig")<HttpConfig, HttpSettings>() {}

/** Default production hosts. */
export const defaultProductionHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1"]
/** Default UAT hosts. */
export const defaultUatHosts: ReadonlyArray<string> = ["uat.localhost"]
/** Default body limit: 5 MiB. */
export const defaultMaxBodyBytes = 5 * 1024 * 1024
/** Default body timeout: 30 s. */
export const defaultBodyTimeoutMillis = 30_000
/** Default budget of buffered request body bytes: 128 MiB. */
export const defaultMaxBufferedBodyBytes = 128 * 1024 * 1024
/** Default requests in flight per credential. */
export const defaultMaxInFlightPerKey = 16
/** Default upstream requests in flight per credential. */
export const defaultMaxUpstreamInFlightPerKey = 4
/** Default widget search limit per key: 10 a second, bursts of 20. */
export const defaultWidgetSearchLimit = { perSecond: 10, burst: 20 } as const
/** The shortest console token accepted. */
export const minConsoleTokenLength = 32
/** Default limit of failed console authentications: 10 per client per minute. */
export const defaultConsoleFailures = { failures: 10, windowMillis: 60_000 } as const

/** Options of {@link layer}; everything but the console token has a default. */
export interface Options {
  readonly consoleToken: Redacted.Redacted<string> | string
  readonly consoleHosts?: ReadonlyArray<string>
  readonly consoleFailures?: { readonly failures: number; readonly windowMillis: number }
  readonly productionHosts?: ReadonlyArray<string>
  readonly uatHosts?: ReadonlyArray<string>
  readonly trustProxy?: boolean
  readonly maxBodyBytes?: number
  readonly bodyTimeoutMillis?: number
  readonly maxBufferedBodyBytes?: number
  readonly maxInFlightPerKey?: number
  readonly maxUpstreamInFlightPerKey?: number
  readonly webhookAllowPrivate?: boolean
  readonly webhookHttpHosts?: ReadonlyArray<string>
  readonly widgetSunset?: Date | null
  readonly widgetSearchLimit?: { readonly perSecond: number; readonly burst: number }
}

/** Splits a comma-separated host list. */
export const parseHosts = (value: string): ReadonlyArray<string> =>
  value.split(",").map((h) => h.trim()).filter((h) => h.length > 0)

/** Builds the settings from options, applying the defaults of DECISIONS.md §1. */
export const make = (options: Options): HttpSettings => ({
  productionHosts: options.productionHosts ?? defaultProductionHosts,
  uatHosts: options.uatHosts ?? defaultUatHosts,
  consoleToken: Redacted.isRedacted(options.consoleToken)
    ? options.consoleToken
    : Redacted.make(options.consoleToken),
  consoleHosts: options.consoleHosts ?? [],
  consoleFailures: options.consoleFailures ?? defaultConsoleFailures,
  trustProxy: options.trustProxy ?? false,
  maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
  bodyTimeoutMillis: options.bodyTimeoutMillis ?? defaultBodyTimeoutMillis,
  maxBufferedBodyBytes: options.maxBufferedBodyBytes ?? defaultMaxBufferedBodyBytes,
  maxInFlightPerKey: options.maxInFlightPerKey ?? defaultMaxInFlightPerKey,
  maxUpstreamInFlightPerKey: options.maxUpstreamInFlightPerKey ?? defaultMaxUpstreamInFlightPerKey,
  webhookAllowPrivate: options.webhookAllowPrivate ?? false,
  webhookHttpHosts: (options.webhookHttpHosts ?? []).map((h) => h.toLowerCase()),
  widgetSunset: options.widgetSunset ?? null,
  widgetSearchLimit: options.widgetSearchLimit ?? defaultWidgetSearchLimit
})

/**
 * Reads a `WIDGET_SUNSET` value: an ISO 8601 date-time (without an offset it is UTC; a date alone
 * is midnight UTC).
 */
export const parseSunset = (value: string): Either.Either<Date, string> =>
  Schema.is(TradeflowRecord.IsoDateTime)(value)
    ? Either.right(new Date(TradeflowRecord.parseIsoDateTime(value)))
    : Either.left(`expected an ISO 8601 date-time such as 2027-06-30T00:00:00Z, got ${JSON.stringify(value)}`)

const shortToken = (token: string): string | undefined =>
  token.length < minConsoleTokenLength
    ? `the console token must be at least ${minConsoleTokenLength} characters long (got ${token.length})`
    : undefined

/** The settings of `options`; a console token shorter than 32 characters stops the layer (a defect). */
export const layer = (options: Options): Layer.Layer<HttpConfig> =>
  Layer.effect(
    HttpConfig,
    Effect.suspend(() => {
      const settings = make(options)
      const refused = shortToken(Redacted.value(settings.consoleToken))
      return refused === undefined ? Effect.succeed(settings) : Effect.dieMessage(refused)
    })
  )

const positive = (name: string, fallback: number) =>
  Config.nested(Config.integer().pipe(Config.validate({ message: "expected a positive integer", validation: (n) => n > 0 })), name)
    .pipe(Config.withDefault(fallback))

const randomToken = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(24))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * The generated console token kept in `file`: read when the file exists, else created there with
 * mode 0600 (its directory too). A file others may read is narrowed to 0600 first.
 */
const tokenFile = (file: string) =>
  Effect.gen(function*() {
    const path = Path.resolve(file)
    const existing = yield* Effect.try(() => {
      const stat = Fs.statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) return undefined
      if ((stat.mode & 0o077) !== 0) Fs.chmodSync(path, 0o600)
      return Fs.readFileSync(path, "utf8").trim()
    })
    if (existing !== undefined && existing !== "") return { path, token: existing, created: false }
    const token = randomToken()
    yield* Effect.try(() => {
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      Fs.writeFileSync(path, token + "\n", { mode: 0o600 })
      Fs.chmodSync(path, 0o600)
    })
    return { path, token, created: true }
  }).pipe(
    Effect.mapError((error) =>
      ConfigError.InvalidData(["CONSOLE_TOKEN_FILE"], `cannot keep the console token in ${file}: ${String(error.error)}`)
    )
  )

/**
 * Reads `PRODUCTION_HOSTS`, `UAT_HOSTS`, `CONSOLE_TOKEN`, `CONSOLE_TOKEN_FILE`, `CONSOLE_HOSTS`,
 * `CONSOLE_AUTH_FAILURES` (failed console authentications per client per minute), `TRUST_PROXY`,
 * `MAX_BODY_BYTES`, `BODY_TIMEOUT_MILLIS`, `MAX_BUFFERED_BODY_BYTES`, `MAX_IN_FLIGHT_PER_KEY`,
 * `MAX_UPSTREAM_IN_FLIGHT_PER_KEY`, `WEBHOOK_ALLOW_PRIVATE`, `WIDGET_SUNSET` (an invalid
 * date-time is a configuration error), `WIDGET_SEARCH_RATE` and `WIDGET_SEARCH_BURST` (widget
 * searches per key per second, and at once). A `CONSOLE_TOKEN` shorter than 32 characters is a
 * configuration error. Without `CONSOLE_TOKEN` the token is the one kept in `CONSOLE_TOKEN_FILE`
 * (default `./data/console-token`), generated there with mode 0600 on first start; the log names
 * the file, never the token, which only an interactive terminal (stderr) is shown.
 */
export const layerConfig: Layer.Layer<HttpConfig, ConfigError.ConfigError> = Layer.effect(
  HttpConfig,
  Effect.gen(function*() {
    const productionHosts = yield* Config.string("PRODUCTION_HOSTS").pipe(Config.withDefault(defaultProductionHosts.join(",")))
    const uatHosts = yield* Config.string("UAT_HOSTS").pipe(Config.withDefault(defaultUatHosts.join(",")))
    const token = yield* Config.option(Config.redacted("CONSOLE_TOKEN"))
    const tokenPath = yield* Config.string("CONSOLE_TOKEN_FILE").pipe(Config.withDefault("./data/console-token"))
    const consoleHosts = yield* Config.string("CONSOLE_HOSTS").pipe(Config.withDefault(""))
    const consoleAuthFailures = yield* positive("CONSOLE_AUTH_FAILURES", defaultConsoleFailures.failures)
    const trustProxy = yield* Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false))
    const maxBodyBytes = yield* Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(defaultMaxBodyBytes))
    const bodyTimeoutMillis = yield* positive("BODY_TIMEOUT_MILLIS", defaultBodyTimeoutMillis)
    const maxBufferedBodyBytes = yield* positive("MAX_BUFFERED_BODY_BYTES", defaultMaxBufferedBodyBytes)
    const maxInFlightPerKey = yield* positive("MAX_IN_FLIGHT_PER_KEY", defaultMaxInFlightPerKey)
    const maxUpstreamInFlightPerKey = yield* positive("MAX_UPSTREAM_IN_FLIGHT_PER_KEY", defaultMaxUpstreamInFlightPerKey)
    const webhookAllowPrivate = yield* Config.boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false))
    const webhookHttpHosts = yield* Config.string("WEBHOOK_HTTP_ALLOWLIST").pipe(Config.withDefault(""))
    const widgetSunset = yield* Config.string("WIDGET_SUNSET").pipe(
      Config.withDefault(""),
      Config.mapOrFail((value) =>
        value.trim() === ""
          ? Either.right(null)
          : Either.mapLeft(parseSunset(value), (message) => ConfigError.InvalidData(["WIDGET_SUNSET"], message))
      )
    )
    const widgetSearchRate = yield* positive("WIDGET_SEARCH_RATE", defaultWidgetSearchLimit.perSecond)
    const widgetSearchBurst = yield* positive("WIDGET_SEARCH_BURST", defaultWidgetSearchLimit.burst)
    const given = Option.filter(token, (t) => Redacted.value(t).length > 0)
    if (Option.isSome(given)) {
      const refused = shortToken(Redacted.value(given.value))
      if (refused !== undefined) return yield* Effect.fail(ConfigError.InvalidData(["CONSOLE_TOKEN"], refused))
    }
    const consoleToken = Option.isSome(given) ? given.value : yield* tokenFile(tokenPath).pipe(
      Effect.tap(({ created, path, token }) =>
        Effect.zipRight(
          Effect.logWarning(
            `CONSOLE_TOKEN is not set; the console token is in ${path} (readable by its owner only${created ? ", created now" : ""})`
          ),
          Effect.sync(() => {
            if (process.stderr.isTTY) process.stderr.write(`console token: ${token}\n`)
          })
        )
      ),
      Effect.map(({ token }) => Redacted.make(token))
    )
    return make({
      productionHosts: parseHosts(productionHosts),
      uatHosts: parseHosts(uatHosts),
      consoleToken,
      consoleHosts: parseHosts(consoleHosts),
      consoleFailures: { failures: consoleAuthFailures, windowMillis: defaultConsoleFailures.windowMillis },
      trustProxy,
      maxBodyBytes,
      bodyTimeoutMillis,
      maxBufferedBodyBytes,
      maxInFlightPerKey,
      maxUpstreamInFlightPerKey,
      webhookAllowPrivate,
      webhookHttpHosts: parseHosts(webhookHttpHosts),
      widgetSunset,
      widgetSearchLimit: { perSecond: widgetSearchRate, burst: widgetSearchBurst }
    })
  })
)
