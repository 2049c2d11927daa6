import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { groupRecords } from "../src/Grouping.js"
import type { TradeflowRecord } from "../src/TradeflowRecord.js"

const record: fc.Arbitrary<TradeflowRecord> = fc.record({
  tradeflow_reference: fc.constantFrom("PO-1", "PO-2", "PO-3", "MSCU1234567"),
  container_reference: fc.array(
    fc.constantFrom("CSQU3054383", "MSCU1234565", "MAEU7654321", "TGHU0000001").map((reference) => ({ reference })),
    { minLength: 1, maxLength: 3 }
  ),
  vessel: fc.string()
})

describe("Grouping.groupRecords", () => {
  it("groups records of the same reference in request order", () => {
    const a1: TradeflowRecord = { tradeflow_reference: "A", booking_reference: ["1"] }
    const b1: TradeflowRecord = { tradeflow_reference: "B", booking_reference: ["2"] }
    const a2: TradeflowRecord = { tradeflow_reference: "A", booking_reference: ["3"] }
    assert.deepStrictEqual(groupRecords([a1, b1, a2]), [
      { tradeflow_reference: "A", records: [a1, a2] },
      { tradeflow_reference: "B", records: [b1] }
    ])
    assert.deepStrictEqual(groupRecords([]), [])
  })

  it.prop(
    "groups are the distinct references in first-appearance order",
    [fc.array(record, { maxLength: 30 })],
    ([records]) => {
      const expected: Array<string> = []
      for (const r of records) if (!expected.includes(r.tradeflow_reference)) expected.push(r.tradeflow_reference)
      assert.deepStrictEqual(groupRecords(records).map((g) => g.tradeflow_reference), expected)
    }
  )

  it.prop("every record lands exactly once, in its reference's group, in request order", [
    fc.array(record, { maxLength: 30 })
  ], ([records]) => {
    const groups = groupRecords(records)
    const flattened = groups.flatMap((g) => g.records)
    assert.strictEqual(flattened.length, records.length)
    for (const r of records) assert.strictEqual(flattened.filter((x) => x === r).length, 1)
    for (const group of groups) {
      assert.isTrue(group.records.every((r) => r.tradeflow_reference === group.tradeflow_reference))
      const positions = group.records.map((r) => records.indexOf(r))
      assert.deepStrictEqual(positions, [...positions].sort((x, y) => x - y))
      assert.deepStrictEqual(group.records, records.filter((r) => r.tradeflow_reference === group.tradeflow_reference))
    }
  })

  it.prop(
    "a group's containers are the union of its records' containers",
    [fc.array(record, { maxLength: 30 })],
    ([records]) => {
      const containers = (rs: ReadonlyArray<TradeflowRecord>) =>
        [...new Set(rs.flatMap((r) => (r.container_reference ?? []).map((c) => c.reference)))].sort()
      for (const group of groupRecords(records)) {
        assert.deepStrictEqual(
          containers(group.records),
          containers(records.filter((r) => r.tradeflow_reference === group.tradeflow_reference))
        )
      }
    }
  )
})
