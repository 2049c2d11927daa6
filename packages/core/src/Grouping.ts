/**
 * Grouping of downstream records: records with the same `tradeflow_reference` belong to one
 * tradeflow (SERVICE.md, Tradeflow rule 2).
 *
 * @module
 */
import type { RecordGroup, TradeflowRecord } from "./TradeflowRecord.js"

/**
 * One group per distinct `tradeflow_reference`, in order of first appearance; each group holds
 * its records in request order.
 */
export const groupRecords = (records: ReadonlyArray<TradeflowRecord>): ReadonlyArray<RecordGroup> => {
  const byReference = new Map<string, Array<TradeflowRecord>>()
  for (const record of records) {
    const group = byReference.get(record.tradeflow_reference)
    if (group === undefined) byReference.set(record.tradeflow_reference, [record])
    else group.push(record)
  }
  return Array.from(
    byReference,
    ([tradeflow_reference, groupRecords]) => ({ tradeflow_reference, records: groupRecords })
  )
}
