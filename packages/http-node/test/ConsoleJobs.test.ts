import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { JobQueue, Worker } from "@tradeflow/core"
import { layer as serviceLayer } from "@tradeflow/core/testing"
import { Effect, Fiber, Layer } from "effect"
import { HttpApp, HttpConfig } from "../src/index.js"
import { consoleAuth, consoleToken, destinationLayer, newKey, oceanBasic, type Received, send, uat } from "./Fixture.js"

/** The app over the in-memory service with no background worker: jobs run on `Worker.drain` only. */
const appLayer = HttpApp.layer.pipe(
  Layer.provide(destinationLayer()),
  Layer.provide(HttpConfig.layer({ consoleToken, consoleFailures: { failures: 1_000_000, windowMillis: 60_000 } })),
  Layer.provideMerge(serviceLayer),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

interface Listed {
  readonly id: number
  readonly environment: string
  readonly kind: string
  readonly payload_bytes: number
  readonly created_at: string
  readonly attempts: number
  readonly last_error: string | null
}

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  return r.body as { status: number; detail: string; errors?: ReadonlyArray<{ path: string; message: string }> }
}

const jobs = (organisationId: string, state: string) =>
  Effect.map(
    send("GET", `/console/organisations/${organisationId}/jobs?state=${state}`, { auth: consoleAuth }),
    (r) => {
      assert.strictEqual(r.status, 200, r.text)
      return r.body as ReadonlyArray<Listed>
    }
  )

const retry = (id: number | string) => send("POST", `/console/jobs/${id}/retry`, { auth: consoleAuth })

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

/** Posts one ocean_basic record with the key; answers the id of the job it queued. */
const post = (key: string, reference: string) =>
  Effect.gen(function*() {
    const before = new Set((yield* Effect.flatMap(JobQueue.JobQueue, (q) => q.pending(1_000_000))).map((j) => j.id))
    const r = yield* send("POST", "/downstream", { host: uat, auth: key, json: [oceanBasic(reference)] })
    assert.strictEqual(r.status, 202, r.text)
    const queued = (yield* Effect.flatMap(JobQueue.JobQueue, (q) => q.pending(1_000_000))).filter((j) =>
      !before.has(j.id)
    )
    assert.strictEqual(queued.length, 1)
    return queued[0]!.id
  })

/** Takes the job up `times` times as workers that die at once would (each claim an attempt). */
const crash = (organisationId: string, times: number) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    for (let i = 0; i < times; i++) {
      const { jobs: claimed } = yield* queue.claim({ worker: `crashed-${i}`, limit: 1_000, leaseMillis: 0 })
      assert.isTrue(claimed.some((j) => j.organisation_id === organisationId))
    }
  })

/** Waits until the organisation has a Delete job queued (the request was accepted), then drains. */
const drainDelete = (organisationId: string) =>
  Effect.gen(function*() {
    const queue = yield* JobQueue.JobQueue
    while (
      !(yield* queue.pending(1_000_000)).some((j) =>
        j.organisation_id === organisationId && j.payload._tag === "Delete"
      )
    ) {
      yield* Effect.sleep("5 millis")
    }
    yield* drain
  })

const tradeflowExists = (organisationId: string, reference: string) =>
  Effect.map(
    send("GET", `/console/organisations/${organisationId}/tradeflows/${reference}/download`, { auth: consoleAuth }),
    (r) => r.status === 200
  )

layer(appLayer, { excludeTestServices: true })("console jobs", (it) => {
  describe("a job that crashed its process N times", () => {
    it.effect("is dead, listed without its payload, and its organisation's later job ran; a retry runs it again", () =>
      Effect.gen(function*() {
        const k = yield* newKey("uat")
        const poison = yield* post(k.key, "PO-POISON")
        const later = yield* post(k.key, "PO-LATER")
        yield* crash(k.organisation.id, Worker.defaultMaxAttempts)
        yield* drain
        assert.isTrue(yield* tradeflowExists(k.organisation.id, "PO-LATER"))
        assert.isFalse(yield* tradeflowExists(k.organisation.id, "PO-POISON"))

        const dead = yield* jobs(k.organisation.id, "dead")
        assert.deepStrictEqual(dead.map((j) => Object.keys(j).sort()), [
          ["attempts", "created_at", "environment", "id", "kind", "last_error", "payload_bytes"]
        ])
        const [entry] = dead
        assert.deepStrictEqual(
          [entry?.id, entry?.environment, entry?.kind, entry?.attempts, entry?.last_error],
          [poison, "uat", "upsert", 5, JobQueue.attemptLimitReached(5)]
        )
        assert.isAbove(entry!.payload_bytes, 100)
        assert.isFalse(Number.isNaN(Date.parse(entry!.created_at)))
        assert.deepStrictEqual(yield* jobs(k.organisation.id, "pending"), [])
        assert.notInclude(JSON.stringify(dead), "PO-POISON")

        assert.strictEqual((yield* retry(poison)).status, 202)
        assert.include(problem(yield* retry(poison), 409).detail, `job ${poison} is not dead`)
        assert.include(problem(yield* retry(later), 409).detail, "not dead")
        assert.deepStrictEqual(yield* jobs(k.organisation.id, "dead"), [])
        assert.deepStrictEqual(
          (yield* jobs(k.organisation.id, "pending")).map((j) => [j.id, j.attempts, j.last_error]),
          [
            [poison, 0, null]
          ]
        )
        yield* drain
        assert.isTrue(yield* tradeflowExists(k.organisation.id, "PO-POISON"))
        assert.deepStrictEqual(yield* jobs(k.organisation.id, "pending"), [])
      }))

    it.effect("deleting a tradeflow, or every one, is not held up by a dead job queued before it", () =>
      Effect.gen(function*() {
        const k = yield* newKey("uat")
        yield* post(k.key, "PO-KEPT")
        yield* drain
        const poison = yield* post(k.key, "PO-DEAD")
        yield* crash(k.organisation.id, Worker.defaultMaxAttempts)
        const removal = yield* send("DELETE", "/downstream/tradeflows/PO-KEPT", { host: uat, auth: k.key }).pipe(
          Effect.fork
        )
        yield* drainDelete(k.organisation.id)
        const removed = yield* Fiber.join(removal)
        assert.deepStrictEqual([removed.status, removed.body], [200, { status: "deactivated", count: 1 }])
        const all = yield* send("DELETE", "/downstream/tradeflows/*?hard=true", { host: uat, auth: k.key }).pipe(
          Effect.fork
        )
        yield* drainDelete(k.organisation.id)
        const wiped = yield* Fiber.join(all)
        assert.deepStrictEqual([wiped.status, wiped.body], [200, { status: "deleted", count: 1 }])
        assert.deepStrictEqual((yield* jobs(k.organisation.id, "dead")).map((j) => j.id), [poison])
        assert.isFalse(yield* tradeflowExists(k.organisation.id, "PO-KEPT"))
      }))
  })

  describe("GET /console/organisations/:id/jobs and POST /console/jobs/:id/retry", () => {
    it.effect("unknown organisations and jobs are 404; a bad state or limit is 400 naming it; the console token is required", () =>
      Effect.gen(function*() {
        const k = yield* newKey("production")
        problem(yield* send("GET", "/console/organisations/nope/jobs?state=dead", { auth: consoleAuth }), 404)
        for (const query of ["", "?state=failed", "?state=dead&limit=0", "?state=dead&limit=1001"]) {
          const body = problem(
            yield* send("GET", `/console/organisations/${k.organisation.id}/jobs${query}`, { auth: consoleAuth }),
            400
          )
          assert.match(body.detail, query.includes("limit") ? /limit/ : /state/)
        }
        problem(yield* retry(2_000_000_000), 404)
        problem(yield* retry("abc"), 404)
        problem(yield* send("GET", `/console/organisations/${k.organisation.id}/jobs?state=dead`), 401)
        problem(yield* send("POST", "/console/jobs/1/retry"), 401)
        const limited = yield* send("GET", `/console/organisations/${k.organisation.id}/jobs?state=pending&limit=1`, {
          auth: consoleAuth
        })
        assert.deepStrictEqual([limited.status, limited.body], [200, []])
      }))

    it.effect("OpenAPI documents both endpoints", () =>
      Effect.gen(function*() {
        const doc = yield* send("GET", "/openapi.json")
        const paths = (doc.body as { paths: Record<string, Record<string, { description?: string }>> }).paths
        assert.include(paths["/console/organisations/{id}/jobs"]?.["get"]?.description ?? "", "dead")
        assert.include(paths["/console/jobs/{id}/retry"]?.["post"]?.description ?? "", "409")
      }))
  })
})
