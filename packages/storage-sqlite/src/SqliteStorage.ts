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
import { Delivery, DeliveryStore, type Storage, StorageError } from "@tradeflow/core"
import { SqlStorage, StorageRows } from "@tradeflow/storage-sql"
import { Config, type ConfigError, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { loader, migrationsTable } from "./internal/migrations.js"

const {
  storageError,
  chunks,
  decodeAutomations,
  decodeDeliveries,
  decodeClaimedDeliveries,
  decodeDeliveryLog,
  encodeAutomation
} = StorageRows

const decodeSynchronous = Schema.decodeUnknown(Schema.Array(Schema.Struct({ synchronous: Schema.Number })))

const decodeFenced = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ ...StorageRows.DeliveryRow.fields, claim: Schema.Number }))
)

/** The columns `record` writes back to a delivery. */
const stateOf = (d: Delivery.Delivery) => ({
  id: d.id,
  status: d.status,
  attempt: d.attempt,
  retries: d.retries,
  schedule_started_at: d.schedule_started_at,
  next_attempt_at: d.next_attempt_at
})

/** How to open the database. */
export interface SqliteStorageOptions {
  /** Path of the database file (its directory is created if missing), or `:memory:`. */
  readonly filename: string
  /** `PRAGMA synchronous`; `FULL` (default) makes every committed transaction durable. */
  readonly synchronous?: "FULL" | "NORMAL"
  /** How long a statement waits for another process's lock (`PRAGMA busy_timeout`); default 5 seconds. */
  readonly busyTimeout?: Duration.DurationInput
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

    const organisations = yield* SqlStorage.organisations

    const deliveryWakeups = yield* SqlStorage.inProcess
    const options: SqlStorage.SqlStorageOptions = {
      jobWakeups: yield* SqlStorage.inProcess,
      deliveryWakeups,
      relaxed: withoutSync
    }
    const jobs = yield* SqlStorage.jobs(options)
    const tradeflows = yield* SqlStorage.tradeflows(options)

    const deliveryRow = (d: Delivery.NewDelivery) => ({
      automation_id: d.automation_id,
      organisation_id: d.organisation_id,
      tradeflow_reference: d.tradeflow_reference,
      message_hash: d.message_hash,
      seq: d.seq,
      body: d.body,
      test: d.test ? 1 : 0,
      created_at: d.created_at,
      next_attempt_at: d.created_at
    })
    const messages = yield* SqlStorage.messages

    const settings = yield* SqlStorage.settings

    const selectAutomation = sql`SELECT doc FROM automations`
    const automations = yield* SqlStorage.automations

    const stateColumns =
      sql`id, automation_id, organisation_id, tradeflow_reference, message_hash, seq, test, created_at,
    status, attempt, retries, schedule_started_at, next_attempt_at`
    const deliveryColumns = sql`${stateColumns}, body`
    const selectDelivery = sql`SELECT ${deliveryColumns} FROM deliveries`
    const getDelivery = (id: number) =>
      Effect.map(
        Effect.flatMap(sql`${selectDelivery} WHERE id = ${id}`, decodeDeliveries),
        (rows) => Option.fromNullable(rows[0])
      )
    const writeDelivery = (d: Delivery.Delivery) =>
      sql`UPDATE deliveries SET status = ${d.status}, attempt = ${d.attempt}, retries = ${d.retries},
      schedule_started_at = ${d.schedule_started_at}, next_attempt_at = ${d.next_attempt_at} WHERE id = ${d.id}`
    /**
     * Records a batch as `record` one result after the other would: a result records only if its
     * delivery is leased at its claim and no earlier result of the batch recorded it; each
     * automation follows the fold of `Delivery.automationAfter` over its recorded results in order.
     */
    const recordBatch = (results: ReadonlyArray<Delivery.AttemptResult>) =>
      Effect.gen(function*() {
        const leased = new Map<number, Delivery.Delivery & { readonly claim: number }>()
        for (const ids of chunks([...new Set(results.map((r) => r.delivery_id))], 500)) {
          for (
            const d of yield* decodeFenced(
              yield* sql`SELECT ${stateColumns}, NULL AS body, claim FROM deliveries
        WHERE ${sql.in("id", ids)} AND status = 'pending' AND lease_until IS NOT NULL`
            )
          ) leased.set(d.id, d)
        }
        const answers: Array<boolean> = []
        const updates: Array<Delivery.Delivery> = []
        const attempts: Array<Record<string, string | number | null>> = []
        const health = new Map<string, Array<Delivery.AttemptResult>>()
        for (const r of results) {
          const d = leased.get(r.delivery_id)
          answers.push(d !== undefined && d.claim === r.claim)
          if (d === undefined || d.claim !== r.claim) continue
          leased.delete(d.id)
          const next = Delivery.afterAttempt(d, r)
          updates.push(next)
          attempts.push({
            delivery_id: d.id,
            attempt: next.attempt,
            automation_id: d.automation_id,
            at: r.at,
            status: r.status,
            response_status: r.response_status,
            error: r.error,
            response_body: r.response_body
          })
          if (d.test) continue
          const own = health.get(d.automation_id)
          if (own === undefined) health.set(d.automation_id, [r])
          else own.push(r)
        }
        if (updates.length === 0) return answers
        yield* sql`UPDATE deliveries SET status = j.value ->> 'status', attempt = j.value ->> 'attempt',
      retries = j.value ->> 'retries', schedule_started_at = j.value ->> 'schedule_started_at',
      next_attempt_at = j.value ->> 'next_attempt_at', leased_by = NULL, lease_until = NULL
      FROM json_each(${JSON.stringify(updates.map(stateOf))}) AS j WHERE deliveries.id = j.value ->> 'id'`
        for (const part of chunks(attempts, 500)) yield* sql`INSERT INTO delivery_attempts ${sql.insert(part)}`
        const expired = Delivery.expiredBodies(updates)
        if (expired.length > 0) {
          yield* sql`UPDATE delivery_attempts SET response_body = NULL FROM json_each(${JSON.stringify(expired)}) AS j
        WHERE delivery_attempts.delivery_id = j.value ->> 'delivery_id' AND delivery_attempts.attempt <= j.value ->> 'up_to'
          AND delivery_attempts.response_body IS NOT NULL`
        }
        for (const ids of chunks([...health.keys()], 500)) {
          for (const { doc } of yield* decodeAutomations(yield* sql`${selectAutomation} WHERE ${sql.in("id", ids)}`)) {
            const after = (health.get(doc.id) ?? []).reduce(Delivery.automationAfter, doc)
            if (after !== doc) {
              yield* sql`UPDATE automations SET enabled = ${after.enabled ? 1 : 0}, doc = ${yield* encodeAutomation(
                after
              )}
            WHERE id = ${after.id}`
            }
          }
        }
        return answers
      })

    const deliveries = DeliveryStore.DeliveryStore.of({
      claim: Effect.fn("DeliveryStore.claim")(function*(options: {
        readonly worker: string
        readonly limit: number
        readonly leaseMillis: number
        readonly now: number
      }) {
        const limit = Math.max(0, Math.floor(options.limit))
        if (limit === 0) return []
        const now = options.now
        const claimed = yield* decodeClaimedDeliveries(
          yield* sql`
        UPDATE deliveries SET claim = claim + 1, leased_by = ${options.worker}, lease_until = ${
            now + options.leaseMillis
          }
        WHERE id IN (
          SELECT d.id FROM deliveries AS d JOIN automations AS a ON a.id = d.automation_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
            AND (d.lease_until IS NULL OR d.lease_until <= ${now})
            AND (a.enabled = 1 OR d.test = 1)
            AND (d.body IS NOT NULL OR EXISTS (SELECT 1 FROM messages AS m
              WHERE m.organisation_id = d.organisation_id AND m.seq = d.seq))
            AND NOT EXISTS (SELECT 1 FROM deliveries AS earlier
              WHERE earlier.status = 'pending' AND earlier.automation_id = d.automation_id
                AND earlier.organisation_id = d.organisation_id
                AND earlier.tradeflow_reference = d.tradeflow_reference AND earlier.id < d.id)
          ORDER BY d.id LIMIT ${limit})
        RETURNING ${stateColumns}, claim, COALESCE(body, (SELECT m.body FROM messages AS m
          WHERE m.organisation_id = deliveries.organisation_id AND m.seq = deliveries.seq)) AS body`
        )
        return [...claimed].sort((a, b) => a.id - b.id)
      }, storageError("DeliveryStore.claim")),
      record: Effect.fn("DeliveryStore.record")(function*(results: ReadonlyArray<Delivery.AttemptResult>) {
        return yield* DeliveryStore.recordIndependently((batch) => sql.withTransaction(recordBatch(batch)))(results)
      }, storageError("DeliveryStore.record")),
      enqueue: Effect.fn("DeliveryStore.enqueue")(function*(delivery: Delivery.NewDelivery) {
        const row = (yield* decodeDeliveries(
          yield* sql`INSERT INTO deliveries ${sql.insert(deliveryRow(delivery))}
        RETURNING ${deliveryColumns}`
        ))[0]
        if (row === undefined) return yield* Effect.fail("INSERT ... RETURNING answered no row")
        yield* deliveryWakeups.notify
        return row
      }, storageError("DeliveryStore.enqueue")),
      get: Effect.fn("DeliveryStore.get")(function*(id: number) {
        return yield* getDelivery(id)
      }, storageError("DeliveryStore.get")),
      list: Effect.fn("DeliveryStore.list")(function*(automationId: string, limit: number) {
        return yield* decodeDeliveries(
          yield* sql`${selectDelivery} WHERE automation_id = ${automationId}
        ORDER BY id LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("DeliveryStore.list")),
      retry: Effect.fn("DeliveryStore.retry")(function*(id: number, now: number) {
        const outcome = yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* getDelivery(id)
          if (Option.isNone(found)) return "not-found" as const
          if (!Delivery.retryable(found.value)) return "not-retryable" as const
          yield* writeDelivery(Delivery.retried(found.value, now))
          return "retried" as const
        }))
        if (outcome === "retried") yield* deliveryWakeups.notify
        return outcome
      }, storageError("DeliveryStore.retry")),
      log: Effect.fn("DeliveryStore.log")(function*(automationId: string, limit: number) {
        return yield* decodeDeliveryLog(
          yield* sql`SELECT a.delivery_id AS id, d.message_hash, a.attempt, a.status,
          a.response_status, a.error, a.response_body, a.at, d.test
        FROM delivery_attempts AS a JOIN deliveries AS d ON d.id = a.delivery_id
        WHERE a.automation_id = ${automationId}
        ORDER BY a.at DESC, a.delivery_id DESC, a.attempt DESC LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("DeliveryStore.log")),
      wakeups: deliveryWakeups.stream
    })

    const retention = yield* SqlStorage.retention

    return { organisations, jobs, tradeflows, messages, settings, automations, deliveries, retention }
  }
)

/** The storage ports as a context, from adapters built by {@link make}. */
export const toContext: (storage: SqliteStorage) => Context.Context<Storage.Storage> = SqlStorage.toContext

/** Every storage port on an existing (SQLite) `SqlClient`; migrates on build. */
export const layerFromClient: Layer.Layer<Storage.Storage, StorageError.StorageError, SqlClient.SqlClient> = Layer
  .effectContext(Effect.map(make, toContext))

const ensureDirectory = (filename: string) =>
  filename === "" || filename === ":memory:" || filename.startsWith("file:")
    ? Effect.void
    : Effect.try({
      try: () => void mkdirSync(dirname(filename), { recursive: true }),
      catch: (cause) => new StorageError.StorageError({ operation: "SqliteStorage.open", cause })
    })

/**
 * Opens (creating if needed) the SQLite database, applies the connection pragmas (WAL,
 * `synchronous`, `busy_timeout`, `foreign_keys`), migrates it and provides every storage port
 * plus the `SqlClient` / `SqliteClient` it uses. The connection closes with the layer.
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
    yield* Effect.all([
      sql.unsafe(`PRAGMA synchronous = ${options.synchronous === "NORMAL" ? "NORMAL" : "FULL"}`),
      sql.unsafe(`PRAGMA busy_timeout = ${busyTimeout}`),
      sql.unsafe("PRAGMA foreign_keys = ON")
    ], { discard: true }).pipe(storageError("SqliteStorage.open"))
    const storage = yield* make.pipe(Effect.provide(client))
    return Context.merge(client, toContext(storage))
  }))

/** {@link layer} with its options read from `Config`, each option a `Config` (e.g. `{ filename: Config.string("filename") }`). */
export const layerConfig = (
  config: Config.Config.Wrap<SqliteStorageOptions>
): Layer.Layer<
  Storage.Storage | SqlClient.SqlClient | SqliteClient.SqliteClient,
  StorageError.StorageError | ConfigError.ConfigError
> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
