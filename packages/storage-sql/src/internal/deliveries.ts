import { SqlClient } from "@effect/sql"
import { type Automation, Delivery, DeliveryStore } from "@tradeflow/core"
import { Effect, Either, Option, Schema } from "effect"
import {
  chunks,
  decodeAutomations,
  decodeClaimedDeliveries,
  decodeCounts,
  decodeCreated,
  decodeDeliveries,
  decodeDeliveryLog,
  DeliveryRow,
  encodeAutomation,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"
import type { SqlStorageOptions } from "./options.js"

const decodeLeased = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...DeliveryRow.fields, claim: Schema.Number })))

const decodeTextIds = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String })))

const stateFields = [
  "id",
  "automation_id",
  "organisation_id",
  "tradeflow_reference",
  "message_hash",
  "seq",
  "test",
  "created_at",
  "status",
  "attempt",
  "retries",
  "schedule_started_at",
  "next_attempt_at"
]

/** The columns `record` writes back to a delivery, with their PostgreSQL types. */
const stateColumns = [
  ["id", "bigint"],
  ["status", "text"],
  ["attempt", "integer"],
  ["retries", "integer"],
  ["schedule_started_at", "bigint"],
  ["next_attempt_at", "bigint"]
] as const

const stateOf = (d: Delivery.Delivery) => ({
  id: d.id,
  status: d.status,
  attempt: d.attempt,
  retries: d.retries,
  schedule_started_at: d.schedule_started_at,
  next_attempt_at: d.next_attempt_at
})

/** The columns of the attempts table (`Delivery.AttemptRow`), with their PostgreSQL types. */
const attemptColumns = [
  ["delivery_id", "bigint"],
  ["attempt", "integer"],
  ["automation_id", "text"],
  ["at", "bigint"],
  ["status", "text"],
  ["response_status", "integer"],
  ["error", "text"],
  ["response_body", "text"]
] as const

const expiredColumns = [["delivery_id", "bigint"], ["up_to", "integer"]] as const

/**
 * `DeliveryStore` over the `SqlClient`, one algorithm on both dialects. A claim is one
 * `UPDATE … RETURNING` of the claimable heads (locked `FOR UPDATE OF d SKIP LOCKED` on PostgreSQL;
 * SQLite has one writer). A record reads the automations and the leased deliveries of its batch
 * (on PostgreSQL locked, the automations first, in id order, as a commit locks them), folds the
 * results with `Delivery.recording` and writes the fold with one statement per kind of write;
 * `recordAndClaim` runs such a record and a claim in one transaction (one commit). Enqueues and retries signal `options.deliveryWakeups`, whose stream is `wakeups`.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<DeliveryStore.DeliveryStore["Type"], never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { bool, chunk, forUpdate, number, pg, recordset } = dialectOf(sql)
    const lockAutomations = sql.literal(pg ? "FOR NO KEY UPDATE" : "")
    const skipLocked = sql.literal(pg ? "FOR UPDATE OF d SKIP LOCKED" : "")
    const columns = (alias: string) => sql.literal(stateFields.map((f) => `${alias}.${f}`).join(", "))
    const selectDelivery = sql`SELECT ${columns("d")}, d.body FROM deliveries d`
    const writeDelivery = (d: Delivery.Delivery) =>
      sql`UPDATE deliveries SET status = ${d.status}, attempt = ${d.attempt}, retries = ${d.retries},
      schedule_started_at = ${d.schedule_started_at}, next_attempt_at = ${d.next_attempt_at}
      WHERE id = ${d.id}`

    /** Records a batch, as `record` one result after the other would (`Delivery.recording`); the caller opens the transaction. */
    const recordWrites = (results: ReadonlyArray<Delivery.AttemptResult>) => {
      const ids = [...new Set(results.map((r) => r.delivery_id))].sort((a, b) => a - b)
      return Effect.gen(function*() {
        const owners = new Set<string>()
        for (const part of chunks(ids, chunk)) {
          for (
            const { id } of yield* decodeTextIds(
              yield* sql`SELECT DISTINCT automation_id AS id FROM deliveries WHERE ${sql.in("id", part)} AND NOT test`
            )
          ) owners.add(id)
        }
        const automations = new Map<string, Automation.Automation>()
        for (const part of chunks([...owners].sort(), chunk)) {
          for (
            const { doc } of yield* decodeAutomations(
              yield* sql`SELECT doc FROM automations WHERE ${sql.in("id", part)} ORDER BY id ${lockAutomations}`
            )
          ) automations.set(doc.id, doc)
        }
        const leased = new Map<number, Delivery.LeasedDelivery>()
        for (const part of chunks(ids, chunk)) {
          for (
            const d of yield* decodeLeased(
              yield* sql`SELECT ${columns("d")}, NULL AS body, d.claim FROM deliveries d
              WHERE ${sql.in("d.id", part)} AND d.status = 'pending' AND d.lease_until IS NOT NULL
              ORDER BY d.id ${forUpdate}`
            )
          ) leased.set(d.id, d)
        }
        const writes = Delivery.recording(results, leased, automations)
        if (writes.deliveries.length === 0) return writes.answers
        yield* sql`UPDATE deliveries SET status = k.status, attempt = k.attempt, retries = k.retries,
          schedule_started_at = k.schedule_started_at, next_attempt_at = k.next_attempt_at,
          leased_by = NULL, lease_until = NULL
        FROM ${recordset(writes.deliveries.map(stateOf), stateColumns)} WHERE deliveries.id = k.id`
        const names = sql.literal(attemptColumns.map(([name]) => name).join(", "))
        yield* sql`INSERT INTO delivery_attempts (${names})
          SELECT ${names} FROM ${recordset(writes.attempts, attemptColumns)}`
        if (writes.expired.length > 0) {
          yield* sql`UPDATE delivery_attempts SET response_body = NULL FROM ${recordset(writes.expired, expiredColumns)}
          WHERE delivery_attempts.delivery_id = k.delivery_id AND delivery_attempts.attempt <= k.up_to
            AND delivery_attempts.response_body IS NOT NULL`
        }
        for (const a of writes.automations) {
          yield* sql`UPDATE automations SET enabled = ${bool(a.enabled)}, doc = ${yield* encodeAutomation(a)}
          WHERE id = ${a.id}`
        }
        return writes.answers
      })
    }

    /** {@link recordWrites} in a transaction of its own. */
    const recordBatch = (results: ReadonlyArray<Delivery.AttemptResult>) => sql.withTransaction(recordWrites(results))

    /**
     * The ids of up to `limit` claimable deliveries: due heads of their (automation, tradeflow), not
     * under a live lease, of an enabled automation (or a test send), with something to send (their
     * own body, or their message: joined, so only the heads look it up). PostgreSQL skips the rows
     * other claimers hold.
     */
    const claimable = (limit: number, now: number) =>
      sql`SELECT d.id FROM deliveries d JOIN automations a ON a.id = d.automation_id
        LEFT JOIN messages m ON m.organisation_id = d.organisation_id AND m.seq = d.seq
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
        AND (d.lease_until IS NULL OR d.lease_until <= ${now})
        AND (a.enabled OR d.test)
        AND (d.body IS NOT NULL OR m.seq IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM deliveries p
          WHERE p.status = 'pending' AND p.automation_id = d.automation_id
            AND p.organisation_id = d.organisation_id AND p.tradeflow_reference = d.tradeflow_reference
            AND p.id < d.id)
      ORDER BY d.id LIMIT ${limit} ${skipLocked}`

    /**
     * Leases the {@link claimable} deliveries and answers them with their body, in one statement on
     * both dialects. PostgreSQL takes the ids as an array (`= ANY (ARRAY(…))`, which it looks up by
     * key, where `IN (…)` planned a scan of every delivery).
     */
    const claimStatement = (worker: string, limit: number, now: number, leaseMillis: number) =>
      sql`UPDATE deliveries SET claim = claim + 1, leased_by = ${worker}, lease_until = ${
        now + Math.max(0, leaseMillis)
      }
      WHERE id ${pg ? sql`= ANY (ARRAY(${claimable(limit, now)}))` : sql`IN (${claimable(limit, now)})`}
      RETURNING ${sql.literal(stateFields.join(", "))}, claim, COALESCE(body, (SELECT m.body FROM messages m
        WHERE m.organisation_id = deliveries.organisation_id AND m.seq = deliveries.seq)) AS body`

    /** Leases the {@link claimable} deliveries (`DeliveryStore.claim`), in ascending id. */
    const claimDeliveries = (options: DeliveryStore.ClaimOptions) =>
      Effect.gen(function*() {
        const limit = Math.max(0, Math.floor(options.limit))
        if (limit === 0) return []
        const claimed = yield* decodeClaimedDeliveries(
          yield* claimStatement(options.worker, limit, options.now, options.leaseMillis)
        )
        return [...claimed].sort((a, b) => a.id - b.id)
      })

    return DeliveryStore.DeliveryStore.of({
      claim: Effect.fn("DeliveryStore.claim")(function*(options: DeliveryStore.ClaimOptions) {
        return yield* claimDeliveries(options)
      }, storageError("DeliveryStore.claim")),
      record: Effect.fn("DeliveryStore.record")(function*(results: ReadonlyArray<Delivery.AttemptResult>) {
        return yield* DeliveryStore.recordIndependently(recordBatch)(results)
      }, storageError("DeliveryStore.record")),
      recordAndClaim: Effect.fn("DeliveryStore.recordAndClaim")(
        function*(results: ReadonlyArray<Delivery.AttemptResult>, options: DeliveryStore.ClaimOptions) {
          if (results.length === 0) return { recorded: [], claimed: yield* claimDeliveries(options) }
          const together = yield* Effect.either(sql.withTransaction(
            Effect.zip(recordWrites(results.map(Delivery.storableResult)), claimDeliveries(options))
          ))
          if (Either.isRight(together)) return { recorded: together.right[0], claimed: together.right[1] }
          yield* Effect.logWarning(
            "DeliveryStore.recordAndClaim: the transaction failed; recording and claiming on their own",
            together.left
          )
          const recorded = yield* DeliveryStore.recordIndependently(recordBatch)(results)
          return { recorded, claimed: yield* claimDeliveries(options) }
        },
        storageError("DeliveryStore.recordAndClaim")
      ),
      backlog: Effect.gen(function*() {
        const [count] = yield* decodeCounts(
          yield* sql`SELECT ${pg ? sql`count(*)::float8` : sql`count(*)`} AS n FROM deliveries WHERE status = 'pending'`
        )
        const [oldest] = yield* decodeCreated(
          yield* sql`SELECT ${
            number("created_at")
          } AS created_at FROM deliveries WHERE status = 'pending' ORDER BY id LIMIT 1`
        )
        return { pending: count?.n ?? 0, oldest_created_at: oldest?.created_at ?? null }
      }).pipe(storageError("DeliveryStore.backlog"), Effect.withSpan("DeliveryStore.backlog")),
      enqueue: Effect.fn("DeliveryStore.enqueue")(function*(delivery: Delivery.NewDelivery) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const row = (yield* decodeDeliveries(
            yield* sql`INSERT INTO deliveries ${
              sql.insert({
                automation_id: delivery.automation_id,
                organisation_id: delivery.organisation_id,
                tradeflow_reference: delivery.tradeflow_reference,
                message_hash: delivery.message_hash,
                seq: delivery.seq,
                body: delivery.body,
                test: bool(delivery.test),
                created_at: delivery.created_at,
                next_attempt_at: delivery.created_at
              })
            }
            RETURNING ${sql.literal(stateFields.join(", "))}, body`
          ))[0]
          if (row === undefined) return yield* Effect.fail("INSERT ... RETURNING answered no row")
          yield* options.deliveryWakeups.notify
          return row
        }))
      }, storageError("DeliveryStore.enqueue")),
      get: Effect.fn("DeliveryStore.get")(function*(id: number) {
        return Option.fromNullable((yield* decodeDeliveries(yield* sql`${selectDelivery} WHERE d.id = ${id}`))[0])
      }, storageError("DeliveryStore.get")),
      list: Effect.fn("DeliveryStore.list")(function*(automationId: string, limit: number) {
        return yield* decodeDeliveries(
          yield* sql`${selectDelivery} WHERE d.automation_id = ${automationId}
          ORDER BY d.id LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("DeliveryStore.list")),
      retry: Effect.fn("DeliveryStore.retry")(function*(id: number, now: number) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const d = (yield* decodeDeliveries(yield* sql`${selectDelivery} WHERE d.id = ${id} ${forUpdate}`))[0]
          if (d === undefined) return "not-found" as const
          if (!Delivery.retryable(d)) return "not-retryable" as const
          yield* writeDelivery(Delivery.retried(d, now))
          yield* options.deliveryWakeups.notify
          return "retried" as const
        }))
      }, storageError("DeliveryStore.retry")),
      log: Effect.fn("DeliveryStore.log")(function*(automationId: string, limit: number) {
        return yield* decodeDeliveryLog(
          yield* sql`SELECT a.delivery_id AS id, d.message_hash, a.attempt, a.status, a.response_status,
            a.error, a.response_body, a.at, d.test, d.tradeflow_reference, m.type
          FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
          LEFT JOIN messages m ON m.organisation_id = d.organisation_id AND m.seq = d.seq
          WHERE a.automation_id = ${automationId}
          ORDER BY a.at DESC, a.delivery_id DESC, a.attempt DESC LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("DeliveryStore.log")),
      wakeups: options.deliveryWakeups.stream
    })
  })
