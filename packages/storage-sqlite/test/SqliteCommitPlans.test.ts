/**
 * Every statement a commit issues on SQLite that reads or changes the tradeflow tables (the target
 * index and raw events of tracking among them) searches an index by more than the organisation: none
 * scans a table, and none walks every row of the organisation (an index or primary key matched on
 * `organisation_id` alone), which would make each commit slower the more tradeflows the organisation
 * holds. A commit of untracked tradeflows sends nothing to the tracking tables. A claim of tracked
 * targets searches the due index and leases by primary key. A subscription is reached by its key or
 * its tradeflow, and the stale search walks the subscriptions oldest first and probes each target by
 * primary key. The targets about references search the partial index of each kind of reference by
 * source and reference. The statements are the ones the adapter really sends, captured at the driver, planned
 * by SQLite on the migrated database.
 */
import { layer } from "@effect/vitest"
import { JobQueue, TrackingStore, TradeflowStore } from "@tradeflow/core"
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
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect } from "vitest"
import { SqliteStorage } from "../src/index.js"
import { captured } from "./Captured.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-commit-plans-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const filename = join(root, "commit-plans.sqlite")

const tables =
  /\b(tradeflows|tradeflow_keys|tradeflow_containers|messages|message_heads|tracking_targets|tracking_events)\b/

/** A plan line that scans one of the tradeflow tables, or walks an index on the organisation alone. */
const wrong = (line: string) =>
  new RegExp(`^SCAN ${tables.source}`).test(line) || /^SEARCH .* \(organisation_id=\?\)$/.test(line)

const job = (organisation_id: string) => ({
  organisation_id,
  environment: "production" as const,
  payload: { _tag: "Delete" as const, reference: null, hard: true },
  received_at: 1_700_000_000_000
})

/** Enqueues a job for the organisation and commits it with these changes; answers whether it committed. */
const commitTo = (org: string, changes: Partial<TradeflowStore.Commit>) =>
  Effect.gen(function*() {
    const outcome = yield* (yield* JobQueue.JobQueue).enqueue(job(org))
    return yield* (yield* TradeflowStore.TradeflowStore).commit(
      commitOf(outcome._tag === "Enqueued" ? outcome.id : -1, org, changes)
    )
  })

/** The plan SQLite makes of a statement on the database as it is now. */
const planOf = (db: InstanceType<typeof Database>, source: string, args: ReadonlyArray<unknown>) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail)

layer(SqliteStorage.layer({ filename }), { excludeTestServices: true })("SQLite commit plans", (it) => {
  it.effect("no statement of a commit scans a tradeflow table or walks the whole organisation", () =>
    Effect.gen(function*() {
      const store = yield* TradeflowStore.TradeflowStore
      const org = "org-commit-plans"
      const commit = (changes: Partial<TradeflowStore.Commit>) => commitTo(org, changes)
      const tracked = (reference: string, offset: number) =>
        makeTracked(org, reference, [
          makeTarget("carrier-a", "MSCU1234565", 1_000 + offset),
          makeTarget("carrier-a", "CSQU3054383", 5_000 + offset)
        ])
      for (let i = 0; i < 20; i++) {
        yield* commit({
          upserts: [
            i % 2 === 0 ? tracked(`TF-${i}`, i) : makeTradeflow(org, `TF-${i}`, ["MSCU1234565", "CSQU3054383"])
          ],
          messages: [makeMessage(`h-${i}`, { tradeflow_reference: `TF-${i}` })],
          raw_events: [makeRawEvent(`TF-${i}`)]
        })
      }
      const untracked = yield* captured(commit({
        upserts: [makeTradeflow(org, "TF-1", ["TGHU0000001"]), makeTradeflow(org, "TF-98", ["MSCU1234565"])],
        messages: [makeMessage("h-1a"), makeMessage("h-98", { tradeflow_reference: "TF-98" })]
      }))
      expect(untracked.filter((s) => /\btracking_/.test(s.source))).toEqual([])
      expect(untracked.filter((s) => /\btradeflow_keys\b/.test(s.source)).length).toBeGreaterThan(0)
      const statements = yield* captured(Effect.all([
        commit({
          upserts: [makeTradeflow(org, "TF-1", ["TGHU0000001"]), makeTradeflow(org, "TF-99", ["MSCU1234565"])],
          messages: [makeMessage("h-1b"), makeMessage("h-99", { tradeflow_reference: "TF-99" })]
        }),
        commit({
          upserts: [tracked("TF-4", 1), tracked("TF-97", 2)],
          raw_events: [makeRawEvent("TF-4"), makeRawEvent("TF-97")]
        }),
        commit({ deletes: ["TF-2", "TF-3"] }),
        store.getMany(org, ["TF-1", "TF-4"]),
        store.lookup(org, ["MSCU1234565"]),
        store.sizes(org, ["TF-1"])
      ]))
      const db = new Database(filename, { readonly: true })
      const found: Array<string> = []
      const planned = new Set<string>()
      try {
        for (const { args, source } of statements.filter((s) => tables.test(s.source))) {
          const plan = planOf(db, source, args)
          planned.add(source.replace(/\s+/g, " ").slice(0, 40))
          if (plan.some(wrong)) found.push(`${source}\n  ${plan.join("\n  ")}`)
        }
      } finally {
        db.close()
      }
      expect([...planned].filter((s) => s.startsWith("DELETE FROM tradeflow_keys")).length).toBeGreaterThan(0)
      for (
        const table of [
          "DELETE FROM tracking_targets",
          "DELETE FROM \"tracking_targets\"",
          "DELETE FROM \"tracking_events\""
        ]
      ) {
        expect([...planned].filter((s) => s.startsWith(table))).toHaveLength(1)
      }
      expect(planned.size).toBeGreaterThanOrEqual(13)
      expect(found).toEqual([])
    }))

  it.effect("a claim of tracked targets searches the due index and leases by primary key; raw events are read by tradeflow", () =>
    Effect.gen(function*() {
      const tracking = yield* TrackingStore.TrackingStore
      const org = "org-claim-plans"
      yield* commitTo(org, {
        upserts: Array.from(
          { length: 200 },
          (_, i) => makeTracked(org, `TF-${i}`, [makeTarget("carrier-a", `MSCU${i}`, i < 10 ? -1e12 + i : 1e15 + i)])
        ),
        raw_events: [makeRawEvent("TF-1")]
      })
      const statements = yield* captured(Effect.all([
        tracking.claim({ now: -1e12 + 5, limit: 3, leaseMillis: 1_000, exclude: ["paused"] }),
        tracking.rawEvents(org, "TF-1", 10)
      ]))
      const db = new Database(filename, { readonly: true })
      const plans = new Map<string, ReadonlyArray<string>>()
      try {
        for (const { args, source } of statements.filter((s) => /\btracking_/.test(s.source))) {
          plans.set(
            source.replace(/\s+/g, " ").slice(0, 30),
            planOf(db, source, args)
          )
        }
      } finally {
        db.close()
      }
      const claim = plans.get("UPDATE tracking_targets SET le")
      expect(claim).toBeDefined()
      expect(claim).toContain("SEARCH d USING INDEX tracking_targets_due (next_check_at>? AND next_check_at<?)")
      expect(claim).toContain(
        "SEARCH tracking_targets USING PRIMARY KEY (organisation_id=? AND tradeflow_reference=? AND target_id=?)"
      )
      expect(claim!.filter((line) => /^SCAN (d|tracking_targets)\b/.test(line))).toEqual([])
      const read = plans.get("SELECT tradeflow_reference, so")
      expect(read?.filter((line) => line.startsWith("SEARCH tracking_events"))).toEqual([
        "SEARCH tracking_events USING INDEX sqlite_autoindex_tracking_events_1 (organisation_id=? AND tradeflow_reference=?)"
      ])
    }))

  it.effect("the targets about references search the index of each kind by source and reference, never scan tracking_targets", () =>
    Effect.gen(function*() {
      for (const org of ["org-about-plans-a", "org-about-plans-b"]) {
        expect(
          yield* commitTo(org, {
            upserts: Array.from({ length: 100 }, (_, i) => makeTrackedOfEveryKind(org, i))
          })
        ).toBe(true)
      }
      const statements = yield* captured(askEveryKind)
      const sent = statements.filter((s) => /^SELECT .* FROM tracking_targets WHERE source = /.test(s.source))
      expect(sent).toHaveLength(4)
      const db = new Database(filename, { readonly: true })
      const plans: Array<ReadonlyArray<string>> = []
      try {
        for (const { args, source } of sent) plans.push(planOf(db, source, args))
      } finally {
        db.close()
      }
      const search = (kind: (typeof referenceKinds)[number]) =>
        `SEARCH tracking_targets USING INDEX tracking_targets_${kind} (source=? AND ${kind}=?)`
      expect(plans).toEqual([
        [
          "MULTI-INDEX OR",
          "INDEX 1",
          search("equipment"),
          "INDEX 2",
          search("booking"),
          "INDEX 3",
          search("bill_of_lading")
        ],
        ...referenceKinds.map((kind) => [search(kind)])
      ])
    }))

  it.effect("a subscription is reached by its key or its tradeflow; the stale search walks subscriptions oldest first and probes targets by primary key", () =>
    Effect.gen(function*() {
      const tracking = yield* TrackingStore.TrackingStore
      const org = "org-subscription-plans"
      const targets = Array.from(
        { length: 200 },
        (_, i) => makeTarget("carrier-a", `MSCU${i}`, i % 10 === 0 ? null : 1e15 + i)
      )
      expect(yield* commitTo(org, { upserts: targets.map((t, i) => makeTracked(org, `TF-${i}`, [t])) })).toBe(true)
      expect(yield* commitTo(org, { deletes: Array.from({ length: 10 }, (_, i) => `TF-${i * 10 + 5}`) })).toBe(true)
      const subscriptions = targets.map((t, i) =>
        makeSubscription(org, `TF-${i}`, t.id, { subscription_id: `${org}-${i}`, created_at: i })
      )
      yield* Effect.forEach(subscriptions, tracking.putSubscription, { discard: true })
      const statements = yield* captured(Effect.all([
        tracking.putSubscription({ ...subscriptions[1]!, secret: "cmVwbGFjZWQ=" }),
        tracking.subscription("carrier-a", subscriptions[2]!.subscription_id),
        tracking.subscriptionsOf(org, "TF-3"),
        tracking.staleSubscriptions(5),
        tracking.removeSubscription("carrier-a", subscriptions[4]!.subscription_id)
      ]))
      /** Which method sent a statement, by what it says. */
      const method = (source: string) =>
        /^INSERT/.test(source)
          ? "put"
          : /^DELETE/.test(source)
          ? "remove"
          : /LEFT JOIN/.test(source)
          ? "stale"
          : /WHERE s\.source =/.test(source)
          ? "byKey"
          : "byTradeflow"
      const sent = statements.filter((s) => /\btracking_subscriptions\b/.test(s.source))
      expect(sent.map((s) => method(s.source)).sort()).toEqual(["byKey", "byTradeflow", "put", "remove", "stale"])
      const db = new Database(filename, { readonly: true })
      const plans = new Map<string, ReadonlyArray<string>>()
      try {
        for (const { args, source } of sent) {
          plans.set(
            method(source),
            planOf(db, source, args)
          )
        }
      } finally {
        db.close()
      }
      expect(plans.get("byKey")).toEqual(["SEARCH s USING PRIMARY KEY (source=? AND subscription_id=?)"])
      expect(plans.get("byTradeflow")).toEqual([
        "SEARCH s USING INDEX tracking_subscriptions_tradeflow (organisation_id=? AND tradeflow_reference=?)"
      ])
      // the one walk: tracking_subscriptions_created from its start in created_at order, no sort, until the limit
      expect(plans.get("stale")).toEqual([
        "SCAN s USING INDEX tracking_subscriptions_created",
        "SEARCH t USING PRIMARY KEY (organisation_id=? AND tradeflow_reference=? AND target_id=?) LEFT-JOIN"
      ])
      expect(plans.get("remove")).toEqual([
        "SEARCH tracking_subscriptions USING PRIMARY KEY (source=? AND subscription_id=?)"
      ])
    }))
})
