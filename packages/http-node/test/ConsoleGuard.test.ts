import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as FailureLimit from "../src/internal/failureLimit.js"
import { consoleAuth, makeAppLayer, type Received, send } from "./Fixture.js"

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  return r.body as { detail: string }
}

describe("FailureLimit", () => {
  it("refuses a client after its failures in a window until the window ends, and no other client", () => {
    const limit = FailureLimit.make({ failures: 3, windowMillis: 60_000, maxClients: 100 })
    for (let i = 0; i < 3; i++) {
      assert.isUndefined(limit.retryAfter("a", 1_000))
      limit.fail("a", 1_000 + i)
    }
    assert.strictEqual(limit.retryAfter("a", 1_500), 60)
    assert.strictEqual(limit.retryAfter("a", 60_500), 1)
    assert.isUndefined(limit.retryAfter("b", 1_500))
    assert.isUndefined(limit.retryAfter("a", 61_000))
  })

  it.prop(
    "a client is refused exactly while its window (from its first failure) holds `failures` failures, until it ends",
    [fc.array(fc.record({ client: fc.integer({ min: 0, max: 11 }), gap: fc.integer({ min: 0, max: 5_000 }) }), {
      maxLength: 400,
      size: "max"
    })],
    ([events]) => {
      // 12 clients, fewer than maxClients: none is forgotten, so every answer is checked against the model.
      const options = { failures: 4, windowMillis: 60_000, maxClients: 16 }
      const limit = FailureLimit.make(options)
      const windows = new Map<string, { start: number; count: number }>()
      let now = 0
      for (const { client, gap } of events) {
        now += gap
        const id = String(client)
        const model = windows.get(id)
        const live = model !== undefined && now - model.start < options.windowMillis ? model : undefined
        const expected = live !== undefined && live.count >= options.failures
          ? Math.max(1, Math.ceil((live.start + options.windowMillis - now) / 1000))
          : undefined
        const wait = limit.retryAfter(id, now)
        assert.strictEqual(wait, expected, `client ${id} at ${now}`)
        if (wait !== undefined) continue
        limit.fail(id, now)
        if (live === undefined) windows.set(id, { start: now, count: 1 })
        else live.count++
      }
    }
  )

  it.prop(
    "memory stays within maxClients, however many clients fail",
    [fc.array(fc.record({ client: fc.integer({ min: 0, max: 30 }), gap: fc.integer({ min: 0, max: 20_000 }) }), {
      maxLength: 400,
      size: "max"
    })],
    ([events]) => {
      const options = { failures: 4, windowMillis: 60_000, maxClients: 16 }
      const limit = FailureLimit.make(options)
      let now = 0
      for (const { client, gap } of events) {
        now += gap
        const id = String(client)
        if (limit.retryAfter(id, now) !== undefined) continue
        limit.fail(id, now)
        assert.isAtMost(limit.size(), options.maxClients)
      }
    }
  )
})

layer(makeAppLayer({ trustProxy: true, consoleFailures: { failures: 3, windowMillis: 60_000 } }))(
  "failed console authentications",
  (it) => {
    it.effect("after 3 failures a client gets 429 with Retry-After, even with the right token; other clients do not", () =>
      Effect.gen(function*() {
        const attacker = { "x-forwarded-for": "198.51.100.7, 203.0.113.9" }
        for (let i = 0; i < 3; i++) {
          problem(yield* send("GET", "/console/organisations", { auth: `Bearer wrong-${i}`, headers: attacker }), 401)
        }
        const refused = yield* send("GET", "/console/organisations", { auth: consoleAuth, headers: attacker })
        assert.match(problem(refused, 429).detail, /too many failed console authentications/)
        assert.strictEqual(refused.headers["retry-after"], "60")
        const other = yield* send("GET", "/console/organisations", {
          auth: consoleAuth,
          headers: { "x-forwarded-for": "198.51.100.7, 203.0.113.10" }
        })
        assert.strictEqual(other.status, 200, other.text)
        const api = yield* send("GET", "/health", { headers: attacker })
        assert.strictEqual(api.status, 200)
      }))
  }
)

layer(makeAppLayer({ consoleHosts: ["admin.internal"] }))("console hosts", (it) => {
  it.effect("the console answers only on its hosts: elsewhere every console path is 404, the API is unchanged", () =>
    Effect.gen(function*() {
      const elsewhere = yield* send("GET", "/console/organisations", { auth: consoleAuth })
      assert.strictEqual(problem(elsewhere, 404).detail, "no resource at /console/organisations")
      problem(yield* send("POST", "/console/organisations", { auth: consoleAuth, json: { name: "X" } }), 404)
      const here = yield* send("GET", "/console/organisations", { auth: consoleAuth, host: "ADMIN.internal:8443" })
      assert.strictEqual(here.status, 200, here.text)
      assert.strictEqual((yield* send("GET", "/health")).status, 200)
    }))
})
