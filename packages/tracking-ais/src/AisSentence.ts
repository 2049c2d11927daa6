/**
 * One NMEA 0183 AIS sentence (`!AIVDM`, `!AIVDO`, and the same with other talkers such as `!BSVDM`):
 * a line read with its checksum checked and its fields split, or written back.
 *
 * A line may start with IEC 61162-450 tag blocks (`\s:station,c:1700000000*hh\`): they are skipped.
 * Anything else that is not a well-formed sentence with a matching checksum is refused.
 *
 * @module
 */
import { Option } from "effect"

/** One sentence: the whole of a single-part message, or one part of a multi-part one. */
export interface AisSentence {
  /** The talker and formatter, as `AIVDM` or `AIVDO` (`VDO` reports the receiver's own vessel). */
  readonly address: string
  /** How many sentences the message has, 1 to 9. */
  readonly total: number
  /** This sentence's number in its message, 1 to `total`. */
  readonly index: number
  /** The sequential message id (`0` to `9`) that ties the parts of one message together, or `""`. */
  readonly sequenceId: string
  /** The radio channel (`A`, `B`, `1`, `2`) or `""`. */
  readonly channel: string
  /** The armoured payload: six bits per character. */
  readonly payload: string
  /** The bits of padding at the end of the payload, 0 to 5. */
  readonly fillBits: number
}

/** The checksum of a sentence's body (the text between `!` and `*`): two upper-case hex digits. */
export const checksum = (body: string): string => {
  let sum = 0
  for (let i = 0; i < body.length; i++) sum ^= body.charCodeAt(i) & 0xff
  return sum.toString(16).toUpperCase().padStart(2, "0")
}

const address = /^[A-Z][A-Z0-9]VD[MO]$/
const count = /^[1-9]$/
const sequence = /^[0-9]?$/
const channel = /^[AB12]?$/
const armoured = /^[0-W`-w]+$/
const fill = /^[0-5]$/

const withoutTagBlocks = (line: string): string | undefined => {
  let rest = line
  while (rest.startsWith("\\")) {
    const end = rest.indexOf("\\", 1)
    if (end < 0) return undefined
    rest = rest.slice(end + 1)
  }
  return rest
}

/**
 * Reads one line: `None` unless it is a well-formed AIS sentence whose checksum matches. Leading
 * tag blocks and surrounding white space are ignored.
 */
export const parse = (line: string): Option.Option<AisSentence> => {
  const text = withoutTagBlocks(line.trim())
  if (text === undefined || text.length < 4 || text[0] !== "!") return Option.none()
  const star = text.length - 3
  if (text[star] !== "*") return Option.none()
  const body = text.slice(1, star)
  if (checksum(body) !== text.slice(star + 1).toUpperCase()) return Option.none()
  const fields = body.split(",")
  if (fields.length !== 7) return Option.none()
  const [addr, total, index, seq, chan, payload, bits] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
    string
  ]
  if (
    !address.test(addr) || !count.test(total) || !count.test(index) || !sequence.test(seq) ||
    !channel.test(chan) || !armoured.test(payload) || !fill.test(bits) || Number(index) > Number(total)
  ) return Option.none()
  return Option.some({
    address: addr,
    total: Number(total),
    index: Number(index),
    sequenceId: seq,
    channel: chan,
    payload,
    fillBits: Number(bits)
  })
}

/** Writes a sentence as a line, checksum included and no line ending. */
export const format = (sentence: AisSentence): string => {
  const body = [
    sentence.address,
    sentence.total,
    sentence.index,
    sentence.sequenceId,
    sentence.channel,
    sentence.payload,
    sentence.fillBits
  ].join(",")
  return `!${body}*${checksum(body)}`
}
