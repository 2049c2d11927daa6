import { SqlClient } from "@effect/sql"
import { RetentionStore } from "@tradeflow/core"
import { Effect, Schema } from "effect"
import { storageError } from "../StorageRows.js"

const decodeGone = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ id: Schema.Union(Schema.Number, Schema.NumberFromString) }))
)

/** `RetentionStore` over the `SqlClient`: each prune deletes at most `limit` rows, oldest first. */
export const make: Effect.Effect<RetentionStore.RetentionStore["Type"], never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) =>
    RetentionStore.RetentionStore.of({
      prune: Effect.fn("RetentionStore.prune")(
        function*(kind: RetentionStore.PruneKind, before: number, limit: number) {
          const n = Math.max(0, Math.floor(limit))
          switch (kind) {
            case "idempotency_keys":
              return (yield* sql`DELETE FROM idempotency_keys WHERE (organisation_id, key) IN (
              SELECT organisation_id, key FROM idempotency_keys WHERE created_at < ${before} ORDER BY created_at LIMIT ${n}
            ) RETURNING 1 AS id`).length
            case "done_jobs":
            case "dead_jobs":
              return (yield* sql`DELETE FROM jobs WHERE id IN (
              SELECT id FROM jobs WHERE status = ${kind === "done_jobs" ? "done" : "dead"} AND received_at < ${before}
              ORDER BY id LIMIT ${n}
            ) RETURNING id`).length
            case "delivery_attempts":
              return (yield* sql`DELETE FROM delivery_attempts WHERE (delivery_id, attempt) IN (
              SELECT delivery_id, attempt FROM delivery_attempts WHERE at < ${before} ORDER BY at LIMIT ${n}
            ) RETURNING 1 AS id`).length
            case "dead_deliveries":
              return yield* sql.withTransaction(Effect.gen(function*() {
                const ids = (yield* decodeGone(
                  yield* sql`SELECT id FROM deliveries
                WHERE status = 'dead' AND created_at < ${before} ORDER BY id LIMIT ${n}`
                )).map((r) => r.id)
                if (ids.length === 0) return 0
                yield* sql`DELETE FROM delivery_attempts WHERE ${sql.in("delivery_id", ids)}`
                yield* sql`DELETE FROM deliveries WHERE ${sql.in("id", ids)}`
                return ids.length
              }))
          }
        },
        storageError("RetentionStore.prune")
      )
    })
)
