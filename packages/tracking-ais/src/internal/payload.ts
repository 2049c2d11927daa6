import AisParser from "aisparser"

/**
 * The fields of a message decoded by aisparser that this package reads. They are getters that
 * decode on access and may throw on a malformed payload; values that are not available are NaN.
 */
export interface Decoded {
  readonly valid: "VALID" | "INVALID" | "UNSUPPORTED" | "INCOMPLETE"
  readonly aisType: number
  readonly mmsi: number
  readonly latitude: number
  readonly longitude: number
  readonly sog: number
  readonly cog: number
  readonly utcTsSec: number
  readonly imo: number
  readonly name: string
  readonly callSign: string
  readonly partNo: number
}

const parser = new AisParser()

/**
 * Decodes the whole payload of one message (its parts already joined), `undefined` when aisparser
 * finds it invalid, unsupported or too short for its type.
 */
export const decodePayload = (payload: string, fillBits: number, channel: string): Decoded | undefined => {
  const decoded = parser.parseArray(["!AIVDM", "1", "1", "", channel, payload, String(fillBits)]) as Decoded
  return decoded.valid === "VALID" ? decoded : undefined
}

/**
 * The text of a decoded field as sent. aisparser 0.1.2's six-bit table has `'` for code 34 and `"`
 * for code 39, the wrong way round (codes 32 to 63 are ASCII): the two are swapped back here.
 */
export const sentText = (decoded: string): string => decoded.replace(/['"]/g, (quote) => quote === "'" ? "\"" : "'")
