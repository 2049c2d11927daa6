import { assert, describe, it, layer } from "@effect/vitest"
import { Worker } from "@tradeflow/core"
import { Clock, Effect, FastCheck as fc, TestClock } from "effect"
import { rateLimitHeaders, windowOf } from "../src/internal/rateLimit.js"
import { consoleAuth, makeAppLayer, newKey, type Received, send, uat } from "./Fixture.js"

const rateLimits = {
  production: { apiKey: { quota: 3, windowSeconds: 60 }, widgetKey: { quota: 2, windowSeconds: 60 } },
  uat: { apiKey: { quota: 5, windowSeconds: 10 }, widgetKey: null }
}

const policyOf = (r: Received) => r.headers["ratelimit-policy"]
const remainingOf = (r: Received) => {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(r.headers["ratelimit"] ?? "")
  return match === null ? undefined : { r: Number(match[1]), t: Number(match[2]) }
}

/** Moves the test clock to the start of the next window of `seconds`. */
const nextWindow = (seconds: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => TestClock.adjust(seconds * 1000 - (now % (seconds * 1000))))

describe("rate limit headers", () => {
  it.prop(
    "RateLimit always parses; remaining is quota - hits, never below 0; the window holds the instant",
    [
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 1, max: 86_400 }),
      fc.integer({ min: 1, max: 2_000_000 }),
      fc.integer({ min: 0, max: 4_000_000_000_000 })
    ],
    ([quota, windowSeconds, hits, now]) => {
      const window = windowOf({ quota, windowSeconds }, now)
      assert.isTrue(window.start <= now && now < window.end && window.start % (windowSeconds * 1000) === 0)
      const reset = Math.ceil((window.end - now) / 1000)
      const headers = rateLimitHeaders({ quota, windowSeconds }, hits, reset)
      assert.strictEqual(headers["ratelimit-policy"], `"default";q=${quota};w=${windowSeconds}`)
      const match = /^"default";r=(\d+);t=(\d+)$/.exec(headers["ratelimit"] ?? "")
      assert.isNotNull(match)
      assert.strictEqual(Number(match![1]), Math.max(0, quota - hits))
      assert.isTrue(Number(match![2]) >= 1 && Number(match![2]) <= windowSeconds)
    }
  )
})

layer(makeAppLayer({ rateLimits }))("rate limits per key", (it) => {
  it.effect("keyed answers, 2xx and 4xx, carry RateLimit-Policy and RateLimit; console, health and docs do not", () =>
    Effect.gen(function*() {
      yield* nextWindow(60)
      const k = yield* newKey("production")
      const listed = yield* send("GET", "/upstream", { auth: k.key })
      assert.strictEqual(listed.status, 200, listed.text)
      assert.strictEqual(policyOf(listed), `"default";q=3;w=60`)
      assert.deepStrictEqual(remainingOf(listed), { r: 2, t: 60 })
      yield* TestClock.adjust("15 seconds")
      const invalid = yield* send("POST", "/v3/downstream/tradeflows", { auth: `Bearer ${k.key}`, json: {} })
      assert.strictEqual(invalid.status, 422, invalid.text)
      assert.deepStrictEqual(remainingOf(invalid), { r: 1, t: 45 })
      const unknown = yield* send("GET", "/upstream", { auth: "not-a-key" })
      assert.strictEqual(unknown.status, 401)
      assert.strictEqual(policyOf(unknown), `"default";q=3;w=60`)
      for (
        const [url, auth] of [
          ["/console/organisations", consoleAuth],
          ["/health", k.key],
          ["/openapi.json", k.key],
          ["/upstream", undefined]
        ] as const
      ) {
        const answer = yield* send("GET", url, auth === undefined ? {} : { auth })
        assert.isUndefined(answer.headers["ratelimit"], url)
        assert.isUndefined(answer.headers["ratelimit-policy"], url)
      }
    }))

  it.effect("a spent quota is 429 with Retry-After and nothing is done, until the next window", () =>
    Effect.gen(function*() {
      yield* nextWindow(60)
      const k = yield* newKey("production")
      yield* TestClock.adjust("20 seconds")
      for (const reference of ["RL-1", "RL-2", "RL-3"]) {
        const posted = yield* send("POST", "/downstream/tradeflows", {
          auth: k.key,
          json: { tradeflow_reference: reference, booking_reference: "B" }
        })
        assert.strictEqual(posted.status, 202, posted.text)
      }
      const refused = yield* send("POST", "/downstream/tradeflows", {
        auth: k.key,
        json: { tradeflow_reference: "RL-4", booking_reference: "B" }
      })
      assert.strictEqual(refused.status, 429, refused.text)
      assert.match(refused.headers["content-type"] ?? "", /^application\/problem\+json/)
      assert.strictEqual(refused.headers["retry-after"], "40")
      assert.strictEqual(policyOf(refused), `"default";q=3;w=60`)
      assert.deepStrictEqual(remainingOf(refused), { r: 0, t: 40 })
      assert.match((refused.body as { detail: string }).detail, /at most 3 requests every 60 s for one API key/)
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)

      yield* TestClock.adjust("39 seconds")
      assert.strictEqual((yield* send("GET", "/upstream", { auth: k.key })).status, 429)
      yield* TestClock.adjust("1 second")
      const again = yield* send("GET", "/upstream", { auth: k.key })
      assert.strictEqual(again.status, 200, again.text)
      assert.deepStrictEqual(remainingOf(again), { r: 2, t: 60 })
      const refusedOne = yield* send("GET", "/upstream?tradeflow=RL-4", { auth: k.key })
      const acceptedOne = yield* send("GET", "/upstream?tradeflow=RL-3", { auth: k.key })
      assert.deepStrictEqual([refusedOne.status, acceptedOne.status], [200, 200])
      assert.notInclude(refusedOne.text, "RL-4")
      assert.include(acceptedOne.text, "RL-3")
    }))

  it.effect("UAT has its own policy; each key its own count", () =>
    Effect.gen(function*() {
      yield* nextWindow(60)
      const [a, b] = [yield* newKey("uat"), yield* newKey("uat")]
      for (let i = 0; i < 5; i++) {
        const listed = yield* send("GET", "/upstream", { auth: a.key, host: uat })
        assert.strictEqual(listed.status, 200, listed.text)
        assert.strictEqual(policyOf(listed), `"default";q=5;w=10`)
        assert.deepStrictEqual(remainingOf(listed), { r: 4 - i, t: 10 })
      }
      const refused = yield* send("GET", "/upstream", { auth: a.key, host: uat })
      assert.deepStrictEqual([refused.status, refused.headers["retry-after"]], [429, "10"])
      const other = yield* send("GET", "/upstream", { auth: b.key, host: uat })
      assert.deepStrictEqual([other.status, remainingOf(other)], [200, { r: 4, t: 10 }])
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* send("GET", "/upstream", { auth: a.key, host: uat })).status, 200)
    }))

  it.effect("widget keys are limited apart from API keys, every spelling of a key together; off in UAT", () =>
    Effect.gen(function*() {
      yield* nextWindow(60)
      const k = yield* newKey("production")
      const widgetKey = (organisationId: string) =>
        Effect.map(
          send("POST", `/console/organisations/${organisationId}/widget-keys`, { auth: consoleAuth }),
          (r) => (r.body as { key: string }).key
        )
      const key = yield* widgetKey(k.organisationId)
      const search = (auth: string, host?: string) =>
        send("GET", "/api/v2/widget-search?query=WL-1", host === undefined ? { auth } : { auth, host })
      const first = yield* search(`Basic ${key}`)
      assert.notStrictEqual(first.status, 429)
      assert.strictEqual(policyOf(first), `"default";q=2;w=60`)
      assert.deepStrictEqual(remainingOf(first), { r: 1, t: 60 })
      const second = yield* search(`Basic ${Buffer.from(`${key}:`, "utf8").toString("base64")}`)
      assert.deepStrictEqual(remainingOf(second), { r: 0, t: 60 })
      const refused = yield* search(`Basic ${key}`)
      assert.strictEqual(refused.status, 429, refused.text)
      assert.deepStrictEqual([refused.headers["retry-after"], refused.headers["deprecation"]], ["60", "true"])
      assert.match((refused.body as { detail: string }).detail, /for one widget key in production/)
      const api = yield* send("GET", "/upstream", { auth: k.key })
      assert.deepStrictEqual([api.status, remainingOf(api)], [200, { r: 2, t: 60 }])

      const uatKey = yield* widgetKey((yield* newKey("uat")).organisation.id)
      for (let i = 0; i < 3; i++) {
        const answer = yield* search(`Basic ${uatKey}`, uat)
        assert.notStrictEqual(answer.status, 429)
        assert.isUndefined(answer.headers["ratelimit"])
      }
    }))
})
