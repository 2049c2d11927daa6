/**
 * Every storage port of `@tradeflow/core` on SQLite (`@effect/sql-sqlite-node`, better-sqlite3).
 *
 * The database runs in WAL mode with `PRAGMA synchronous = FULL` by default, so a job that
 * `enqueue` answered for survives a crash. Migrations (table `tradeflow_migrations`) run when the
 * layer is built.
 *
 * @module
 */
import { Migrator, SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { type Storage, StorageError } from "@tradeflow/core"
import { SqlStorage, StorageRows } from "@tradeflow/storage-sql"
import { Config, type ConfigError, Context, Duration, Effect, Layer, Schema } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as Checkpointer from "./internal/checkpointer.js"
import { latestMigration, loader, migrationsTable } from "./internal/migrations.js"

const { storageError } = StorageRows

const decodeSynchronous = Schema.decodeUnknown(Schema.Array(Schema.Struct({ synchronous: Schema.Number })))

/** How to open the database. */
export interface SqliteStorageOptions {
  /** Path of the database file (its directory is created if missing), or `:memory:`. */
  readonly filename: string
  /** `PRAGMA synchronous`; `FULL` (default) makes every committed transaction durable. */
  readonly synchronous?: "FULL" | "NORMAL"
  /** How long a statement waits for another process's lock (`PRAGMA busy_timeout`); default 5 seconds. */
  readonly busyTimeout?: Duration.DurationInput
  /**
   * Checkpoint the WAL from a thread of its own, every `checkpointInterval` (default true for a
   * database file): a commit then only appends to the WAL and syncs it, and the copy into the
   * database file runs beside the event loop instead of inside every commit that crosses SQLite's
   * automatic threshold. That threshold stays, raised to 4,000 pages, in case the thread falls behind.
   */
  readonly backgroundCheckpoints?: boolean
  /** How often the background thread checkpoints (default 100 milliseconds). */
  readonly checkpointInterval?: Duration.DurationInput
}

/** The adapters of every storage port, sharing one SQL client. */
export type SqliteStorage = SqlStorage.SqlStorage

/** Runs the migrations of this package (idempotent). */
export const migrate: Effect.Effect<void, StorageError.StorageError, SqlClient.SqlClient> = Migrator.make({})({
  loader,
  table: migrationsTable
}).pipe(
  Effect.catchAllDefect((defect) => Effect.fail(defect)),
  Effect.asVoid,
  storageError("SqliteStorage.migrate"),
  Effect.withSpan("SqliteStorage.migrate")
)

/**
 * Migrates the database behind the `SqlClient` and builds every adapter on it. The client
 * should be SQLite (the statements use SQLite's dialect).
 */
export const make: Effect.Effect<SqliteStorage, StorageError.StorageError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const synchronous =
      (yield* sql`PRAGMA synchronous`.pipe(Effect.flatMap(decodeSynchronous), storageError("SqliteStorage.open")))[0]
        ?.synchronous ?? 2

    /**
     * Runs `effect` on the connection with `synchronous = NORMAL` (no fsync at its commits), holding
     * the connection so nothing else runs meanwhile, then restores the configured level. For writes
     * of lease state only: if an OS crash loses them, every process on the file died with them, and
     * the first durable commit after them makes them durable too (WAL frames are synced in order).
     */
    const withoutSync = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      synchronous <= 1 ? effect : Effect.scoped(Effect.flatMap(sql.reserve, (connection) =>
        Effect.acquireUseRelease(
          connection.executeRaw("PRAGMA synchronous = NORMAL", []),
          () => Effect.provideService(effect, SqlClient.TransactionConnection, [connection, 0]),
          () => Effect.orDie(connection.executeRaw(`PRAGMA synchronous = ${synchronous}`, []))
        )))

    return yield* SqlStorage.make({
      jobWakeups: yield* SqlStorage.inProcess,
      deliveryWakeups: yield* SqlStorage.inProcess,
      relaxed: withoutSync,
      migrations: { table: migrationsTable, latest: latestMigration }
    })
  }
)

/** The storage ports as a context, from adapters built by {@link make}. */
export const toContext: (storage: SqliteStorage) => Context.Context<Storage.Storage> = SqlStorage.toContext

/** Every storage port on an existing (SQLite) `SqlClient`; migrates on build. */
export const layerFromClient: Layer.Layer<Storage.Storage, StorageError.StorageError, SqlClient.SqlClient> = Layer
  .effectContext(Effect.map(make, toContext))

const inMemory = (filename: string) => filename === "" || filename === ":memory:" || filename.startsWith("file:")

const ensureDirectory = (filename: string) =>
  inMemory(filename)
    ? Effect.void
    : Effect.try({
      try: () => void mkdirSync(dirname(filename), { recursive: true }),
      catch: (cause) => new StorageError.StorageError({ operation: "SqliteStorage.open", cause })
    })

/**
 * Opens (creating if needed) the SQLite database, applies the connection pragmas (WAL,
 * `synchronous`, `busy_timeout`, `foreign_keys`, and once migrated `temp_store = MEMORY`: a
 * statement's journal, which holds the pages it changes until it ends, stays in memory instead of
 * spilling to a temporary file past 64 KiB, as the multi-row statements of a commit did, writing
 * about as many bytes again as the WAL), migrates it and provides every storage port plus the
 * `SqlClient` / `SqliteClient` it uses. The connection closes with the layer.
 */
export const layer = (
  options: SqliteStorageOptions
): Layer.Layer<Storage.Storage | SqlClient.SqlClient | SqliteClient.SqliteClient, StorageError.StorageError> =>
  Layer.scopedContext(Effect.gen(function*() {
    yield* ensureDirectory(options.filename)
    const client = yield* Layer.build(SqliteClient.layer({ filename: options.filename })).pipe(
      Effect.catchAllDefect((defect) => Effect.fail(defect)),
      storageError("SqliteStorage.open")
    )
    const sql = Context.get(client, SqlClient.SqlClient)
    const busyTimeout = Math.max(0, Math.round(Duration.toMillis(options.busyTimeout ?? Duration.seconds(5))))
    const synchronous = options.synchronous === "NORMAL" ? "NORMAL" : "FULL"
    const background = (options.backgroundCheckpoints ?? true) && !inMemory(options.filename)
    yield* Effect.all([
      sql.unsafe(`PRAGMA synchronous = ${synchronous}`),
      sql.unsafe(`PRAGMA busy_timeout = ${busyTimeout}`),
      sql.unsafe("PRAGMA foreign_keys = ON"),
      ...background ? [sql.unsafe("PRAGMA wal_autocheckpoint = 4000")] : []
    ], { discard: true }).pipe(storageError("SqliteStorage.open"))
    const storage = yield* make.pipe(Effect.provide(client))
    yield* sql.unsafe("PRAGMA temp_store = MEMORY").pipe(storageError("SqliteStorage.open"))
    if (background) {
      yield* Checkpointer.start({
        filename: options.filename,
        synchronous,
        interval: options.checkpointInterval ?? Duration.millis(100)
      })
    }
    return Context.merge(client, toContext(storage))
  }))

/** {@link layer} with its options read from `Config`, each option a `Config` (e.g. `{ filename: Config.string("filename") }`). */
export const layerConfig = (
  config: Config.Config.Wrap<SqliteStorageOptions>
): Layer.Layer<
  Storage.Storage | SqlClient.SqlClient | SqliteClient.SqliteClient,
  StorageError.StorageError | ConfigError.ConfigError
> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
