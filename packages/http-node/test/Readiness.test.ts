import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Locations, Service, Storage, StorageHealth, TrackingConfig } from "@tradeflow/core"
import { Deferred, Effect, Layer } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"
import { consoleToken, destinationLayer, makeAppLayer, production, send, uat } from "./Fixture.js"

/** The app over memory storage whose loops start once `startAfter` completes, with `health` as the storage's. */
const appLayer = (
  startAfter: Effect.Effect<void>,
  health: StorageHealth.StorageHealth["Type"] = { check: Effect.succeed([]) }
) =>
  HttpApp.layer.pipe(
    Layer.provide(destinationLayer()),
    Layer.provide(HttpConfig.layer({ consoleToken })),
    Layer.provideMerge(Service.layer({ startAfter })),
    Layer.provide(Layer.mergeAll(
      Storage.layerMemory.pipe(Layer.merge(Layer.succeed(StorageHealth.StorageHealth, health))),
      Locations.layerBuiltin,
      TrackingConfig.layer()
    )),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )

const problem = (body: unknown) => body as { detail: string; errors: Array<{ path: string; message: string }> }

describe("GET /ready", () => {
  layer(makeAppLayer(), { excludeTestServices: true })("on a running server", (it) => {
    it.effect("answers 200 on every host and prefix, naming the loops running", () =>
      Effect.gen(function*() {
        for (const prefix of ["", "/v3"]) {
          for (const host of [production, uat, "elsewhere.example"]) {
            const r = yield* send("GET", `${prefix}/ready`, { host })
            assert.strictEqual(r.status, 200, r.text)
            assert.deepStrictEqual(r.body, { status: "ready", running: ["job worker", "scheduler", "retention"] })
          }
        }
      }))
  })

  layer(makeAppLayer({ background: false }), { excludeTestServices: true })("without background loops", (it) => {
    it.effect("is ready: a process that runs no worker expects none", () =>
      Effect.gen(function*() {
        const r = yield* send("GET", "/ready")
        assert.deepStrictEqual([r.status, r.body], [200, { status: "ready", running: [] }])
      }))
  })

  it.live("answers 503 until the loops have started, naming each missing one, then 200", () =>
    Effect.gen(function*() {
      const start = yield* Deferred.make<void>()
      yield* Effect.gen(function*() {
        const before = yield* send("GET", "/ready")
        assert.strictEqual(before.status, 503, before.text)
        assert.strictEqual(before.headers["retry-after"], "1")
        assert.deepStrictEqual(problem(before.body).errors, [
          { path: "job worker", message: "not started yet" },
          { path: "scheduler", message: "not started yet" },
          { path: "retention", message: "not started yet" }
        ])
        assert.strictEqual((yield* send("GET", "/health")).status, 200)
        yield* Deferred.succeed(start, undefined)
        let after = yield* send("GET", "/ready")
        for (let i = 0; i < 100 && after.status !== 200; i++) {
          yield* Effect.sleep("10 millis")
          after = yield* send("GET", "/ready")
        }
        assert.strictEqual(after.status, 200, after.text)
      }).pipe(Effect.provide(appLayer(Deferred.await(start))))
    }))

  it.live(
    "answers 503 when the storage is unhealthy or does not answer within 2 seconds",
    () =>
      Effect.gen(function*() {
        const broken = yield* send("GET", "/ready").pipe(
          Effect.provide(appLayer(Effect.void, {
            check: Effect.succeed([{ component: "migrations", reason: "the database has 3 of the 4 migrations" }])
          }))
        )
        assert.strictEqual(broken.status, 503)
        assert.deepStrictEqual(problem(broken.body).errors, [
          { path: "migrations", message: "the database has 3 of the 4 migrations" }
        ])
        assert.include(problem(broken.body).detail, "migrations the database has 3 of the 4 migrations")
        const silent = yield* send("GET", "/ready").pipe(Effect.provide(appLayer(Effect.void, { check: Effect.never })))
        assert.strictEqual(silent.status, 503)
        assert.deepStrictEqual(problem(silent.body).errors, [{ path: "database", message: "no answer within 2s" }])
      }),
    20_000
  )
})
