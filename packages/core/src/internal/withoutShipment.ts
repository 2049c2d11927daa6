const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13

const skipSpace = (s: string, i: number): number => {
  while (isSpace(s.charCodeAt(i))) i++
  return i
}

/** The index after the string that starts at `i` (a quote), or -1. */
const skipString = (s: string, i: number): number => {
  let from = i + 1
  while (true) {
    const quote = s.indexOf("\"", from)
    if (quote < 0) return -1
    let backslashes = 0
    while (s.charCodeAt(quote - 1 - backslashes) === 92) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** The index after the value that starts at `i`, or -1. */
const skipValue = (s: string, i: number): number => {
  const c = s.charCodeAt(i)
  if (c === 34) return skipString(s, i)
  if (c === 123 || c === 91) {
    let depth = 0
    for (let j = i; j < s.length; j++) {
      const d = s.charCodeAt(j)
      if (d === 34) {
        j = skipString(s, j) - 1
        if (j < 0) return -1
      } else if (d === 123 || d === 91) {
        depth++
      } else if (d === 125 || d === 93) {
        depth--
        if (depth === 0) return j + 1
      }
    }
    return -1
  }
  let j = i
  while (j < s.length) {
    const d = s.charCodeAt(j)
    if (d === 44 || d === 125 || d === 93 || isSpace(d)) break
    j++
  }
  return j > i ? j : -1
}

interface Member {
  readonly key: string
  /** Where the member's key starts. */
  readonly start: number
  readonly valueStart: number
  readonly valueEnd: number
  /** The end of the previous member's value, or -1 for the first member. */
  readonly previousEnd: number
  /** The index of the comma after the value, or -1 for the last member. */
  readonly comma: number
}

const keyOf = (raw: string): string => raw.includes("\\") ? JSON.parse(raw) as string : raw.slice(1, -1)

/** The members of the object that starts at `i`; undefined when the text is not what it should be. */
const membersOf = (s: string, i: number): Array<Member> | undefined => {
  const members: Array<Member> = []
  let at = skipSpace(s, i + 1)
  if (s.charCodeAt(at) === 125) return members
  let previousEnd = -1
  while (true) {
    if (s.charCodeAt(at) !== 34) return undefined
    const keyEnd = skipString(s, at)
    if (keyEnd < 0) return undefined
    const colon = skipSpace(s, keyEnd)
    if (s.charCodeAt(colon) !== 58) return undefined
    const valueStart = skipSpace(s, colon + 1)
    const valueEnd = skipValue(s, valueStart)
    if (valueEnd < 0) return undefined
    const next = skipSpace(s, valueEnd)
    const c = s.charCodeAt(next)
    if (c !== 44 && c !== 125) return undefined
    members.push({
      key: keyOf(s.slice(at, keyEnd)),
      start: at,
      valueStart,
      valueEnd,
      previousEnd,
      comma: c === 44 ? next : -1
    })
    if (c === 125) return members
    previousEnd = valueEnd
    at = skipSpace(s, next + 1)
  }
}

const byParsing = (body: string): string => {
  try {
    const parsed = JSON.parse(body) as { payload?: unknown }
    const payload = parsed?.payload
    if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("shipment" in payload)) {
      return body
    }
    delete (payload as Record<string, unknown>)["shipment"]
    return JSON.stringify(parsed)
  } catch {
    return body
  }
}

/**
 * The JSON text without `payload.shipment`, as `JSON.parse`, `delete` and `JSON.stringify` would
 * give it (same value, original formatting kept), found by scanning the text instead of parsing
 * it. Anything unusual (duplicate keys, text that is not JSON) takes the parsing path.
 */
export const withoutShipment = (body: string): string => {
  const start = skipSpace(body, 0)
  if (body.charCodeAt(start) !== 123) return byParsing(body)
  const top = membersOf(body, start)
  if (top === undefined) return byParsing(body)
  const payloads = top.filter((m) => m.key === "payload")
  if (payloads.length > 1) return byParsing(body)
  const payload = payloads[0]
  if (payload === undefined || body.charCodeAt(payload.valueStart) !== 123) return body
  const members = membersOf(body, payload.valueStart)
  if (members === undefined) return byParsing(body)
  const shipments = members.filter((m) => m.key === "shipment")
  if (shipments.length === 0) return body
  if (shipments.length > 1) return byParsing(body)
  const shipment = shipments[0]!
  if (shipment.comma >= 0) return body.slice(0, shipment.start) + body.slice(skipSpace(body, shipment.comma + 1))
  if (shipment.previousEnd >= 0) return body.slice(0, shipment.previousEnd) + body.slice(shipment.valueEnd)
  return body.slice(0, shipment.start) + body.slice(shipment.valueEnd)
}
