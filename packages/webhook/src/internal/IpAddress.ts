const outsideHost = /[\x00-\x20\x7f/\\?#@%[\]:]/
const outsideIPv6 = /[^0-9a-fA-F:.]/
const dottedQuad = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

const urlHost = (host: string): string | undefined => {
  try {
    return new URL(`http://${host}/`).hostname
  } catch {
    return undefined
  }
}

/**
 * Reads a host that is no IPv6 literal with the WHATWG URL parser, the one every client reads
 * a destination URL with: an IPv4 address in any form it accepts (decimal, hex and octal parts,
 * one to four of them, as `inet_aton` reads them) comes out in dotted decimal; `"name"` for a
 * host name; `undefined` for a host it refuses (one that ends in a number but is no address).
 */
export const readIPv4Host = (host: string): string | "name" | undefined => {
  if (host === "" || outsideHost.test(host)) return undefined
  const parsed = urlHost(host)
  return parsed === undefined ? undefined : dottedQuad.test(parsed) ? parsed : "name"
}

/**
 * Reads an IPv6 literal (no brackets; a `%zone` suffix is dropped) with the WHATWG URL parser:
 * its RFC 5952 text (lower case, longest run of two or more zero groups as `::`, no embedded
 * IPv4), or `undefined`.
 */
export const readIPv6 = (literal: string): string | undefined => {
  const zone = literal.indexOf("%")
  const address = zone === -1 ? literal : literal.slice(0, zone)
  if (address === "" || outsideIPv6.test(address)) return undefined
  return urlHost(`[${address}]`)?.slice(1, -1)
}

/** The 32-bit number of a dotted-decimal IPv4 address. */
export const ipv4Number = (dotted: string): number =>
  dotted.split(".").reduce((acc, part) => acc * 256 + Number(part), 0)

/** The eight 16-bit groups of an address in the text {@link readIPv6} answers. */
export const ipv6Groups = (text: string): Array<number> => {
  const read = (side: string) => side === "" ? [] : side.split(":").map((group) => parseInt(group, 16))
  const [head = "", tail] = text.split("::")
  if (tail === undefined) return read(head)
  const before = read(head)
  const after = read(tail)
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after]
}
