import { assert, describe, it, layer } from "@effect/vitest"
import { ApiMessage, Worker } from "@tradeflow/core"
import { Effect, FastCheck as fc, Schema } from "effect"
import { attachment } from "../src/internal/contentDisposition.js"
import { consoleAuth, makeAppLayer, newKey, oceanBasic, send, uat } from "./Fixture.js"
import type { Received } from "./Fixture.js"

const drain = Effect.flatMap(Worker.Worker, (w) => w.drain)

const downloadPath = (organisationId: string, reference: string) =>
  `/console/organisations/${encodeURIComponent(organisationId)}/tradeflows/${encodeURIComponent(reference)}/download`

const assertProblem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  assert.strictEqual((r.body as { status: number }).status, status)
}

/** The file name a user agent takes from the header: `filename*` when present, else `filename`. */
const fileName = (header: string): string => {
  const extended = /;\s*filename\*=UTF-8''([^;\s]+)/.exec(header)
  if (extended) return decodeURIComponent(extended[1]!)
  const plain = /;\s*filename="([^"]*)"/.exec(header)
  return plain?.[1] ?? ""
}

describe("attachment", () => {
  it("quotes plain names and keeps them", () => {
    assert.strictEqual(attachment("PO-1"), `attachment; filename="PO-1.json"`)
    assert.strictEqual(attachment("a b.c"), `attachment; filename="a b.c.json"`)
  })

  it("replaces quotes, separators and control characters; an empty name becomes download", () => {
    assert.strictEqual(attachment(`..\\/"x\r\n`), `attachment; filename="..___x__.json"`)
    assert.strictEqual(attachment(`a"b/c\\d`), `attachment; filename="a_b_c_d.json"`)
    assert.strictEqual(attachment(""), `attachment; filename="download.json"`)
  })

  it("adds an RFC 6266 filename* for non-ASCII names", () => {
    assert.strictEqual(
      attachment("Lieferung-Köln (1)"),
      `attachment; filename="Lieferung-K_ln (1).json"; filename*=UTF-8''Lieferung-K%C3%B6ln%20%281%29.json`
    )
  })

  it("removes bidirectional control characters, so no name displays reversed", () => {
    assert.strictEqual(attachment("invoice\u202efdp.exe"), `attachment; filename="invoicefdp.exe.json"`)
    const header = attachment("Köln\u2067x\u2069\u200f\u061c")
    assert.strictEqual(fileName(header), "Kölnx.json")
  })

  it.prop("no bidirectional control character reaches the file name", [
    fc.array(
      fc.constantFrom(
        "a",
        "ö",
        "\u061c",
        "\u200e",
        "\u200f",
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069"
      )
    )
  ], ([chars]) => {
    assert.notMatch(fileName(attachment(chars.join(""))), /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/)
  })

  it.prop("always one ASCII header line whose file name ends in .json and has no separator or quote", [
    fc.fullUnicodeString()
  ], ([name]) => {
    const header = attachment(name)
    assert.match(header, /^attachment; filename="[\x20-\x7e]*"(; filename\*=UTF-8''[A-Za-z0-9%\-._~#$&+^`|]+)?$/)
    const quoted = /filename="([^"]*)"/.exec(header)![1]!
    assert.notMatch(quoted, /["\\/]/)
    const decoded = fileName(header)
    assert.isTrue(decoded.endsWith(".json"))
    assert.notMatch(decoded, /["\\/\u0000-\u001f]/)
    if (/^[\x20-\x7e]*$/.test(name)) assert.notInclude(header, "filename*")
  })
})

layer(makeAppLayer(), { excludeTestServices: true })(
  "GET /console/organisations/:id/tradeflows/:reference/download",
  (it) => {
    it.effect("a UAT ocean_basic tradeflow through its (UAT) organisation: 200, attachment, V3 document with vessels", () =>
      Effect.gen(function*() {
        const k = yield* newKey("uat")
        assert.notStrictEqual(k.organisation.id, k.organisationId)
        const posted = yield* send("POST", "/downstream/tradeflows", {
          host: uat,
          auth: k.key,
          json: oceanBasic("DL-1")
        })
        assert.strictEqual(posted.status, 202, posted.text)
        yield* drain
        const r = yield* send("GET", downloadPath(k.organisation.id, "DL-1"), { auth: consoleAuth })
        assert.strictEqual(r.status, 200, r.text)
        assert.match(r.headers["content-type"] ?? "", /^application\/json/)
        assert.strictEqual(r.headers["content-disposition"], `attachment; filename="DL-1.json"`)
        const doc = Schema.decodeUnknownSync(ApiMessage.TradeflowDocument, { onExcessProperty: "error" })(r.body)
        assert.strictEqual(doc.version, "3.0.0")
        assert.strictEqual(doc.tradeflow_reference, "DL-1")
        assert.isTrue(doc.metadata.is_active)
        assert.isAbove(doc.events.length, 0)
        assert.deepStrictEqual(doc.containers.map((c) => c.reference), ["MSCU1234565"])
        assert.deepStrictEqual(doc.locations.map((l) => l.unlocode), ["CNSHA", "NLRTM"])
        assert.isDefined(doc.vessels)
        assert.strictEqual(doc.vessels?.length, 1)
        assert.notStrictEqual(doc.vessels?.[0]?.name, "")
        assert.deepStrictEqual(Object.keys(r.body as object), [
          "version",
          "tradeflow_reference",
          "metadata",
          "events",
          "locations",
          "containers",
          "shipment",
          "partners",
          "vessels"
        ])

        const feed = yield* send("GET", "/upstream?type=CONTAINER_MILESTONE", { host: uat, auth: k.key })
        const milestones = feed.body as Array<{ payload: { shipment: unknown } }>
        assert.isAbove(milestones.length, 0)
        assert.deepStrictEqual((r.body as { shipment: unknown }).shipment, milestones.at(-1)!.payload.shipment)
      }))

    it.effect("the live organisation reads its own tradeflows: a production one is there, the UAT one is not", () =>
      Effect.gen(function*() {
        const name = `org-${Math.random().toString(36).slice(2)}`
        const prod = yield* newKey("production", name)
        const record = { tradeflow_reference: "Lieferung Köln", booking_reference: "BK-1", carrier_name: "Maersk" }
        assert.strictEqual(
          (yield* send("POST", "/downstream/tradeflows", { auth: prod.key, json: record })).status,
          202
        )
        yield* drain
        const r = yield* send("GET", downloadPath(prod.organisation.id, "Lieferung Köln"), { auth: consoleAuth })
        assert.strictEqual(r.status, 200, r.text)
        assert.strictEqual(fileName(r.headers["content-disposition"] ?? ""), "Lieferung Köln.json")
        assert.match(
          r.headers["content-disposition"] ?? "",
          /^attachment; filename="Lieferung K_ln\.json"; filename\*=/
        )
        const doc = Schema.decodeUnknownSync(ApiMessage.TradeflowDocument)(r.body)
        assert.deepStrictEqual([doc.tradeflow_reference, doc.metadata.carrier_name, doc.events], [
          "Lieferung Köln",
          "Maersk",
          []
        ])
        assert.deepStrictEqual(doc.vessels, [])
      }))

    it.effect("404 problems for an unknown organisation, an unknown reference, or the other environment's tradeflow", () =>
      Effect.gen(function*() {
        const k = yield* newKey("uat")
        yield* send("POST", "/downstream/tradeflows", { host: uat, auth: k.key, json: oceanBasic("DL-2") })
        yield* drain
        assert.strictEqual(
          (yield* send("GET", downloadPath(k.organisation.id, "DL-2"), { auth: consoleAuth })).status,
          200
        )
        assertProblem(yield* send("GET", downloadPath("no-such-org", "DL-2"), { auth: consoleAuth }), 404)
        assertProblem(yield* send("GET", downloadPath(k.organisation.id, "DL-404"), { auth: consoleAuth }), 404)
        assertProblem(yield* send("GET", downloadPath(k.organisationId, "DL-2"), { auth: consoleAuth }), 404)
      }))

    it.effect("401 without the console token or with an API key; 405 for another method", () =>
      Effect.gen(function*() {
        const k = yield* newKey("uat")
        yield* send("POST", "/downstream/tradeflows", { host: uat, auth: k.key, json: oceanBasic("DL-3") })
        yield* drain
        const path = downloadPath(k.organisation.id, "DL-3")
        assertProblem(yield* send("GET", path), 401)
        assertProblem(yield* send("GET", path, { auth: "Bearer wrong" }), 401)
        assertProblem(yield* send("GET", path, { host: uat, auth: k.key }), 401)
        const post = yield* send("POST", path, { auth: consoleAuth, json: {} })
        assertProblem(post, 405)
        assert.strictEqual(post.headers["allow"], "GET")
      }))

    it.effect("the OpenAPI document lists the download", () =>
      Effect.gen(function*() {
        const r = yield* send("GET", "/openapi.json")
        const paths = (r.body as { paths: Record<string, Record<string, unknown>> }).paths
        const item = paths["/console/organisations/{id}/tradeflows/{reference}/download"]
        assert.isDefined(item?.["get"], Object.keys(paths).join(", "))
        assert.include(JSON.stringify(item), "Content-Disposition: attachment")
        assert.include(JSON.stringify(item), "#/components/schemas/TradeflowDocument")
        const schemas = (r.body as { components: { schemas: Record<string, unknown> } }).components.schemas
        assert.isDefined(schemas["TradeflowDocument"])
      }))
  }
)
