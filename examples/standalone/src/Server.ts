/**
 * The standalone server: the HTTP API over SQLite, configured by the environment variables of
 * DECISIONS.md §1.
 *
 * @since 0.1.0
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Locations, Service, TrackingConfig } from "@tradeflow/core"
import { HttpApp, HttpConfig } from "@tradeflow/http-node"
import { SqliteStorage } from "@tradeflow/storage-sqlite"
import { Config, ConfigError, Effect, Either, Layer } from "effect"
import { createServer } from "node:http"

/** The database a `DATABASE_URL` names. */
export type Database = { readonly _tag: "Sqlite"; readonly filename: string }

/** Reads `sqlite:<path>` and `sqlite::memory:`; anything else is a configuration error. */
export const parseDatabaseUrl = (url: string): Either.Either<Database, string> => {
  if (url.startsWith("sqlite:")) {
    const filename = url.slice("sqlite:".length).replace(/^\/\//, "")
    return filename === "" ? Either.left("DATABASE_URL: sqlite: needs a path") : Either.right({ _tag: "Sqlite", filename })
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    return Either.left("DATABASE_URL: PostgreSQL needs @tradeflow/storage-pg, which this build does not include yet")
  }
  return Either.left(`DATABASE_URL: expected sqlite:<path> or sqlite::memory:, got ${url.split(":")[0]}:…`)
}

const database = Config.string("DATABASE_URL").pipe(
  Config.withDefault("sqlite:./data/tracking.sqlite"),
  Config.mapOrFail((url) =>
    Either.mapLeft(parseDatabaseUrl(url), (message) => ConfigError.InvalidData(["DATABASE_URL"], message))
  )
)

/** Storage chosen by `DATABASE_URL` (and `SQLITE_SYNCHRONOUS`). */
export const storageLayerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const db = yield* database
  const synchronous = yield* Config.literal("FULL", "NORMAL")("SQLITE_SYNCHRONOUS").pipe(Config.withDefault("FULL" as const))
  return SqliteStorage.layer({ filename: db.filename, synchronous })
}))

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
 * Every service over the configured storage. `WORKER_ENABLED=false` runs no background worker:
 * the process only accepts work, and another process (or a later start) processes it.
 */
export const servicesLayerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const background = yield* Config.boolean("WORKER_ENABLED").pipe(Config.withDefault(true))
  return Service.layer({ background })
})).pipe(Layer.provideMerge(Layer.mergeAll(storageLayerConfig, Locations.layerBuiltin, trackingLayerConfig)))

/** Everything but the HTTP server itself: the API over the configured storage. */
export const appLayerConfig = HttpApp.layer.pipe(
  Layer.provide(HttpConfig.layerConfig),
  Layer.provide(servicesLayerConfig)
)

/** The standalone server listening on `HOST`:`PORT` (default 0.0.0.0:8080). */
export const layerConfig = Layer.unwrapEffect(Effect.gen(function*() {
  const port = yield* Config.port("PORT").pipe(Config.withDefault(8080))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("0.0.0.0"))
  return appLayerConfig.pipe(
    HttpServer.withLogAddress,
    Layer.provide(NodeHttpServer.layer(createServer, { port, host }))
  )
}))
