import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { fastRecord } from "../src/internal/fastRecord.js"
import { TradeflowRecordInput } from "../src/TradeflowRecord.js"
import { issuesFromParseError } from "../src/Validation.js"

const decode = Schema.decodeUnknownEither(TradeflowRecordInput, { errors: "all" })

/**
 * What validation makes of a record: the hand-written decoding when it answers, else the schema's.
 * It must be the schema's answer exactly: the same value (keys in the same order), or the same issues.
 */
const agrees = (raw: Record<string, unknown>) => {
  const fast = fastRecord(raw)
  const schema = decode(raw)
  if (fast === undefined) return { fast: false }
  if (Either.isLeft(schema)) {
    return assert.fail(
      `the fast path accepted ${JSON.stringify(raw)}; the schema refuses it: ${
        JSON.stringify(issuesFromParseError(schema.left, "", raw))
      }`
    )
  }
  assert.deepStrictEqual(fast, schema.right)
  assert.strictEqual(JSON.stringify(fast), JSON.stringify(schema.right))
  return { fast: true }
}

const simpleFields = [
  "tradeflow_reference",
  "container_reference",
  "bill_of_lading_reference",
  "booking_reference",
  "port_of_loading",
  "port_of_discharge",
  "estimated_time_of_departure",
  "explicit_departure_confirmation",
  "estimated_time_of_arrival",
  "explicit_arrival_confirmation",
  "actual_time_of_departure",
  "actual_time_of_arrival",
  "vessel",
  "customer_name",
  "customer_reference",
  "carrier_name",
  "carrier_scac",
  "lead_contact",
  "incoterms",
  "active"
]

const tricky = fc.constantFrom(
  "",
  " ",
  "\u00a0",
  "\ufeff",
  "*",
  " * ",
  "**",
  "PO-1",
  " PO-1\n",
  "MSCU1234565",
  "mscu 123456-5",
  " - ",
  "CNSHA",
  " nlrtm ",
  "nlrtm",
  "NL RTM",
  "NLRT1",
  "US2AB",
  "ßabc",
  "ǆabc",
  "ıabcd",
  "2026-11-22",
  "2026-11-22T10:00:00+01:00",
  " 2026-11-22T10:00 ",
  "2026-11-22 10:00:00,5-0130",
  "2026-11-22T10:00:00.123456789Z",
  "2026-11-22T10:00:00.1234567890Z",
  "2026-02-30",
  "2026-13-01",
  "2026-11-22T25:00Z",
  "2026-11-22T10:00+2",
  "+002026-11-22",
  "true",
  "null",
  "__proto__",
  "constructor"
)

const text = fc.oneof(tricky, fc.string(), fc.string({ unit: "binary", maxLength: 6 }))

const value: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.array(text, { maxLength: 4 }),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.array(fc.oneof(text, fc.record({ reference: text }), fc.constant(null)), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 })
)

const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...simpleFields) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "events",
      "partners",
      "references",
      "configuration",
      "mock_tracking",
      "unknown",
      "__proto__",
      "constructor",
      "toString",
      "hasOwnProperty",
      "valueOf"
    )
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) }
)

/** Any object: keys of the schema and others, each with any value (own `__proto__` keys too). */
const anyRecord = fc.array(fc.tuple(key, value), { maxLength: 8 }).map((entries) => Object.fromEntries(entries))

const goodValue = (field: string): fc.Arbitrary<unknown> => {
  switch (field) {
    case "tradeflow_reference":
      return fc.constantFrom("PO-1", " PO-2 ", "a*", "x")
    case "container_reference":
      return fc.oneof(
        fc.constantFrom("MSCU1234565", " mscu 123456-5 ", "CSQU3054383"),
        fc.array(fc.constantFrom("MSCU1234565", "abc", " t-1 "), { maxLength: 3 })
      )
    case "bill_of_lading_reference":
    case "booking_reference":
      return fc.oneof(
        fc.constantFrom("BK-1", " b "),
        fc.array(fc.constantFrom("BK-1", " b "), { minLength: 1, maxLength: 3 })
      )
    case "port_of_loading":
    case "port_of_discharge":
      return fc.constantFrom("CNSHA", " nlrtm ", "US2AB")
    case "estimated_time_of_departure":
    case "estimated_time_of_arrival":
    case "actual_time_of_departure":
    case "actual_time_of_arrival":
      return fc.constantFrom("2026-11-22", "2026-11-22T10:00:00+01:00", " 2026-11-22 10:00 ", "2026-11-22T10:00:00Z")
    case "explicit_departure_confirmation":
    case "explicit_arrival_confirmation":
    case "active":
      return fc.boolean()
    default:
      return fc.string({ maxLength: 6 })
  }
}

/** The common shape, each field valid. */
const goodEntries = fc.subarray(simpleFields.slice(1), { maxLength: 8 }).chain((fields) =>
  fc.tuple(
    ...["tradeflow_reference", "booking_reference", ...fields].map((f) => fc.tuple(fc.constant(f), goodValue(f)))
  )
)

/** The common shape with at times one field set to an adversarial value. */
const commonRecord = fc.tuple(goodEntries, fc.option(fc.tuple(key, value))).map(([entries, broken]) =>
  Object.fromEntries(broken === null ? entries : [...entries, broken])
)

describe("fastRecord: the common record shape decoded by hand", () => {
  it.prop("answers exactly what the schema answers, on any object", [anyRecord], ([raw]) => {
    agrees(raw)
  }, { fastCheck: { numRuns: 3000 } })

  it.prop("answers exactly what the schema answers, on common records with at times one broken field", [
    commonRecord
  ], ([raw]) => {
    agrees(raw)
  }, { fastCheck: { numRuns: 3000 } })

  it.prop("decodes every valid record of the common shape itself", [
    goodEntries.map((entries) => Object.fromEntries(entries))
  ], ([raw]) => {
    assert.isTrue(agrees(raw).fast)
  }, { fastCheck: { numRuns: 1000 } })

  it("leaves the benchmark's record to itself, and to the schema a record with events or a container number that normalises to nothing (seed -1401751162)", () => {
    assert.isTrue(
      agrees({
        tradeflow_reference: "T-1",
        container_reference: "MSCU1234565",
        booking_reference: "BK-T-1",
        port_of_loading: "CNSHA",
        port_of_discharge: "NLRTM"
      }).fast
    )
    assert.isFalse(agrees({ tradeflow_reference: "T-1", booking_reference: "B", events: [] }).fast)
    assert.isFalse(agrees({ tradeflow_reference: "*", booking_reference: "B" }).fast)
    assert.isFalse(agrees({ tradeflow_reference: "T", booking_reference: [] }).fast)
    assert.isFalse(
      agrees({ tradeflow_reference: "PO-1", booking_reference: ["BK-1"], container_reference: [" - "] }).fast
    )
    assert.isFalse(agrees({ tradeflow_reference: "PO-1", container_reference: "-" }).fast)
  })
})
