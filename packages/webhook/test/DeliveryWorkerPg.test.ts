import { assert, describe, it } from "@effect/vitest"
import { AutomationStore, type Delivery, DeliveryStore, JobQueue, TradeflowStore } from "@tradeflow/core"
import { freshId, makeAutomation, makeMessage } from "@tradeflow/core/test-kit"
import { Effect, Layer, Option } from "effect"
import { layerTest } from "../../storage-pg/test/TestDatabase.js"
import { DeliveryWorker, Ssrf, WebhookClient } from "../src/index.js"
import * as LocalReceiver from "./LocalReceiver.js"

/** The worker on PostgreSQL, reaching the local receiver, with every batch it records (`record`, `recordAndClaim`) kept in `batches`. */
const TestLayer = (batches: Array<ReadonlyArray<Delivery.AttemptResult>>) =>
  DeliveryWorker.layer({ background: false }).pipe(
    Layer.provide(WebhookClient.layer({ allowPrivate: true })),
    Layer.provide(Ssrf.layer({ allowPrivate: true, allowHttp: true })),
    Layer.provide(Layer.effect(
      DeliveryStore.DeliveryStore,
      Effect.map(DeliveryStore.DeliveryStore, (inner) => ({
        ...inner,
        record: (results: ReadonlyArray<Delivery.AttemptResult>) => {
          batches.push(results)
          return inner.record(results)
        },
        recordAndClaim: (results: ReadonlyArray<Delivery.AttemptResult>, options: DeliveryStore.ClaimOptions) => {
          if (results.length > 0) batches.push(results)
          return inner.recordAndClaim(results, options)
        }
      }))
    )),
    Layer.provideMerge(layerTest)
  )

/** Stores an enabled automation of a fresh organisation posting to `url`, and commits one message for it. */
const tenant = (url: string, now: number) =>
  Effect.gen(function*() {
    const org = freshId("org")
    const automation = makeAutomation(org, { enabled: true, url })
    yield* (yield* AutomationStore.AutomationStore).put(automation)
    const job = yield* (yield* JobQueue.JobQueue).enqueue({
      organisation_id: org,
      environment: "production",
      payload: { _tag: "Delete", reference: null, hard: false },
      received_at: now
    })
    if (job._tag !== "Enqueued") return yield* Effect.dieMessage("not enqueued")
    yield* (yield* TradeflowStore.TradeflowStore).commit({
      job_id: job.id,
      organisation_id: org,
      upserts: [],
      deletes: [],
      messages: [makeMessage(freshId("h"), { type: "SHIPMENT_CHANGE" })],
      result: { count: 1 },
      outbox: {
        automations: [{ id: automation.id, format: "message", types: ["SHIPMENT_CHANGE"] }],
        documents: new Map(),
        at: now
      }
    })
    return automation
  })

describe("DeliveryWorker on PostgreSQL", () => {
  it.live(
    "a receiver answering a NUL byte costs a healthy tenant in the same batch nothing: delivered once, recorded once",
    () => {
      const batches: Array<ReadonlyArray<Delivery.AttemptResult>> = []
      return Effect.gen(function*() {
        const receiver = yield* LocalReceiver.make((_, request) =>
          request.path === "/nul" ? { status: 500, body: "down\u0000for maintenance" } : { status: 204 }
        )
        const now = Date.now()
        const poisoned = yield* tenant(receiver.url("/nul"), now)
        const healthy = yield* tenant(receiver.url("/ok"), now)
        const worker = yield* DeliveryWorker.DeliveryWorker
        const store = yield* DeliveryStore.DeliveryStore

        yield* worker.drain
        yield* worker.drain
        assert.deepStrictEqual(batches.map((b) => b.length), [2])
        assert.deepStrictEqual(receiver.received.map((r) => r.path).sort(), ["/nul", "/ok"])

        const [ok] = yield* store.list(healthy.id, 10)
        assert.deepStrictEqual([ok?.status, ok?.attempt], ["delivered", 1])
        assert.deepStrictEqual((yield* store.log(healthy.id, 10)).map((e) => [e.status, e.response_status]), [[
          "delivered",
          204
        ]])

        const [failed] = yield* store.list(poisoned.id, 10)
        assert.deepStrictEqual([failed?.status, failed?.attempt], ["pending", 1])
        assert.isAbove(failed?.next_attempt_at ?? 0, now)
        assert.deepStrictEqual(
          (yield* store.log(poisoned.id, 10)).map((e) => [e.status, e.response_status, e.error, e.response_body]),
          [["failed", 500, "HTTP 500", "down\uFFFDfor maintenance"]]
        )
        const automations = yield* AutomationStore.AutomationStore
        assert.isTrue(Option.exists(yield* automations.get(poisoned.id), (a) => a.failing_since !== null))
        assert.isTrue(Option.exists(yield* automations.get(healthy.id), (a) => a.failing_since === null))
      }).pipe(Effect.provide(TestLayer(batches)), Effect.scoped)
    },
    30_000
  )
})
