import { assert, describe, it } from "@effect/vitest"
import { Duration, FastCheck as fc, Option } from "effect"
import * as Dns from "node:dns"
import * as Net from "node:net"
import { Outcome, Ssrf } from "../src/index.js"

const now = Date.parse("2026-11-22T12:00:00Z")
const response = (
  status: number,
  elapsed: Duration.DurationInput = "1 second",
  retryAfter?: string
): Outcome.Attempt => ({ _tag: "Response", status, elapsed, retryAfter })
const failure = (error: unknown): Outcome.Attempt => ({ _tag: "Error", error })
const errorOf = (outcome: Outcome.Outcome): string =>
  Outcome.Outcome.$is("Failed")(outcome) ? outcome.error : "not failed"
const retryMs = (outcome: Outcome.Outcome) =>
  Outcome.Outcome.$is("Failed")(outcome) ? Option.map(outcome.retryAfter, Duration.toMillis) : Option.none()
const errno = (code: string, message = code) => Object.assign(new Error(message), { code })

describe("Outcome.classify", () => {
  it.prop("every 2xx within 15 s is delivered", [
    fc.integer({ min: 200, max: 299 }),
    fc.integer({ min: 0, max: 15_000 })
  ], ([status, ms]) => {
    assert.deepStrictEqual(
      Outcome.classify(response(status, Duration.millis(ms)), now),
      Outcome.Outcome.Delivered({ status })
    )
  })

  it.prop("a 2xx after 15 s is a timeout failure", [
    fc.integer({ min: 200, max: 299 }),
    fc.integer({ min: 15_001, max: 600_000 })
  ], ([status, ms]) => {
    const outcome = Outcome.classify(response(status, Duration.millis(ms)), now)
    assert.strictEqual(outcome._tag, "Failed")
    assert.match(errorOf(outcome), /^timeout: /)
  })

  it.prop("redirects and other non-2xx statuses (but 410) fail and retry on the schedule", [
    fc.integer({ min: 300, max: 599 }).filter((s) => s !== 410 && s !== 429 && s !== 503)
  ], ([status]) => {
    const outcome = Outcome.classify(response(status, "1 second", "5"), now)
    assert.strictEqual(outcome._tag, "Failed")
    assert.deepStrictEqual(retryMs(outcome), Option.none())
    if (Outcome.Outcome.$is("Failed")(outcome)) assert.deepStrictEqual(outcome.status, Option.some(status))
    if (status < 400) assert.match(errorOf(outcome), /redirects are not followed/)
  })

  it("410 disables the automation", () => {
    assert.strictEqual(Outcome.classify(response(410), now)._tag, "Gone")
  })

  it("429 and 503 honour Retry-After, capped at 1 hour, else the schedule", () => {
    for (const status of [429, 503]) {
      assert.deepStrictEqual(retryMs(Outcome.classify(response(status, "1 second", "120"), now)), Option.some(120_000))
      assert.deepStrictEqual(
        retryMs(Outcome.classify(response(status, "1 second", "99999"), now)),
        Option.some(3_600_000)
      )
      assert.deepStrictEqual(
        retryMs(Outcome.classify(response(status, "1 second", "Sun, 22 Nov 2026 12:01:00 GMT"), now)),
        Option.some(60_000)
      )
      assert.deepStrictEqual(retryMs(Outcome.classify(response(status), now)), Option.none())
      assert.deepStrictEqual(retryMs(Outcome.classify(response(status, "1 second", "later"), now)), Option.none())
    }
  })

  it("transport errors fail with a clear error string, through cause chains", () => {
    const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
      [errno("ETIMEDOUT"), /^timeout: /],
      [{ _tag: "TimeoutException", message: "Operation timed out" }, /^timeout: /],
      [Object.assign(new Error("This operation was aborted"), { name: "AbortError" }), /^timeout: /],
      [errno("ECONNRESET", "socket hang up"), /^connection reset: socket hang up/],
      [
        Object.assign(new TypeError("fetch failed"), { cause: errno("UND_ERR_SOCKET", "other side closed") }),
        /^connection reset: other side closed/
      ],
      [
        { _tag: "RequestError", reason: "Transport", message: "Transport error", cause: errno("ECONNREFUSED") },
        /^connection refused: /
      ],
      [errno("ENOTFOUND", "getaddrinfo ENOTFOUND hook.example"), /^dns error: getaddrinfo ENOTFOUND hook\.example/],
      [errno("EAI_AGAIN"), /^dns error: /],
      [
        new Ssrf.SsrfBlockedError("hook.example", "10.0.0.1", "private"),
        /^blocked destination: .*10\.0\.0\.1 \(private\)/
      ],
      [errno("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"), /^tls error: /],
      [new Error("something odd"), /^error: something odd$/],
      ["a string", /^error: a string$/]
    ]
    for (const [error, pattern] of cases) {
      const outcome = Outcome.classify(failure(error), now)
      assert.strictEqual(outcome._tag, "Failed")
      assert.match(errorOf(outcome), pattern)
      if (Outcome.Outcome.$is("Failed")(outcome)) assert.isTrue(Option.isNone(outcome.status))
    }
  })

  it("real socket errors: DNS failure, refused connection and SSRF lookup are classified", async () => {
    const connectError = (options: Net.NetConnectOpts) =>
      new Promise<unknown>((resolve) => {
        const socket = Net.connect(options)
        socket.on("connect", () => {
          socket.destroy()
          resolve(undefined)
        })
        socket.on("error", resolve)
      })
    const server = Net.createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as Net.AddressInfo).port
    await new Promise((resolve) => server.close(resolve))
    const refused = await connectError({ host: "127.0.0.1", port })
    assert.match(Outcome.describeError(refused), /^connection refused: /)
    const dns = await connectError({
      host: "hook.invalid",
      port: 443,
      lookup: (_h, _o, cb) => Dns.lookup("nonexistent.invalid", { all: true }, cb)
    })
    assert.match(Outcome.describeError(dns), /^dns error: /)
    const blocked = await connectError({ host: "localhost", port, lookup: Ssrf.safeLookup({ allowPrivate: false }) })
    assert.match(Outcome.describeError(blocked), /^blocked destination: /)
  })
})

describe("Outcome.truncateBody", () => {
  const byteLength = (text: string) => new TextEncoder().encode(text).length

  it("keeps short bodies whole and cuts long ones at 4 KiB", () => {
    assert.deepStrictEqual(Outcome.truncateBody(new TextEncoder().encode("ok")), { text: "ok", truncated: false })
    const long = Outcome.truncateBody(new TextEncoder().encode("x".repeat(10_000)))
    assert.deepStrictEqual(long, { text: "x".repeat(4096), truncated: true })
    const euro = Outcome.truncateBody(new TextEncoder().encode("a" + "€".repeat(2000)))
    assert.strictEqual(euro.text, "a" + "€".repeat(1365))
    assert.strictEqual(byteLength(euro.text), 4096)
    assert.deepStrictEqual(Outcome.truncateBody(new TextEncoder().encode("😀😀"), 6), { text: "😀", truncated: true })
  })

  it.prop("valid UTF-8: a character-boundary prefix of at most max bytes, losing less than one character", [
    fc.fullUnicodeString({ maxLength: 200 }),
    fc.integer({ min: 0, max: 800 })
  ], ([text, max]) => {
    const bytes = new TextEncoder().encode(text)
    const result = Outcome.truncateBody(bytes, max)
    assert.isAtMost(byteLength(result.text), max)
    assert.isTrue(text.startsWith(result.text))
    assert.strictEqual(result.truncated, bytes.length > max)
    if (bytes.length <= max) assert.strictEqual(result.text, text)
    else assert.isAbove(byteLength(result.text), max - 4)
  })

  it.prop("arbitrary bytes never exceed max once stored as UTF-8", [
    fc.uint8Array({ maxLength: 600 }),
    fc.integer({ min: 0, max: 700 })
  ], ([bytes, max]) => {
    const result = Outcome.truncateBody(bytes, max)
    assert.isAtMost(byteLength(result.text), max)
    if (!result.truncated) assert.strictEqual(result.text, new TextDecoder().decode(bytes))
  })
})
