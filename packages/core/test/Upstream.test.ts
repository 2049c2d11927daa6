import { assert, describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, FastCheck as fc, Layer, Redacted, TestClock } from "effect"
import * as Cursor from "../src/Cursor.js"
import { hmacSha256Base64Url, hmacSha256Base64UrlPortable } from "../src/internal/crypto.js"
import { withoutShipment } from "../src/internal/withoutShipment.js"
import { Settings } from "../src/Settings.js"
import * as Storage from "../src/Storage.js"
import type { NewMessage } from "../src/StoredMessage.js"
import * as Upstream from "../src/Upstream.js"
import { commitMessages, freshId, makeMessage } from "../test-kit/index.js"

const reference = (body: string): unknown => {
  const value = JSON.parse(body) as { payload?: unknown }
  const payload = value?.payload
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) {
    delete (payload as Record<string, unknown>)["shipment"]
  }
  return value
}

const arbitraryApiMessage = fc.record({
  hash: fc.string(),
  type: fc.constantFrom("SHIPMENT_CHANGE", "CONTAINER_MILESTONE"),
  payload: fc.record({
    type: fc.string(),
    shipment: fc.jsonValue(),
    "shipment\"x": fc.jsonValue(),
    nested: fc.record({ shipment: fc.jsonValue() }),
    status: fc.jsonValue()
  }, { requiredKeys: [] }),
  shipment: fc.jsonValue()
}, { requiredKeys: ["payload"] })

describe("withoutShipment", () => {
  it.prop("equals parse, delete payload.shipment, stringify, on any message in any formatting", [
    arbitraryApiMessage,
    fc.constantFrom(undefined, 1, 2, "\t")
  ], ([message, indent]) => {
    const body = JSON.stringify(message, null, indent)
    const out = withoutShipment(body)
    expect(JSON.parse(out)).toEqual(reference(body))
    if (!("shipment" in message.payload)) expect(out).toBe(body)
  }, { fastCheck: { numRuns: 300 } })

  it.prop("leaves any other JSON value as JSON.parse sees it", [fc.jsonValue()], ([value]) => {
    const body = JSON.stringify(value)
    expect(JSON.parse(withoutShipment(body))).toEqual(reference(body))
  }, { fastCheck: { numRuns: 300 } })

  it("handles escaped keys, duplicate keys, odd payloads and text that is not JSON", () => {
    const cases = [
      "{\"payload\":{\"\\u0073hipment\":1,\"a\":2}}",
      "{\"payload\":{\"shipment\":1,\"shipment\":2,\"a\":3}}",
      "{\"payload\":{\"a\":1},\"payload\":{\"shipment\":1}}",
      "{\"payload\":{\"a\":\"}\\\"{\",\"shipment\":{\"b\":[1,{\"c\":\"]\"}]}}}",
      "{\"payload\":{\"shipment\":null}}",
      "{\"payload\":[{\"shipment\":1}]}",
      "{\"payload\":null}",
      "[1,2]",
      " { \"payload\" : { \"a\" : 1 , \"shipment\" : true } } "
    ]
    for (const body of cases) expect(JSON.parse(withoutShipment(body))).toEqual(reference(body))
    expect(withoutShipment("{\"payload\":{\"shipment\":1,\"a\":2}}")).toBe("{\"payload\":{\"a\":2}}")
    expect(withoutShipment("{\"payload\":{\"a\":2,\"shipment\":1}}")).toBe("{\"payload\":{\"a\":2}}")
    expect(withoutShipment("{\"payload\":{\"shipment\":1}}")).toBe("{\"payload\":{}}")
    expect(withoutShipment("not json {")).toBe("not json {")
  })
})

const hour = 3_600_000

const message = (n: number, fields: Partial<NewMessage> = {}): NewMessage =>
  makeMessage(`m-${n}`, {
    generated_at: n * hour,
    body: JSON.stringify({ n, payload: { type: "X", shipment: { big: true } } }),
    ...fields
  })

const memory = Layer.provideMerge(Upstream.layer(), Storage.layerMemory)

describe("Upstream.list", () => {
  it.effect("the 500 most recent of the last 24 hours; since narrows, never widens", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* commitMessages(org, Array.from({ length: 30 }, (_, i) => message(i)))
      yield* TestClock.setTime(30 * hour)
      const upstream = yield* Upstream.Upstream
      const hashes = (q: Partial<Upstream.UpstreamQuery>) =>
        Effect.map(upstream.list({ organisation_id: org, ...q }), (ms) => ms.map((m) => m.hash))
      expect(yield* hashes({})).toEqual(Array.from({ length: 24 }, (_, i) => `m-${i + 6}`))
      expect(yield* hashes({ since: 27 * hour })).toEqual(["m-27", "m-28", "m-29"])
      expect(yield* hashes({ since: 0 })).toEqual(Array.from({ length: 24 }, (_, i) => `m-${i + 6}`))
      const many = freshId("org")
      yield* commitMessages(many, Array.from({ length: 620 }, (_, i) => message(i, { generated_at: 29 * hour })))
      const recent = yield* upstream.list({ organisation_id: many })
      expect(recent.length).toBe(500)
      expect(recent.map((m) => m.hash)).toEqual(Array.from({ length: 500 }, (_, i) => `m-${i + 120}`))
    }).pipe(Effect.provide(memory)))

  it.effect.prop(
    "equals the 500 highest sequence numbers among the matching messages of the window, from its earliest message on",
    [
      fc.integer({ min: 0, max: 700 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
      fc.option(fc.constantFrom("BASIC_STATUS", "SHIPMENT_CHANGE"), { nil: undefined }),
      fc.option(fc.integer({ min: 20 * hour, max: 30 * hour }), { nil: undefined })
    ],
    ([count, pattern, type, since]) =>
      Effect.gen(function*() {
        const org = freshId("org")
        const log = Array.from({ length: count }, (_, i) =>
          message(i, {
            type: i % 3 === 0 ? "SHIPMENT_CHANGE" : "BASIC_STATUS",
            generated_at: pattern[Math.floor(i / 50) % pattern.length] ? 29 * hour + i : 2 * hour + i
          }))
        yield* commitMessages(org, log)
        yield* TestClock.setTime(30 * hour)
        const start = Math.max(6 * hour, since ?? 0)
        const inWindow = log.map((m, i) => ({ m, seq: i + 1 })).filter(({ m }) => m.generated_at >= start)
        const first = inWindow.reduce<typeof inWindow[number] | undefined>(
          (earliest, e) => earliest === undefined || e.m.generated_at < earliest.m.generated_at ? e : earliest,
          undefined
        )
        const expected = inWindow.filter(({ seq }) => first !== undefined && seq >= first.seq).map(({ m }) => m)
          .filter((m) => type === undefined || m.type === type).slice(-500)
        const got = yield* Effect.flatMap(Upstream.Upstream, (u) =>
          u.list({
            organisation_id: org,
            ...(type === undefined ? {} : { types: [type] }),
            ...(since === undefined ? {} : { since })
          }))
        expect(got.map((m) => m.hash)).toEqual(expected.map((m) => m.hash))
      }).pipe(Effect.provide(memory)),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect("latest keeps the newest per (tradeflow, type, container); excludes removes payload.shipment", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* commitMessages(org, [
        message(1, { type: "CONTAINER_MILESTONE", container_reference: "C1" }),
        message(2, { type: "CONTAINER_MILESTONE", container_reference: "C2" }),
        message(3, { type: "CONTAINER_MILESTONE", container_reference: "C1" }),
        message(4, { type: "SHIPMENT_CHANGE" }),
        message(5, { type: "SHIPMENT_CHANGE", tradeflow_reference: "TF-2" }),
        message(6, { type: "SHIPMENT_CHANGE" })
      ])
      yield* TestClock.setTime(10 * hour)
      const upstream = yield* Upstream.Upstream
      const latest = yield* upstream.list({ organisation_id: org, latest: true, exclude_shipment: true })
      expect(latest.map((m) => m.hash)).toEqual(["m-2", "m-3", "m-5", "m-6"])
      for (const m of latest) expect(JSON.parse(m.body).payload).toEqual({ type: "X" })
      const container = yield* upstream.list({
        organisation_id: org,
        container: "C1",
        types: ["CONTAINER_MILESTONE", "SHIPMENT_CHANGE"]
      })
      expect(container.map((m) => m.hash)).toEqual(["m-1", "m-3"])
      expect(JSON.parse(container[0]!.body).payload.shipment).toEqual({ big: true })
    }).pipe(Effect.provide(memory)))
})

describe("Upstream cursors", () => {
  it.prop(
    "the native MAC and the portable one agree on every key and text",
    [fc.uint8Array({ maxLength: 100 }), fc.oneof(fc.string(), fc.string({ unit: "binary" }))],
    ([key, text]) => {
      assert.strictEqual(hmacSha256Base64Url(key, text), hmacSha256Base64UrlPortable(key, text))
      assert.match(hmacSha256Base64Url(key, text), /^[A-Za-z0-9_-]{43}$/)
    }
  )

  const pageOf = (org: string, cursor?: string) =>
    Effect.flatMap(
      Upstream.Upstream,
      (u) => u.page({ organisation_id: org, per_page: 2, ...(cursor === undefined ? {} : { cursor }) })
    )

  it.effect("a configured secret replaces the stored one; instances with the same secret agree", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* commitMessages(org, [message(1), message(2), message(3)])
      const withSecret = (secret: string) => Layer.provide(Upstream.layer(), Cursor.layerSecret(secret))
      const first = yield* pageOf(org).pipe(Effect.provide(withSecret("s1")))
      const same = yield* pageOf(org, first.next_cursor).pipe(Effect.provide(withSecret("s1")))
      expect(same.data.map((m) => m.hash)).toEqual(["m-3"])
      const error = yield* Effect.flip(pageOf(org, first.next_cursor).pipe(Effect.provide(withSecret("s2"))))
      assert.strictEqual(error._tag, "InvalidCursor")
      const stored = yield* Effect.flip(pageOf(org, first.next_cursor).pipe(Effect.provide(Upstream.layer())))
      assert.strictEqual(stored._tag, "InvalidCursor")
    }).pipe(Effect.provide(Storage.layerMemory)))

  it.effect("without a configured secret, one random secret is stored under cursor_secret", () =>
    Effect.gen(function*() {
      const org = freshId("org")
      yield* commitMessages(org, [message(1)])
      yield* pageOf(org).pipe(Effect.provide(Upstream.layer()))
      const settings = yield* Settings
      const secret = yield* settings.getOrCreate(Cursor.settingName, "other")
      expect(secret).not.toBe("other")
      expect(secret.length).toBeGreaterThanOrEqual(40)
      const first = yield* pageOf(org).pipe(Effect.provide(Upstream.layer()))
      const signer = yield* Cursor.makeSigner(Redacted.make(secret))
      expect(yield* signer.verify({ organisation_id: org }, first.next_cursor)).toBe(1)
    }).pipe(Effect.provide(Storage.layerMemory)))

  it.effect("layerConfig: a configured secret is used; without one (or an empty one) the stored one is", () =>
    Effect.gen(function*() {
      const secret = Config.option(Config.redacted("secret"))
      const configured = yield* Cursor.CursorSecret.pipe(
        Effect.provide(Cursor.layerConfig(secret)),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["secret", "from-config"]])))
      )
      expect(Redacted.value(configured)).toBe("from-config")
      const fallback = yield* Cursor.CursorSecret.pipe(
        Effect.provide(Cursor.layerConfig(secret)),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      const empty = yield* Cursor.CursorSecret.pipe(
        Effect.provide(Cursor.layerConfig(secret)),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["secret", ""]])))
      )
      expect(Redacted.value(empty)).toBe(Redacted.value(fallback))
      const settings = yield* Settings
      expect(Redacted.value(fallback)).toBe(yield* settings.getOrCreate(Cursor.settingName, "unused"))
    }).pipe(Effect.provide(Storage.layerMemory)))

  it.effect("a cursor is stable: the same position and filters sign to the same text", () =>
    Effect.gen(function*() {
      const signer = yield* Cursor.makeSigner(Redacted.make("k"))
      const scope = { organisation_id: "o", types: ["B", "A", "B"] }
      const a = yield* signer.sign(scope, 41)
      expect(yield* signer.sign({ organisation_id: "o", types: ["A", "B"] }, 41)).toBe(a)
      expect(yield* signer.verify(scope, a)).toBe(41)
      expect(yield* signer.verify({ ...scope, latest: false }, a)).toBe(41)
    }))
})
