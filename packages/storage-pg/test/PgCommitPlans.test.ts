/**
 * The statements of processing that find a tradeflow's rows by its reference (`getMany`, `sizes`,
 * and a commit's key and container deletes and stored-hash read) search by the organisation and the
 * reference together on PostgreSQL, in a table without statistics (filled since the last ANALYZE):
 * its planner takes an organisation for 0.5 % of such a table, and with the organisation alone it
 * reads every row of the organisation, which grows with the organisation. The statements are the
 * ones the adapter really sends, captured at the driver, and planned as the tables are (no ANALYZE).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { type Job, JobQueue, TradeflowStore } from "@tradeflow/core"
import { makeMessage, makeTradeflow } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { captured } from "./Captured.js"
import { layerTest } from "./TestDatabase.js"

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Index Cond"?: string
  readonly "Recheck Cond"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

/** The column after `organisation_id` by which each table's rows are searched. */
const searched: Record<string, string> = {
  tradeflows: "reference",
  tradeflow_keys: "tradeflow_reference",
  tradeflow_containers: "tradeflow_reference",
  messages: "hash"
}

/** The scans of a plan that read a table of {@link searched} by anything but both columns. */
const organisationScans = (plan: PlanNode) =>
  nodes(plan).flatMap((node) => {
    const table = node["Relation Name"]
    const column = table === undefined ? undefined : searched[table]
    if (column === undefined || ["Tid Scan", "ModifyTable"].includes(node["Node Type"])) return []
    const condition = node["Index Cond"] ?? node["Recheck Cond"] ?? ""
    return condition.includes(`organisation_id = `) && condition.includes(`${column} = `)
      ? []
      : [`${node["Node Type"]} on ${table} (${condition})`]
  })

layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL processing plans", (it) => {
  it.effect("getMany, sizes and a commit's reads and deletes search by organisation and reference", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* JobQueue.JobQueue
      const store = yield* TradeflowStore.TradeflowStore
      const organisation_id = "org-commit-plans"
      const commit = (references: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const [outcome] = yield* queue.enqueueAll([{
            job: {
              organisation_id,
              environment: "production",
              payload: { _tag: "Delete", reference: null, hard: false },
              received_at: 1_700_000_000_000
            } satisfies Job.NewJob
          }])
          if (outcome?._tag !== "Enqueued") return yield* Effect.die("not enqueued")
          return yield* store.commit({
            job_id: outcome.id,
            organisation_id,
            upserts: references.map((r, i) =>
              makeTradeflow(organisation_id, r, [`MSCU${String(i).padStart(6, "0")}5`])
            ),
            deletes: [],
            messages: references.map((r) => makeMessage(`h-${r}`, { tradeflow_reference: r })),
            result: { count: references.length }
          })
        })
      const many = Array.from({ length: 2_000 }, (_, i) => `TF-${i}`)
      expect(yield* commit(many)).toBe(true)
      const some = many.slice(0, 20)
      const statements = yield* captured(Effect.all([
        store.getMany(organisation_id, some),
        store.sizes(organisation_id, some),
        commit(some)
      ]))
      const explain = (text: string, values: ReadonlyArray<unknown>) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
            `EXPLAIN (FORMAT JSON, COSTS OFF) ${text}`,
            values
          )
          return rows[0]!["QUERY PLAN"][0]!.Plan
        }))
      const relevant = statements.filter((s) =>
        /^\s*(SELECT|DELETE)\b/.test(s.text) &&
        /\b(FROM tradeflows|FROM tradeflow_keys|FROM tradeflow_containers|FROM messages)\b/.test(s.text)
      )
      const wrong: Array<string> = []
      for (const { text, values } of relevant) {
        const found = organisationScans(yield* explain(text, values))
        if (found.length > 0) wrong.push(`${found.join(", ")}\n${text}`)
      }
      expect(relevant.length).toBeGreaterThanOrEqual(5)
      expect(wrong).toEqual([])
    }))
})
