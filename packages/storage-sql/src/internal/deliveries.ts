import { SqlClient } from "@effect/sql"
import { type Automation, Delivery, DeliveryStore } from "@tradeflow/core"
import { Effect, Option, Schema } from "effect"
import {
  chunks,
  decodeAutomations,
  decodeClaimedDeliveries,
  decodeDeliveries,
  decodeDeliveryLog,
  DeliveryRow,
  encodeAutomation,
  storageError
} from "../StorageRows.js"
import { dialectOf } from "./dialect.js"
import type { SqlStorageOptions } from "./options.js"

const decodeFenced = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...DeliveryRow.fields, claim: Schema.Number })))

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

/** The columns `record` writes back to a delivery. */
const stateOf = (d: Delivery.Delivery) => ({
  id: d.id,
  status: d.status,
  attempt: d.attempt,
  retries: d.retries,
  schedule_started_at: d.schedule_started_at,
  next_attempt_at: d.next_attempt_at
})

/** The attempts table row of a recorded result. */
const attemptRow = (d: Delivery.Delivery, next: Delivery.Delivery, r: Delivery.AttemptResult) => ({
  delivery_id: d.id,
  attempt: next.attempt,
  automation_id: d.automation_id,
  at: r.at,
  status: r.status,
  response_status: r.response_status,
  error: r.error,
  response_body: r.response_body
})

/**
 * `DeliveryStore` over the `SqlClient`. On PostgreSQL claims lock with `FOR UPDATE OF d SKIP LOCKED`
 * and a record locks the automations (`FOR NO KEY UPDATE`) before the deliveries; on SQLite (one
 * writer) a claim is one `UPDATE … RETURNING` and a record one statement per kind of write.
 * Enqueues and retries signal `options.deliveryWakeups`, whose stream is `wakeups`.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<DeliveryStore.DeliveryStore["Type"], never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { bool, chunk, forUpdate, pg } = dialectOf(sql)
    const columns = (alias: string) => sql.literal(stateFields.map((f) => `${alias}.${f}`).join(", "))
    const selectDelivery = sql`SELECT ${columns("d")}, d.body FROM deliveries d`
    const writeDelivery = (d: Delivery.Delivery, release: boolean) =>
      sql`UPDATE deliveries SET status = ${d.status}, attempt = ${d.attempt}, retries = ${d.retries},
      schedule_started_at = ${d.schedule_started_at}, next_attempt_at = ${d.next_attempt_at}
      ${release ? sql.literal(", leased_by = NULL, lease_until = NULL") : sql.literal("")}
      WHERE id = ${d.id}`

    /**
     * Records a batch as `record` one result after the other would, in one transaction: a result
     * records only if its delivery is leased at its claim and no earlier result of the batch recorded
     * it; each automation follows the fold of `Delivery.automationAfter` over its recorded results.
     */
    const recordBatchPg = (results: ReadonlyArray<Delivery.AttemptResult>) => {
      const ids = [...new Set(results.map((r) => r.delivery_id))].sort((a, b) => a - b)
      return sql.withTransaction(Effect.gen(function*() {
        const owners = (yield* decodeTextIds(
          yield* sql`SELECT DISTINCT automation_id AS id FROM deliveries
          WHERE ${sql.in("id", ids)} AND NOT test`
        )).map((r) => r.id).sort()
        const automations = new Map<string, Automation.Automation>()
        if (owners.length > 0) {
          for (
            const row of yield* decodeAutomations(
              yield* sql`SELECT doc FROM automations
            WHERE ${sql.in("id", owners)} ORDER BY id FOR NO KEY UPDATE`
            )
          ) automations.set(row.doc.id, row.doc)
        }
        const rows = yield* decodeFenced(
          yield* sql`SELECT ${columns("d")}, d.body, d.claim FROM deliveries d
          WHERE ${sql.in("d.id", ids)} AND d.status = 'pending' AND d.lease_until IS NOT NULL
          ORDER BY d.id FOR UPDATE`
        )
        const current = new Map<number, Delivery.Delivery>(rows.map((d) => [d.id, d]))
        const claims = new Map(rows.map((d) => [d.id, d.claim]))
        const written = new Map<number, Delivery.Delivery>()
        const changed = new Map<string, Automation.Automation>()
        const attempts: Array<Record<string, string | number | null>> = []
        const answers = results.map((r) => {
          const d = current.get(r.delivery_id)
          if (d === undefined || claims.get(d.id) !== r.claim) return false
          const next = Delivery.afterAttempt(d, r)
          current.set(d.id, next)
          claims.delete(d.id)
          written.set(d.id, next)
          attempts.push(attemptRow(d, next, r))
          const automation = d.test ? undefined : automations.get(d.automation_id)
          if (automation !== undefined) {
            const after = Delivery.automationAfter(automation, r)
            if (after !== automation) {
              automations.set(after.id, after)
              changed.set(after.id, after)
            }
          }
          return true
        })
        for (const d of written.values()) yield* writeDelivery(d, true)
        for (const part of chunks(attempts, 500)) yield* sql`INSERT INTO delivery_attempts ${sql.insert(part)}`
        const expired = Delivery.expiredBodies(written.values())
        if (expired.length > 0) {
          yield* sql`UPDATE delivery_attempts a SET response_body = NULL
            FROM json_to_recordset(${JSON.stringify(expired)}::json) AS k(delivery_id bigint, up_to integer)
            WHERE a.delivery_id = k.delivery_id AND a.attempt <= k.up_to AND a.response_body IS NOT NULL`
        }
        for (const a of changed.values()) {
          yield* sql`UPDATE automations SET enabled = ${a.enabled}, doc = ${yield* encodeAutomation(
            a
          )} WHERE id = ${a.id}`
        }
        return answers
      }))
    }

    /** {@link recordBatchPg} for SQLite's single writer: no locks, the writes batched per kind. */
    const recordBatchSqlite = (results: ReadonlyArray<Delivery.AttemptResult>) =>
      sql.withTransaction(Effect.gen(function*() {
        const leased = new Map<number, Delivery.Delivery & { readonly claim: number }>()
        for (const ids of chunks([...new Set(results.map((r) => r.delivery_id))], chunk)) {
          for (
            const d of yield* decodeFenced(
              yield* sql`SELECT ${columns("deliveries")}, NULL AS body, claim FROM deliveries
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
          attempts.push(attemptRow(d, next, r))
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
        for (const ids of chunks([...health.keys()], chunk)) {
          for (
            const { doc } of yield* decodeAutomations(
              yield* sql`SELECT doc FROM automations WHERE ${sql.in("id", ids)}`
            )
          ) {
            const after = (health.get(doc.id) ?? []).reduce(Delivery.automationAfter, doc)
            if (after !== doc) {
              yield* sql`UPDATE automations SET enabled = ${bool(after.enabled)}, doc = ${yield* encodeAutomation(
                after
              )}
              WHERE id = ${after.id}`
            }
          }
        }
        return answers
      }))

    /** Claims up to `limit` due deliveries, the head of each (automation, tradeflow) only, ascending id. */
    const claimStatement = (worker: string, limit: number, now: number, leaseMillis: number) =>
      pg
        ? sql`
          WITH claimable AS (
            SELECT d.id FROM deliveries d JOIN automations a ON a.id = d.automation_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
              AND (d.lease_until IS NULL OR d.lease_until <= ${now})
              AND (a.enabled OR d.test)
              AND NOT EXISTS (SELECT 1 FROM deliveries p
                WHERE p.status = 'pending' AND p.automation_id = d.automation_id
                  AND p.organisation_id = d.organisation_id AND p.tradeflow_reference = d.tradeflow_reference
                  AND p.id < d.id)
            ORDER BY d.id LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          ), claimed AS (
            UPDATE deliveries d SET claim = d.claim + 1, leased_by = ${worker},
              lease_until = ${now + Math.max(0, leaseMillis)}
            FROM claimable WHERE d.id = claimable.id
            RETURNING d.*
          )
          SELECT ${columns("c")}, c.claim, COALESCE(c.body, m.body) AS body FROM claimed c
          LEFT JOIN messages m ON m.organisation_id = c.organisation_id AND m.seq = c.seq
          ORDER BY c.id`
        : sql`
          UPDATE deliveries SET claim = claim + 1, leased_by = ${worker}, lease_until = ${now + leaseMillis}
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
          RETURNING ${sql.literal(stateFields.join(", "))}, claim, COALESCE(body, (SELECT m.body FROM messages AS m
            WHERE m.organisation_id = deliveries.organisation_id AND m.seq = deliveries.seq)) AS body`

    return DeliveryStore.DeliveryStore.of({
      claim: Effect.fn("DeliveryStore.claim")(function*(options: {
        readonly worker: string
        readonly limit: number
        readonly leaseMillis: number
        readonly now: number
      }) {
        const limit = Math.max(0, Math.floor(options.limit))
        if (limit === 0) return []
        const claimed = yield* decodeClaimedDeliveries(
          yield* claimStatement(options.worker, limit, options.now, options.leaseMillis)
        )
        return [...claimed].sort((a, b) => a.id - b.id)
      }, storageError("DeliveryStore.claim")),
      record: Effect.fn("DeliveryStore.record")(function*(results: ReadonlyArray<Delivery.AttemptResult>) {
        return yield* DeliveryStore.recordIndependently(pg ? recordBatchPg : recordBatchSqlite)(results)
      }, storageError("DeliveryStore.record")),
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
          yield* writeDelivery(Delivery.retried(d, now), false)
          yield* options.deliveryWakeups.notify
          return "retried" as const
        }))
      }, storageError("DeliveryStore.retry")),
      log: Effect.fn("DeliveryStore.log")(function*(automationId: string, limit: number) {
        return yield* decodeDeliveryLog(
          yield* sql`SELECT a.delivery_id AS id, d.message_hash, a.attempt, a.status, a.response_status,
            a.error, a.response_body, a.at, d.test
          FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
          WHERE a.automation_id = ${automationId}
          ORDER BY a.at DESC, a.delivery_id DESC, a.attempt DESC LIMIT ${Math.max(0, Math.floor(limit))}`
        )
      }, storageError("DeliveryStore.log")),
      wakeups: options.deliveryWakeups.stream
    })
  })
