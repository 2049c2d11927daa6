/**
 * The server's logger: `LOG_FORMAT` (`text`, the default: one logfmt line per entry, or `json`: one
 * JSON object per line on stdout) and `LOG_LEVEL` (the minimum level logged).
 */
import {
  Cause,
  Config,
  ConfigError,
  Context,
  Effect,
  Either,
  FiberRef,
  FiberRefs,
  HashMap,
  Inspectable,
  Layer,
  Logger,
  LogLevel,
  Tracer
} from "effect"

const levels: Readonly<Record<string, LogLevel.LogLevel>> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/** `LOG_LEVEL`: trace, debug, info (the default), warning, error, fatal or none, in any case. */
export const levelConfig: Config.Config<LogLevel.LogLevel> = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((value) => {
    const level = levels[value.trim().toLowerCase()]
    return level === undefined
      ? Either.left(ConfigError.InvalidData(
        ["LOG_LEVEL"],
        `LOG_LEVEL: expected one of ${Object.keys(levels).join(", ")}, got ${JSON.stringify(value)}`
      ))
      : Either.right(level)
  })
)

/** `LOG_FORMAT`: `text` (the default) or `json`. */
export const formatConfig: Config.Config<"text" | "json"> = Config.literal("text", "json")("LOG_FORMAT").pipe(
  Config.withDefault("text" as const)
)

const text = (part: unknown): string => typeof part === "string" ? part : Inspectable.toStringUnknown(part, 0)

/**
 * One JSON object per line: `time` (ISO 8601), `level` (the names of `LOG_LEVEL`), `message`,
 * `trace_id` and `span_id` of the current span when there is one, the log's annotations (for a
 * request: `route`, `method`, `status`, `duration_ms`, `organisation_id`), and `cause` when one
 * was logged.
 */
export const jsonLogger: Logger.Logger<unknown, string> = Logger.make(
  ({ annotations, cause, context, date, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    const span = Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan)
    const line: Record<string, unknown> = {
      time: date.toISOString(),
      level: logLevel._tag.toLowerCase(),
      message: parts.map(text).join(" ")
    }
    if (span._tag === "Some") {
      line["trace_id"] = span.value.traceId
      line["span_id"] = span.value.spanId
    }
    for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
    if (!Cause.isEmpty(cause)) line["cause"] = Cause.pretty(cause)
    return JSON.stringify(line)
  }
)

const stdout = jsonLogger.pipe(Logger.map((line) => process.stdout.write(line + "\n")))

/**
 * The logger `LOG_FORMAT` and `LOG_LEVEL` choose, instead of the default logger and the pretty
 * logger `NodeRuntime.runMain` installs: {@link jsonLogger}, or Effect's logfmt logger (one line per
 * entry, its annotations as `key=value`); an invalid value stops the start, naming its variable.
 */
export const layerConfig: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const level = yield* levelConfig
    const format = yield* formatConfig
    const logger = format === "json" ? stdout : Logger.logfmtLogger.pipe(Logger.withConsoleLog)
    return Layer.mergeAll(
      Logger.minimumLogLevel(level),
      Logger.replace(Logger.defaultLogger, logger),
      Logger.replace(Logger.prettyLoggerDefault, logger)
    )
  })
)
