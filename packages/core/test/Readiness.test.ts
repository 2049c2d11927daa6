import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Ref, Scope, TestClock } from "effect"
import * as Readiness from "../src/Readiness.js"
import * as StorageHealth from "../src/StorageHealth.js"

const withHealth = (check: StorageHealth.StorageHealth["Type"]["check"]) =>
  Readiness.layer.pipe(Layer.provide(Layer.succeed(StorageHealth.StorageHealth, { check })))

const report = Effect.flatMap(Readiness.Readiness, (r) => r.report)

describe("Readiness", () => {
  it.effect("a loop is missing until it starts, running while it runs, and stopped once it dies or its scope closes", () =>
    Effect.gen(function*() {
      const start = yield* Deferred.make<void>()
      const die = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      yield* Readiness.background(
        "doomed",
        Deferred.await(start),
        Effect.zipRight(Deferred.await(die), Effect.die("boom"))
      )
        .pipe(Scope.extend(scope))
      yield* Readiness.background("steady", Deferred.await(start), Effect.never).pipe(Scope.extend(scope))
      assert.deepStrictEqual(yield* report, {
        ready: false,
        missing: [{ component: "doomed", reason: "not started yet" }, {
          component: "steady",
          reason: "not started yet"
        }],
        running: []
      })
      yield* Deferred.succeed(start, undefined)
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* report, { ready: true, missing: [], running: ["doomed", "steady"] })
      yield* Deferred.succeed(die, undefined)
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* report, {
        ready: false,
        missing: [{ component: "doomed", reason: "stopped" }],
        running: ["steady"]
      })
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual((yield* report).missing.map((m) => m.reason), ["stopped", "stopped"])
    }).pipe(Effect.provide(withHealth(Effect.succeed([])))))

  it.effect("without a Readiness in the context a loop simply runs", () =>
    Effect.gen(function*() {
      const ran = yield* Deferred.make<void>()
      yield* Effect.scoped(Effect.zipRight(
        Readiness.background("alone", undefined, Deferred.succeed(ran, undefined)),
        Deferred.await(ran)
      ))
    }))

  it.effect("the storage is asked at most once a second, however many probes ask; a silent one is missing after 2 s", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make(0)
      const counting = Effect.as(Ref.update(asked, (n) => n + 1), [])
      yield* Effect.gen(function*() {
        yield* Effect.all(Array.from({ length: 20 }, () => report), { concurrency: "unbounded" })
        assert.strictEqual(yield* Ref.get(asked), 1)
        yield* TestClock.adjust("1001 millis")
        yield* report
        assert.strictEqual(yield* Ref.get(asked), 2)
      }).pipe(Effect.provide(withHealth(counting)))
      const silent = yield* Effect.fork(report.pipe(Effect.provide(withHealth(Effect.never))))
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual((yield* Fiber.join(silent)).missing, [{
        component: "database",
        reason: "no answer within 2s"
      }])
    }))
})
