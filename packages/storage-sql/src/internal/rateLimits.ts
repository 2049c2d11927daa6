import { SqlClient } from "@effect/sql"
import { RateLimitStore } from "@tradeflow/core"
import { Effect, Schema } from "effect"
import { storageError } from "../StorageRows.js"
import type { SqlStorageOptions } from "./options.js"

const decodeHits = Schema.decodeUnknown(
  Schema.Tuple(Schema.Struct({ hits: Schema.Union(Schema.Number, Schema.NumberFromString) }))
)

/**
 * `RateLimitStore` over the `SqlClient`: a hit is one upsert that answers the count it wrote (so
 * concurrent hits of any connection are serialised by the row), written as the driver writes lease
 * state (`options.relaxed`; on SQLite without an fsync: a count lost to an OS crash costs nothing);
 * a prune is one bounded delete.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<RateLimitStore.RateLimitStore["Type"], never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const relaxed = options.relaxed ?? ((effect) => effect)
    return RateLimitStore.RateLimitStore.of({
      hit: (key: string, window: RateLimitStore.Window) =>
        relaxed(
          sql`INSERT INTO rate_limits (key, window_start, window_end, hits)
          VALUES (${key}, ${window.start}, ${window.end}, 1)
          ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limits.hits + 1
          RETURNING hits`
        ).pipe(
          Effect.flatMap(decodeHits),
          Effect.map(([row]) => row.hits),
          storageError("RateLimitStore.hit")
        ),
      prune: Effect.fn("RateLimitStore.prune")(function*(now: number, limit: number) {
        const n = Math.max(0, Math.floor(limit))
        return (yield* sql`DELETE FROM rate_limits WHERE (key, window_start) IN (
          SELECT key, window_start FROM rate_limits WHERE window_end <= ${now} LIMIT ${n}
        ) RETURNING 1 AS id`).length
      }, storageError("RateLimitStore.prune"))
    })
  })
