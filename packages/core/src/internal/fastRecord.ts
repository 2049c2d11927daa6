import { normaliseContainerNumber, parseIsoDateTime, type TradeflowRecord } from "../TradeflowRecord.js"
import { isoDateTimePattern } from "./isoDateTime.js"

type Kind = "tradeflow" | "containers" | "references" | "locode" | "date" | "boolean" | "string"

/** The fields the fast path decodes, in the order of `TradeflowRecordFields` (the order of the schema's output). */
const fields: ReadonlyArray<readonly [string, Kind]> = [
  ["tradeflow_reference", "tradeflow"],
  ["container_reference", "containers"],
  ["bill_of_lading_reference", "references"],
  ["booking_reference", "references"],
  ["port_of_loading", "locode"],
  ["port_of_discharge", "locode"],
  ["estimated_time_of_departure", "date"],
  ["explicit_departure_confirmation", "boolean"],
  ["estimated_time_of_arrival", "date"],
  ["explicit_arrival_confirmation", "boolean"],
  ["actual_time_of_departure", "date"],
  ["actual_time_of_arrival", "date"],
  ["vessel", "string"],
  ["customer_name", "string"],
  ["customer_reference", "string"],
  ["carrier_name", "string"],
  ["carrier_scac", "string"],
  ["lead_contact", "string"],
  ["incoterms", "string"],
  ["active", "boolean"]
]

const known = new Set(fields.map(([name]) => name))

const unLocode = /^[A-Z]{2}[A-Z2-9]{3}$/

/** The trimmed string, or undefined when `value` is not a string or is empty once trimmed. */
const nonEmpty = (value: unknown): string | undefined => {
  if (typeof value !== "string") return undefined
  const trimmed = value.trim()
  return trimmed === "" ? undefined : trimmed
}

const stringList = (value: unknown): Array<string> | undefined => {
  const one = nonEmpty(value)
  if (one !== undefined) return [one]
  if (!Array.isArray(value)) return undefined
  const out: Array<string> = new Array(value.length)
  for (let i = 0; i < value.length; i++) {
    const entry = nonEmpty(value[i])
    if (entry === undefined) return undefined
    out[i] = entry
  }
  return out
}

/** The decoded value of one field, or undefined when the fast path does not decode it (the schema then does). */
const decodeField = (kind: Kind, value: unknown): unknown => {
  switch (kind) {
    case "tradeflow": {
      const reference = nonEmpty(value)
      return reference === "*" ? undefined : reference
    }
    case "containers": {
      const list = stringList(value)
      if (list === undefined) return undefined
      const entries: Array<{ readonly reference: string }> = new Array(list.length)
      for (let i = 0; i < list.length; i++) {
        const reference = normaliseContainerNumber(list[i]!)
        if (reference === "") return undefined
        entries[i] = { reference }
      }
      return entries
    }
    case "references":
      return stringList(value)
    case "locode": {
      if (typeof value !== "string") return undefined
      const code = value.trim().toUpperCase()
      return unLocode.test(code) ? code : undefined
    }
    case "date": {
      if (typeof value !== "string") return undefined
      const date = value.trim()
      return isoDateTimePattern.test(date) && !Number.isNaN(parseIsoDateTime(date)) ? date : undefined
    }
    case "boolean":
      return typeof value === "boolean" ? value : undefined
    case "string":
      return typeof value === "string" ? value : undefined
  }
}

/**
 * A record of the common shape decoded by hand, exactly as `TradeflowRecordInput` decodes it (the
 * same value, its keys in the same order): only the reference, list, UN/LOCODE, date-time, boolean
 * and plain string fields, each valid. Anything else (another field, a container entry object, an
 * invalid value, no reference at all) answers undefined, and the record goes through the schema,
 * which reports its issues.
 */
export const fastRecord = (raw: Record<string, unknown>): TradeflowRecord | undefined => {
  const keys = Object.keys(raw)
  for (const key of keys) if (!known.has(key)) return undefined
  const out: Record<string, unknown> = {}
  let found = 0
  for (const [name, kind] of fields) {
    const value = raw[name]
    if (value === undefined) continue
    const decoded = decodeField(kind, value)
    if (decoded === undefined) return undefined
    out[name] = decoded
    found++
  }
  if (found !== keys.length || out["tradeflow_reference"] === undefined) return undefined
  const count = (name: string) => (out[name] as ReadonlyArray<unknown> | undefined)?.length ?? 0
  if (count("container_reference") + count("bill_of_lading_reference") + count("booking_reference") === 0) {
    return undefined
  }
  return out as unknown as TradeflowRecord
}
