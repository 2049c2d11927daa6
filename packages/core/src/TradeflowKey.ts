/**
 * The keys the widget search finds a tradeflow by, as storage adapters index them
 * (`TradeflowStore.lookup`).
 *
 * A tradeflow has a key for its reference (exact), for each container number (as stored, which is
 * normalised at ingest), and for each bill of lading and booking reference (upper case). A query
 * has one key of each kind, normalised the same way (`WidgetSearch.matches`): trimmed, then the
 * container number normalised and the bill of lading and booking upper-cased. A key is the SHA-256
 * of its kind and value (hex, 32 characters): of fixed size whatever the value (an index entry
 * never outgrows the database's limit, a NUL byte never reaches it). A match by key is a
 * candidate; the widget search confirms the one it answers with `WidgetSearch.matches`.
 *
 * @module
 */
import { sha256HexSync } from "./internal/crypto.js"
import { normaliseContainerNumber } from "./TradeflowRecord.js"

/** What a key identifies a tradeflow by. */
export type Kind = "reference" | "container" | "bill_of_lading" | "booking"

/** The fields of a tradeflow its keys are made of. */
export interface Identified {
  readonly reference: string
  readonly containers: ReadonlyArray<{ readonly reference: string }>
  readonly bill_of_lading_references: ReadonlyArray<string>
  readonly booking_references: ReadonlyArray<string>
}

/** The key of a kind and an already normalised value. */
export const make = (kind: Kind, value: string): string => sha256HexSync(`${kind}\u0000${value}`).slice(0, 32)

/** The distinct keys of a tradeflow. */
export const ofTradeflow = (t: Identified): ReadonlyArray<string> => {
  const keys = new Set([make("reference", t.reference)])
  for (const c of t.containers) keys.add(make("container", c.reference))
  for (const b of t.bill_of_lading_references) keys.add(make("bill_of_lading", b.toUpperCase()))
  for (const b of t.booking_references) keys.add(make("booking", b.toUpperCase()))
  return [...keys]
}

/** The keys a query looks up: one per kind, none for a blank query. */
export const ofQuery = (query: string): ReadonlyArray<string> => {
  const q = query.trim()
  if (q === "") return []
  const upper = q.toUpperCase()
  return [
    make("reference", q),
    make("container", normaliseContainerNumber(q)),
    make("bill_of_lading", upper),
    make("booking", upper)
  ]
}
