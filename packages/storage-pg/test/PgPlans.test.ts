/**
 * Every statement the upstream feed issues on PostgreSQL can be served by index scans in seq order,
 * for every combination of the filters the API offers and every form of request (first page, page
 * after a cursor, first page with `since`, the array form with and without `since`): planned with
 * sequential scans and sorts disabled, no plan holds a Seq Scan of the message tables, a Sort or a
 * SubPlan, and each walk (an index scan with `seq >`) is on the heads when `latest` (only then), on
 * an index that takes the filters as equalities (all of them on messages; on the heads the
 * tradeflow when there is one, else the container and the type). The statements are the ones the
 * adapter really sends, captured at the driver.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Upstream } from "@tradeflow/core"
import { commitMessages } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import { captured } from "./Captured.js"
import { layerTest } from "./TestDatabase.js"

const filterCombinations: ReadonlyArray<Omit<Upstream.UpstreamFilters, "organisation_id">> = [undefined, "TF-1"]
  .flatMap((tradeflow) =>
    [undefined, "MSCU1234565"].flatMap((container) =>
      [undefined, ["CONTAINER_MILESTONE"], ["CONTAINER_MILESTONE", "BASIC_STATUS"]].flatMap((types) =>
        [false, true].map((latest) => ({
          ...(tradeflow === undefined ? {} : { tradeflow }),
          ...(container === undefined ? {} : { container }),
          ...(types === undefined ? {} : { types }),
          latest
        }))
      )
    )
  )

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Index Cond"?: string
  readonly "Parent Relationship"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

/**
 * The columns the walked index must take for `filters`: every filter on messages; on the heads
 * (`latest`) the tradeflow when there is one (the stored caps bound its heads), else the container
 * and the type.
 */
const indexed = (filters: Omit<Upstream.UpstreamFilters, "organisation_id">): ReadonlyArray<string> => {
  const given = [
    ...(filters.tradeflow === undefined ? [] : ["tradeflow_reference"]),
    ...(filters.container === undefined ? [] : ["container_reference"]),
    ...(filters.types === undefined ? [] : ["type"])
  ]
  return filters.latest === true && filters.tradeflow !== undefined ? ["tradeflow_reference"] : given
}

/** What is wrong with a plan of a statement issued for `filters` (see the file's comment). */
const problems = (plan: PlanNode, filters: Omit<Upstream.UpstreamFilters, "organisation_id">) =>
  nodes(plan).flatMap((node) => {
    const table = node["Relation Name"]
    if (node["Node Type"].includes("Sort") || node["Parent Relationship"] === "SubPlan") return [node["Node Type"]]
    if (table !== "messages" && table !== "message_heads") return []
    if (node["Node Type"] === "Seq Scan") return [`Seq Scan on ${table}`]
    const condition = node["Index Cond"] ?? ""
    if (!condition.includes("(seq >")) return []
    const onHeads = table === "message_heads"
    return onHeads === (filters.latest === true) &&
        indexed(filters).every((column) => condition.includes(`(${column} = `))
      ? []
      : [`walk on ${table} by ${node["Index Name"]} (${condition})`]
  })

layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL upstream plans", (it) => {
  it.effect("each statement of every filter combination and request form has an index path in seq order", () =>
    Effect.gen(function*() {
      const organisation_id = "org-plans"
      yield* commitMessages(
        organisation_id,
        ["BASIC_STATUS", "CONTAINER_MILESTONE", "SHIPMENT_CHANGE", "LOCATION_UPDATE"].flatMap((type, t) =>
          [1, 2, 3].map((n) => ({
            hash: `h-${t}-${n}`,
            type,
            tradeflow_reference: `TF-${n}`,
            container_reference: type === "CONTAINER_MILESTONE" ? "MSCU1234565" : null,
            generated_at: Date.now() - n * 1000,
            body: JSON.stringify({ t, n })
          }))
        )
      )
      const sql = yield* SqlClient.SqlClient
      const upstream = yield* Effect.provide(Upstream.Upstream, Upstream.layer())
      const explain = (text: string, values: ReadonlyArray<unknown>) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL enable_seqscan = off`
          yield* sql`SET LOCAL enable_sort = off`
          const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
            `EXPLAIN (FORMAT JSON, COSTS OFF) ${text}`,
            values
          )
          return rows[0]!["QUERY PLAN"][0]!.Plan
        }))
      const wrong: Array<string> = []
      let planned = 0
      for (const filters of filterCombinations) {
        const query = { organisation_id, ...filters }
        const { next_cursor } = yield* upstream.page({ ...query, per_page: 1 })
        const statements = yield* captured(Effect.all([
          upstream.page({ ...query, per_page: 2 }),
          upstream.page({ ...query, per_page: 2, cursor: next_cursor }),
          upstream.page({ ...query, per_page: 2, since: Date.now() - 2500 }),
          upstream.pageBodies({ ...query, per_page: 2 }),
          upstream.pageBodies({ ...query, per_page: 2, cursor: next_cursor }),
          upstream.list(query),
          upstream.list({ ...query, since: Date.now() - 1500 })
        ]))
        for (const { text, values } of statements.filter((s) => /\b(messages|message_heads)\b/.test(s.text))) {
          planned++
          const plan = yield* explain(text, values)
          const found = problems(plan, filters)
          if (found.length > 0) {
            wrong.push(`${JSON.stringify(filters)}: ${found.join(", ")}\n${text}\n${JSON.stringify(plan)}`)
          }
        }
      }
      expect(planned).toBeGreaterThanOrEqual(filterCombinations.length * 5 * 2)
      expect(wrong).toEqual([])
    }))
})
