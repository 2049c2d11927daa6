import { describe, expect, it } from "@effect/vitest"
import { Job, Locations, TradeflowRecord, Validation } from "@tradeflow/core"
import { Arbitrary, Effect, Either, FastCheck as fc, Schema } from "effect"

const encode = Schema.encodeSync(Schema.parseJson(Job.JobPayload))

const validated = (records: ReadonlyArray<unknown>) =>
  Validation.validateRequest(records, { environment: "uat", form: "array" }).pipe(
    Effect.provide(Locations.layerBuiltin),
    Effect.either,
    Effect.runSync
  )

describe("the payload of an enqueued job", () => {
  it("is stored as JSON.stringify writes it: the very text the schema's encoding writes, for every validated request", () => {
    const records = fc.array(Arbitrary.make(TradeflowRecord.TradeflowRecordInput), {
      minLength: 1,
      maxLength: 5
    })
    let checked = 0
    let tried = 0
    fc.assert(
      fc.property(records, (sent) => {
        tried++
        const result = validated(JSON.parse(JSON.stringify(sent)) as ReadonlyArray<unknown>)
        if (Either.isLeft(result)) return
        checked++
        const payload: Job.JobPayload = { _tag: "Upsert", groups: result.right.groups }
        expect(JSON.stringify(payload)).toBe(encode(payload))
      }),
      { numRuns: 200 }
    )
    expect(checked).toBeGreaterThan(tried / 10)
  })
})
