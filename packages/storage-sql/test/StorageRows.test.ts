import { describe, expect, it } from "@effect/vitest"
import { Job, Locations, Tradeflow, TradeflowRecord, Validation } from "@tradeflow/core"
import { arbitraryTradeflow } from "@tradeflow/core/test-kit"
import { Arbitrary, Effect, Either, FastCheck as fc, Schema } from "effect"
import { decodeJobs, tradeflowDocument } from "../src/StorageRows.js"

const encoded = Schema.encodeSync(Schema.parseJson(Tradeflow.Tradeflow))
const decoded = Schema.decodeSync(Schema.parseJson(Tradeflow.Tradeflow))

describe("StorageRows", () => {
  it("a tradeflow's document is what the schema encodes, and decodes back to the tradeflow", () => {
    const withProto = JSON.parse("{\"__proto__\":{\"x\":1},\"y\":2}") as Record<string, unknown>
    const t = fc.sample(arbitraryTradeflow, { numRuns: 1, seed: 1 })[0]!
    const sample = { ...t, details: { ...t.details, configuration: withProto } } as Tradeflow.Tradeflow
    expect(JSON.parse(tradeflowDocument(sample))).toStrictEqual(JSON.parse(encoded(sample)))
    const nested = {
      ...t,
      containers: [{ reference: "MSCU1234565", custom_properties: { "": JSON.parse("{\"__proto__\":{}}") } }]
    } as Tradeflow.Tradeflow
    expect(JSON.parse(tradeflowDocument(nested))).toStrictEqual(JSON.parse(encoded(nested)))
    expect(decoded(tradeflowDocument(nested))).toStrictEqual(decoded(encoded(nested)))
    fc.assert(
      fc.property(arbitraryTradeflow, (t) => {
        const document = tradeflowDocument(t)
        expect(JSON.parse(document)).toStrictEqual(JSON.parse(encoded(t)))
        expect(decoded(document)).toStrictEqual(decoded(encoded(t)))
      }),
      { numRuns: 1_000 }
    )
  })

  it("a claimed job's payload, read with JSON.parse, is what the schema decodes from the stored text, for every validated request", () => {
    const decodePayload = Schema.decodeUnknownSync(Schema.parseJson(Job.JobPayload))
    let checked = 0
    fc.assert(
      fc.property(
        fc.array(Arbitrary.make(TradeflowRecord.TradeflowRecordInput), { minLength: 1, maxLength: 5 }),
        (sent) => {
          const result = Validation.validateRequest(JSON.parse(JSON.stringify(sent)), {
            environment: "uat",
            form: "array"
          }).pipe(Effect.provide(Locations.layerBuiltin), Effect.either, Effect.runSync)
          if (Either.isLeft(result)) return
          checked++
          const text = JSON.stringify({ _tag: "Upsert", groups: result.right.groups } satisfies Job.JobPayload)
          const row = { id: 1, organisation_id: "org", environment: "uat", received_at: 0, payload: text }
          const [read] = Effect.runSync(decodeJobs([row]))
          expect(read!.payload).toStrictEqual(decodePayload(text))
        }
      ),
      { numRuns: 200 }
    )
    expect(checked).toBeGreaterThan(20)
  })

  it("a stored payload that is not a known job's fails to decode, as the schema fails it", () => {
    for (const payload of ["{\"_tag\":\"Nope\"}", "not json", "[]"]) {
      const row = { id: 1, organisation_id: "org", environment: "uat", received_at: 0, payload }
      expect(Either.isLeft(Effect.runSync(Effect.either(decodeJobs([row]))))).toBe(true)
    }
  })
})
