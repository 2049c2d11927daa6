import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it, layer } from "@effect/vitest"
import { ApiMessage, Worker } from "@tradeflow/core"
import { Effect, Schema, TestClock } from "effect"
import { HttpConfig } from "../src/index.js"
import { openApiDocument } from "../src/internal/openapi.js"
import { deprecateWidgetSearch, widgetKeyOf } from "../src/internal/widget.js"
import { consoleAuth, makeAppLayer, newKey, oceanBasic, type Received, send, uat } from "./Fixture.js"

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

const createWidgetKey = (organisationId: string) =>
  Effect.map(
    send("POST", `/console/organisations/${organisationId}/widget-keys`, { auth: consoleAuth }),
    (r) => {
      assert.strictEqual(r.status, 201, r.text)
      return r.body as { id: string; key: string }
    }
  )

const widget = (query: string | undefined, sent: { auth?: string; host?: string; prefix?: string } = {}) =>
  send(
    "GET",
    `${sent.prefix ?? ""}/api/v2/widget-search${query === undefined ? "" : `?query=${encodeURIComponent(query)}`}`,
    { ...(sent.auth === undefined ? {} : { auth: sent.auth }), ...(sent.host === undefined ? {} : { host: sent.host }) }
  )

const assertProblem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  assert.strictEqual((r.body as { status: number }).status, status)
}

const detail = (r: Received) => (r.body as { detail: string }).detail

/** A UAT organisation with an ocean_basic tradeflow, and a widget key on its (UAT) companion. */
const uatFixture = (reference: string) =>
  Effect.gen(function*() {
    const k = yield* newKey("uat")
    const posted = yield* send("POST", "/v3/downstream/tradeflows", {
      host: uat,
      auth: k.key,
      json: {
        ...oceanBasic(reference),
        booking_reference: `BK-${reference}`,
        bill_of_lading_reference: `BL-${reference}`,
        carrier_name: "Maersk"
      }
    })
    assert.strictEqual(posted.status, 202, posted.text)
    yield* drain
    return { ...k, widget: yield* createWidgetKey(k.organisation.id) }
  })

describe("widgetKeyOf", () => {
  it("reads Basic <key>, Basic base64(<key>:) and Basic base64(<key>); nothing else is Basic", () => {
    const key = "wk_abc-DEF_123"
    const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64")
    assert.strictEqual(widgetKeyOf(`Basic ${key}`), key)
    assert.strictEqual(widgetKeyOf(`basic   ${key} `), key)
    assert.strictEqual(widgetKeyOf(`Basic ${b64(`${key}:`)}`), key)
    assert.strictEqual(widgetKeyOf(`Basic ${b64(key)}`), key)
    assert.strictEqual(widgetKeyOf(`Basic ${b64("user:password")}`), b64("user:password"))
    assert.strictEqual(widgetKeyOf(key), undefined)
    assert.strictEqual(widgetKeyOf(`Bearer ${key}`), undefined)
    assert.strictEqual(widgetKeyOf(""), undefined)
    assert.strictEqual(widgetKeyOf("Basic"), undefined)
  })
})

describe("deprecateWidgetSearch", () => {
  const sunset = new Date(Date.UTC(2027, 5, 30, 12))
  const run = (url: string) =>
    deprecateWidgetSearch(HttpConfig.make({ consoleToken: "t", widgetSunset: sunset }))(
      Effect.succeed(HttpServerResponse.text("ok"))
    ).pipe(Effect.provideService(
      HttpServerRequest.HttpServerRequest,
      HttpServerRequest.fromWeb(new Request(`http://localhost${url}`))
    ))

  it.effect("answers through the app until the sunset instant of the Effect clock, 410 from then on", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(sunset.getTime() - 1)
      const before = yield* run("/api/v2/widget-search?query=x")
      assert.deepStrictEqual([before.status, before.headers["deprecation"], before.headers["sunset"]], [
        200,
        "true",
        "Wed, 30 Jun 2027 12:00:00 GMT"
      ])
      yield* TestClock.adjust("1 millis")
      for (const url of ["/api/v2/widget-search?query=x", "/v3/api/v2/widget-search", "/api/v2/widget-search/"]) {
        const after = yield* run(url)
        assert.deepStrictEqual([after.status, after.headers["deprecation"], after.headers["sunset"]], [
          410,
          "true",
          "Wed, 30 Jun 2027 12:00:00 GMT"
        ], url)
      }
      const other = yield* run("/upstream")
      assert.deepStrictEqual([other.status, other.headers["deprecation"], other.headers["sunset"]], [
        200,
        undefined,
        undefined
      ])
    }))
})

layer(makeAppLayer(), { excludeTestServices: true })("GET /api/v2/widget-search", (it) => {
  it.effect("200: the widget result of SERVICE.md, at the root and under /v3, for every kind of reference", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-1")
      const auth = `Basic ${f.widget.key}`
      const r = yield* widget("WS-1", { auth, host: uat, prefix: "/v3" })
      assert.strictEqual(r.status, 200, r.text)
      assert.match(r.headers["content-type"] ?? "", /^application\/json/)
      assert.strictEqual(r.headers["deprecation"], "true")
      assert.isUndefined(r.headers["sunset"])
      const result = Schema.decodeUnknownSync(ApiMessage.WidgetSearchResult, { onExcessProperty: "error" })(r.body)
      assert.deepStrictEqual(Object.keys(r.body as object), [
        "carrier",
        "booking_reference",
        "bill_of_lading_reference",
        "departure",
        "arrival",
        "containers"
      ])
      assert.deepStrictEqual([result.carrier, result.booking_reference, result.bill_of_lading_reference], [
        "Maersk",
        "BK-WS-1",
        "BL-WS-1"
      ])
      assert.deepStrictEqual(
        [
          result.departure?.location,
          result.departure?.actual,
          result.arrival?.location.unlocode,
          result.arrival?.actual
        ],
        [{ name: "Shanghai", unlocode: "CNSHA", timezone: "Asia/Shanghai", country: "China" }, true, "NLRTM", false]
      )
      assert.notStrictEqual(result.departure?.vessel.name, "")
      const [container] = result.containers
      assert.deepStrictEqual(container?.details, {
        type_code: "45G1",
        type_group: "GP",
        type_reefer: false,
        length: 40
      })
      assert.deepStrictEqual(
        [
          container?.reference,
          container?.latest_actual_milestone?.status_code,
          container?.latest_actual_milestone?.actual
        ],
        ["MSCU1234565", "AE", true]
      )
      for (const query of ["BK-WS-1", "bl-ws-1", "mscu 123456-5"]) {
        const again = yield* widget(query, { auth, host: uat })
        assert.strictEqual(again.status, 200, again.text)
        assert.deepStrictEqual(again.body, r.body, query)
      }
    }))

  it.effect("a production key reads the live organisation, whose tradeflows are not the UAT ones", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-2")
      const live = yield* createWidgetKey(f.organisationId)
      const prod = yield* newKey("production")
      yield* send("POST", "/downstream/tradeflows", {
        auth: prod.key,
        json: { tradeflow_reference: "WS-2", booking_reference: "P" }
      })
      yield* drain
      assertProblem(yield* widget("WS-2", { auth: `Basic ${live.key}` }), 404)
      const own = yield* createWidgetKey(prod.organisationId)
      const r = yield* widget("WS-2", { auth: `Basic ${own.key}` })
      assert.strictEqual(r.status, 200, r.text)
      assert.deepStrictEqual(r.body, {
        carrier: "",
        booking_reference: "P",
        bill_of_lading_reference: null,
        departure: null,
        arrival: null,
        containers: []
      })
    }))

  it.effect("the key may also be sent as base64 of <key>: or of <key>", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-3")
      for (const credentials of [`${f.widget.key}:`, f.widget.key]) {
        const r = yield* widget("WS-3", { auth: `Basic ${Buffer.from(credentials).toString("base64")}`, host: uat })
        assert.strictEqual(r.status, 200, r.text)
      }
    }))

  it.effect("401 problems without a Basic widget key, with an unknown one or with an API key", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-4")
      for (
        const auth of [undefined, f.widget.key, `Bearer ${f.widget.key}`, "Basic wk_unknown", `Basic ${f.key}`, f.key]
      ) {
        const r = yield* widget("WS-4", { host: uat, ...(auth === undefined ? {} : { auth }) })
        assertProblem(r, 401)
        assert.strictEqual(r.headers["deprecation"], "true")
      }
    }))

  it.effect("403 for a key of the other environment's host, 421 for an unknown host", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-5")
      const r = yield* widget("WS-5", { auth: `Basic ${f.widget.key}` })
      assertProblem(r, 403)
      assert.match(detail(r), /token environment \(uat\) does not match the host \(production\)/)
      assertProblem(yield* widget("WS-5", { auth: `Basic ${f.widget.key}`, host: "elsewhere.example" }), 421)
    }))

  it.effect("400 naming query when it is missing or empty; 404 when nothing matches; 405 for another method", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-6")
      const auth = `Basic ${f.widget.key}`
      for (const query of [undefined, "", "  "]) {
        const r = yield* widget(query, { auth, host: uat })
        assertProblem(r, 400)
        assert.include(detail(r), "query")
        assert.strictEqual((r.body as { errors: Array<{ path: string }> }).errors[0]?.path, "query")
        assert.strictEqual(r.headers["deprecation"], "true")
      }
      const missing = yield* widget("WS-404", { auth, host: uat })
      assertProblem(missing, 404)
      assert.include(detail(missing), "WS-404")
      assert.strictEqual(missing.headers["deprecation"], "true")
      const post = yield* send("POST", "/api/v2/widget-search?query=WS-6", { auth, host: uat })
      assertProblem(post, 405)
      assert.strictEqual(post.headers["deprecation"], "true")
      assert.isUndefined((yield* send("GET", "/health")).headers["deprecation"])
    }))

  it.effect("console: create (201 id and key), revoke (204), then 401; unknown ids 404; the console token is required", () =>
    Effect.gen(function*() {
      const f = yield* uatFixture("WS-7")
      const auth = `Basic ${f.widget.key}`
      assert.match(f.widget.id, /^wkey_/)
      assert.match(f.widget.key, /^wk_[A-Za-z0-9_-]{43}$/)
      assert.strictEqual((yield* widget("WS-7", { auth, host: uat })).status, 200)
      const revoked = yield* send("DELETE", `/console/widget-keys/${f.widget.id}`, { auth: consoleAuth })
      assert.strictEqual(revoked.status, 204, revoked.text)
      const after = yield* widget("WS-7", { auth, host: uat })
      assertProblem(after, 401)
      assert.strictEqual(detail(after), "the widget key was revoked")
      assertProblem(yield* send("DELETE", "/console/widget-keys/wkey_missing", { auth: consoleAuth }), 404)
      assertProblem(yield* send("POST", "/console/organisations/org_missing/widget-keys", { auth: consoleAuth }), 404)
      assertProblem(yield* send("POST", `/console/organisations/${f.organisationId}/widget-keys`, { auth: f.key }), 401)
      assertProblem(yield* send("DELETE", `/console/widget-keys/${f.widget.id}`), 401)
    }))

  it("the OpenAPI document lists the widget search (deprecated, root and /v3) and the console's widget keys", () => {
    const paths = openApiDocument().paths as Record<
      string,
      Record<string, { deprecated?: boolean; security?: unknown }>
    >
    for (const path of ["/api/v2/widget-search", "/v3/api/v2/widget-search"]) {
      assert.isTrue(paths[path]?.["get"]?.deprecated, path)
      assert.deepStrictEqual(paths[path]?.["get"]?.security, [{ widgetKey: [] }])
    }
    assert.isDefined(paths["/console/organisations/{id}/widget-keys"]?.["post"])
    assert.isDefined(paths["/console/widget-keys/{id}"]?.["delete"])
  })
})

layer(makeAppLayer({ widgetSunset: new Date(Date.UTC(2100, 0, 1)) }), { excludeTestServices: true })(
  "widget search with a future sunset",
  (it) => {
    it.effect("every response carries Deprecation and Sunset", () =>
      Effect.gen(function*() {
        const f = yield* uatFixture("WS-8")
        for (
          const r of [
            yield* widget("WS-8", { auth: `Basic ${f.widget.key}`, host: uat }),
            yield* widget("WS-8", { host: uat })
          ]
        ) {
          assert.deepStrictEqual([r.headers["deprecation"], r.headers["sunset"]], [
            "true",
            "Fri, 01 Jan 2100 00:00:00 GMT"
          ])
        }
      }))
  }
)

layer(makeAppLayer({ widgetSunset: new Date(Date.UTC(2020, 0, 1)) }), { excludeTestServices: true })(
  "widget search after its sunset",
  (it) => {
    it.effect("410 naming GET /upstream, with or without a key, at the root and under /v3; other routes keep working", () =>
      Effect.gen(function*() {
        const f = yield* uatFixture("WS-9")
        for (
          const r of [
            yield* widget("WS-9", { auth: `Basic ${f.widget.key}`, host: uat }),
            yield* widget(undefined, { host: uat, prefix: "/v3" })
          ]
        ) {
          assertProblem(r, 410)
          assert.include(detail(r), "GET /upstream")
          assert.deepStrictEqual([r.headers["deprecation"], r.headers["sunset"]], [
            "true",
            "Wed, 01 Jan 2020 00:00:00 GMT"
          ])
        }
        const upstream = yield* send("GET", "/upstream", { host: uat, auth: f.key })
        assert.strictEqual(upstream.status, 200, upstream.text)
        assert.isUndefined(upstream.headers["deprecation"])
      }))
  }
)
