import { Migrator, SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Tradeflow, TradeflowKey, WidgetSearch } from "@tradeflow/core"
import { makeTradeflow } from "@tradeflow/core/test-kit"
import { Effect, Redacted, Schema } from "effect"
import { migrations, migrationsTable } from "../src/internal/migrations.js"
import { makeTestSchema, openInstance } from "./TestDatabase.js"

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

describe("tradeflow_keys on PostgreSQL", () => {
  it.live("the migration fills the key index from the tradeflows already stored", () =>
    Effect.gen(function*() {
      const test = yield* makeTestSchema()
      const stored = [...Array.from({ length: 1_201 }, (_, i) => tradeflowAt("org-a", i)), tradeflowAt("org-b", 7)]
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({ loader: PgMigrator.fromRecord(before), table: migrationsTable })
        for (const t of stored) {
          yield* sql`INSERT INTO tradeflows (organisation_id, reference, active, doc)
            VALUES (${t.organisation_id}, ${t.reference}, true, ${encode(t)})`
        }
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(test.url) })))

      const { sql, store } = yield* openInstance(test)
      const [rows] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM tradeflow_keys`
      expect(rows?.n).toBe(stored.reduce((n, t) => n + TradeflowKey.ofTradeflow(t).length, 0))
      for (const query of ["TF-1200", "cont0000007", "BL-1", "bk-8", "bk-9", "TF-7", "nothing"]) {
        for (const org of ["org-a", "org-b"]) {
          const expected = stored.filter((t) => t.organisation_id === org && WidgetSearch.matches(t, query))
            .map((t) => t.reference).sort()
          const got = (yield* store.lookup(org, TradeflowKey.ofQuery(query))).map((c) => c.reference).sort()
          expect(got, `${org} ${query}`).toEqual(expected)
        }
      }
    }).pipe(Effect.scoped), 60_000)
})
