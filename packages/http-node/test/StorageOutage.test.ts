import { NodeHttpServer } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { JobQueue, Locations, Service, Storage, StorageError, TrackingConfig } from "@tradeflow/core"
import { Effect, Layer } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"
import { consoleToken, destinationLayer, newKey, oceanBasic, send, uat } from "./Fixture.js"

/** The memory storage, whose job queue has lost its database: every enqueue fails. */
const outage = Layer.effect(
  JobQueue.JobQueue,
  Effect.map(JobQueue.JobQueue, (queue) =>
    JobQueue.JobQueue.of(JobQueue.withEnqueue({
      ...queue,
      enqueueAll: () =>
        Effect.fail(new StorageError.StorageError({ operation: "JobQueue.enqueueAll", cause: "connection terminated" }))
    })))
).pipe(Layer.provideMerge(Storage.layerMemory))

const appLayer = HttpApp.layer.pipe(
  Layer.provide(destinationLayer()),
  Layer.provide(HttpConfig.layer({ consoleToken })),
  Layer.provideMerge(
    Service.layer({ background: false }).pipe(
      Layer.provideMerge(Layer.mergeAll(outage, Locations.layerBuiltin, TrackingConfig.layer()))
    )
  ),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

layer(appLayer, { excludeTestServices: true })("a storage outage", (it) => {
  it.effect("answers 503 with Retry-After and a problem, never a 500, and queues nothing", () =>
    Effect.gen(function*() {
      const key = yield* newKey("uat")
      const r = yield* send("POST", "/v3/downstream/tradeflows", {
        host: uat,
        auth: key.key,
        json: [oceanBasic("OUT-1")]
      })
      assert.strictEqual(r.status, 503, r.text)
      assert.strictEqual(r.headers["retry-after"], "1")
      assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
      assert.deepInclude(r.body as object, { status: 503, title: "Service Unavailable" })
      const upstream = yield* send("GET", "/v3/upstream", { host: uat, auth: key.key })
      assert.deepStrictEqual([upstream.status, upstream.body], [200, []])
    }))

  it.effect("the OpenAPI document declares the 503 on every operation", () =>
    Effect.gen(function*() {
      const doc = (yield* send("GET", "/openapi.json")).body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
      }
      const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => [`${method} ${path}`, Object.keys(op.responses)] as const)
      )
      assert.isAbove(operations.length, 10)
      for (const [name, statuses] of operations.filter(([name]) => !name.endsWith("/health"))) {
        assert.include(statuses, "503", name)
      }
    }))
})
