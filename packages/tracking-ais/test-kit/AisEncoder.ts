/**
 * Writes AIS messages as NMEA sentences, for tests and the fake feed: the fields of message types
 * 1, 2, 3, 5, 18, 19 and 24 packed bit by bit (ITU-R M.1371), the bits armoured six to a
 * character, long payloads split into parts.
 *
 * Written here because `aisparser` only decodes; it is test support, checked against the
 * published sentences of the gpsd AIVDM/AIVDO documentation in this package's tests. Values are
 * written as given: a latitude of 91 or a longitude of 181 ("not available"), or one out of range,
 * goes on the wire as it is.
 *
 * @module
 */
import * as AisSentence from "../src/AisSentence.js"

/** A payload: six-bit characters and the bits of padding at its end. */
export interface Payload {
  readonly payload: string
  readonly fillBits: number
}

/** A position report. Absent speed, course, heading or time stamp are sent as "not available". */
export interface PositionReport {
  /** 1, 2, 3 (Class A), 18 (Class B) or 19 (extended Class B, which also carries the name). */
  readonly type: 1 | 2 | 3 | 18 | 19
  readonly mmsi: string | number
  readonly lat: number
  readonly lng: number
  /** Knots; 102.2 and more are sent as 102.2. */
  readonly sog?: number | undefined
  /** Degrees. */
  readonly cog?: number | undefined
  readonly heading?: number | undefined
  /** The UTC second of the fix, 0 to 59 (60 to 63: no time stamp, the default). */
  readonly second?: number | undefined
  /** Type 19 only. */
  readonly name?: string | undefined
}

/** Static and voyage data (type 5). */
export interface StaticVoyage {
  readonly mmsi: string | number
  readonly imo?: string | number | undefined
  readonly name?: string | undefined
  readonly callSign?: string | undefined
  readonly shipType?: number | undefined
  readonly destination?: string | undefined
}

/** Class B static data (type 24): part A carries the name, part B the call sign. */
export type StaticB =
  | { readonly part: "A"; readonly mmsi: string | number; readonly name: string }
  | { readonly part: "B"; readonly mmsi: string | number; readonly callSign: string; readonly shipType?: number }

const sixBit = (char: string): number => {
  const code = char.toUpperCase().charCodeAt(0)
  if (code >= 64 && code < 96) return code - 64
  if (code >= 32 && code < 64) return code
  throw new Error(`AisEncoder: ${JSON.stringify(char)} has no six-bit code`)
}

class Bits {
  readonly bits: Array<number> = []

  uint(value: number, width: number): this {
    const v = BigInt(Math.trunc(value))
    const masked = BigInt.asUintN(width, v)
    for (let i = width - 1; i >= 0; i--) this.bits.push(Number((masked >> BigInt(i)) & 1n))
    return this
  }

  text(value: string, chars: number): this {
    const padded = value.slice(0, chars).padEnd(chars, "@")
    for (const char of padded) this.uint(sixBit(char), 6)
    return this
  }

  armour(): Payload {
    const fillBits = (6 - (this.bits.length % 6)) % 6
    const all = [...this.bits, ...Array.from({ length: fillBits }, () => 0)]
    let payload = ""
    for (let i = 0; i < all.length; i += 6) {
      let v = 0
      for (let j = 0; j < 6; j++) v = (v << 1) | (all[i + j] as number)
      payload += String.fromCharCode(v < 40 ? v + 48 : v + 56)
    }
    return { payload, fillBits }
  }
}

const angle = (degrees: number) => Math.round(degrees * 600_000)
const speed = (sog: number | undefined) => sog === undefined ? 1023 : Math.min(Math.round(sog * 10), 1022)
const course = (cog: number | undefined) => cog === undefined ? 3600 : Math.round(cog * 10) % 3600
const heading = (value: number | undefined) => value === undefined ? 511 : Math.round(value) % 360
const second = (value: number | undefined) => value === undefined ? 60 : value

/** Packs a position report. */
export const position = (report: PositionReport): Payload => {
  const bits = new Bits().uint(report.type, 6).uint(0, 2).uint(Number(report.mmsi), 30)
  if (report.type <= 3) {
    return bits.uint(0, 4).uint(-128, 8).uint(speed(report.sog), 10).uint(0, 1)
      .uint(angle(report.lng), 28).uint(angle(report.lat), 27).uint(course(report.cog), 12)
      .uint(heading(report.heading), 9).uint(second(report.second), 6).uint(0, 2).uint(0, 3).uint(0, 1).uint(0, 19)
      .armour()
  }
  bits.uint(0, 8).uint(speed(report.sog), 10).uint(0, 1).uint(angle(report.lng), 28).uint(angle(report.lat), 27)
    .uint(course(report.cog), 12).uint(heading(report.heading), 9).uint(second(report.second), 6)
  if (report.type === 18) return bits.uint(0, 2).uint(1, 1).uint(0, 5).uint(0, 1).uint(0, 20).armour()
  return bits.uint(0, 4).text(report.name ?? "", 20).uint(70, 8).uint(0, 30).uint(1, 4).uint(0, 3).uint(0, 4).armour()
}

/** Packs static and voyage data (type 5, 424 bits: two sentences). */
export const staticVoyage = (data: StaticVoyage): Payload =>
  new Bits().uint(5, 6).uint(0, 2).uint(Number(data.mmsi), 30).uint(0, 2).uint(Number(data.imo ?? 0), 30)
    .text(data.callSign ?? "", 7).text(data.name ?? "", 20).uint(data.shipType ?? 70, 8).uint(0, 30).uint(1, 4)
    .uint(0, 4).uint(0, 5).uint(24, 5).uint(60, 6).uint(0, 8).text(data.destination ?? "", 20).uint(1, 1).uint(0, 1)
    .armour()

/** Packs Class B static data (type 24, part A or B). */
export const staticB = (data: StaticB): Payload => {
  const bits = new Bits().uint(24, 6).uint(0, 2).uint(Number(data.mmsi), 30)
  return data.part === "A"
    ? bits.uint(0, 2).text(data.name, 20).armour()
    : bits.uint(1, 2).uint(data.shipType ?? 37, 8).text("", 7).text(data.callSign, 7).uint(0, 30).uint(0, 6).armour()
}

/** How the sentences of a message are written. */
export interface SentenceOptions {
  /** `AIVDM` (default) or another talker and formatter, as `AIVDO`. */
  readonly address?: string | undefined
  /** `A` (default), `B`, or `""`. */
  readonly channel?: string | undefined
  /** The sequential message id of a multi-part message, `0` to `9` (default `1`). */
  readonly sequenceId?: string | undefined
  /** The most payload characters in one sentence (default 60, as common receivers). */
  readonly partLength?: number | undefined
}

/** The sentences of one message: one, or several sharing a sequential message id. */
export const sentences = (message: Payload, options?: SentenceOptions): Array<string> => {
  const partLength = options?.partLength ?? 60
  const parts: Array<string> = []
  for (let i = 0; i < message.payload.length; i += partLength) parts.push(message.payload.slice(i, i + partLength))
  return parts.map((payload, i) =>
    AisSentence.format({
      address: options?.address ?? "AIVDM",
      total: parts.length,
      index: i + 1,
      sequenceId: parts.length === 1 ? "" : options?.sequenceId ?? "1",
      channel: options?.channel ?? "A",
      payload,
      fillBits: i === parts.length - 1 ? message.fillBits : 0
    })
  )
}
