import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, TestClock } from "effect"
import * as Documents from "../src/Documents.js"
import { C1, C2, layer, org, post } from "./ProcessorKit.js"

const TestLayer = Documents.layer.pipe(Layer.provideMerge(layer()))

const search = (query: string, limit?: number, organisationId = org) =>
  Effect.flatMap(Documents.Documents, (d) => d.search(organisationId, query, limit))

const record = (reference: string, container: string, bill: string, booking: string) => ({
  tradeflow_reference: reference,
  container_reference: container,
  bill_of_lading_reference: bill,
  booking_reference: booking,
  port_of_loading: "NLRTM",
  port_of_discharge: "CNSHA"
})

describe("Documents.search", () => {
  it.effect("finds by reference, container (any spacing or case), bill of lading or booking (any case), newest first", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 10, 1))
      yield* post([record("PO-1", C1, "MAEU111111111", "BK-1")])
      yield* TestClock.adjust("1 hour")
      yield* post([record("PO-2", C1, "MAEU222222222", "BK-2")])
      yield* post([record("PO-3", C2, "MAEU333333333", "BK-1")], "uat", "org-other")
      const references = (query: string) => Effect.map(search(query), (r) => r.found.map((f) => f.reference))
      assert.deepStrictEqual(yield* references("PO-1"), ["PO-1"])
      assert.deepStrictEqual(yield* references("po-1"), [])
      assert.deepStrictEqual(yield* references(C1.toLowerCase().replace(/(.{4})/, "$1 ")), ["PO-2", "PO-1"])
      assert.deepStrictEqual(yield* references("maeu222222222"), ["PO-2"])
      assert.deepStrictEqual(yield* references("bk-1"), ["PO-1"])
      assert.deepStrictEqual(yield* references(C2), [])
      assert.deepStrictEqual(yield* references(""), [])
      const found = (yield* search("PO-1")).found[0]!
      assert.deepStrictEqual(
        [found.containers, found.bill_of_lading_references, found.booking_references, found.active],
        [[C1], ["MAEU111111111"], ["BK-1"], true]
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect.prop(
    "answers exactly the tradeflows that match, newest first, at most the limit, and says when there were more",
    [fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 5 })],
    ([count, limit]) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 10, 1))
        for (let i = 0; i < count; i++) {
          yield* post([record(`PO-${i}`, C1, `BL-${i}`, i % 2 === 0 ? "BK-EVEN" : "BK-ODD")])
          yield* TestClock.adjust("1 minute")
        }
        const even = Array.from({ length: count }, (_, i) => i).filter((i) => i % 2 === 0).map((i) => `PO-${i}`)
          .reverse()
        const answer = yield* search("BK-EVEN", limit)
        assert.deepStrictEqual(answer.found.map((f) => f.reference), even.slice(0, limit))
        assert.strictEqual(answer.more, even.length > limit)
      }).pipe(Effect.provide(TestLayer)),
    { fastCheck: { numRuns: 15 } }
  )
})
