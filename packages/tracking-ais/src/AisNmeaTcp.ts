/**
 * Adapter: core's `VesselPositionSource` over a TCP feed of raw AIS NMEA 0183 (an AIS receiver,
 * a forwarder such as AIS-catcher or rtl-ais, or a provider's raw stream).
 *
 * The stream connects, reads lines ({@link AisNmea}) and emits positions and static data. It never
 * ends and never fails once its options are usable: a refused, failed or closed connection, or a
 * connection that falls silent (no line for `silenceTimeout`), is dropped and made again after an
 * exponential backoff with jitter, capped at `reconnect.maxDelay`; the backoff starts over once a
 * connection delivers lines again. Each disconnection is logged as a warning with the wait
 * before the next attempt. Every run of the stream opens its own connection.
 *
 * The stream fails with `VesselFeedError` only for options it can never use (an empty host, a
 * port outside 1 to 65535, a non-positive duration).
 *
 * @module
 */
import { VesselPositionSource } from "@tradeflow/core"
import { Chunk, Config, ConfigError, Data, Duration, Effect, Either, Layer, Option, Schedule, Stream } from "effect"
import * as net from "node:net"
import * as AisNmea from "./AisNmea.js"

/** Where the feed is. */
export interface Address {
  readonly host: string
  readonly port: number
}

/** The backoff between connection attempts. */
export interface Reconnect {
  /** The first wait (default 1 s). */
  readonly initialDelay?: Duration.DurationInput | undefined
  /** The longest wait (default 60 s; never less than `initialDelay`). */
  readonly maxDelay?: Duration.DurationInput | undefined
  /** How much each wait grows over the one before (default 2). */
  readonly factor?: number | undefined
}

/** Options of the adapter. */
export interface Options extends Address, AisNmea.Options {
  /** No line for this long: the connection is dropped and made again (default 60 s). */
  readonly silenceTimeout?: Duration.DurationInput | undefined
  readonly reconnect?: Reconnect | undefined
}

/** The default of `silenceTimeout`: 60 seconds. */
export const defaultSilenceTimeout: Duration.Duration = Duration.seconds(60)

const defaults = { initialDelay: Duration.seconds(1), maxDelay: Duration.seconds(60), factor: 2 }

class Disconnected extends Data.TaggedError("Disconnected")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const labels = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/

const isHost = (host: string): boolean =>
  net.isIP(host) !== 0 ||
  (host.length <= 253 && labels.test(host) && !/^[0-9.]+$/.test(host))

const feedError = (message: string) => new VesselPositionSource.VesselFeedError({ message })

/**
 * Reads a feed address `host:port` (`[::1]:5631` for an IPv6 address), as a server's setting
 * holds it. Refuses, saying why, anything else: no port, a port outside 1 to
 * 65535, a scheme (`tcp://`), an IPv6 address without brackets, a host that is not a host name or
 * an IP address.
 */
export const parseAddress = (text: string): Either.Either<Address, VesselPositionSource.VesselFeedError> => {
  const value = text.trim()
  const refuse = (why: string) =>
    Either.left(
      feedError(`AIS feed address ${JSON.stringify(text)}: ${why}; expected host:port, as ais.example.org:5631`)
    )
  if (value === "") return refuse("it is empty")
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) return refuse("it has a scheme")
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(value)
  const colon = value.lastIndexOf(":")
  if (bracketed === null && value.indexOf(":") !== colon) {
    return refuse("an IPv6 address goes in brackets, as [::1]:5631")
  }
  if (bracketed === null && colon < 0) return refuse("it has no port")
  const host = bracketed === null ? value.slice(0, colon) : bracketed[1] as string
  const port = bracketed === null ? value.slice(colon + 1) : bracketed[2] as string
  if (bracketed !== null ? net.isIPv6(host) === false : !isHost(host)) {
    return refuse(host === "" ? "it has no host" : `${JSON.stringify(host)} is not a host name or an IP address`)
  }
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    return refuse(`the port ${JSON.stringify(port)} is not a number from 1 to 65535`)
  }
  return Either.right({ host, port: Number(port) })
}

/** A `Config` of a feed address read with {@link parseAddress}. */
export const addressConfig = (config: Config.Config<string>): Config.Config<Address> =>
  Config.mapOrFail(
    config,
    (text) => Either.mapLeft(parseAddress(text), (error) => ConfigError.InvalidData([], error.message))
  )

/**
 * The waits between connection attempts: `initialDelay`, growing by `factor` up to `maxDelay`,
 * each drawn uniformly between half and all of that (so never more than `maxDelay`). Endless.
 */
export const reconnectSchedule = (options?: Reconnect): Schedule.Schedule<Duration.Duration, unknown> =>
  Schedule.exponential(options?.initialDelay ?? defaults.initialDelay, options?.factor ?? defaults.factor).pipe(
    Schedule.union(Schedule.spaced(options?.maxDelay ?? defaults.maxDelay)),
    Schedule.jitteredWith({ min: 0.5, max: 1 }),
    Schedule.delays
  )

interface Settings {
  readonly address: Address
  readonly silenceTimeout: Duration.Duration
  readonly partTimeout: Duration.Duration | undefined
  readonly reconnect: {
    readonly initialDelay: Duration.Duration
    readonly maxDelay: Duration.Duration
    readonly factor: number
  }
}

const positive = (
  name: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.Duration
): Either.Either<Duration.Duration, VesselPositionSource.VesselFeedError> => {
  if (input === undefined) return Either.right(fallback)
  const duration = Duration.decodeUnknown(input)
  return Option.isSome(duration) && Duration.greaterThan(duration.value, Duration.zero) &&
      Duration.isFinite(duration.value)
    ? Either.right(duration.value)
    : Either.left(feedError(`AIS feed option ${name} must be a positive, finite duration`))
}

const settingsOf = (options: Options): Either.Either<Settings, VesselPositionSource.VesselFeedError> =>
  Either.gen(function*() {
    if (typeof options.host !== "string" || !isHost(options.host)) {
      return yield* Either.left(
        feedError(`AIS feed host ${JSON.stringify(options.host)} is not a host name or an IP address`)
      )
    }
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      return yield* Either.left(feedError(`AIS feed port ${options.port} is not a number from 1 to 65535`))
    }
    const silenceTimeout = yield* positive("silenceTimeout", options.silenceTimeout, defaultSilenceTimeout)
    const partTimeout = options.partTimeout === undefined
      ? undefined
      : yield* positive("partTimeout", options.partTimeout, Duration.zero)
    const initialDelay = yield* positive(
      "reconnect.initialDelay",
      options.reconnect?.initialDelay,
      defaults.initialDelay
    )
    const maxDelay = yield* positive("reconnect.maxDelay", options.reconnect?.maxDelay, defaults.maxDelay)
    const factor = options.reconnect?.factor ?? defaults.factor
    if (!(factor >= 1 && Number.isFinite(factor))) {
      return yield* Either.left(feedError(`AIS feed option reconnect.factor must be a finite number of at least 1`))
    }
    return {
      address: { host: options.host, port: options.port },
      silenceTimeout,
      partTimeout,
      reconnect: { initialDelay, maxDelay: Duration.max(maxDelay, initialDelay), factor }
    }
  })

const connection = (address: Address): Stream.Stream<string, Disconnected> =>
  Stream.asyncScoped<string, Disconnected>((emit) =>
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const lines = AisNmea.lineSplitter()
          const socket = net.createConnection({ host: address.host, port: address.port })
          socket.setEncoding("latin1")
          socket.on("data", (text: string) => {
            const batch = lines.push(text)
            if (batch.length === 0) return
            socket.pause()
            void emit.chunk(Chunk.unsafeFromArray(batch)).then(() => socket.resume(), () => socket.destroy())
          })
          socket.on("error", (cause) => void emit.fail(new Disconnected({ message: cause.message, cause })))
          socket.on("close", () => void emit.fail(new Disconnected({ message: "the connection was closed" })))
          return socket
        },
        catch: (cause) => new Disconnected({ message: `cannot connect: ${String(cause)}`, cause })
      }),
      (socket) => Effect.sync(() => socket.destroy())
    )
  )

const run = (settings: Settings): Stream.Stream<VesselPositionSource.VesselReport> => {
  const { address, silenceTimeout } = settings
  const where = `${address.host}:${address.port}`
  const schedule = reconnectSchedule(settings.reconnect).pipe(
    Schedule.intersect(Schedule.identity<Disconnected>()),
    Schedule.tapOutput(([delay, error]) =>
      Effect.logWarning(
        `AIS feed ${where}: ${error.message}; reconnecting in ${Math.round(Duration.toMillis(delay))} ms`
      )
    )
  )
  return connection(address).pipe(
    Stream.timeoutFail(
      () => new Disconnected({ message: `no line for ${Duration.format(silenceTimeout)}` }),
      silenceTimeout
    ),
    AisNmea.reports({ partTimeout: settings.partTimeout }),
    Stream.retry(schedule),
    // The schedule never ends, so no Disconnected ever gets past the retry.
    Stream.orDie
  )
}

/** The reports of the feed at `options.host`:`options.port`; see the module's description. */
export const make = (
  options: Options
): Stream.Stream<VesselPositionSource.VesselReport, VesselPositionSource.VesselFeedError> =>
  Either.match(settingsOf(options), { onLeft: Stream.fail, onRight: run })

/** `VesselPositionSource` from the feed of {@link make}. */
export const layer = (options: Options): Layer.Layer<VesselPositionSource.VesselPositionSource> =>
  Layer.succeed(
    VesselPositionSource.VesselPositionSource,
    VesselPositionSource.VesselPositionSource.of({ reports: make(options) })
  )

/**
 * {@link layer} at the address that `address` holds (a `host:port` text, read with
 * {@link parseAddress}); fails with a `ConfigError` when it is missing or malformed.
 */
export const layerConfig = (
  address: Config.Config<string>,
  options?: Omit<Options, "host" | "port">
): Layer.Layer<VesselPositionSource.VesselPositionSource, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(addressConfig(address), (where) => layer({ ...options, ...where })))
