import { assert, layer } from "@effect/vitest"
import { TradeflowStore, Worker } from "@tradeflow/core"
import { Effect, Option } from "effect"
import { makeAppLayer, newKey, type Received, send } from "./Fixture.js"

const problem = (r: Received, status: number) => {
  assert.strictEqual(r.status, status, r.text)
  assert.match(r.headers["content-type"] ?? "", /^application\/problem\+json/)
  return r.body as { status: number; detail: string; errors?: ReadonlyArray<{ path: string; message: string }> }
}

const csv = [
  "tradeflow_reference,container_reference,port_of_loading,port_of_discharge,references.house_bill_of_lading",
  "PO-1,MSCU1234565;TGHU0000001,NLRTM,SGSIN,HB-1",
  "PO-2,CSQU3054383,DEHAM,CNSHA,"
].join("\r\n")

const dcsa = [{
  eventID: "e1",
  eventType: "EQUIPMENT",
  eventClassifierCode: "ACT",
  eventDateTime: "2026-11-01T10:00:00Z",
  eventCreatedDateTime: "2026-11-01T10:05:00Z",
  equipmentEventTypeCode: "GTIN",
  equipmentReference: "MSCU1234565",
  emptyIndicatorCode: "LADEN",
  eventLocation: { UNLocationCode: "NLRTM" },
  documentReferences: [{ documentReferenceType: "BKG", documentReferenceValue: "BK-77" }]
}]

layer(makeAppLayer())("POST /downstream/scheme/{scheme}", (it) => {
  it.effect("csv: one record per row, queued and processed like POST /downstream/tradeflows", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const r = yield* send("POST", "/downstream/scheme/csv", { auth: k.key, text: csv, contentType: "text/csv" })
      assert.strictEqual(r.status, 202, r.text)
      assert.deepStrictEqual(
        (r.body as { tradeflows: ReadonlyArray<{ tradeflow_reference: string }> }).tradeflows.map((t) =>
          t.tradeflow_reference
        ),
        ["PO-1", "PO-2"]
      )
      yield* Effect.flatMap(Worker.Worker, (w) => w.drain)
      const stored = yield* Effect.flatMap(TradeflowStore.TradeflowStore, (s) => s.get(k.organisation.id, "PO-1"))
      assert.deepStrictEqual(
        Option.map(stored, (t) => t.containers.map((c) => c.reference)),
        Option.some(["MSCU1234565", "TGHU0000001"])
      )
      const v3 = yield* send("POST", "/v3/downstream/scheme/csv", { auth: k.key, text: csv, contentType: "text/csv" })
      assert.strictEqual(v3.status, 202, v3.text)
    }))

  it.effect("csv: errors name the row and column; wrong media type is 415; nothing is queued", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const bad = yield* send("POST", "/downstream/scheme/csv", {
        auth: k.key,
        text: "tradeflow_reference,port_of_loading\nPO-1,NLRTM\nPO-2,ROTTERDAM",
        contentType: "text/csv"
      })
      const body = problem(bad, 422)
      assert.isTrue(body.errors?.some((e) => e.path.startsWith("/rows/3/")), bad.text)
      problem(
        yield* send("POST", "/downstream/scheme/csv", { auth: k.key, text: csv, contentType: "application/json" }),
        415
      )
      const pending = yield* Effect.flatMap(TradeflowStore.TradeflowStore, (s) => s.list(k.organisation.id))
      assert.deepStrictEqual(pending, [])
    }))

  it.effect("dcsa-tnt: events become a record with the reference of the query", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const r = yield* send("POST", "/downstream/scheme/dcsa-tnt?reference=PO-9", { auth: k.key, json: dcsa })
      assert.strictEqual(r.status, 202, r.text)
      assert.deepStrictEqual(
        (r.body as { tradeflows: ReadonlyArray<{ tradeflow_reference: string }> }).tradeflows.map((t) =>
          t.tradeflow_reference
        ),
        ["PO-9"]
      )
      problem(yield* send("POST", "/downstream/scheme/dcsa-tnt", { auth: k.key, json: [{ eventType: "NOPE" }] }), 422)
      problem(
        yield* send("POST", "/downstream/scheme/dcsa-tnt", { auth: k.key, text: "[", contentType: "application/json" }),
        400
      )
    }))

  it.effect("dcsa-tnt: 100,000 nested arrays or objects in any field of an event: accepted where ignored, else a 422 at the field, never a 500", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const deep = ["[".repeat(100_000) + "]".repeat(100_000), `{"a":`.repeat(100_000) + "1" + "}".repeat(100_000)]
      for (const field of [...Object.keys(dcsa[0]!), "x"]) {
        for (const value of deep) {
          const text = `[${JSON.stringify({ ...dcsa[0], [field]: "DEEP" }).replace(`"DEEP"`, value)}]`
          const r = yield* send("POST", "/downstream/scheme/dcsa-tnt?reference=PO-DEEP", { auth: k.key, text })
          if (r.status === 202) continue
          const errors = problem(r, 422).errors ?? []
          assert.isBelow(r.text.length, 2_048, field)
          assert.deepStrictEqual(errors.map((e) => e.path.split("/").slice(0, 3).join("/")), [`/0/${field}`], field)
        }
      }
      const kind = problem(
        yield* send("POST", "/downstream/scheme/dcsa-tnt", {
          auth: k.key,
          json: [{ ...dcsa[0], eventType: [[["EQUIPMENT"]]] }]
        }),
        422
      )
      assert.deepStrictEqual(kind.errors, [{
        path: "/0/eventType",
        message: `event 0: eventType must be one of "TRANSPORT", "EQUIPMENT", "SHIPMENT", got an array`
      }])
    }))

  it.effect("an unknown scheme is 404 naming the known ones; auth and idempotency apply", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const unknown = problem(
        yield* send("POST", "/downstream/scheme/edifact", { auth: k.key, text: "x", contentType: "text/plain" }),
        404
      )
      assert.include(unknown.detail, "csv")
      problem(yield* send("POST", "/downstream/scheme/csv", { text: csv, contentType: "text/csv" }), 401)
      const headers = { "idempotency-key": "csv-1" }
      const first = yield* send("POST", "/downstream/scheme/csv", {
        auth: k.key,
        text: csv,
        contentType: "text/csv",
        headers
      })
      const again = yield* send("POST", "/downstream/scheme/csv", {
        auth: k.key,
        text: csv,
        contentType: "text/csv",
        headers
      })
      assert.strictEqual(first.status, 202)
      assert.strictEqual(again.status, 202)
      assert.deepStrictEqual(again.body, first.body)
      const other = csv.replace("PO-2", "PO-3")
      problem(
        yield* send("POST", "/downstream/scheme/csv", { auth: k.key, text: other, contentType: "text/csv", headers }),
        422
      )
    }))

  it.effect("more than 10,000 csv rows is 413", () =>
    Effect.gen(function*() {
      const k = yield* newKey("production")
      const rows = Array.from({ length: 10_001 }, (_, i) => `PO-${i},BK-${i}`)
      const text = ["tradeflow_reference,booking_reference", ...rows].join("\n")
      problem(yield* send("POST", "/downstream/scheme/csv", { auth: k.key, text, contentType: "text/csv" }), 413)
    }))
})
