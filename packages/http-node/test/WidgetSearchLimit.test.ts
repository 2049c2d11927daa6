import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it, layer } from "@effect/vitest"
import { Worker } from "@tradeflow/core"
import { Effect, FastCheck as fc, TestClock } from "effect"
import { HttpConfig } from "../src/index.js"
import * as TokenBucket from "../src/internal/tokenBucket.js"
import { limitWidgetSearch } from "../src/internal/widget.js"
import { consoleAuth, makeAppLayer, newKey, send } from "./Fixture.js"

describe("TokenBucket", () => {
  it("a burst, then one request per 1/perSecond; Retry-After until the next token; clients apart", () => {
    const buckets = TokenBucket.make({ perSecond: 4, burst: 3, maxClients: 10 })
    for (let i = 0; i < 3; i++) assert.isUndefined(buckets.take("a", 1_000))
    assert.strictEqual(buckets.take("a", 1_000), 1)
    assert.strictEqual(buckets.take("a", 1_249), 1)
    assert.isUndefined(buckets.take("a", 1_250))
    assert.strictEqual(buckets.take("a", 1_250), 1)
    assert.isUndefined(buckets.take("b", 1_250))
    const slow = TokenBucket.make({ perSecond: 0.1, burst: 1, maxClients: 10 })
    assert.isUndefined(slow.take("a", 0))
    assert.strictEqual(slow.take("a", 0), 10)
    assert.strictEqual(slow.take("a", 5_000), 5)
  })

  it.prop(
    "no client gets more than burst + perSecond × duration through in any stretch of time",
    [fc.array(fc.record({ client: fc.integer({ min: 0, max: 12 }), gap: fc.integer({ min: 0, max: 100 }) }), {
      maxLength: 500,
      size: "max"
    })],
    ([requests]) => {
      // 13 clients, fewer than maxClients: none is forgotten (a forgotten client starts again with a full bucket).
      const options = { perSecond: 5, burst: 3, maxClients: 16 }
      const buckets = TokenBucket.make(options)
      const admitted = new Map<number, Array<number>>()
      let now = 0
      for (const { client, gap } of requests) {
        now += gap
        const wait = buckets.take(String(client), now)
        if (wait !== undefined) {
          assert.isAtLeast(wait, 1)
          continue
        }
        const times = [...(admitted.get(client) ?? []), now]
        admitted.set(client, times)
        for (const from of times) {
          const through = times.filter((t) => t >= from).length
          assert.isAtMost(through, options.burst + options.perSecond * (now - from) / 1000 + 1e-9)
        }
      }
    }
  )

  it.prop(
    "memory stays within maxClients, however many clients come",
    [fc.array(fc.record({ client: fc.integer({ min: 0, max: 40 }), gap: fc.integer({ min: 0, max: 400 }) }), {
      maxLength: 500,
      size: "max"
    })],
    ([requests]) => {
      const buckets = TokenBucket.make({ perSecond: 5, burst: 3, maxClients: 16 })
      let now = 0
      for (const { client, gap } of requests) {
        now += gap
        buckets.take(String(client), now)
        assert.isAtMost(buckets.size(), 16)
      }
    }
  )

  it("remembers at most maxClients clients, the least recently used forgotten first", () => {
    const buckets = TokenBucket.make({ perSecond: 1, burst: 1, maxClients: 100 })
    for (let i = 0; i < 100_000; i++) buckets.take(`client-${i}`, 0)
    assert.strictEqual(buckets.size(), 100)
    assert.strictEqual(buckets.take("client-99999", 0), 1)
    assert.isUndefined(buckets.take("client-0", 0))
  })
})

describe("limitWidgetSearch", () => {
  const limit = limitWidgetSearch(
    HttpConfig.make({ consoleToken: "t", widgetSearchLimit: { perSecond: 10, burst: 2 } })
  )
  const app = limit(Effect.succeed(HttpServerResponse.text("ok")))
  const run = (url: string, authorization?: string) =>
    app.pipe(Effect.provideService(
      HttpServerRequest.HttpServerRequest,
      HttpServerRequest.fromWeb(
        new Request(`http://localhost${url}`, {
          headers: authorization === undefined ? {} : { authorization }
        })
      )
    ))
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64")

  it.effect("counts every spelling of one key together, on the Effect clock; other keys and paths are not counted", () =>
    Effect.gen(function*() {
      const key = "wk_one"
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x", `Basic ${key}`)).status, 200)
      assert.strictEqual((yield* run("/v3/api/v2/widget-search?query=x", `Basic ${b64(`${key}:`)}`)).status, 200)
      const refused = yield* run("/api/v2/widget-search?query=x", `basic ${b64(key)}`)
      assert.deepStrictEqual([refused.status, refused.headers["retry-after"]], [429, "1"])
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x", "Basic wk_two")).status, 200)
      assert.strictEqual((yield* run("/upstream", `Basic ${key}`)).status, 200)
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x")).status, 200)
      yield* TestClock.adjust("99 millis")
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x", `Basic ${key}`)).status, 429)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x", `Basic ${key}`)).status, 200)
      assert.strictEqual((yield* run("/api/v2/widget-search?query=x", `Basic ${key}`)).status, 429)
    }))
})

layer(makeAppLayer({ widgetSearchLimit: { perSecond: 1, burst: 3 } }))(
  "GET /api/v2/widget-search, limited per key",
  (it) => {
    it.effect("beyond the burst a key gets 429 with Retry-After and Deprecation until a token is back; another key is served", () =>
      Effect.gen(function*() {
        const k = yield* newKey("production")
        const posted = yield* send("POST", "/downstream/tradeflows", {
          auth: k.key,
          json: { tradeflow_reference: "WL-1", booking_reference: "B" }
        })
        assert.strictEqual(posted.status, 202, posted.text)
        yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
        const keys = yield* Effect.forEach([1, 2], () =>
          Effect.map(
            send("POST", `/console/organisations/${k.organisationId}/widget-keys`, { auth: consoleAuth }),
            (r) => `Basic ${(r.body as { key: string }).key}`
          ))
        const search = (auth: string) => send("GET", "/api/v2/widget-search?query=WL-1", { auth })
        for (let i = 0; i < 3; i++) {
          assert.strictEqual((yield* search(keys[0]!)).status, 200)
        }
        const refused = yield* search(keys[0]!)
        assert.strictEqual(refused.status, 429, refused.text)
        assert.match(refused.headers["content-type"] ?? "", /^application\/problem\+json/)
        assert.deepStrictEqual([refused.headers["retry-after"], refused.headers["deprecation"]], ["1", "true"])
        assert.match((refused.body as { detail: string }).detail, /at most 1 widget searches a second \(bursts of 3\)/)
        assert.strictEqual((yield* search(keys[1]!)).status, 200)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* search(keys[0]!)).status, 200)
        assert.strictEqual((yield* search(keys[0]!)).status, 429)
      }))
  }
)
