import { assert, it } from "@effect/vitest"
import { StorageHealth } from "@tradeflow/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-health-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

it.live("SQLite storage health: nothing missing once migrated; a missing migration, then a missing table, are reported", () =>
  Effect.gen(function*() {
    const filename = join(root, "storage.sqlite")
    const health = yield* StorageHealth.StorageHealth
    assert.deepStrictEqual(yield* health.check, [])
    const db = new Database(filename)
    try {
      const { id } = db.prepare("SELECT MAX(migration_id) AS id FROM tradeflow_migrations").get() as { id: number }
      db.prepare("DELETE FROM tradeflow_migrations WHERE migration_id = ?").run(id)
      const missing = yield* health.check
      assert.deepStrictEqual(missing.map((m) => m.component), ["migrations"])
      assert.include(missing[0]!.reason, `${id - 1} of the ${id} migrations`)
      db.exec("ALTER TABLE tradeflow_migrations RENAME TO tradeflow_migrations_gone")
      assert.deepStrictEqual(yield* health.check, [{ component: "database", reason: "unreachable" }])
    } finally {
      db.close()
    }
  }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "storage.sqlite") }))))
