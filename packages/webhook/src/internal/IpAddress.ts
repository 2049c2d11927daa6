const parseIPv4Number = (input: string): number | undefined => {
  let text = input
  let radix = 10
  if (text.length >= 2 && (text.startsWith("0x") || text.startsWith("0X"))) {
    text = text.slice(2)
    radix = 16
  } else if (text.length >= 2 && text.startsWith("0")) {
    text = text.slice(1)
    radix = 8
  }
  if (text === "") return 0
  const valid = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/
  if (!valid.test(text)) return undefined
  return parseInt(text, radix)
}

/**
 * Whether a host "ends in a number" (WHATWG URL): such a host must parse as IPv4.
 */
export const endsInANumber = (host: string): boolean => {
  const parts = host.split(".")
  if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop()
  const last = parts[parts.length - 1] ?? ""
  if (last !== "" && /^[0-9]+$/.test(last)) return true
  return last !== "" && parseIPv4Number(last) !== undefined && /^0[xX]/.test(last)
}

/**
 * The WHATWG URL IPv4 parser (which reads the same forms as `inet_aton`): decimal, hex and
 * octal parts, one to four of them, the last filling the remaining bytes.
 */
export const parseIPv4 = (host: string): number | undefined => {
  const parts = host.split(".")
  if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop()
  if (parts.length > 4 || parts.length === 0) return undefined
  const numbers: Array<number> = []
  for (const part of parts) {
    if (part === "") return undefined
    const n = parseIPv4Number(part)
    if (n === undefined) return undefined
    numbers.push(n)
  }
  const last = numbers.pop() as number
  if (numbers.some((n) => n > 255)) return undefined
  if (last >= 256 ** (4 - numbers.length)) return undefined
  return numbers.reduce((acc, n, i) => acc + n * 256 ** (3 - i), last)
}

export const formatIPv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")

const strictDotted = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let n = 0
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined
    const v = Number(part)
    if (v > 255) return undefined
    n = n * 256 + v
  }
  return n
}

/**
 * Parses an IPv6 literal (no brackets; a `%zone` suffix is ignored) into its eight 16-bit groups.
 */
export const parseIPv6 = (input: string): Array<number> | undefined => {
  const text = input.includes("%") ? input.slice(0, input.indexOf("%")) : input
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const readGroups = (side: string, allowV4: boolean): Array<number> | undefined => {
    if (side === "") return []
    const out: Array<number> = []
    const pieces = side.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] as string
      if (allowV4 && i === pieces.length - 1 && piece.includes(".")) {
        const v4 = strictDotted(piece)
        if (v4 === undefined) return undefined
        out.push(v4 >>> 16, v4 & 0xffff)
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined
        out.push(parseInt(piece, 16))
      }
    }
    return out
  }
  if (halves.length === 1) {
    const groups = readGroups(text, true)
    return groups !== undefined && groups.length === 8 ? groups : undefined
  }
  const head = readGroups(halves[0] as string, false)
  const tail = readGroups(halves[1] as string, true)
  if (head === undefined || tail === undefined || head.length + tail.length > 7) return undefined
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/**
 * RFC 5952 text of eight groups (lower case, longest run of two or more zero groups as `::`).
 */
export const formatIPv6 = (groups: ReadonlyArray<number>): string => {
  let bestStart = -1
  let bestLength = 0
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestStart < 0) return hex.join(":")
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`
}
