/**
 * Turns whole AIS messages into the reports of core's `VesselPositionSource`: positions from
 * message types 1, 2, 3, 18 and 19, static data from types 5, 19 and 24 (part A carries the name,
 * part B the call sign). Other types give nothing.
 *
 * The bits are decoded by `aisparser`, which checks each message's length against its type.
 * A position that is not available (latitude 91, longitude 181) or out of range is dropped;
 * speed 102.3 and course 360 (not available) are left out of the report, as are an IMO number
 * whose check digit does not match and empty names or call signs.
 *
 * @module
 */
import type { VesselPositionSource } from "@tradeflow/core"
import type { AisMessage } from "./AisAssembler.js"
import { type Decoded, decodePayload, sentText } from "./internal/payload.js"

/**
 * When a position was observed: the start of the latest UTC second at or before `receivedAt`
 * (epoch ms) whose second of the minute is the report's time stamp `second`; `receivedAt` itself
 * when the report has no time stamp (60 to 63: not available, manual, estimated, inoperative).
 */
export const observedAt = (receivedAt: number, second: number): number => {
  if (!Number.isInteger(second) || second < 0 || second > 59) return receivedAt
  const whole = Math.floor(receivedAt / 1000)
  const back = ((whole % 60) - second + 120) % 60
  return (whole - back) * 1000
}

/** Whether `imo` is a seven-digit IMO ship number whose last digit is its check digit. */
export const isImoNumber = (imo: number): boolean => {
  if (!Number.isInteger(imo) || imo < 1_000_000 || imo > 9_999_999) return false
  const digits = String(imo)
  let sum = 0
  for (let i = 0; i < 6; i++) sum += Number(digits[i]) * (7 - i)
  return sum % 10 === Number(digits[6])
}

const mmsiOf = (decoded: Decoded): string | undefined => {
  const mmsi = decoded.mmsi
  return Number.isInteger(mmsi) && mmsi > 0 && mmsi <= 999_999_999 ? String(mmsi).padStart(9, "0") : undefined
}

const text = (value: string): string | undefined => {
  const trimmed = sentText(value).trim()
  return trimmed === "" ? undefined : trimmed
}

const position = (decoded: Decoded, mmsi: string, receivedAt: number): Array<VesselPositionSource.VesselReport> => {
  const lat = decoded.latitude
  const lng = decoded.longitude
  if (!(Math.abs(lat) <= 90 && Math.abs(lng) <= 180)) return []
  const sog = decoded.sog
  const cog = decoded.cog
  return [{
    _tag: "Position",
    mmsi,
    lat,
    lng,
    observed_at: observedAt(receivedAt, decoded.utcTsSec),
    ...(Number.isFinite(sog) ? { sog } : {}),
    ...(cog >= 0 && cog < 360 ? { cog } : {})
  }]
}

const staticData = (
  mmsi: string,
  receivedAt: number,
  fields: { readonly imo?: number; readonly name?: string; readonly callSign?: string }
): Array<VesselPositionSource.VesselReport> => {
  const imo = fields.imo !== undefined && isImoNumber(fields.imo) ? String(fields.imo) : undefined
  const name = fields.name === undefined ? undefined : text(fields.name)
  const callSign = fields.callSign === undefined ? undefined : text(fields.callSign)
  if (imo === undefined && name === undefined && callSign === undefined) return []
  return [{
    _tag: "Static",
    mmsi,
    ...(imo === undefined ? {} : { imo }),
    ...(name === undefined ? {} : { name }),
    ...(callSign === undefined ? {} : { call_sign: callSign }),
    observed_at: receivedAt
  }]
}

const reportsOf = (decoded: Decoded, receivedAt: number): Array<VesselPositionSource.VesselReport> => {
  const mmsi = mmsiOf(decoded)
  if (mmsi === undefined) return []
  switch (decoded.aisType) {
    case 1:
    case 2:
    case 3:
    case 18:
      return position(decoded, mmsi, receivedAt)
    case 19:
      return [...position(decoded, mmsi, receivedAt), ...staticData(mmsi, receivedAt, { name: decoded.name })]
    case 5:
      return staticData(mmsi, receivedAt, { imo: decoded.imo, name: decoded.name, callSign: decoded.callSign })
    case 24:
      return staticData(
        mmsi,
        receivedAt,
        decoded.partNo === 0 ? { name: decoded.name } : { callSign: decoded.callSign }
      )
    default:
      return []
  }
}

/**
 * The reports of one whole message received at `receivedAt` (epoch ms): none when the message is
 * malformed, of another type, or carries nothing usable.
 */
export const decode = (message: AisMessage, receivedAt: number): ReadonlyArray<VesselPositionSource.VesselReport> => {
  try {
    const decoded = decodePayload(message.payload, message.fillBits, message.channel)
    return decoded === undefined ? [] : reportsOf(decoded, receivedAt)
  } catch {
    return []
  }
}
