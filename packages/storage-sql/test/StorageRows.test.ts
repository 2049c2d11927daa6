import { describe, expect, it } from "@effect/vitest"
import { Tradeflow } from "@tradeflow/core"
import { arbitraryTradeflow } from "@tradeflow/core/test-kit"
import { FastCheck as fc, Schema } from "effect"
import { tradeflowDocument } from "../src/StorageRows.js"

const encoded = Schema.encodeSync(Schema.parseJson(Tradeflow.Tradeflow))
const decoded = Schema.decodeSync(Schema.parseJson(Tradeflow.Tradeflow))

describe("StorageRows", () => {
  it("a tradeflow's document is what the schema encodes, and decodes back to the tradeflow", () =>
    fc.assert(
      fc.property(arbitraryTradeflow, (t) => {
        const document = tradeflowDocument(t)
        expect(JSON.parse(document)).toStrictEqual(JSON.parse(encoded(t)))
        expect(decoded(document)).toStrictEqual(decoded(encoded(t)))
      }),
      { numRuns: 200 }
    ))
})
