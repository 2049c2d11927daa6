/**
 * The statements of processing that find a tradeflow's rows by its reference (`getMany`, `sizes`,
 * and a commit's key and container deletes and stored-hash read, the target index's deletes, the
 * hard deletes of targets and raw events, `TrackingStore.rawEvents`) search by the organisation and
 * the reference together on PostgreSQL, in a table without statistics (filled since the last
 * ANALYZE): its planner takes an organisation for 0.5 % of such a table, and with the organisation
 * alone it reads every row of the organisation, which grows with the organisation. A claim of tracked
 * targets searches the due index and leases by primary key, without statistics and with them. A
 * subscription is reached by its key or its tradeflow, and the stale search walks the subscriptions
 * oldest first and probes each target by its key, without statistics and with them. The targets
 * about references search the partial index of each kind of reference by source and reference,
 * without statistics and with them. The statements
 * are the ones the adapter really sends, captured at the driver, and planned as the tables are (no
 * ANALYZE, unless said).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { type Job, JobQueue, TrackingStore, TradeflowStore } from "@tradeflow/core"
import {
  askEveryKind,
  commitOf,
  makeMessage,
  makeRawEvent,
  makeSubscription,
  makeTarget,
  makeTracked,
  makeTrackedOfEveryKind,
  makeTradeflow,
  referenceKinds
} from "@tradeflow/core/test-kit"
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

/** Enqueues a job for the organisation and commits it with these changes; answers whether it committed. */
const commitTo = (organisation_id: string, changes: Partial<TradeflowStore.Commit>) =>
  Effect.gen(function*() {
    const [outcome] = yield* (yield* JobQueue.JobQueue).enqueueAll([{ job: deleteJob(organisation_id) }])
    if (outcome?._tag !== "Enqueued") return yield* Effect.die("not enqueued")
    return yield* (yield* TradeflowStore.TradeflowStore).commit(commitOf(outcome.id, organisation_id, changes))
  })

/** The plan PostgreSQL makes of a statement as the tables are now (without costs). */
const planOf = (text: string, values: ReadonlyArray<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.map(
      sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON, COSTS OFF) ${text}`,
        values
      ),
      (rows) => rows[0]!["QUERY PLAN"][0]!.Plan
    )))

layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL processing plans", (it) => {
  it.effect("getMany, sizes and a commit's reads and deletes search by organisation and reference", () =>
    Effect.gen(function*() {
      const store = yield* TradeflowStore.TradeflowStore
      const organisation_id = "org-commit-plans"
      const commit = (
        references: ReadonlyArray<string>,
        options: { readonly tracked?: boolean; readonly deletes?: ReadonlyArray<string> } = {}
      ) =>
        commitTo(organisation_id, {
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
      const relevant = statements.filter((s) =>
        /^\s*(SELECT|DELETE)\b/.test(s.text) &&
        /\bFROM "?(tradeflows|tradeflow_keys|tradeflow_containers|messages|tracking_targets|tracking_events)\b/.test(
          s.text
        )
      )
      const wrong: Array<string> = []
      for (const { text, values } of relevant) {
        const found = organisationScans(yield* planOf(text, values))
        if (found.length > 0) wrong.push(`${found.join(", ")}\n${text}`)
      }
      expect(relevant.filter((s) => /\bFROM "?tracking_(targets|events)\b/.test(s.text)).length).toBe(4)
      expect(relevant.length).toBeGreaterThanOrEqual(9)
      expect(wrong).toEqual([])
    }))

  it.effect("a claim of tracked targets searches the due index and reaches any other row by its key, with statistics or without", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tracking = yield* TrackingStore.TrackingStore
      const organisation_id = "org-claim-plans"
      expect(
        yield* commitTo(organisation_id, {
          upserts: Array.from({ length: 2_000 }, (_, i) =>
            makeTracked(organisation_id, `TF-${i}`, [
              makeTarget("carrier-a", `MSCU${i}`, i % 100 === 0 ? -1e12 + i : 1e15 + i),
              makeTarget("carrier-a", `TGHU${i}`, null)
            ]))
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
      const explain = planOf(text, values)
      expect(problems(yield* explain)).toEqual([])
      yield* sql`ANALYZE tracking_targets`
      expect(problems(yield* explain)).toEqual([])
    }))
})

/**
 * A schema of its own, so that neither tracking table has statistics. With statistics the planner
 * may rightly scan both for the stale search: it reads every live subscription older than the
 * stale ones it answers, all of them when none is stale.
 */
layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL subscription plans", (it) => {
  it.effect("a subscription is reached by its key or its tradeflow; the stale search walks subscriptions oldest first and probes targets by key, without statistics", () =>
    Effect.gen(function*() {
      const tracking = yield* TrackingStore.TrackingStore
      const organisation_id = "org-subscription-plans"
      const targets = Array.from(
        { length: 2_000 },
        (_, i) => makeTarget("carrier-a", `MSCU${i}`, i % 10 === 0 ? null : 1e15 + i)
      )
      expect(
        yield* commitTo(organisation_id, {
          upserts: targets.map((t, i) => makeTracked(organisation_id, `TF-${i}`, [t]))
        })
      )
        .toBe(true)
      expect(yield* commitTo(organisation_id, { deletes: Array.from({ length: 100 }, (_, i) => `TF-${i * 20 + 5}`) }))
        .toBe(true)
      const subscriptions = targets.map((t, i) =>
        makeSubscription(organisation_id, `TF-${i}`, t.id, { subscription_id: `sub-${i}`, created_at: i })
      )
      yield* Effect.forEach(subscriptions, tracking.putSubscription, { discard: true, concurrency: 4 })
      const statements = yield* captured(Effect.all([
        tracking.subscription("carrier-a", "sub-2"),
        tracking.subscriptionsOf(organisation_id, "TF-3"),
        tracking.staleSubscriptions(100),
        tracking.removeSubscription("carrier-a", "sub-4")
      ]))
      const sent = statements.filter((s) => /\btracking_subscriptions\b/.test(s.text))
      expect(sent).toHaveLength(4)
      const [byKey, byTradeflow, stale, remove] = sent
      /** The nodes that read `index` with these columns as equalities. */
      const by = (plan: ReadonlyArray<PlanNode>, index: string, columns: ReadonlyArray<string>) =>
        plan.filter((n) =>
          n["Index Name"] === index && columns.every((c) => (n["Index Cond"] ?? "").includes(`${c} = `))
        )
      /** What is wrong with a plan: a Seq Scan or a Bitmap Heap Scan of either table, or a Sort. */
      const scans = (plan: ReadonlyArray<PlanNode>) =>
        plan.filter((n) =>
          n["Node Type"] === "Sort" ||
          ["Seq Scan", "Bitmap Heap Scan"].includes(n["Node Type"]) &&
            ["tracking_subscriptions", "tracking_targets"].includes(n["Relation Name"] ?? "")
        ).map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""}`)
      const plans = yield* Effect.forEach(
        [byKey!, byTradeflow!, stale!, remove!],
        (s) => Effect.map(planOf(s.text, s.values), nodes)
      )
      expect(plans.map(scans)).toEqual([[], [], [], []])
      expect(by(plans[0]!, "tracking_subscriptions_pkey", ["source", "subscription_id"])).toHaveLength(1)
      expect(by(plans[1]!, "tracking_subscriptions_tradeflow", ["organisation_id", "tradeflow_reference"]))
        .toHaveLength(1)
      expect(plans[2]!.filter((n) => n["Index Name"] === "tracking_subscriptions_created")).toHaveLength(1)
      expect(by(plans[2]!, "tracking_targets_pkey", ["organisation_id", "tradeflow_reference", "target_id"]))
        .toHaveLength(1)
      expect(plans[2]!.filter((n) => n["Relation Name"] !== undefined)).toHaveLength(2)
      expect(by(plans[3]!, "tracking_subscriptions_pkey", ["source", "subscription_id"])).toHaveLength(1)
    }))
})

/** A schema of its own, so that tracking_targets has no statistics until the test analyzes it. */
layer(layerTest, { excludeTestServices: true, timeout: "120 seconds" })("PostgreSQL target search plans", (it) => {
  it.effect("the targets about references search the index of each kind by source and reference, with statistics or without", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const organisation_id of ["org-about-plans-a", "org-about-plans-b"]) {
        expect(
          yield* commitTo(organisation_id, {
            upserts: Array.from({ length: 1_000 }, (_, i) => makeTrackedOfEveryKind(organisation_id, i))
          })
        ).toBe(true)
      }
      const statements = yield* captured(askEveryKind)
      const sent = statements.filter((s) => /^SELECT .* FROM tracking_targets WHERE source = /.test(s.text))
      expect(sent).toHaveLength(4)
      /** The kind indexes a plan searches by source and reference, and whatever else it does to tracking_targets. */
      const reads = (plan: ReadonlyArray<PlanNode>) => {
        const byReference = (n: PlanNode) =>
          referenceKinds.some((kind) =>
            n["Index Name"] === `tracking_targets_${kind}` &&
            ["source = ", `${kind} = `].every((c) => (n["Index Cond"] ?? "").includes(c))
          )
        return {
          searched: plan.filter(byReference).map((n) => n["Index Name"]),
          other: plan.filter((n) =>
            n["Index Name"] === undefined
              ? n["Relation Name"] === "tracking_targets" && n["Node Type"] !== "Bitmap Heap Scan"
              : !byReference(n)
          ).map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""} ${n["Index Name"] ?? ""}`)
        }
      }
      const expected = [referenceKinds, ...referenceKinds.map((kind) => [kind])].map((searched) => ({
        searched: searched.map((kind) => `tracking_targets_${kind}`),
        other: []
      }))
      const explain = Effect.forEach(sent, (s) => Effect.map(planOf(s.text, s.values), (plan) => reads(nodes(plan))))
      expect(yield* explain).toEqual(expected)
      yield* sql`ANALYZE tracking_targets`
      expect(yield* explain).toEqual(expected)
    }))
})
