/**
 * Configuration of the HTTP API: which hosts are which environment, the console token, proxy
 * trust, the request body limit, whether webhook destinations may be private and the sunset of the
 * widget search (DECISIONS.md §1).
 *
 * @since 0.1.0
 */
import { TradeflowRecord } from "@tradeflow/core"
import { Config, ConfigError, Context, Effect, Either, Layer, Option, Redacted, Schema } from "effect"

/** @since 0.1.0 */
export interface HttpSettings {
  /** Host names (port ignored, case-insensitive) of the production environment. */
  readonly productionHosts: ReadonlyArray<string>
  /** Host names of the UAT environment. */
  readonly uatHosts: ReadonlyArray<string>
  /** The operator token of the console API (`Authorization: Bearer <token>`). */
  readonly consoleToken: Redacted.Redacted<string>
  /** Read the host from `X-Forwarded-Host` instead of `Host`. */
  readonly trustProxy: boolean
  /** The largest accepted request body in bytes. */
  readonly maxBodyBytes: number
  /** Webhook destinations may be loopback/private addresses and plain http (development, tests). */
  readonly webhookAllowPrivate: boolean
  /** Host names webhook destinations may reach over plain http (`WEBHOOK_HTTP_ALLOWLIST`). */
  readonly webhookHttpHosts: ReadonlyArray<string>
  /** From this instant on the widget search answers 410; null while no sunset is announced. */
  readonly widgetSunset: Date | null
}

/** @since 0.1.0 */
export class HttpConfig extends Context.Tag("@tradeflow/http-node/HttpConfig")<HttpConfig, HttpSettings>() {}

/** Default production hosts. */
export const defaultProductionHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1"]
/** Default UAT hosts. */
export const defaultUatHosts: ReadonlyArray<string> = ["uat.localhost"]
/** Default body limit: 5 MiB. */
export const defaultMaxBodyBytes = 5 * 1024 * 1024

/** Options of {@link layer}; everything but the console token has a default. */
export interface Options {
  readonly consoleToken: Redacted.Redacted<string> | string
  readonly productionHosts?: ReadonlyArray<string>
  readonly uatHosts?: ReadonlyArray<string>
  readonly trustProxy?: boolean
  readonly maxBodyBytes?: number
  readonly webhookAllowPrivate?: boolean
  readonly webhookHttpHosts?: ReadonlyArray<string>
  readonly widgetSunset?: Date | null
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
  trustProxy: options.trustProxy ?? false,
  maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes,
  webhookAllowPrivate: options.webhookAllowPrivate ?? false,
  webhookHttpHosts: (options.webhookHttpHosts ?? []).map((h) => h.toLowerCase()),
  widgetSunset: options.widgetSunset ?? null
})

/**
 * Reads a `WIDGET_SUNSET` value: an ISO 8601 date-time (without an offset it is UTC; a date alone
 * is midnight UTC).
 */
export const parseSunset = (value: string): Either.Either<Date, string> =>
  Schema.is(TradeflowRecord.IsoDateTime)(value)
    ? Either.right(new Date(TradeflowRecord.parseIsoDateTime(value)))
    : Either.left(`expected an ISO 8601 date-time such as 2027-06-30T00:00:00Z, got ${JSON.stringify(value)}`)

/** @since 0.1.0 */
export const layer = (options: Options): Layer.Layer<HttpConfig> => Layer.succeed(HttpConfig, make(options))

const randomToken = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(24))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * Reads `PRODUCTION_HOSTS`, `UAT_HOSTS`, `CONSOLE_TOKEN`, `TRUST_PROXY`, `MAX_BODY_BYTES`,
 * `WEBHOOK_ALLOW_PRIVATE` and `WIDGET_SUNSET` (an invalid date-time is a configuration error).
 * Without `CONSOLE_TOKEN` a random token is generated and logged once.
 */
export const layerConfig: Layer.Layer<HttpConfig, ConfigError.ConfigError> = Layer.effect(
  HttpConfig,
  Effect.gen(function*() {
    const productionHosts = yield* Config.string("PRODUCTION_HOSTS").pipe(Config.withDefault(defaultProductionHosts.join(",")))
    const uatHosts = yield* Config.string("UAT_HOSTS").pipe(Config.withDefault(defaultUatHosts.join(",")))
    const token = yield* Config.option(Config.redacted("CONSOLE_TOKEN"))
    const trustProxy = yield* Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false))
    const maxBodyBytes = yield* Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(defaultMaxBodyBytes))
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
    const consoleToken = Option.isSome(token) && Redacted.value(token.value).length > 0
      ? token.value
      : yield* Effect.sync(randomToken).pipe(
        Effect.tap((t) => Effect.logWarning(`CONSOLE_TOKEN is not set; the console token of this process is ${t}`)),
        Effect.map(Redacted.make)
      )
    return make({
      productionHosts: parseHosts(productionHosts),
      uatHosts: parseHosts(uatHosts),
      consoleToken,
      trustProxy,
      maxBodyBytes,
      webhookAllowPrivate,
      webhookHttpHosts: parseHosts(webhookHttpHosts),
      widgetSunset
    })
  })
)
