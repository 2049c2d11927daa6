/**
 * Every statement a commit issues on SQLite that reads or changes the tradeflow tables searches an
 * index by more than the organisation: none scans a table, and none walks every row of the
 * organisation (an index or primary key matched on `organisation_id` alone), which would make each
 * commit slower the more tradeflows the organisation holds. The statements are the ones the adapter
 * really sends, captured at the driver, planned by SQLite on the migrated database.
 */
import { layer } from "@effect/vitest"
import { JobQueue, TradeflowStore } from "@tradeflow/core"
import { commitOf, makeMessage, makeTradeflow } from "@tradeflow/core/test-kit"
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

const tables = /\b(tradeflows|tradeflow_keys|tradeflow_containers|messages|message_heads)\b/

/** A plan line that scans one of the tradeflow tables, or walks an index on the organisation alone. */
const wrong = (line: string) =>
  new RegExp(`^SCAN ${tables.source}`).test(line) || /^SEARCH .* \(organisation_id=\?\)$/.test(line)

const job = (organisation_id: string) => ({
  organisation_id,
  environment: "production" as const,
  payload: { _tag: "Delete" as const, reference: null, hard: true },
  received_at: 1_700_000_000_000
})

layer(SqliteStorage.layer({ filename }), { excludeTestServices: true })("SQLite commit plans", (it) => {
  it.effect("no statement of a commit scans a tradeflow table or walks the whole organisation", () =>
    Effect.gen(function*() {
      const queue = yield* JobQueue.JobQueue
      const store = yield* TradeflowStore.TradeflowStore
      const org = "org-commit-plans"
      const commit = (changes: Partial<TradeflowStore.Commit>) =>
        Effect.flatMap(
          queue.enqueue(job(org)),
          (outcome) => store.commit(commitOf(outcome._tag === "Enqueued" ? outcome.id : -1, org, changes))
        )
      for (let i = 0; i < 20; i++) {
        yield* commit({
          upserts: [makeTradeflow(org, `TF-${i}`, ["MSCU1234565", "CSQU3054383"])],
          messages: [makeMessage(`h-${i}`, { tradeflow_reference: `TF-${i}` })]
        })
      }
      const statements = yield* captured(Effect.all([
        commit({
          upserts: [makeTradeflow(org, "TF-1", ["TGHU0000001"]), makeTradeflow(org, "TF-99", ["MSCU1234565"])],
          messages: [makeMessage("h-1b"), makeMessage("h-99", { tradeflow_reference: "TF-99" })]
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
          const plan = (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...args) as Array<{ detail: string }>)
            .map((r) => r.detail)
          planned.add(source.replace(/\s+/g, " ").slice(0, 40))
          if (plan.some(wrong)) found.push(`${source}\n  ${plan.join("\n  ")}`)
        }
      } finally {
        db.close()
      }
      expect([...planned].filter((s) => s.startsWith("DELETE FROM tradeflow_keys")).length).toBeGreaterThan(0)
      expect(planned.size).toBeGreaterThanOrEqual(10)
      expect(found).toEqual([])
    }))
})
