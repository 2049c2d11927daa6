/**
 * The statements of processing that find a tradeflow's rows by its reference (`getMany`, `sizes`,
 * and a commit's key and container deletes and stored-hash read, the target index's deletes, the
 * hard deletes of targets and raw events, `TrackingStore.rawEvents`) search by the organisation and
 * the reference together on PostgreSQL, in a table without statistics (filled since the last
 * ANALYZE): its planner takes an organisation for 0.5 % of such a table, and with the organisation
 * alone it reads every row of the organisation, which grows with the organisation. A claim of tracked
 * targets searches the due index and leases by primary key, without statistics and with them. The
 * statements are the ones the adapter really sends, captured at the driver, and planned as the tables
 * are (no ANALYZE, unless said).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { type Job, JobQueue, TrackingStore, TradeflowStore } from "@tradeflow/core"
import { makeMessage, makeRawEvent, makeTarget, makeTracked, makeTradeflow } from "@tradeflow/core/test-kit"
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

/** The columns after `organisation_id` by which each table's rows are searched (messages: by hash, or by tradeflow to delete). */
const searched: Record<string, ReadonlyArray<string>> = {
  tradeflows: ["reference"],
  tradeflow_keys: ["tradeflow_reference"],
  tradeflow_containers: ["tradeflow_reference"],
  messages: ["hash", "tradeflow_reference"],
  tracking_targets: ["tradeflow_reference"],
  tracking_events: ["tradeflow_reference"]
}

/** The scans of a plan that read a table of {@link searched} by anything but both columns. */
const organisationScans = (plan: PlanNode) =>
  nodes(plan).flatMap((node) => {
    const table = node["Relation Name"]
    const columns = table === undefined ? undefined : searched[table]
    if (columns === undefined || ["Tid Scan", "ModifyTable"].includes(node["Node Type"])) return []
    const condition = node["Index Cond"] ?? node["Recheck Cond"] ?? ""
    return condition.includes(`organisation_id = `) && columns.some((column) => condition.includes(`${column} = `))
      ? []
      : [`${node["Node Type"]} on ${table} (${condition})`]
  })

const deleteJob = (organisation_id: string): Job.NewJob => ({
  organisation_id,
  environment: "production",
  payload: { _tag: "Delete", reference: null, hard: false },
  received_at: 1_700_000_000_000
})

layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL processing plans", (it) => {
  it.effect("getMany, sizes and a commit's reads and deletes search by organisation and reference", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* JobQueue.JobQueue
      const store = yield* TradeflowStore.TradeflowStore
      const organisation_id = "org-commit-plans"
      const commit = (
        references: ReadonlyArray<string>,
        options: { readonly tracked?: boolean; readonly deletes?: ReadonlyArray<string> } = {}
      ) =>
        Effect.gen(function*() {
          const [outcome] = yield* queue.enqueueAll([{ job: deleteJob(organisation_id) }])
          if (outcome?._tag !== "Enqueued") return yield* Effect.die("not enqueued")
          return yield* store.commit({
            job_id: outcome.id,
            organisation_id,
            upserts: references.map((r, i) => {
              const container = `MSCU${String(i).padStart(6, "0")}5`
              return options.tracked === true
                ? makeTracked(organisation_id, r, [makeTarget("carrier-a", container, 1e15 + i)], [container])
                : makeTradeflow(organisation_id, r, [container])
            }),
            deletes: options.deletes ?? [],
            messages: references.map((r) => makeMessage(`h-${r}`, { tradeflow_reference: r })),
            result: { count: references.length },
            raw_events: options.tracked === true ? references.map((r) => makeRawEvent(r)) : []
          })
        })
      const many = Array.from({ length: 2_000 }, (_, i) => `TF-${i}`)
      expect(yield* commit(many, { tracked: true })).toBe(true)
      const some = many.slice(0, 20)
      const untracked = yield* captured(commit(many.slice(20, 40)))
      expect(untracked.filter((s) => /\btracking_/.test(s.text))).toEqual([])
      const statements = yield* captured(Effect.all([
        store.getMany(organisation_id, some),
        store.sizes(organisation_id, some),
        commit(some),
        commit(many.slice(40, 60), { tracked: true, deletes: many.slice(60, 70) }),
        Effect.flatMap(TrackingStore.TrackingStore, (tracking) => tracking.rawEvents(organisation_id, "TF-1", 10))
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
        /\bFROM "?(tradeflows|tradeflow_keys|tradeflow_containers|messages|tracking_targets|tracking_events)\b/.test(
          s.text
        )
      )
      const wrong: Array<string> = []
      for (const { text, values } of relevant) {
        const found = organisationScans(yield* explain(text, values))
        if (found.length > 0) wrong.push(`${found.join(", ")}\n${text}`)
      }
      expect(relevant.filter((s) => /\bFROM "?tracking_(targets|events)\b/.test(s.text)).length).toBe(4)
      expect(relevant.length).toBeGreaterThanOrEqual(9)
      expect(wrong).toEqual([])
    }))

  it.effect("a claim of tracked targets searches the due index and reaches any other row by its key, with statistics or without", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* JobQueue.JobQueue
      const store = yield* TradeflowStore.TradeflowStore
      const tracking = yield* TrackingStore.TrackingStore
      const organisation_id = "org-claim-plans"
      const [outcome] = yield* queue.enqueueAll([{ job: deleteJob(organisation_id) }])
      if (outcome?._tag !== "Enqueued") return yield* Effect.die("not enqueued")
      expect(
        yield* store.commit({
          job_id: outcome.id,
          organisation_id,
          upserts: Array.from({ length: 2_000 }, (_, i) =>
            makeTracked(organisation_id, `TF-${i}`, [
              makeTarget("carrier-a", `MSCU${i}`, i % 100 === 0 ? -1e12 + i : 1e15 + i),
              makeTarget("carrier-a", `TGHU${i}`, null)
            ])),
          deletes: [],
          messages: [],
          result: { count: 0 }
        })
      ).toBe(true)
      const statements = yield* captured(tracking.claim({ now: -1e12 + 10_000, limit: 5, leaseMillis: 1_000 }))
      const claims = statements.filter((s) => /\bUPDATE tracking_targets\b/.test(s.text))
      expect(claims).toHaveLength(1)
      const { text, values } = claims[0]!
      /** Due rows are searched by next check on the due index, any other row by its whole key; nothing is scanned. */
      const problems = (plan: PlanNode) => {
        const all = nodes(plan)
        const byDue = (n: PlanNode) =>
          n["Index Name"] === "tracking_targets_due" && (n["Index Cond"] ?? "").includes("next_check_at <=")
        const byKey = (n: PlanNode) =>
          n["Index Name"] === "tracking_targets_pkey" &&
          ["organisation_id = ", "tradeflow_reference = ", "target_id = "].every((c) =>
            (n["Index Cond"] ?? "").includes(c)
          )
        return [
          ...all.filter((n) => n["Relation Name"] === "tracking_targets" && n["Node Type"] === "Seq Scan")
            .map((n) => `Seq Scan on ${n["Relation Name"]}`),
          ...all.filter((n) => n["Index Name"]?.startsWith("tracking_targets_") === true && !byDue(n) && !byKey(n))
            .map((n) => `${n["Node Type"]} by ${n["Index Name"]} (${n["Index Cond"]})`),
          ...all.some(byDue) ? [] : ["no search of tracking_targets_due by next_check_at"]
        ]
      }
      const explain = sql.withTransaction(Effect.map(
        sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
          `EXPLAIN (FORMAT JSON, COSTS OFF) ${text}`,
          values
        ),
        (rows) => rows[0]!["QUERY PLAN"][0]!.Plan
      ))
      expect(problems(yield* explain)).toEqual([])
      yield* sql`ANALYZE tracking_targets`
      expect(problems(yield* explain)).toEqual([])
    }))
})
