import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { OrganisationStore } from "@tradeflow/core"
import { keyRevocationContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import pg from "pg"
import { vi } from "vitest"
import { PgStorage } from "../src/index.js"
import { layerTest, makeTestSchema } from "./TestDatabase.js"

keyRevocationContract(
  "postgres",
  Effect.map(makeTestSchema(), (test) => {
    const open = () => PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 })
    return [open(), open()] as const
  })
)

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

layer(layerTest, { excludeTestServices: true, timeout: "60 seconds" })("PostgreSQL revocation read", (it) => {
  it.effect("is one statement with an index path on the revocation index of each key table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* OrganisationStore.OrganisationStore
      const { cursor } = yield* store.revokedSince(null)
      const statements = yield* Effect.acquireUseRelease(
        Effect.sync(() => vi.spyOn(pg.Client.prototype as { query: (...args: Array<unknown>) => unknown }, "query")),
        (spy) =>
          Effect.map(
            store.revokedSince(cursor),
            () =>
              spy.mock.calls.flatMap(([text, values]) =>
                typeof text === "string" ? [{ text, values: Array.isArray(values) ? values : [] }] : []
              )
          ),
        (spy) => Effect.sync(() => spy.mockRestore())
      )
      expect(statements.length).toBe(1)
      const plan = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL enable_seqscan = off`
        const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
          `EXPLAIN (FORMAT JSON, COSTS OFF) ${statements[0]!.text}`,
          statements[0]!.values
        )
        return rows[0]!["QUERY PLAN"][0]!.Plan
      }))
      const all = nodes(plan)
      expect(all.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"])).toEqual([])
      expect(all.flatMap((n) => n["Index Name"] === undefined ? [] : [n["Index Name"]])).toEqual([
        "api_keys_revocation",
        "widget_keys_revocation"
      ])
    }))
})
