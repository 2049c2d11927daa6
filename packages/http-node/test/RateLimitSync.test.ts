/**
 * The counting of the rate limits between processes: two middlewares over one store stand for two
 * processes on one database (the standalone test runs the real thing on PostgreSQL).
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { RateLimitStore, StorageError } from "@tradeflow/core"
import { Effect, Ref, TestClock } from "effect"
import { HttpConfig } from "../src/index.js"
import { rateLimit, syncMillis } from "../src/internal/rateLimit.js"

const settings = HttpConfig.make({
  consoleToken: "console-token-for-tests-0123456789abcdef",
  rateLimits: {
    production: { apiKey: { quota: 10, windowSeconds: 60 }, widgetKey: null },
    uat: { apiKey: null, widgetKey: null }
  }
})

const ok = Effect.succeed(HttpServerResponse.empty({ status: 200 }))

/** One keyed upstream request through `limited`: its status and the `r` of its `RateLimit`. */
const request = (limited: Effect.Effect.Success<ReturnType<typeof rateLimit>>, key = "prod_key_a") =>
  limited(ok).pipe(
    Effect.provideService(
      HttpServerRequest.HttpServerRequest,
      HttpServerRequest.fromWeb(
        new Request("http://localhost/upstream", { headers: { host: "localhost", authorization: key } })
      )
    ),
    Effect.map((response) => ({
      status: response.status,
      r: Number(/;r=(\d+);/.exec(response.headers["ratelimit"] ?? "")?.[1] ?? Number.NaN)
    }))
  )

/** A memory store that counts its adds and fails while `down` is set. */
const watchedStore = Effect.gen(function*() {
  const store = yield* RateLimitStore.makeMemory
  const adds = yield* Ref.make(0)
  const down = yield* Ref.make(false)
  const watched: RateLimitStore.RateLimitStore["Type"] = {
    ...store,
    add: (counts) =>
      Effect.zipRight(
        Ref.update(adds, (n) => n + 1),
        Effect.flatMap(Ref.get(down), (isDown) =>
          isDown
            ? Effect.fail(new StorageError.StorageError({ operation: "RateLimitStore.add", cause: "down" }))
            : store.add(counts))
      )
  }
  return { store: watched, adds, down }
})

describe("rate limit counting", () => {
  it.scoped("one process: a burst is counted exactly, written by one wait and one background write", () =>
    Effect.gen(function*() {
      const { adds, store } = yield* watchedStore
      const limited = yield* rateLimit(settings, store)
      const answers = []
      for (let i = 0; i < 12; i++) answers.push(yield* request(limited))
      assert.deepStrictEqual(answers.map((a) => a.status), [...Array(10).fill(200), 429, 429])
      assert.deepStrictEqual(answers.slice(0, 10).map((a) => a.r), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
      assert.strictEqual(yield* Ref.get(adds), 1)
      yield* TestClock.adjust(syncMillis)
      assert.strictEqual(yield* Ref.get(adds), 2)
    }))

  it.scoped("two processes on one store: a request after a write interval sees the other's hits", () =>
    Effect.gen(function*() {
      const { store } = yield* watchedStore
      const [a, b] = [yield* rateLimit(settings, store), yield* rateLimit(settings, store)]
      for (let i = 0; i < 4; i++) yield* request(a)
      yield* TestClock.adjust(syncMillis)
      assert.deepStrictEqual(yield* request(b), { status: 200, r: 5 })
      yield* TestClock.adjust(syncMillis)
      assert.deepStrictEqual(yield* request(a), { status: 200, r: 4 })
      for (let i = 0; i < 4; i++) yield* request(b)
      yield* TestClock.adjust(syncMillis)
      assert.deepStrictEqual(yield* request(a), { status: 429, r: 0 })
    }))

  it.scoped("a store outage: the process counts alone, answers with its headers, and writes the hits once it is back", () =>
    Effect.gen(function*() {
      const { down, store } = yield* watchedStore
      const [a, b] = [yield* rateLimit(settings, store), yield* rateLimit(settings, store)]
      yield* Ref.set(down, true)
      for (let i = 0; i < 6; i++) assert.deepStrictEqual(yield* request(a), { status: 200, r: 9 - i })
      yield* TestClock.adjust(syncMillis)
      yield* Ref.set(down, false)
      yield* TestClock.adjust(syncMillis)
      yield* TestClock.adjust(syncMillis)
      assert.deepStrictEqual(yield* request(b), { status: 200, r: 3 })
    }))
})
