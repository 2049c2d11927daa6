import { SqlClient } from "@effect/sql"
import { StorageHealth } from "@tradeflow/core"
import { Effect, Schema } from "effect"
import type { SqlStorageOptions } from "./options.js"

const unreachable: ReadonlyArray<StorageHealth.Missing> = [{ component: "database", reason: "unreachable" }]

const decodeLatest = Schema.decodeUnknown(Schema.Array(Schema.Struct({ latest: Schema.NullOr(Schema.Number) })))

/**
 * `StorageHealth` over the `SqlClient`: one query of the migrations table, comparing the latest
 * migration applied with the latest this build knows (`options.migrations`).
 */
export const make = (
  options: SqlStorageOptions
): Effect.Effect<StorageHealth.StorageHealth["Type"], never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const expected = options.migrations
    return StorageHealth.StorageHealth.of({
      check: sql`SELECT MAX(migration_id) AS latest FROM ${sql(expected.table)}`.pipe(
        Effect.flatMap(decodeLatest),
        Effect.map((rows) => {
          const latest = Number(rows[0]?.latest ?? 0)
          return latest >= expected.latest ? [] : [{
            component: "migrations",
            reason:
              `the database has ${latest} of the ${expected.latest} migrations of this build; starting a process applies them`
          }]
        }),
        Effect.catchAll(() => Effect.succeed(unreachable))
      )
    })
  })
