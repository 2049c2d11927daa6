import { Migrator, SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Tradeflow, TradeflowKey, TradeflowStore, WidgetSearch } from "@tradeflow/core"
import { makeTradeflow } from "@tradeflow/core/test-kit"
import { SqlStorage } from "@tradeflow/storage-sql"
import { Effect, Schema } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"
import { migrations, migrationsTable } from "../src/internal/migrations.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-keys-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const keysMigration = Object.keys(migrations).find((id) => id.endsWith("_tradeflow_keys"))!
const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < keysMigration))

const encode = Schema.encodeSync(Schema.parseJson(Tradeflow.Tradeflow))

const tradeflowAt = (organisation_id: string, i: number): Tradeflow.Tradeflow => ({
  ...makeTradeflow(organisation_id, `TF-${i}`, [`CONT${String(i % 700).padStart(7, "0")}`]),
  bill_of_lading_references: [`bl-${i % 3}`],
  booking_references: i % 2 === 0 ? [`Bk-${i}`] : [],
  created_at: i % 5,
  updated_at: i
})

describe("tradeflow_keys on SQLite", () => {
  it.effect("the migration fills the key index from the tradeflows already stored", () =>
    Effect.gen(function*() {
      const filename = join(root, "backfill", "db.sqlite")
      mkdirSync(join(root, "backfill"), { recursive: true })
      const stored = [...Array.from({ length: 1_201 }, (_, i) => tradeflowAt("org-a", i)), tradeflowAt("org-b", 7)]
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({ loader: SqliteMigrator.fromRecord(before), table: migrationsTable })
        for (const t of stored) {
          yield* sql`INSERT INTO tradeflows (organisation_id, reference, active, doc)
            VALUES (${t.organisation_id}, ${t.reference}, 1, ${encode(t)})`
        }
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* TradeflowStore.TradeflowStore
        const [rows] = yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM tradeflow_keys`
        expect(rows?.n).toBe(stored.reduce((n, t) => n + TradeflowKey.ofTradeflow(t).length, 0))
        for (const query of ["TF-1200", "cont0000007", "BL-1", "bk-8", "bk-9", "TF-7", "nothing"]) {
          for (const org of ["org-a", "org-b"]) {
            const expected = stored.filter((t) => t.organisation_id === org && WidgetSearch.matches(t, query))
              .map((t) => t.reference).sort()
            const got = (yield* store.lookup(org, TradeflowKey.ofQuery(query))).map((c) => c.reference).sort()
            expect(got, `${org} ${query}`).toEqual(expected)
          }
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
    }))

  it.effect("a lookup searches the covering key index of tradeflow_keys, one probe per key, and scans nothing", () =>
    Effect.gen(function*() {
      const plan = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly detail: string }>`EXPLAIN QUERY PLAN ${
          SqlStorage.lookupStatement(sql, "org-a", TradeflowKey.ofQuery("MSCU1234565"))
        }`
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "plan.sqlite") })))
      expect(plan.map((row) => row.detail)).toEqual([
        "SEARCH tradeflow_keys USING COVERING INDEX tradeflow_keys_key (organisation_id=? AND key=?)"
      ])
    }))
})
