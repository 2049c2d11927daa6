/**
 * Configuration of the HTTP API: which hosts are which environment, the console token and where
 * the console is served, proxy trust, the request body limits, the rate limits per key and the
 * sunset of the widget search (DECISIONS.md §1).
 *
 * @module
 */
import { TradeflowRecord } from "@tradeflow/core"
import { Config, ConfigError, Context, Effect, Either, Layer, Redacted, Schema } from "effect"

/** A rate limit: at most `quota` requests in each fixed window of `windowSeconds` seconds. */
export interface RateLimitPolicy {
  readonly quota: number
  readonly windowSeconds: number
}

/** The rate limit of each kind of key in one environment; null: not limited. */
export interface RateLimitsOf {
  /** Requests with one API key (downstream, upstream, DCSA events). */
  readonly apiKey: RateLimitPolicy | null
  /** Widget searches with one widget key. */
  readonly widgetKey: RateLimitPolicy | null
}

/** The rate limits of each environment, counted per key across every process on one database. */
export interface RateLimits {
  readonly production: RateLimitsOf
  readonly uat: RateLimitsOf
}

export interface HttpSettings {
  /** Host names (port ignored, case-insensitive) of the production environment. */
  readonly productionHosts: ReadonlyArray<string>
  /** Host names of the UAT environment. */
  readonly uatHosts: ReadonlyArray<string>
  /** The operator token of the console API (`Authorization: Bearer <token>`), at least 32 characters. */
  readonly consoleToken: Redacted.Redacted<string>
  /** Host names on which the console is served (404 on any other); empty: every host. */
  readonly consoleHosts: ReadonlyArray<string>
  /**
   * Host names on which `GET /metrics` (Prometheus) is served; empty (the default): none, the path
   * is a 404 on every host.
   */
  readonly metricsHosts: ReadonlyArray<string>
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
  /** From this instant on the widget search answers 410; null while no sunset is announced. */
  readonly widgetSunset: Date | null
  /** Requests per key and fixed window, per environment and kind of key (429 beyond). */
  readonly rateLimits: RateLimits
  /**
   * Sessions of the web application over plain http on any host. Without it a session needs HTTPS
   * (its own, or a trusted proxy's `X-Forwarded-Proto`), except on loopback hosts.
   */
  readonly allowHttpSessions: boolean
  /**
   * Failed sign-ins allowed per e-mail and per client address within `windowMillis`; beyond, 429
   * until the window ends.
   */
  readonly signInFailures: {
    readonly perEmail: number
    readonly perAddress: number
    readonly windowMillis: number
  }
  /**
   * One info log line per request (`Request answered`, annotated with its route template, method,
   * status, duration and organisation). Off by default: a host may log requests its own way.
   */
  readonly requestLog: boolean
}

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
/**
 * Default rate limits: per API key 6,000 requests a minute in production and 1,200 in UAT; per
 * widget key 600 searches a minute in production and 120 in UAT.
 */
export const defaultRateLimits: RateLimits = {
  production: { apiKey: { quota: 6_000, windowSeconds: 60 }, widgetKey: { quota: 600, windowSeconds: 60 } },
  uat: { apiKey: { quota: 1_200, windowSeconds: 60 }, widgetKey: { quota: 120, windowSeconds: 60 } }
}
/** The longest window of a rate limit: a day. */
export const maxRateLimitWindowSeconds = 86_400
/** The shortest console token accepted. */
export const minConsoleTokenLength = 32
/** Default limit of failed console authentications: 10 per client per minute. */
export const defaultConsoleFailures = { failures: 10, windowMillis: 60_000 } as const

/** Default limit of failed sign-ins: 5 per e-mail and 20 per address in 15 minutes. */
export const defaultSignInFailures = { perEmail: 5, perAddress: 20, windowMillis: 15 * 60_000 } as const

/** Options of {@link layer} and {@link layerConfig}; everything but the console token has a default. */
export interface Options {
  readonly consoleToken: Redacted.Redacted<string> | string
  readonly consoleHosts?: ReadonlyArray<string>
  readonly metricsHosts?: ReadonlyArray<string>
  readonly consoleFailures?: { readonly failures: number; readonly windowMillis: number }
  readonly productionHosts?: ReadonlyArray<string>
  readonly uatHosts?: ReadonlyArray<string>
  readonly trustProxy?: boolean
  readonly maxBodyBytes?: number
  readonly bodyTimeoutMillis?: number
  readonly maxBufferedBodyBytes?: number
  readonly maxInFlightPerKey?: number
  readonly maxUpstreamInFlightPerKey?: number
  readonly widgetSunset?: Date | null
  readonly rateLimits?: RateLimits
  readonly allowHttpSessions?: boolean
  readonly signInFailures?: {
    readonly perEmail: number
    readonly perAddress: number
    readonly windowMillis: number
  }
  readonly requestLog?: boolean
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
  metricsHosts: options.metricsHosts ?? [],
  consoleFailures: options.consoleFailures ?? defaultConsoleFailures,
  trustProxy: options.trustProxy ?? false,
  maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
  bodyTimeoutMillis: options.bodyTimeoutMillis ?? defaultBodyTimeoutMillis,
  maxBufferedBodyBytes: options.maxBufferedBodyBytes ?? defaultMaxBufferedBodyBytes,
  maxInFlightPerKey: options.maxInFlightPerKey ?? defaultMaxInFlightPerKey,
  maxUpstreamInFlightPerKey: options.maxUpstreamInFlightPerKey ?? defaultMaxUpstreamInFlightPerKey,
  widgetSunset: options.widgetSunset ?? null,
  rateLimits: options.rateLimits ?? defaultRateLimits,
  allowHttpSessions: options.allowHttpSessions ?? false,
  signInFailures: options.signInFailures ?? defaultSignInFailures,
  requestLog: options.requestLog ?? false
})

/**
 * Reads a sunset instant: an ISO 8601 date-time (without an offset it is UTC; a date alone
 * is midnight UTC).
 */
export const parseSunset = (value: string): Either.Either<Date, string> =>
  Schema.is(TradeflowRecord.IsoDateTime)(value)
    ? Either.right(new Date(TradeflowRecord.parseIsoDateTime(value)))
    : Either.left(`expected an ISO 8601 date-time such as 2027-06-30T00:00:00Z, got ${JSON.stringify(value)}`)

/**
 * Reads a rate limit: `<requests>/<seconds>` (at most that many requests in each window of that
 * many seconds, at most a day), such as `6000/60`, or `off` (not limited).
 */
export const parseRateLimit = (value: string): Either.Either<RateLimitPolicy | null, string> => {
  const trimmed = value.trim()
  if (trimmed.toLowerCase() === "off") return Either.right(null)
  const match = /^(\d{1,9})\s*\/\s*(\d{1,9})$/.exec(trimmed)
  const quota = Number(match?.[1])
  const windowSeconds = Number(match?.[2])
  return match !== null && quota >= 1 && windowSeconds >= 1 && windowSeconds <= maxRateLimitWindowSeconds
    ? Either.right({ quota, windowSeconds })
    : Either.left(
      `expected <requests>/<seconds> such as 6000/60 (at least 1 request, 1 to ${maxRateLimitWindowSeconds} seconds) or off, got ${
        JSON.stringify(value)
      }`
    )
}

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

/**
 * {@link layer} with its options read from `config`, in the shape of `PgClient.layerConfig`: each
 * option a `Config` (omitted ones take their defaults), or one `Config` of them all. A console token
 * shorter than 32 characters is a configuration error.
 *
 * @example
 * HttpConfig.layerConfig({
 *   consoleToken: Config.redacted("token"),
 *   productionHosts: Config.string("hosts").pipe(Config.map(HttpConfig.parseHosts))
 * })
 */
export const layerConfig = (config: Config.Config.Wrap<Options>): Layer.Layer<HttpConfig, ConfigError.ConfigError> =>
  Layer.effect(
    HttpConfig,
    Effect.flatMap(Config.unwrap(config), (options) => {
      const settings = make(options)
      const refused = shortToken(Redacted.value(settings.consoleToken))
      return refused === undefined
        ? Effect.succeed(settings)
        : Effect.fail(ConfigError.InvalidData(["consoleToken"], refused))
    })
  )
