import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AutomationStore, DeliveryStore, JobQueue, TradeflowStore } from "@tradeflow/core"
import { deliveryContract, freshId, makeAutomation } from "@tradeflow/core/test-kit"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-deliveries-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

deliveryContract("sqlite", SqliteStorage.layer({ filename: join(root, "contract", "storage.sqlite") }))

const at = 1_700_000_000_000

/** Commits `count` SHIPMENT_CHANGE messages of each reference through a fresh job, with `automationIds` in the outbox. */
const commitMessages = (
  org: string,
  references: ReadonlyArray<string>,
  count: number,
  automationIds: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    const store = yield* TradeflowStore.TradeflowStore
    const job = yield* queue.enqueue({
      organisation_id: org,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: true },
      received_at: at
    })
    if (job._tag !== "Enqueued") return yield* Effect.die("not enqueued")
    return yield* store.commit({
      job_id: job.id,
      organisation_id: org,
      upserts: [],
      deletes: [],
      messages: references.flatMap((reference) =>
        Array.from({ length: count }, (_, i) => ({
          hash: freshId("h"),
          type: "SHIPMENT_CHANGE",
          tradeflow_reference: reference,
          container_reference: null,
          generated_at: at + i,
          body: JSON.stringify({ reference, i })
        }))
      ),
      result: { count: 0 },
      outbox: {
        automations: automationIds.map((id) => ({
          id,
          format: "message" as const,
          types: ["SHIPMENT_CHANGE" as const]
        })),
        documents: new Map(),
        at
      }
    })
  })

describe("SqliteStorage deliveries", () => {
  it.effect("0004 and 0006 create the outbox tables and their indexes", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return {
          migrations: yield* sql<
            { readonly migration_id: number }
          >`SELECT migration_id FROM tradeflow_migrations ORDER BY 1`,
          indexes: yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'index' AND tbl_name IN ('deliveries', 'delivery_attempts') AND sql IS NOT NULL ORDER BY name`
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "schema", "db.sqlite") })))
      expect(seen).toEqual({
        migrations: expect.arrayContaining([4, 6].map((migration_id) => ({ migration_id }))),
        indexes: [
          "deliveries_automation",
          "deliveries_dead",
          "deliveries_due",
          "deliveries_head",
          "deliveries_pending",
          "deliveries_tradeflow",
          "delivery_attempts_at",
          "delivery_attempts_log"
        ]
          .map((name) => ({ name }))
      })
    }))

  it.effect("two connections to one file never claim the same delivery, and heads keep their order", () =>
    Effect.gen(function*() {
      const filename = join(root, "shared", "db.sqlite")
      const org = freshId("org")
      const automation = makeAutomation(org, { enabled: true })
      const references = Array.from({ length: 6 }, (_, i) => `TF-${i}`)
      const planned = yield* Effect.gen(function*() {
        yield* (yield* AutomationStore.AutomationStore).put(automation)
        expect(yield* commitMessages(org, references, 3, [automation.id])).toBe(true)
        return yield* (yield* DeliveryStore.DeliveryStore).list(automation.id, 100)
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(planned.map((d) => d.seq)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1))

      const delivered = yield* Effect.gen(function*() {
        const a = yield* Layer.build(SqliteStorage.layer({ filename }))
        const b = yield* Layer.build(SqliteStorage.layer({ filename }))
        const work = (ctx: typeof a, worker: string) =>
          Effect.gen(function*() {
            const store = yield* DeliveryStore.DeliveryStore
            const claimed = yield* store.claim({ worker, limit: 4, leaseMillis: 60_000, now: at })
            const recorded = yield* store.record(claimed.map((d) => ({
              delivery_id: d.id,
              claim: d.claim,
              at,
              status: "delivered" as const,
              response_status: 200,
              error: null,
              response_body: null,
              retry_at: null,
              disable: null
            })))
            expect(recorded.every((r) => r)).toBe(true)
            return claimed
          }).pipe(Effect.provide(ctx))
        const got: Array<{ readonly id: number; readonly tradeflow_reference: string; readonly body: string }> = []
        for (let round = 0; round < 5; round++) {
          const [x, y] = yield* Effect.all([work(a, "a"), work(b, "b")], { concurrency: "unbounded" })
          got.push(...x, ...y)
        }
        return got
      }).pipe(Effect.scoped)
      expect(delivered.map((d) => d.id).sort((x, y) => x - y)).toEqual(planned.map((d) => d.id))
      for (const reference of references) {
        const ofReference = delivered.filter((d) => d.tradeflow_reference === reference)
        expect(ofReference.map((d) => JSON.parse(d.body).i)).toEqual([0, 1, 2])
      }
    }))

  it.effect("a batch records exactly what its results recorded one at a time would", () =>
    Effect.gen(function*() {
      const run = (batched: boolean) =>
        Effect.gen(function*() {
          const org = freshId("org")
          const automation = makeAutomation(org, { enabled: true })
          yield* (yield* AutomationStore.AutomationStore).put(automation)
          yield* commitMessages(org, ["TF-1", "TF-2", "TF-3"], 1, [automation.id])
          const store = yield* DeliveryStore.DeliveryStore
          const [x, y, z] = yield* store.claim({ worker: "w", limit: 10, leaseMillis: 60_000, now: at })
          if (x === undefined || y === undefined || z === undefined) return yield* Effect.die("not claimed")
          const result = (d: typeof x, status: "delivered" | "failed", offset: number, claim = d.claim) => ({
            delivery_id: d.id,
            claim,
            at: at + offset,
            status,
            response_status: status === "delivered" ? 204 : 500,
            error: status === "delivered" ? null : "HTTP 500",
            response_body: null,
            retry_at: status === "delivered" ? null : at + 60_000,
            disable: null
          })
          const results = [
            result(x, "failed", 1),
            result(x, "delivered", 2),
            result(y, "delivered", 3, y.claim + 1),
            result(y, "delivered", 4),
            result(z, "failed", 5)
          ]
          const answers = batched
            ? yield* store.record(results)
            : yield* Effect.forEach(results, (r) => Effect.map(store.record([r]), (a) => a[0]))
          const deliveries = (yield* store.list(automation.id, 10)).map((
            d
          ) => [d.tradeflow_reference, d.status, d.attempt, d.retries, d.schedule_started_at, d.next_attempt_at])
          const log = (yield* store.log(automation.id, 10)).map((
            e
          ) => [e.attempt, e.status, e.response_status, e.error, e.at])
          const after = Option.map(
            yield* (yield* AutomationStore.AutomationStore).get(automation.id),
            (a) => [a.enabled, a.failing_since, a.updated_at]
          )
          return { answers, deliveries, log, after }
        })
      const batched = yield* run(true)
      expect(batched.answers).toEqual([true, false, false, true, true])
      expect(batched.after).toEqual(Option.some([true, at + 5, at + 5]))
      expect(batched).toEqual(yield* run(false))
    }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "batch", "db.sqlite") }))))

  it.effect("a commit that fails after planning writes no delivery and signals nothing", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      const automation = makeAutomation(org, { enabled: true })
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const deliveries = yield* DeliveryStore.DeliveryStore
        yield* (yield* AutomationStore.AutomationStore).put(automation)
        yield* sql`CREATE TRIGGER refuse_deliveries BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'refused'); END`
        const error = yield* Effect.flip(commitMessages(org, ["TF-1"], 2, [automation.id]))
        return {
          error: error.operation,
          pending: (yield* (yield* JobQueue.JobQueue).pending(10)).length,
          deliveries: yield* deliveries.list(automation.id, 10),
          claimed: yield* deliveries.claim({ worker: "w", limit: 10, leaseMillis: 1_000, now: at })
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "atomic", "db.sqlite") })))
      expect(seen).toEqual({ error: "TradeflowStore.commit", pending: 1, deliveries: [], claimed: [] })
    }))

  it.effect("deliveries and their log survive a reopen; retry makes a dead one due again", () =>
    Effect.gen(function*() {
      const filename = join(root, "durable", "db.sqlite")
      const org = freshId("org")
      const automation = makeAutomation(org, { enabled: true })
      const id = yield* Effect.gen(function*() {
        yield* (yield* AutomationStore.AutomationStore).put(automation)
        yield* commitMessages(org, ["TF-1"], 1, [automation.id])
        const store = yield* DeliveryStore.DeliveryStore
        const [claimed] = yield* store.claim({ worker: "w", limit: 1, leaseMillis: 1_000, now: at })
        if (claimed === undefined) return yield* Effect.die("nothing claimed")
        yield* store.record([{
          delivery_id: claimed.id,
          claim: claimed.claim,
          at: at + 1,
          status: "dead",
          response_status: 410,
          error: "gone",
          response_body: "bye",
          retry_at: null,
          disable: "410 Gone"
        }])
        return claimed.id
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))

      const seen = yield* Effect.gen(function*() {
        const store = yield* DeliveryStore.DeliveryStore
        const before = yield* store.get(id)
        const log = yield* store.log(automation.id, 10)
        const stored = yield* (yield* AutomationStore.AutomationStore).get(automation.id)
        const retried = yield* store.retry(id, at + 5)
        return { before, log, stored, retried, after: yield* store.get(id) }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(Option.map(seen.before, (d) => [d.status, d.attempt, d.retries, d.schedule_started_at])).toEqual(
        Option.some(["dead", 1, 1, at + 1])
      )
      expect(seen.log).toEqual([{
        id,
        message_hash: Option.getOrThrow(seen.before).message_hash,
        attempt: 1,
        status: "dead",
        response_status: 410,
        error: "gone",
        response_body: "bye",
        at: at + 1,
        test: false,
        tradeflow_reference: "TF-1",
        type: "SHIPMENT_CHANGE"
      }])
      expect(Option.map(seen.stored, (a) => [a.enabled, a.disabled_reason, a.failing_since])).toEqual(
        Option.some([false, "410 Gone", at + 1])
      )
      expect(seen.retried).toBe("retried")
      expect(Option.map(seen.after, (d) => [d.status, d.attempt, d.retries, d.schedule_started_at, d.next_attempt_at]))
        .toEqual(Option.some(["pending", 1, 0, null, at + 5]))
    }))
})
