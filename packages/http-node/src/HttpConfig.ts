/**
 * Configuration of the HTTP API: which hosts are which environment, the console token and where
 * the console is served, proxy trust, the request body limits and the sunset of the widget search
 * (DECISIONS.md §1).
 *
 * @module
 */
import { TradeflowRecord } from "@tradeflow/core"
import { Config, ConfigError, Context, Effect, Either, Layer, Redacted, Schema } from "effect"

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
  /** From this instant on the widget search answers 410; null while no sunset is announced. */
  readonly widgetSunset: Date | null
  /** Widget searches per key: `perSecond` on average, `burst` at once (429 beyond). */
  readonly widgetSearchLimit: { readonly perSecond: number; readonly burst: number }
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
/** Default widget search limit per key: 10 a second, bursts of 20. */
export const defaultWidgetSearchLimit = { perSecond: 10, burst: 20 } as const
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
  readonly widgetSearchLimit?: { readonly perSecond: number; readonly burst: number }
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
  consoleFailures: options.consoleFailures ?? defaultConsoleFailures,
  trustProxy: options.trustProxy ?? false,
  maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
  bodyTimeoutMillis: options.bodyTimeoutMillis ?? defaultBodyTimeoutMillis,
  maxBufferedBodyBytes: options.maxBufferedBodyBytes ?? defaultMaxBufferedBodyBytes,
  maxInFlightPerKey: options.maxInFlightPerKey ?? defaultMaxInFlightPerKey,
  maxUpstreamInFlightPerKey: options.maxUpstreamInFlightPerKey ?? defaultMaxUpstreamInFlightPerKey,
  widgetSunset: options.widgetSunset ?? null,
  widgetSearchLimit: options.widgetSearchLimit ?? defaultWidgetSearchLimit,
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
