import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { StorageHealth } from "@tradeflow/core"
import { Effect } from "effect"
import { layerTest } from "./TestDatabase.js"

layer(layerTest, { excludeTestServices: true, timeout: "60 seconds" })("PostgreSQL storage health", (it) => {
  it.effect("nothing missing once migrated; a missing migration, then a missing schema, are reported", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const health = yield* StorageHealth.StorageHealth
      assert.deepStrictEqual(yield* health.check, [])
      const [latest] = yield* sql<{ id: number }>`SELECT MAX(migration_id) AS id FROM tradeflow_migrations`
      yield* sql`DELETE FROM tradeflow_migrations WHERE migration_id = ${latest!.id}`
      const missing = yield* health.check
      assert.deepStrictEqual(missing.map((m) => m.component), ["migrations"])
      assert.include(missing[0]!.reason, `${latest!.id - 1} of the ${latest!.id} migrations`)
      yield* sql`ALTER TABLE tradeflow_migrations RENAME TO tradeflow_migrations_gone`
      assert.deepStrictEqual(yield* health.check, [{ component: "database", reason: "unreachable" }])
    }))
})
