import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { Outcome, type Ssrf, WebhookClient } from "../src/index.js"
import * as LocalReceiver from "./LocalReceiver.js"

const resolveTo = (address: string): Ssrf.Resolver => (_hostname, _options, callback) =>
  callback(null, [{ address, family: address.includes(":") ? 6 : 4 }])

const post = (url: string, body = "{\"hello\":\"world\"}", headers: Record<string, string> = {}) =>
  Effect.flatMap(WebhookClient.WebhookClient, (client) => client.post({ url: new URL(url), headers, body }))

const client = (options: WebhookClient.Options = { allowPrivate: true }) => Effect.provide(WebhookClient.layer(options))

const errorOf = (response: WebhookClient.Response): string =>
  response._tag === "Error" ? Outcome.describeError(response.error) : `HTTP ${response.status}`

describe("WebhookClient", () => {
  it.scoped("POSTs the body as JSON with our User-Agent and the given headers, and reads the answer", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => ({
        status: 202,
        headers: { "retry-after": "5" },
        body: "thanks"
      }))
      const body = JSON.stringify({ city: "Zürich", n: 1 })
      const response = yield* post(receiver.url("/in?x=1"), body, {
        "webhook-id": "msg_1",
        "content-type": "text/plain"
      })
      assert.strictEqual(response._tag, "Response")
      if (response._tag !== "Response") return
      assert.deepStrictEqual([response.status, response.retryAfter, response.body], [202, "5", "thanks"])
      assert.isTrue(Duration.lessThan(Duration.decode(response.elapsed), Outcome.deliveryTimeout))
      const [request] = receiver.received
      assert.deepStrictEqual([request?.method, request?.path, request?.body], ["POST", "/in?x=1", body])
      assert.strictEqual(request?.headers["content-type"], "application/json")
      assert.strictEqual(request?.headers["user-agent"], WebhookClient.userAgent)
      assert.strictEqual(request?.headers["webhook-id"], "msg_1")
      assert.strictEqual(request?.headers["content-length"], String(Buffer.byteLength(body)))
    }).pipe(client()))

  it.scoped("keeps the connection alive between posts", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => ({ status: 200 }))
      for (let i = 0; i < 3; i++) assert.strictEqual(errorOf(yield* post(receiver.url())), "HTTP 200")
      assert.deepStrictEqual([receiver.received.length, receiver.connections()], [3, 1])
    }).pipe(client()))

  it.scoped("does not follow redirects", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make((n) =>
        n === 1 ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }
      )
      const response = yield* post(receiver.url())
      assert.strictEqual(errorOf(response), "HTTP 302")
      assert.strictEqual(receiver.received.length, 1)
      assert.strictEqual(Outcome.classify(response, 0)._tag, "Failed")
    }).pipe(client()))

  it.scoped("keeps at most 4 KiB of the receiver's answer", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => ({ status: 500, body: "é".repeat(100_000) }))
      const response = yield* post(receiver.url())
      assert.strictEqual(response.body, "é".repeat(Outcome.maxLoggedBodyBytes / 2))
      assert.strictEqual(Buffer.byteLength(response.body), Outcome.maxLoggedBodyBytes)
    }).pipe(client()))

  it.scoped("transport errors are answers, not failures: refused connections and resets", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => "reset")
      assert.match(errorOf(yield* post(receiver.url())), /^connection reset: /)
      assert.match(errorOf(yield* post("http://127.0.0.1:1/hook")), /^connection refused: /)
    }).pipe(client()))

  it.scoped("host names resolve through the SSRF-safe lookup: the checked address is the one connected to", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => ({ status: 200 }))
      const url = `http://hooks.example:${receiver.port}/hook`
      const allowed = yield* post(url).pipe(client({ allowPrivate: true, resolve: resolveTo("127.0.0.1") }))
      assert.strictEqual(errorOf(allowed), "HTTP 200")
      for (const address of ["127.0.0.1", "169.254.169.254", "10.1.2.3", "::ffff:127.0.0.1"]) {
        const blocked = yield* post(url).pipe(client({ allowPrivate: false, resolve: resolveTo(address) }))
        assert.match(errorOf(blocked), /^blocked destination: .*resolves to/, address)
      }
      assert.strictEqual(receiver.received.length, 1)
    }))

  it.scoped("the whole exchange times out after 15 s on the clock, and the request is destroyed", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => "hang")
      const fiber = yield* Effect.fork(post(receiver.url()))
      yield* receiver.arrived(1)
      yield* TestClock.adjust(Duration.subtract(Outcome.deliveryTimeout, Duration.millis(1)))
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust(Duration.millis(1))
      const response = yield* Fiber.join(fiber)
      assert.match(errorOf(response), /^timeout: no complete answer within 15s/)
      yield* receiver.closed(1)
    }).pipe(client()))

  it.scoped("interrupting a post destroys the request", () =>
    Effect.gen(function*() {
      const receiver = yield* LocalReceiver.make(() => "hang")
      const fiber = yield* Effect.fork(post(receiver.url()))
      yield* receiver.arrived(1)
      yield* Fiber.interrupt(fiber)
      yield* receiver.closed(1)
      assert.strictEqual(receiver.abandoned(), 1)
    }).pipe(client()))
})
