import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import type { TrackingEvent, TrackingSource } from "@tradeflow/core"
import { Effect, Fiber, Option, Redacted, type Scope, TestClock, Tracer } from "effect"
import * as DcsaSignature from "../src/DcsaSignature.js"
import * as DcsaSource from "../src/DcsaSource.js"
import { listen } from "../test-kit/Loopback.js"
import { day, FakeCarrier, Http, paramsOf, profileOf, setup, shipment, T0 } from "./Fixture.js"
import * as Receiver from "./Receiver.js"

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope | HttpClient.HttpClient>) =>
  effect.pipe(Effect.scoped, Effect.provide(Http))

const box = { equipment: "MSKU9070323" }

const summary = (events: ReadonlyArray<TrackingEvent.TrackingEvent>) =>
  events.map((e) => `${e.event_code} ${e.classifier} ${e.container_reference ?? "-"} ${e.location ?? "-"}`)

describe("DcsaSource: polling", () => {
  it.effect("2.2: the container's events as the carrier published them, then the new ones since the high-water mark", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup()
      const first = yield* source.fetch({ query: box, since: null })
      assert.strictEqual(first.status, "found")
      assert.deepStrictEqual(first.malformed, [])
      assert.deepStrictEqual(summary(first.events), [
        "CONF ACT - -",
        "GTOT PLN MSKU9070323 NLRTM",
        "GTIN PLN MSKU9070323 NLRTM",
        "LOAD PLN MSKU9070323 NLRTM",
        "DEPA PLN - NLRTM",
        "ARRI PLN - SGSIN",
        "DISC PLN MSKU9070323 SGSIN",
        "GTOT PLN MSKU9070323 SGSIN",
        "GTIN PLN MSKU9070323 SGSIN"
      ])
      assert.deepStrictEqual(first.events.map((e) => e.status_code), [
        null,
        "GE",
        "GN",
        "AE",
        "VD",
        "VA",
        "UV",
        "GT",
        "GR"
      ])
      assert.isTrue(first.events.every((e) => e.source === "fake" && e.updated_at === T0 && e.raw !== null))
      assert.strictEqual(first.high_water, T0)
      yield* TestClock.adjust(4 * day)
      const second = yield* source.fetch({ query: box, since: first.high_water })
      assert.deepStrictEqual(paramsOf(fake, "/v2/events"), [
        [["equipmentReference", "MSKU9070323"], ["limit", "100"]],
        [["equipmentReference", "MSKU9070323"], ["eventCreatedDateTime:gte", "2026-03-02T07:55:00.000Z"], [
          "limit",
          "100"
        ]]
      ])
      assert.deepStrictEqual(summary(second.events.filter((e) => e.updated_at > T0)), [
        "GTOT ACT MSKU9070323 NLRTM",
        "GTIN ACT MSKU9070323 NLRTM",
        "LOAD ACT MSKU9070323 NLRTM",
        "DEPA ACT - NLRTM",
        "ISSU ACT - -"
      ])
      assert.strictEqual(second.high_water, T0 + 4 * day)
      const load = second.events.find((e) => e.event_code === "LOAD" && e.classifier === "ACT")
      assert.deepStrictEqual(load?.transport_call?.mode, "VESSEL")
      assert.deepStrictEqual([load?.bookings, load?.bills_of_lading], [[shipment.booking], [shipment.bill_of_lading]])
    })))

  it.effect("nothing new since the mark: awaiting, the mark kept; a reference the carrier does not know: not-found", () =>
    run(Effect.gen(function*() {
      const { source } = yield* setup()
      const later = T0 + 3_600_000
      const none = yield* source.fetch({ query: box, since: later })
      assert.deepStrictEqual(none, { status: "awaiting", events: [], malformed: [], high_water: later })
      const unknown = yield* source.fetch({ query: { equipment: "APZU4812090" }, since: later })
      assert.deepStrictEqual(unknown, { status: "not-found", events: [], malformed: [], high_water: later })
    })))

  it.effect("3.0: a booking and its container, the latest version of each event, a mistake retracted", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup({ shipments: [{ ...shipment, mistake: true }] }, { version: "3.0" })
      const query = { booking: shipment.booking, equipment: "MSKU9070323" }
      yield* TestClock.adjust(90 * 60_000)
      const first = yield* source.fetch({ query, since: null })
      const mistake = first.events.find((e) => e.event_id.endsWith("-mistake"))
      assert.deepStrictEqual([mistake?.classifier, mistake?.retracted, mistake?.location], ["ACT", false, "SGSIN"])
      assert.strictEqual(first.events.find((e) => e.event_code === "GTOT" && e.location === "NLRTM")?.classifier, "ACT")
      yield* TestClock.adjust(60 * 60_000)
      const second = yield* source.fetch({ query, since: first.high_water })
      assert.deepStrictEqual(second.events.map((e) => [e.event_id, e.retracted]), [[
        `evt-${shipment.booking}-mistake`,
        true
      ]])
      assert.deepStrictEqual(paramsOf(fake, "/events")[1], [
        ["carrierBookingReference", "ABC709951"],
        ["equipmentReference", "MSKU9070323"],
        ["eventUpdatedDateTimeMin", new Date(first.high_water! - 300_000).toISOString()],
        ["limit", "100"]
      ])
      assert.isTrue(
        first.events.every((e) => e.container_reference === null || e.container_reference === "MSKU9070323")
      )
    })))

  it.effect("the query kind: a booking with its container where the carrier wants both, none it cannot ask", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup({ shipments: [shipment], quirks: { bookingWithEquipment: true } }, {
        references: ["booking+equipment", "booking"]
      })
      const both = yield* source.fetch({ query: { equipment: "MSKU9070323", booking: shipment.booking }, since: null })
      assert.strictEqual(both.status, "found")
      const alone = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(alone._tag, "SourceNotFound")
      assert.strictEqual(
        alone.message,
        "fake answers queries by booking+equipment, booking; the target names equipment"
      )
      assert.strictEqual(fake.received.length, 1)
    })))

  it.effect("a carrier that wants the booking with the container refuses a container alone: 400, SourceNotFound", () =>
    run(Effect.gen(function*() {
      const { source } = yield* setup({ shipments: [shipment], quirks: { bookingWithEquipment: true } })
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceNotFound")
      assert.strictEqual(
        error.message,
        "GET /v2/events (page 1): the carrier refused the request (400): " +
          "this carrier answers a container only with its carrierBookingReference"
      )
    })))

  it.effect("the PLAN quirk: malformed events without the profile's alias, read as PLN with it", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup({ shipments: [shipment], quirks: { planAlias: true } })
      const without = yield* source.fetch({ query: box, since: null })
      assert.strictEqual(without.events.length, 1)
      assert.strictEqual(without.malformed.length, 8)
      assert.match(without.malformed[0]!.message, /^\/1\/eventClassifierCode: eventClassifierCode must be one of "PLN"/)
      const aliased = yield* DcsaSource.make(profileOf(fake, { classifier_aliases: { PLAN: "PLN" } }))
      const read = yield* aliased.fetch({ query: box, since: null })
      assert.deepStrictEqual([read.events.length, read.malformed.length], [9, 0])
      assert.strictEqual(read.events[1]!.classifier, "PLN")
      assert.include(read.events[1]!.raw!, `"eventClassifierCode":"PLAN"`)
    })))

  it.effect("one malformed event fails alone: reported at its index, every other event kept", () =>
    run(Effect.gen(function*() {
      const { source } = yield* setup({ shipments: [shipment], quirks: { malformed: true } })
      const out = yield* source.fetch({ query: box, since: null })
      assert.strictEqual(out.status, "found")
      assert.strictEqual(out.events.length, 8)
      assert.deepStrictEqual(out.malformed.map((m) => [m.index, m.message]), [[
        1,
        "/1/eventDateTime: eventDateTime must be an RFC 3339 date-time with an offset, for example 2021-01-09T14:12:56+01:00"
      ]])
      assert.isString(out.malformed[0]!.event_id)
    })))

  it.effect("the overlap: a poll asks from the high-water mark less the profile's overlap", () =>
    run(Effect.gen(function*() {
      const { fake } = yield* setup()
      const since = T0 + 123_456
      for (
        const [version, overlap, path, name] of [
          ["2.2", 60_000, "/v2/events", "eventCreatedDateTime:gte"],
          ["3.0", 0, "/events", "eventUpdatedDateTimeMin"]
        ] as const
      ) {
        const source = yield* DcsaSource.make(profileOf(fake, { version, overlap_millis: overlap }))
        yield* source.fetch({ query: box, since })
        const asked = paramsOf(fake, path).at(-1)!.find(([k]) => k === name)
        assert.deepStrictEqual(asked, [name, new Date(since - overlap).toISOString()])
      }
    })))
})

describe("DcsaSource: pagination", () => {
  const everyPage = (fake: FakeCarrier.FakeCarrier, path: string) => {
    const pages = paramsOf(fake, path)
    const [first, ...rest] = pages
    assert.isFalse(first!.some(([k]) => k === "cursor"))
    for (const page of rest) {
      assert.deepStrictEqual(page.filter(([k]) => k !== "cursor"), first, "every original parameter is sent again")
      assert.strictEqual(page.filter(([k]) => k === "cursor").length, 1)
    }
    return pages.length
  }

  for (
    const [name, fakeOptions, profile] of [
      ["2.2 Next-Page-Cursor", { pagination: "next-page-cursor" }, {}],
      ["2.2 Next-Page as a link", { pagination: "next-page" }, {}],
      ["2.2 Next-Page as a bare cursor", { pagination: "next-page", nextPageForm: "cursor" }, {
        pagination: "next-page"
      }],
      ["3.0 Next-Page-Cursor", {}, { version: "3.0", pagination: "next-page-cursor" }]
    ] as const
  ) {
    it.effect(`${name}: every page read, every original parameter sent again with the cursor`, () =>
      run(Effect.gen(function*() {
        const { fake, source } = yield* setup({ shipments: [shipment], ...fakeOptions }, { ...profile, page_size: 2 })
        const out = yield* source.fetch({ query: box, since: T0 - 60_000 })
        const path = profile.version === "3.0" ? "/events" : "/v2/events"
        assert.strictEqual(everyPage(fake, path), 5)
        assert.strictEqual(out.events.length, 9)
        assert.deepStrictEqual(new Set(out.events.map((e) => e.event_id)).size, 9)
        assert.isTrue(fake.received.every((r) => r.status === 200))
      })))
  }

  it.effect("the page cap: at most max_pages pages, and the high-water mark stays where it was", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup({ shipments: [shipment] }, { page_size: 2, max_pages: 2 })
      const since = T0 - 60_000
      const out = yield* source.fetch({ query: box, since })
      assert.deepStrictEqual([out.events.length, out.high_water, fake.received.length], [4, since, 2])
      const none = yield* DcsaSource.make(profileOf(fake, { page_size: 2, pagination: "none" }))
      const one = yield* none.fetch({ query: box, since: null })
      assert.deepStrictEqual([one.events.length, paramsOf(fake, "/v2/events").at(-1)], [9, [[
        "equipmentReference",
        "MSKU9070323"
      ]]])
    })))
})

describe("DcsaSource: errors", () => {
  const cases: ReadonlyArray<readonly [FakeCarrier.Reply, TrackingSource.TrackingSourceError["_tag"], string]> = [
    [{ status: 401 }, "SourceUnauthorized", "GET /v2/events (page 1): the carrier refused our credentials (401)"],
    [{ status: 403 }, "SourceUnauthorized", "GET /v2/events (page 1): the carrier refused our credentials (403)"],
    [{ status: 500 }, "SourceTransient", "GET /v2/events (page 1): the carrier answered 500"],
    [
      { status: 503, body: JSON.stringify({ errors: [{ reason: "down", message: "maintenance" }] }) },
      "SourceTransient",
      "GET /v2/events (page 1): the carrier answered 503: maintenance"
    ],
    [{ status: 408 }, "SourceTransient", "GET /v2/events (page 1): the carrier answered 408"],
    [{ status: 400 }, "SourceNotFound", "GET /v2/events (page 1): the carrier refused the request (400)"],
    [{ status: 200, body: "<html>" }, "SourceMalformed", "GET /v2/events (page 1): the answer is not JSON"],
    [
      { status: 200, body: "{}" },
      "SourceMalformed",
      "GET /v2/events (page 1): the answer must be a JSON array of DCSA Track & Trace 2.2 events"
    ],
    ["reset", "SourceTransient", "GET /v2/events: transport error"]
  ]
  it.effect("each answer its error", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup()
      for (const [reply, tag, message] of cases) {
        fake.failNext(1, reply)
        const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
        assert.strictEqual(error._tag, tag, JSON.stringify(reply))
        assert.isTrue(error.message.startsWith(message), `${error.message} / ${message}`)
      }
    })))

  it.effect("429: Retry-After in seconds or as an HTTP date (60 s without one); no request before it has passed", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup()
      const waits: Array<number> = []
      for (const header of ["7", new Date(T0 + 90_000).toUTCString(), undefined]) {
        fake.failNext(1, { status: 429, ...(header === undefined ? {} : { headers: { "retry-after": header } }) })
        const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
        assert.strictEqual(error._tag, "SourceRateLimited")
        if (error._tag === "SourceRateLimited") waits.push(error.retry_after_millis)
        const asked = fake.received.length
        const early = yield* Effect.flip(source.fetch({ query: box, since: null }))
        assert.deepStrictEqual([early._tag, fake.received.length], ["SourceRateLimited", asked])
        yield* TestClock.adjust(error._tag === "SourceRateLimited" ? error.retry_after_millis : 0)
      }
      assert.deepStrictEqual(waits, [7_000, 83_000, 60_000])
      assert.strictEqual((yield* source.fetch({ query: box, since: null })).status, "found")
    })))

  it.effect("no answer within the request timeout: SourceTransient", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup(undefined, { request_timeout_millis: 10_000 })
      fake.failNext(1, "hang")
      const fiber = yield* Effect.fork(Effect.flip(source.fetch({ query: box, since: null })))
      yield* fake.arrived(1)
      yield* TestClock.adjust(10_000)
      const error = yield* Fiber.join(fiber)
      assert.deepStrictEqual([error._tag, error.message], [
        "SourceTransient",
        "GET /v2/events: no answer within 10000 ms"
      ])
    })))

  it.effect("a carrier that is not there: SourceTransient", () =>
    run(Effect.gen(function*() {
      const { fake } = yield* setup()
      const port = yield* Effect.scoped(listen(() => undefined))
      const source = yield* DcsaSource.make({ ...profileOf(fake), base_url: `http://127.0.0.1:${port}` })
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceTransient")
    })))
})

describe("DcsaSource: credentials", () => {
  const oauth = {
    type: "oauth2",
    client_id: "tradeflow",
    client_secret: "s3cret/+ value",
    expires_in_seconds: 3_600
  } as const
  const oauthProfile = (fake: FakeCarrier.FakeCarrier, extra: Record<string, unknown> = {}) =>
    ({
      auth: {
        type: "oauth2",
        token_url: fake.tokenUrl,
        client_id: "tradeflow",
        client_secret: "s3cret/+ value",
        ...extra
      }
    }) as never

  it.effect("OAuth2: one token for every request until shortly before it expires, sent as a bearer token", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const fake = yield* FakeCarrier.make({ shipments: [shipment], auth: oauth })
      const source = yield* DcsaSource.make(profileOf(fake, oauthProfile(fake)))
      for (let i = 0; i < 3; i++) yield* source.fetch({ query: box, since: null })
      assert.strictEqual(fake.tokensIssued(), 1)
      const [tokenRequest] = fake.received.filter((r) => r.path === "/oauth/token")
      assert.strictEqual(tokenRequest!.body, "grant_type=client_credentials")
      assert.strictEqual(
        tokenRequest!.headers["authorization"],
        `Basic ${Buffer.from("tradeflow:s3cret%2F%2B%20value").toString("base64")}`
      )
      assert.isTrue(
        fake.received.filter((r) => r.path === "/v2/events").every((r) =>
          /^Bearer /.test(r.headers["authorization"] ?? "")
        )
      )
      yield* TestClock.adjust(3_600_000 - 60_000 - 1)
      yield* source.fetch({ query: box, since: null })
      assert.strictEqual(fake.tokensIssued(), 1)
      yield* TestClock.adjust(1)
      yield* source.fetch({ query: box, since: null })
      assert.strictEqual(fake.tokensIssued(), 2)
    })))

  it.effect("OAuth2: concurrent requests ask for one token; credentials in the body where the profile says so", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const fake = yield* FakeCarrier.make({ shipments: [shipment], auth: oauth })
      const source = yield* DcsaSource.make(profileOf(fake, oauthProfile(fake, { client_authentication: "body" })))
      yield* Effect.all(Array.from({ length: 5 }, () => source.fetch({ query: box, since: null })), { concurrency: 5 })
      assert.strictEqual(fake.tokensIssued(), 1)
      const [tokenRequest] = fake.received.filter((r) => r.path === "/oauth/token")
      assert.strictEqual(tokenRequest!.headers["authorization"], undefined)
      assert.deepStrictEqual([...new URLSearchParams(tokenRequest!.body)], [
        ["grant_type", "client_credentials"],
        ["client_id", "tradeflow"],
        ["client_secret", "s3cret/+ value"]
      ])
    })))

  it.effect("OAuth2: a cached token refused (401) is renewed once; refused again, SourceUnauthorized", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const fake = yield* FakeCarrier.make({ shipments: [shipment], auth: oauth })
      const source = yield* DcsaSource.make(profileOf(fake, oauthProfile(fake)))
      yield* source.fetch({ query: box, since: null })
      fake.revokeTokens()
      assert.strictEqual((yield* source.fetch({ query: box, since: null })).status, "found")
      assert.strictEqual(fake.tokensIssued(), 2)
      assert.deepStrictEqual(fake.received.slice(-3).map((r) => [r.path, r.status]), [
        ["/v2/events", 401],
        ["/oauth/token", 200],
        ["/v2/events", 200]
      ])
      fake.failNext(1, { status: 401 })
      fake.failNext(1, "normal")
      fake.failNext(1, { status: 401 })
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceUnauthorized")
      assert.deepStrictEqual(fake.received.slice(-3).map((r) => r.path), ["/v2/events", "/oauth/token", "/v2/events"])
      assert.notInclude(error.message, "s3cret")
    })))

  it.effect("OAuth2: client credentials the token endpoint refuses are SourceUnauthorized, asked no further", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const fake = yield* FakeCarrier.make({ shipments: [shipment], auth: oauth })
      const source = yield* DcsaSource.make(profileOf(fake, oauthProfile(fake, { client_secret: "wrong" })))
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.deepStrictEqual([error._tag, error.message], [
        "SourceUnauthorized",
        "the token endpoint refused our client credentials (401)"
      ])
      assert.deepStrictEqual(fake.received.map((r) => r.path), ["/oauth/token"])
    })))

  it.effect("API key: sent in the profile's header; refused, SourceUnauthorized after one request", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const fake = yield* FakeCarrier.make({
        shipments: [shipment],
        auth: { type: "api-key", header: "Consumer-Key", value: "k-123" }
      })
      const good = yield* DcsaSource.make(
        profileOf(fake, { auth: { type: "api-key", header: "Consumer-Key", value: "k-123" } })
      )
      assert.strictEqual((yield* good.fetch({ query: box, since: null })).status, "found")
      assert.strictEqual(fake.received[0]!.headers["consumer-key"], "k-123")
      const bad = yield* DcsaSource.make(
        profileOf(fake, { auth: { type: "api-key", header: "Consumer-Key", value: "k-999" } })
      )
      const error = yield* Effect.flip(bad.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceUnauthorized")
      assert.strictEqual(fake.received.length, 2)
      assert.notInclude(error.message, "k-999")
    })))
})

describe("DcsaSource: secrets stay out of traces", () => {
  it.effect("the API key's own header, the bearer token and the client secret are not span attributes", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const spans: Array<Tracer.Span> = []
      const native = yield* Effect.tracer
      const recording = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: native.context
      })
      const keyed = yield* FakeCarrier.make({
        shipments: [shipment],
        auth: { type: "api-key", header: "Consumer-Key", value: "k-123" }
      })
      const oauth = yield* FakeCarrier.make({
        shipments: [shipment],
        auth: { type: "oauth2", client_id: "tradeflow", client_secret: "s3cret-value" }
      })
      const sources = [
        yield* DcsaSource.make(profileOf(keyed, { auth: { type: "api-key", header: "Consumer-Key", value: "k-123" } })),
        yield* DcsaSource.make(profileOf(oauth, {
          auth: { type: "oauth2", token_url: oauth.tokenUrl, client_id: "tradeflow", client_secret: "s3cret-value" }
        }))
      ]
      for (const source of sources) yield* Effect.withTracer(source.fetch({ query: box, since: null }), recording)
      const attributes = spans.flatMap((s) => [...(s as unknown as { attributes: Map<string, unknown> }).attributes])
      const traced = JSON.stringify(attributes)
      assert.include(spans.map((s) => s.name), "DcsaSource.fetch")
      assert.deepStrictEqual(attributes.filter(([k]) => k === "http.request.header.consumer-key").map(([, v]) => v), [
        "<redacted>"
      ])
      const token = oauth.received.find((r) => r.path === "/v2/events")!.headers["authorization"]!.slice(7)
      for (const secret of ["k-123", "s3cret-value", token]) assert.notInclude(traced, secret)
    })))
})

describe("DcsaSource: rate budget", () => {
  it.effect("per minute: a request whose turn is more than 10 s away fails at once with the wait, and none is sent; a nearer one waits its turn", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup(undefined, { rate: { per_minute: 2 } })
      yield* source.fetch({ query: box, since: null })
      yield* source.fetch({ query: box, since: null })
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceRateLimited")
      if (error._tag === "SourceRateLimited") assert.strictEqual(error.retry_after_millis, 30_000)
      assert.strictEqual(fake.received.length, 2)
      yield* TestClock.adjust(19_999)
      assert.strictEqual((yield* Effect.flip(source.fetch({ query: box, since: null })))._tag, "SourceRateLimited")
      yield* TestClock.adjust(1)
      const waiting = yield* Effect.fork(source.fetch({ query: box, since: null }))
      yield* TestClock.adjust(9_999)
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      assert.strictEqual(fake.received.length, 2)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* Fiber.join(waiting)).status, "found")
      assert.strictEqual(fake.received.length, 3)
    })))

  it.effect("per day, and every page counts", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup(undefined, { rate: { per_minute: 100, per_day: 3 }, page_size: 4 })
      yield* source.fetch({ query: box, since: null })
      assert.strictEqual(fake.received.length, 3)
      const error = yield* Effect.flip(source.fetch({ query: box, since: null }))
      assert.strictEqual(error._tag, "SourceRateLimited")
      if (error._tag === "SourceRateLimited") assert.strictEqual(error.retry_after_millis, 28_800_000)
    })))
})

describe("DcsaSource: 2.2 subscriptions", () => {
  const subscribed = Effect.gen(function*() {
    const { fake, source } = yield* setup(undefined, { push: "subscription" })
    const receiver = yield* Receiver.make()
    const push = source.push
    if (push?._tag !== "Subscription") return assert.fail("a subscription push")
    const subscription = yield* push.subscribe(box, receiver.url)
    return { fake, push, receiver, subscription }
  })

  const pushed = (got: Receiver.Got): TrackingSource.PushedRequest => ({ headers: got.headers, body: got.body })

  it.effect("subscribe, a signed callback from the carrier, verified and read; unsubscribe", () =>
    run(Effect.gen(function*() {
      const { fake, push, receiver, subscription } = yield* subscribed
      assert.deepStrictEqual(fake.subscriptions().map((s) => [s.subscriptionID, s.callbackUrl, s.filters]), [
        [subscription.id, receiver.url, { equipmentReference: "MSKU9070323" }]
      ])
      const sent = JSON.parse(fake.received[0]!.body) as { secret: string }
      assert.deepStrictEqual(Buffer.from(sent.secret, "base64"), Buffer.from(Redacted.value(subscription.secret)))
      assert.strictEqual(Redacted.value(subscription.secret).length, 32)
      yield* TestClock.adjust(4 * day)
      const callbacks = yield* fake.deliver
      assert.deepStrictEqual(callbacks.map((c) => c.status), [204])
      const got = receiver.got[0]!
      assert.deepStrictEqual(Option.getOrNull(push.subscriptionOf(pushed(got))), subscription.id)
      const events = yield* push.verify(pushed(got), subscription)
      assert.deepStrictEqual(events.malformed, [])
      assert.strictEqual(events.events.length, 14)
      assert.deepStrictEqual(summary(events.events.filter((e) => e.updated_at > T0)), [
        "GTOT ACT MSKU9070323 NLRTM",
        "GTIN ACT MSKU9070323 NLRTM",
        "LOAD ACT MSKU9070323 NLRTM",
        "DEPA ACT - NLRTM",
        "ISSU ACT - -"
      ])
      assert.deepStrictEqual(yield* fake.deliver, [])
      yield* push.unsubscribe(subscription.id)
      assert.deepStrictEqual(fake.subscriptions(), [])
      yield* push.unsubscribe(subscription.id)
    })))

  it.effect("forged, unsigned, tampered or another subscription's callbacks are refused", () =>
    run(Effect.gen(function*() {
      const { fake, push, receiver, subscription } = yield* subscribed
      yield* TestClock.adjust(4 * day)
      yield* fake.deliver
      const good = pushed(receiver.got[0]!)
      const { "notification-signature": signature, ...unsigned } = good.headers
      const tampered = new Uint8Array(good.body)
      tampered[2] = tampered[2]! ^ 1
      const cases: ReadonlyArray<readonly [TrackingSource.PushedRequest, string]> = [
        [{ ...good, headers: unsigned }, "the push is not signed (no Notification-Signature)"],
        [{ ...good, body: tampered }, "the Notification-Signature is not the body's under the subscription's secret"],
        [
          { ...good, headers: { ...good.headers, "notification-signature": signature!.replace("sha256", "sha1") } },
          "the Notification-Signature is not the body's under the subscription's secret"
        ],
        [
          { ...good, headers: { ...good.headers, "subscription-id": "00000000-0000-4000-8000-000000000000" } },
          `the push names subscription 00000000-0000-4000-8000-000000000000, not ${subscription.id}`
        ],
        [
          { ...good, headers: { ...good.headers, "subscription-id": undefined } },
          "the push names no subscription (Subscription-ID)"
        ]
      ]
      for (const [request, message] of cases) {
        const error = yield* Effect.flip(push.verify(request, subscription))
        assert.deepStrictEqual([error._tag, error.message], ["PushRefused", message])
      }
      fake.setQuirks({ badSignature: true })
      yield* fake.addShipment({ booking: "BK-2", containers: ["MSKU9070323"] })
      yield* TestClock.adjust(1)
      yield* fake.deliver
      const forged = yield* Effect.flip(push.verify(pushed(receiver.got[1]!), subscription))
      assert.strictEqual(forged.message, "the Notification-Signature is not the body's under the subscription's secret")
      const notAList = new TextEncoder().encode(JSON.stringify({ events: [] }))
      const unreadable = yield* Effect.flip(push.verify({
        headers: {
          ...good.headers,
          "notification-signature": DcsaSignature.sign(Redacted.value(subscription.secret), notAList)
        },
        body: notAList
      }, subscription))
      assert.strictEqual(unreadable._tag, "PushUnreadable")
    })))
})

describe("DcsaSource: 3.0 consumer push", () => {
  it.effect("a POST /events body of the carrier read as events; a wrong or missing token refused; with the token, a body that is not JSON unreadable", () =>
    run(Effect.gen(function*() {
      const { fake, source } = yield* setup({ shipments: [shipment], quirks: { malformed: true } }, {
        version: "3.0",
        push: "consumer",
        consumer_token: "consumer-token-0123"
      })
      const receiver = yield* Receiver.make(200)
      const push = source.push
      if (push?._tag !== "Consumer") return assert.fail("a consumer push")
      yield* fake.pushTo(receiver.url, -Infinity, "consumer-token-0123")
      yield* fake.pushTo(receiver.url, -Infinity, "consumer-token-0124")
      yield* fake.pushTo(receiver.url)
      const [got, wrong, none] = receiver.got as [Receiver.Got, Receiver.Got, Receiver.Got]
      for (const refusedPush of [wrong, none]) {
        const refusedRead = yield* Effect.flip(push.read({ headers: refusedPush.headers, body: refusedPush.body }))
        assert.deepStrictEqual(
          [refusedRead._tag, refusedRead.message],
          ["PushRefused", "the push does not carry the consumer token (Authorization: Bearer …)"]
        )
      }
      const read = yield* push.read({ headers: got.headers, body: got.body })
      assert.strictEqual(
        read.events.length + read.malformed.length,
        (JSON.parse(new TextDecoder().decode(got.body)) as { events: Array<unknown> }).events.length
      )
      assert.deepStrictEqual(read.malformed.map((m) => m.index), [1])
      const refused = yield* Effect.flip(push.read({ headers: got.headers, body: new TextEncoder().encode("{") }))
      assert.deepStrictEqual([refused._tag, refused.message], ["PushUnreadable", "the body is not JSON"])
    })))
})
