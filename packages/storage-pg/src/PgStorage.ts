/**
 * Every storage port of `@tradeflow/core` on PostgreSQL (`@effect/sql-pg`), safe for many
 * processes sharing one database.
 *
 * - Jobs are leased with one atomic `UPDATE … FOR UPDATE SKIP LOCKED` statement; only an
 *   organisation's oldest pending job is claimable, leases use the database clock, and a commit
 *   or `fail` with an `attempt` applies only while the job is still at that attempt.
 * - Enqueues of one organisation are serialised (a transaction-scoped advisory lock), so job ids
 *   of an organisation become visible in ascending order.
 * - Message sequence numbers come from a per-organisation counter row, locked from the moment a
 *   commit takes its numbers until it commits: an organisation's numbers become visible in
 *   ascending order, so a reader resuming `after_seq` never misses one.
 * - `wakeups` is `LISTEN tradeflow_jobs`; every committed enqueue sends one `pg_notify`.
 * - Webhook deliveries are claimed like jobs (`FOR UPDATE OF d SKIP LOCKED`), only the head of each
 *   (automation, tradeflow), with leases on the caller's clock; `DeliveryStore.wakeups` is
 *   `LISTEN tradeflow_deliveries`, notified by commits that write deliveries, `enqueue` and `retry`.
 *   Automation rows are locked before delivery rows (commits `FOR KEY SHARE`, attempts
 *   `FOR NO KEY UPDATE`, removal by deleting), so a removal never leaves deliveries behind.
 * - Tracked targets are claimed round-robin across organisations, locked `FOR UPDATE SKIP LOCKED`
 *   and checked again as they are leased, with leases on the caller's clock: processes sharing the
 *   database never hold one target at once.
 *
 * Migrations (table `tradeflow_migrations`) run when the layer is built; concurrent starts on one
 * database are serialised.
 *
 * @module
 */
import { Migrator, SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { type Storage, StorageError } from "@tradeflow/core"
import { SqlStorage, StorageRows } from "@tradeflow/storage-sql"
import {
  Config,
  type ConfigError,
  Context,
  Deferred,
  Duration,
  Effect,
  Layer,
  PubSub,
  Redacted,
  Schedule,
  Schema,
  type Scope,
  Stream
} from "effect"
import { latestMigration, loader, migrationsTable } from "./internal/migrations.js"

const { storageError } = StorageRows

/** How to reach the database. */
export interface PgStorageOptions {
  /** Connection URL, `postgres://user:password@host:port/database` (query options allowed). */
  readonly url: Redacted.Redacted | string
  /**
   * Schema holding every table: created if missing and set as `search_path` on every connection
   * (including the LISTEN one). Lower-case letters, digits and `_`. Default: the URL's or the
   * server's `search_path` (usually `public`).
   */
  readonly schema?: string
  /** Size of the connection pool (default 10). */
  readonly maxConnections?: number
  /** How long connecting may take (default 5 seconds). */
  readonly connectTimeout?: Duration.DurationInput
  /** `application_name` of the connections (default `tradeflow`). */
  readonly applicationName?: string
}

/** The adapters of every storage port, sharing one SQL client. */
export type PgStorage = SqlStorage.SqlStorage

/** The NOTIFY channel of enqueues (the payload is the schema, so schemas of one database don't mix). */
export const channel = "tradeflow_jobs"

/** The NOTIFY channel of deliveries becoming due (the payload is the schema, like {@link channel}). */
export const deliveryChannel = "tradeflow_deliveries"

const { advisoryNamespace } = SqlStorage

const decodeSchema = Schema.decodeUnknown(Schema.Array(Schema.Struct({ schema: Schema.NullOr(Schema.String) })))

const validSchema = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * The connection URL with `search_path` set to `schema` on every connection (the libpq
 * `options=-c search_path=…` parameter).
 */
export const urlWithSchema = (url: string, schema: string): string => {
  const parsed = new URL(url)
  parsed.searchParams.set("options", `-c search_path=${schema}`)
  return parsed.toString()
}

/**
 * Runs the migrations of this package (idempotent). Concurrent runs on one database are safe: the
 * migrations table is created under an advisory lock, and the migrator locks it while migrating.
 */
export const migrate: Effect.Effect<void, StorageError.StorageError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${advisoryNamespace}, 0)`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL)`
  }))
  yield* Migrator.make({})({ loader, table: migrationsTable }).pipe(
    Effect.catchAllDefect((defect) => Effect.fail(defect))
  )
}).pipe(storageError("PgStorage.migrate"), Effect.withSpan("PgStorage.migrate"))

/**
 * Migrates the database behind the `PgClient`, starts listening for enqueues and deliveries
 * (released with the scope) and builds every adapter on it.
 */
export const make: Effect.Effect<PgStorage, StorageError.StorageError, PgClient.PgClient | Scope.Scope> = Effect.gen(
  function*() {
    const sql = yield* PgClient.PgClient
    yield* Effect.provideService(migrate, SqlClient.SqlClient, sql)
    const schema = yield* sql`SELECT current_schema() AS schema`.pipe(
      Effect.flatMap(decodeSchema),
      Effect.map((rows) => rows[0]?.schema ?? "public"),
      storageError("PgStorage.open")
    )

    /** A hub of this schema's notifications on `name`, once the LISTEN is active. */
    const listen = (name: string) =>
      Effect.gen(function*() {
        const hub = yield* PubSub.sliding<void>(1024)
        const ready = yield* Deferred.make<void>()
        const readyToken = `${schema}:ready:${globalThis.crypto.randomUUID()}`
        yield* sql.listen(name).pipe(
          Stream.runForEach((payload) =>
            payload === schema
              ? PubSub.publish(hub, undefined)
              : payload === readyToken
              ? Deferred.succeed(ready, undefined)
              : Effect.void
          ),
          Effect.tapError((e) => Effect.logWarning(`PgStorage: LISTEN ${name} failed, retrying`, e)),
          Effect.retry(Schedule.spaced(Duration.seconds(1))),
          Effect.forkScoped
        )
        yield* sql`SELECT pg_notify(${name}, ${readyToken})`.pipe(
          Effect.zipRight(Effect.timeoutFail(Deferred.await(ready), {
            duration: Duration.millis(250),
            onTimeout: () => `LISTEN ${name} is not active yet`
          })),
          Effect.retry(Schedule.recurs(40)),
          storageError("PgStorage.listen")
        )
        return hub
      })
    const [hub, deliveryHub] = yield* Effect.all([listen(channel), listen(deliveryChannel)], { concurrency: 2 })
    const notifyDeliveries = sql`SELECT pg_notify(${deliveryChannel}, ${schema})`

    return yield* Effect.provideService(
      SqlStorage.make({
        jobWakeups: { notify: sql`SELECT pg_notify(${channel}, ${schema})`, stream: Stream.fromPubSub(hub) },
        deliveryWakeups: { notify: notifyDeliveries, stream: Stream.fromPubSub(deliveryHub) },
        migrations: { table: migrationsTable, latest: latestMigration }
      }),
      SqlClient.SqlClient,
      sql
    )
  }
)

/** The storage ports as a context, from adapters built by {@link make}. */
export const toContext: (storage: PgStorage) => Context.Context<Storage.Storage> = SqlStorage.toContext

/** Every storage port on an existing `PgClient`; migrates and starts listening on build. */
export const layerFromClient: Layer.Layer<Storage.Storage, StorageError.StorageError, PgClient.PgClient> = Layer
  .scopedContext(Effect.map(make, toContext))

/**
 * Connects to PostgreSQL (creating `schema` if given and missing), migrates and provides every
 * storage port plus the `SqlClient` / `PgClient` it uses. The pool closes with the layer.
 */
export const layer = (
  options: PgStorageOptions
): Layer.Layer<Storage.Storage | SqlClient.SqlClient | PgClient.PgClient, StorageError.StorageError> =>
  Layer.scopedContext(Effect.gen(function*() {
    const raw = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
    const schema = options.schema
    if (schema !== undefined && !validSchema.test(schema)) {
      return yield* new StorageError.StorageError({
        operation: "PgStorage.open",
        cause: `invalid schema name: ${schema}`
      })
    }
    const url = yield* Effect.try({
      try: () => schema === undefined ? raw : urlWithSchema(raw, schema),
      catch: (cause) => new StorageError.StorageError({ operation: "PgStorage.open", cause })
    })
    const client = yield* Layer.build(PgClient.layer({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: options.connectTimeout ?? Duration.seconds(5),
      applicationName: options.applicationName ?? "tradeflow"
    })).pipe(
      Effect.catchAllDefect((defect) => Effect.fail(defect)),
      storageError("PgStorage.open")
    )
    if (schema !== undefined) {
      const sql = Context.get(client, SqlClient.SqlClient)
      yield* sql.withTransaction(Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(${advisoryNamespace}, 0)`,
        sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
      )).pipe(storageError("PgStorage.open"))
    }
    const storage = yield* make.pipe(Effect.provide(client))
    return Context.merge(client, toContext(storage))
  }))

/** {@link layer} with its options read from `Config`, each option a `Config` (e.g. `{ url: Config.redacted("url") }`). */
export const layerConfig = (
  config: Config.Config.Wrap<PgStorageOptions>
): Layer.Layer<
  Storage.Storage | SqlClient.SqlClient | PgClient.PgClient,
  StorageError.StorageError | ConfigError.ConfigError
> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
