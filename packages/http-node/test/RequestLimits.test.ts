import { HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import * as Net from "node:net"
import { HttpConfig } from "../src/index.js"
import { inFlightLimit } from "../src/internal/inFlight.js"
import { makeAppLayer, newKey, send } from "./Fixture.js"

/** A raw connection that sends a request's head and part of its body, then waits. */
interface Stalled {
  /** Sends more body bytes. */
  readonly write: (bytes: string) => void
  /** The whole answer once the server has closed the connection or ended the response. */
  readonly answer: Promise<string>
}

const stall = (port: number, path: string, headers: Record<string, string>, length: number, first: string) =>
  Effect.async<Stalled>((resume) => {
    const socket = Net.connect(port, "127.0.0.1")
    let text = ""
    const answer = new Promise<string>((resolve) => {
      socket.on("data", (d) => {
        text += d.toString("utf8")
        if (/\r\n\r\n[\s\S]*\}$/.test(text)) resolve(text)
      })
      socket.on("close", () => resolve(text))
      socket.on("error", () => resolve(text))
    })
    socket.on("connect", () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        "host: localhost",
        `content-length: ${length}`,
        "content-type: application/json"
      ]
      for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`)
      socket.write(
        head.join("\r\n") + "\r\n\r\n" + first,
        () => resume(Effect.succeed({ write: (b) => void socket.write(b), answer }))
      )
    })
  })

const portOf = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)
const status = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1])

/** Waits until the server has read what was sent so far (it answers other requests meanwhile). */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

layer(makeAppLayer({ bodyTimeoutMillis: 30_000, maxBufferedBodyBytes: 1_000 }))("a body that does not arrive", (it) => {
  it.effect("ends its connection once the body timeout has passed, and its bytes no longer count against the budget", () =>
    Effect.gen(function*() {
      const a = yield* newKey("production")
      const b = yield* newKey("production")
      const port = yield* portOf
      const body = JSON.stringify([{ tradeflow_reference: "STALLED", booking_reference: "B".repeat(700) }])
      const stalled = yield* stall(
        port,
        "/downstream/tradeflows",
        { authorization: a.key },
        body.length,
        body.slice(0, 600)
      )
      yield* settle
      const small = [{ tradeflow_reference: "OTHER", booking_reference: "B".repeat(500) }]
      assert.strictEqual((yield* send("POST", "/downstream/tradeflows", { auth: b.key, json: small })).status, 503)
      yield* TestClock.adjust("29 seconds")
      yield* settle
      stalled.write(body.slice(600, 610))
      yield* settle
      assert.strictEqual((yield* send("POST", "/downstream/tradeflows", { auth: b.key, json: small })).status, 503)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Effect.promise(() => stalled.answer), "")
      const accepted = yield* send("POST", "/downstream/tradeflows", { auth: b.key, json: small })
      assert.strictEqual(accepted.status, 202, accepted.text)
    }))
})

layer(makeAppLayer({ maxBufferedBodyBytes: 1_000 }))("the budget of buffered body bytes", (it) => {
  it.effect("a body that would take the application past its budget is 503 with Retry-After; the budget comes back", () =>
    Effect.gen(function*() {
      const a = yield* newKey("production")
      const b = yield* newKey("production")
      const port = yield* portOf
      const record = (ref: string, pad: number) =>
        JSON.stringify([{ tradeflow_reference: ref, booking_reference: "B".repeat(pad) }])
      const big = record("HOLD", 700)
      const stalled = yield* stall(
        port,
        "/downstream/tradeflows",
        { authorization: a.key },
        Buffer.byteLength(big),
        big.slice(0, 600)
      )
      yield* settle
      const refused = yield* send("POST", "/downstream/tradeflows", {
        auth: b.key,
        json: JSON.parse(record("OTHER", 500))
      })
      assert.strictEqual(refused.status, 503, refused.text)
      assert.strictEqual(refused.headers["retry-after"], "1")
      assert.match(refused.text, /holds too many request bodies/)
      stalled.write(big.slice(600))
      assert.strictEqual(status(yield* Effect.promise(() => stalled.answer)), 202)
      const accepted = yield* send("POST", "/downstream/tradeflows", {
        auth: b.key,
        json: JSON.parse(record("OTHER", 500))
      })
      assert.strictEqual(accepted.status, 202, accepted.text)
    }))
})

layer(makeAppLayer({ maxInFlightPerKey: 2 }))("requests in flight per key", (it) => {
  it.effect("a key with 2 requests in flight gets 429 with Retry-After for a third; other keys do not; it frees up after", () =>
    Effect.gen(function*() {
      const a = yield* newKey("production")
      const b = yield* newKey("production")
      const port = yield* portOf
      const body = JSON.stringify([{ tradeflow_reference: "SLOW", booking_reference: "BK" }])
      const first = yield* stall(
        port,
        "/downstream/tradeflows",
        { authorization: a.key },
        body.length,
        body.slice(0, 5)
      )
      const second = yield* stall(
        port,
        "/downstream/tradeflows",
        { authorization: a.key },
        body.length,
        body.slice(0, 5)
      )
      yield* settle
      const third = yield* send("GET", "/upstream", { auth: a.key })
      assert.strictEqual(third.status, 429, third.text)
      assert.strictEqual(third.headers["retry-after"], "1")
      assert.strictEqual((yield* send("GET", "/upstream", { auth: b.key })).status, 200)
      first.write(body.slice(5))
      assert.strictEqual(status(yield* Effect.promise(() => first.answer)), 202)
      assert.strictEqual((yield* send("GET", "/upstream", { auth: a.key })).status, 200)
      second.write(body.slice(5))
      assert.strictEqual(status(yield* Effect.promise(() => second.answer)), 202)
    }))
})

describe("inFlightLimit", () => {
  const settings = HttpConfig.make({ consoleToken: "x".repeat(32), maxInFlightPerKey: 3, maxUpstreamInFlightPerKey: 1 })
  const request = (path: string, authorization: string) =>
    HttpServerRequest.fromWeb(new Request(`http://localhost${path}`, { headers: { authorization } }))

  it.effect("upstream requests of one key are limited on their own, within the limit of all its requests", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const limited = inFlightLimit(settings)(Effect.as(Deferred.await(gate), HttpServerResponse.text("done")))
      const run = (path: string, key: string) =>
        Effect.map(
          Effect.provideService(limited, HttpServerRequest.HttpServerRequest, request(path, key)),
          (r) => r.status
        )
      const held = yield* Effect.fork(run("/upstream?per_page=10", "k1"))
      yield* Effect.yieldNow()
      assert.strictEqual(yield* run("/v3/upstream", "k1"), 429)
      assert.strictEqual(
        yield* run("/upstream", "k2").pipe(
          Effect.fork,
          Effect.tap(() => Deferred.succeed(gate, undefined)),
          Effect.flatMap(Fiber.join)
        ),
        200
      )
      assert.strictEqual(yield* Fiber.join(held), 200)
      assert.strictEqual(yield* run("/upstream", "k1"), 200)
    }))

  it.effect("the count is released when a request fails or is interrupted", () =>
    Effect.gen(function*() {
      const limit = inFlightLimit(settings)
      const never = limit(Effect.never)
      const failing = limit(Effect.die("boom"))
      const provide = <A, E>(e: Effect.Effect<A, E, HttpServerRequest.HttpServerRequest>) =>
        Effect.provideService(e, HttpServerRequest.HttpServerRequest, request("/upstream", "k"))
      const fiber = yield* Effect.fork(provide(never))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      for (let i = 0; i < 5; i++) yield* Effect.exit(provide(failing))
      const ok = limit(Effect.succeed(HttpServerResponse.empty({ status: 204 })))
      assert.strictEqual((yield* provide(ok)).status, 204)
    }))
})
