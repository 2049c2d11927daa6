import { assert, describe, it } from "@effect/vitest"
import { DcsaTntScheme, type Schemes } from "@tradeflow/core"
import { Deferred, Effect, Fiber, Ref } from "effect"
import { makeAppLayer, newKey, send } from "./Fixture.js"

/** The built-in dcsa-tnt scheme, telling when it starts to decode. */
const watched = (started: Deferred.Deferred<void>): Schemes.Scheme => ({
  decode: (payload) => Effect.zipRight(Deferred.succeed(started, undefined), DcsaTntScheme.scheme.decode(payload))
})

/** 10,000 events with 100 document references each that are not objects: about 3.9 MB. */
const hostile = JSON.stringify(Array.from({ length: 10_000 }, () => ({
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2024-03-05T09:40:00+01:00",
  equipmentEventTypeCode: "LOAD",
  equipmentReference: "CSQU3054383",
  documentReferences: Array(100).fill(1)
})))

describe("POST /downstream/scheme/dcsa-tnt with a large hostile body", () => {
  it.effect("does not hold the server: a GET /health sent while it is decoded is answered before it is refused", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      yield* Effect.gen(function*() {
        const k = yield* newKey("production")
        const done = yield* Ref.make<ReadonlyArray<string>>([])
        const finished = (name: string) => Ref.update(done, (names) => [...names, name])
        const big = yield* Effect.fork(
          Effect.tap(
            send("POST", "/downstream/scheme/dcsa-tnt", { auth: k.key, text: hostile }),
            () => finished("dcsa-tnt")
          )
        )
        yield* Deferred.await(started)
        const health = yield* send("GET", "/health")
        yield* finished("health")
        const refused = yield* Fiber.join(big)
        assert.strictEqual(health.status, 200)
        assert.strictEqual(refused.status, 422, refused.text)
        assert.strictEqual((refused.body as { errors: ReadonlyArray<unknown> }).errors.length, 101)
        assert.deepStrictEqual(yield* Ref.get(done), ["health", "dcsa-tnt"])
      }).pipe(Effect.provide(makeAppLayer({}, { "dcsa-tnt": watched(started) })))
    }))
})
