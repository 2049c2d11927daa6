import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Schema, TestClock } from "effect"
import { type ApiMessage, TradeflowDocument } from "../src/ApiMessage.js"
import * as Documents from "../src/Documents.js"
import * as Projection from "../src/internal/projection.js"
import { mockVessel } from "../src/MockJourneyOceanBasic.js"
import * as RenderDocument from "../src/RenderDocument.js"
import { TradeflowStore } from "../src/TradeflowStore.js"
import { C1, layer, messages, org, post, recordArb, tradeflow } from "./ProcessorKit.js"

const now0 = Date.UTC(2026, 10, 22, 10)

const oceanBasic = {
  tradeflow_reference: "PO-1",
  container_reference: C1,
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA",
  carrier_scac: "MAEU",
  mock_tracking: { scenario: "ocean_basic" }
}

const testLayer = () => Documents.layer.pipe(Layer.provideMerge(layer()))

const roundTrip = (doc: TradeflowDocument): TradeflowDocument =>
  Schema.decodeUnknownSync(TradeflowDocument, { onExcessProperty: "error" })(
    JSON.parse(JSON.stringify(Schema.encodeSync(TradeflowDocument)(doc)))
  )

const shipmentOf = (m: ApiMessage) =>
  m.type === "CONTAINER_MILESTONE" || m.type === "SHIPMENT_CHANGE" ? m.payload.shipment : undefined

describe("RenderDocument.tradeflowDocument", () => {
  it.effect("an ocean_basic tradeflow: metadata, every event, its containers, ports and vessel", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([oceanBasic])
      const t = yield* tradeflow("PO-1")
      const doc = yield* RenderDocument.tradeflowDocument(t, { vessels: true })
      assert.strictEqual(doc.version, "3.0.0")
      assert.strictEqual(doc.tradeflow_reference, "PO-1")
      assert.deepStrictEqual(doc.metadata, {
        last_updated: new Date(t.updated_at).toISOString(),
        carrier_name: null,
        carrier_scac: "MAEU",
        is_active: true
      })
      assert.isAbove(doc.events.length, 0)
      assert.strictEqual(doc.events.length, t.events.length)
      assert.deepStrictEqual(doc.containers, [Projection.container({ reference: C1 })])
      assert.deepStrictEqual(doc.locations.map((l) => l.unlocode), ["CNSHA", "NLRTM"])
      assert.deepStrictEqual(doc.vessels, [mockVessel("PO-1")])
      const dates = doc.events.map((e) => Date.parse(e.event_date))
      assert.deepStrictEqual(dates, [...dates].sort((a, b) => a - b))
      for (const e of doc.events) {
        if (e.transport_unit_reference === null) continue
        assert.strictEqual(e.transport_unit_reference, C1)
        assert.deepStrictEqual(e.container_details, Projection.container({ reference: C1 }))
        assert.isNotNull(e.dwell_details)
      }
      assert.deepStrictEqual(roundTrip(doc), doc)
    }).pipe(Effect.provide(layer())))

  it.effect("free-text locations have a name but no code; unknown codes still list their location", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([{
        tradeflow_reference: "FT-1",
        container_reference: C1,
        port_of_loading: "XXABC",
        events: [
          { message: "LOAD", container_reference: C1, location_name: "Some depot", event_date: "2026-11-20T10:00:00Z" },
          { message: "Vessel departure", location_name: "XXABC", event_date: "2026-11-21T10:00:00Z", actual: true }
        ]
      }], "production")
      const doc = yield* RenderDocument.tradeflowDocument(yield* tradeflow("FT-1"))
      assert.deepStrictEqual(
        doc.events.map((e) => [e.status_code, e.location, e.location_name, e.transport_unit_reference]),
        [
          ["AE", null, "Some depot", C1],
          ["VD", "XXABC", "XXABC", null]
        ]
      )
      assert.deepStrictEqual(doc.events[1]?.container_details, null)
      assert.deepStrictEqual(doc.events[1]?.dwell_details, null)
      assert.deepStrictEqual(doc.locations, [Projection.unknownLocation("XXABC")])
      assert.deepStrictEqual(doc.shipment, {
        containers: [Projection.container({ reference: C1 })],
        transport_plan_legs: []
      })
      assert.isFalse("vessels" in doc)
    }).pipe(Effect.provide(layer())))

  it.effect.prop(
    "round trip, the messages' shipment, every event location listed, vessels only when asked",
    [fc.array(recordArb, { minLength: 1, maxLength: 3 }), fc.constantFrom("uat" as const, "production" as const)],
    ([records, environment]) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(now0)
        yield* post(records, environment)
        const all = yield* messages()
        const stored = yield* Effect.flatMap(TradeflowStore, (s) => s.list(org))
        assert.isAbove(stored.length, 0)
        for (const t of stored) {
          const plain = yield* RenderDocument.tradeflowDocument(t)
          const full = yield* RenderDocument.tradeflowDocument(t, { vessels: true })
          assert.deepStrictEqual(roundTrip(plain), plain)
          assert.deepStrictEqual(roundTrip(full), full)
          assert.isFalse("vessels" in plain)
          assert.isTrue(Array.isArray(full.vessels))
          const { vessels: _, ...rest } = full
          assert.deepStrictEqual(rest, plain)
          assert.deepStrictEqual(full.vessels, [Projection.vesselOf(t)].filter((v) => v.name !== ""))

          assert.strictEqual(plain.tradeflow_reference, t.reference)
          assert.strictEqual(plain.metadata.is_active, t.active)
          assert.strictEqual(plain.events.length, t.events.length)
          assert.deepStrictEqual(plain.containers.map((c) => c.reference), t.containers.map((c) => c.reference))

          const codes = plain.locations.map((l) => l.unlocode)
          assert.deepStrictEqual(codes, [...new Set(codes)].sort())
          for (const e of plain.events) {
            if (e.location !== null) assert.include(codes, e.location)
            if (e.location === null && e.location_name !== null) {
              assert.notMatch(e.location_name, /^[A-Z]{2}[A-Z2-9]{3}$/)
            }
          }

          const latest = all
            .filter((m) => m.message.tradeflow_reference === t.reference)
            .map((m) => shipmentOf(m.message))
            .filter((s) => s !== undefined)
            .at(-1)
          if (latest !== undefined) assert.deepStrictEqual(plain.shipment, latest)
        }
      }).pipe(Effect.provide(layer())),
    { fastCheck: { numRuns: 50 } }
  )
})

describe("Documents", () => {
  it.effect("download: the document with vessels; an unknown reference or organisation is TradeflowNotFound", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(now0)
      yield* post([oceanBasic])
      const documents = yield* Documents.Documents
      const doc = yield* documents.download(org, "PO-1")
      assert.deepStrictEqual(doc, yield* RenderDocument.tradeflowDocument(yield* tradeflow("PO-1"), { vessels: true }))
      assert.isDefined(doc.vessels)
      for (const [organisationId, reference] of [[org, "PO-2"], ["org-unknown", "PO-1"]] as const) {
        const error = yield* Effect.flip(documents.download(organisationId, reference))
        assert.deepStrictEqual([error._tag, error._tag === "TradeflowNotFound" ? error.reference : ""], [
          "TradeflowNotFound",
          reference
        ])
      }
    }).pipe(Effect.provide(testLayer())))
})
