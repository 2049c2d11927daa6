import { SqlClient } from "@effect/sql"
import { RateLimitStore } from "@tradeflow/core"
import { Effect, Schema } from "effect"
import { storageError } from "../StorageRows.js"
import type { SqlStorageOptions } from "./options.js"

const decodeTotals = Schema.decodeUnknown(Schema.Array(Schema.Struct({
  key: Schema.String,
  window_start: Schema.Union(Schema.Number, Schema.NumberFromString),
  hits: Schema.Union(Schema.Number, Schema.NumberFromString)
})))

/** Counters per statement: 4 parameters each, well under SQLite's and PostgreSQL's limits. */
const perStatement = 500

const nameOf = (key: string, windowStart: number) => `${windowStart} ${key}`

/**
 * `RateLimitStore` over the `SqlClient`: the counts of one add are merged by key and window and
 * written by multi-row upserts in key order (so concurrent adds cannot deadlock) that answer the
 * totals they wrote (concurrent adds of any connection are serialised by the rows), as the driver writes lease state (`options.relaxed`; on
 * SQLite without an fsync: a count lost to an OS crash costs nothing); a prune is one bounded delete.
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<RateLimitStore.RateLimitStore["Type"], never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const relaxed = options.relaxed ?? ((effect) => effect)
    const upsert = (counts: ReadonlyArray<RateLimitStore.Count>) =>
      relaxed(
        sql`INSERT INTO rate_limits ${
          sql.insert(counts.map((c) => ({
            key: c.key,
            window_start: c.window.start,
            window_end: c.window.end,
            hits: c.hits
          })))
        }
        ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limits.hits + excluded.hits
        RETURNING key, window_start, hits`
      ).pipe(Effect.flatMap(decodeTotals))
    return RateLimitStore.RateLimitStore.of({
      add: (counts) =>
        Effect.gen(function*() {
          const merged = new Map<string, RateLimitStore.Count>()
          for (const count of counts) {
            const name = nameOf(count.key, count.window.start)
            const before = merged.get(name)
            merged.set(name, before === undefined ? count : { ...before, hits: before.hits + count.hits })
          }
          const unique = [...merged].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, count]) => count)
          const totals = new Map<string, number>()
          for (let i = 0; i < unique.length; i += perStatement) {
            for (const row of yield* upsert(unique.slice(i, i + perStatement))) {
              totals.set(nameOf(row.key, row.window_start), row.hits)
            }
          }
          return counts.map((count) => totals.get(nameOf(count.key, count.window.start)) ?? 0)
        }).pipe(storageError("RateLimitStore.add")),
      prune: Effect.fn("RateLimitStore.prune")(function*(now: number, limit: number) {
        const n = Math.max(0, Math.floor(limit))
        return (yield* sql`DELETE FROM rate_limits WHERE (key, window_start) IN (
          SELECT key, window_start FROM rate_limits WHERE window_end <= ${now} LIMIT ${n}
        ) RETURNING 1 AS id`).length
      }, storageError("RateLimitStore.prune"))
    })
  })
