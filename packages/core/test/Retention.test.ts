import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { JobQueue } from "../src/JobQueue.js"
import * as Retention from "../src/Retention.js"
import { RetentionStore } from "../src/RetentionStore.js"
import * as Storage from "../src/Storage.js"

const hour = 3_600_000

/** Retention over the memory storage, its RetentionStore counting every call and the rows each deleted. */
const counted = (options: Retention.RetentionOptions) => {
  const calls: Array<{ readonly kind: string; readonly limit: number; readonly deleted: number }> = []
  const spy = Layer.effect(
    RetentionStore,
    Effect.map(RetentionStore, (store) =>
      RetentionStore.of({
        prune: (kind, before, limit) =>
          Effect.tap(
            store.prune(kind, before, limit),
            (deleted) => Effect.sync(() => calls.push({ kind, limit, deleted }))
          )
      }))
  )
  const layer = Retention.layer(options).pipe(Layer.provide(spy), Layer.provideMerge(Storage.layerMemory))
  return { calls, layer }
}

const enqueueKeys = (count: number, receivedAt: number) =>
  Effect.flatMap(JobQueue, (queue) =>
    Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      queue.enqueue(
        {
          organisation_id: "org",
          environment: "production",
          payload: { _tag: "Delete", reference: null, hard: false },
          received_at: receivedAt
        },
        { key: `key-${receivedAt}-${i}`, request_hash: "h", response: "{}" }
      )))

describe("Retention", () => {
  it.effect("prunes in batches of batchSize until a batch comes back short, each kind by its own age", () =>
    Effect.gen(function*() {
      const { calls, layer } = counted({ batchSize: 3, background: false })
      yield* Effect.gen(function*() {
        yield* enqueueKeys(7, 0)
        yield* enqueueKeys(2, 2 * hour)
        yield* TestClock.setTime(25 * hour)
        const retention = yield* Retention.Retention
        const pruned = yield* retention.prune
        assert.strictEqual(pruned.idempotency_keys, 7)
        assert.deepStrictEqual(
          calls.filter((c) => c.kind === "idempotency_keys").map((c) => [c.limit, c.deleted]),
          [[3, 3], [3, 3], [3, 1]]
        )
        assert.isTrue(calls.every((c) => c.limit === 3))
        const replay = yield* enqueueKeys(1, 25 * hour)
        assert.strictEqual(replay[0]?._tag, "Enqueued")
        assert.strictEqual((yield* retention.prune).idempotency_keys, 0)
        yield* TestClock.setTime(27 * hour)
        assert.strictEqual((yield* retention.prune).idempotency_keys, 2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("in the background, every interval, with the documented defaults", () =>
    Effect.gen(function*() {
      const { calls, layer } = counted({})
      yield* Effect.gen(function*() {
        yield* enqueueKeys(2, 0)
        yield* TestClock.adjust(23 * hour)
        assert.strictEqual(calls.filter((c) => c.kind === "idempotency_keys").reduce((n, c) => n + c.deleted, 0), 0)
        yield* TestClock.adjust(2 * hour)
        assert.strictEqual(calls.filter((c) => c.kind === "idempotency_keys").reduce((n, c) => n + c.deleted, 0), 2)
        assert.deepStrictEqual(
          [
            Retention.defaultAges.idempotencyKeys,
            Retention.defaultAges.doneJobs,
            Retention.defaultAges.deliveryAttempts,
            Retention.defaultAges.dead
          ]
            .map((d) => Duration.toMillis(d) / hour),
          [24, 7 * 24, 30 * 24, 30 * 24]
        )
      }).pipe(Effect.provide(layer))
    }))
})
