/**
 * Destination safety for webhook deliveries: which addresses a delivery may connect to, the
 * URL check done when an automation is saved, and a `dns.lookup` replacement that checks the
 * very addresses the socket connects to (no DNS rebinding window). {@link layer} is core's
 * `WebhookDestination` port over {@link checkUrl}.
 *
 * @module
 */
import { WebhookDestination } from "@tradeflow/core"
import { Data, Effect, Either, Layer } from "effect"
import * as Dns from "node:dns"
import type { LookupFunction } from "node:net"
import { ipv4Number, ipv6Groups, readIPv4Host, readIPv6 } from "./internal/IpAddress.js"

/**
 * Why an address is not a safe destination.
 */
export type Reason =
  | "loopback"
  | "private"
  | "link-local"
  | "multicast"
  | "cgnat"
  | "unspecified"
  | "broadcast"
  | "ipv4-mapped"
  | "ipv4-compatible"
  | "unique-local"
  | "nat64"
  | "6to4"
  | "documentation"
  | "reserved"
  | "invalid"

/**
 * A host as a URL parser reads it: IPv4 in any form `inet_aton` accepts is normalised to
 * dotted decimal, IPv6 to RFC 5952 text; anything else is a name (lower case, without a
 * trailing dot), or invalid when it looks numeric but is no address or holds a character no URL
 * host may hold.
 */
export type Host =
  | { readonly _tag: "IPv4"; readonly address: string }
  | { readonly _tag: "IPv6"; readonly address: string }
  | { readonly _tag: "Name"; readonly name: string }
  | { readonly _tag: "Invalid"; readonly host: string }

/**
 * Reads a host name or address literal (with or without IPv6 brackets). Catches the decimal
 * (`2130706433`), hex (`0x7f000001`), octal (`0177.0.0.1`) and short (`127.1`) IPv4 forms.
 */
export const parseHost = (host: string): Host => {
  const lower = host.toLowerCase()
  if (lower.startsWith("[") || lower.endsWith("]") || lower.includes(":")) {
    const inner = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower
    const address = readIPv6(inner)
    return address === undefined ? { _tag: "Invalid", host } : { _tag: "IPv6", address }
  }
  const read = readIPv4Host(lower)
  if (read === undefined) return { _tag: "Invalid", host }
  if (read !== "name") return { _tag: "IPv4", address: read }
  const name = lower.endsWith(".") ? lower.slice(0, -1) : lower
  return name === "" ? { _tag: "Invalid", host } : { _tag: "Name", name }
}

const inV4 = (n: number, base: string, bits: number): boolean => {
  const b = ipv4Number(base)
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
  return ((n & mask) >>> 0) === ((b & mask) >>> 0)
}

const classifyV4 = (n: number): Reason | "public" => {
  if (n === 0) return "unspecified"
  if (n === 0xffffffff) return "broadcast"
  if (inV4(n, "0.0.0.0", 8)) return "reserved"
  if (inV4(n, "127.0.0.0", 8)) return "loopback"
  if (inV4(n, "10.0.0.0", 8) || inV4(n, "172.16.0.0", 12) || inV4(n, "192.168.0.0", 16)) return "private"
  if (inV4(n, "100.64.0.0", 10)) return "cgnat"
  if (inV4(n, "169.254.0.0", 16)) return "link-local"
  if (inV4(n, "224.0.0.0", 4)) return "multicast"
  if (inV4(n, "192.0.2.0", 24) || inV4(n, "198.51.100.0", 24) || inV4(n, "203.0.113.0", 24)) return "documentation"
  if (inV4(n, "240.0.0.0", 4) || inV4(n, "192.0.0.0", 24) || inV4(n, "198.18.0.0", 15)) return "reserved"
  return "public"
}

const classifyV6 = (g: ReadonlyArray<number>): Reason | "public" => {
  const at = (i: number) => g[i] as number
  const zeroUpTo = (k: number) => g.slice(0, k).every((x) => x === 0)
  const v4 = (hi: number) => ((at(hi) << 16) | at(hi + 1)) >>> 0
  if (zeroUpTo(8)) return "unspecified"
  if (zeroUpTo(7) && at(7) === 1) return "loopback"
  if (zeroUpTo(5) && at(5) === 0xffff) return "ipv4-mapped"
  if (zeroUpTo(6)) return "ipv4-compatible"
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return classifyV4(v4(6)) === "public" ? "public" : "nat64"
  }
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return "nat64"
  if (at(0) === 0x2002) return classifyV4(v4(1)) === "public" ? "public" : "6to4"
  if (at(0) === 0x2001 && at(1) === 0x0db8) return "documentation"
  if (at(0) === 0x2001 && at(1) === 0) return "reserved"
  if ((at(0) & 0xfe00) === 0xfc00) return "unique-local"
  if ((at(0) & 0xffc0) === 0xfe80) return "link-local"
  if ((at(0) & 0xffc0) === 0xfec0) return "private"
  if ((at(0) & 0xff00) === 0xff00) return "multicast"
  if ((at(0) & 0xe000) !== 0x2000) return "reserved"
  return "public"
}

/**
 * `"public"` for an address a delivery may connect to, otherwise the reason it may not.
 * Accepts every form {@link parseHost} reads; a host name is `"invalid"` (resolve it first).
 * Every IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`) address is refused.
 */
export const classify = (address: string): Reason | "public" => {
  const host = parseHost(address)
  switch (host._tag) {
    case "IPv4":
      return classifyV4(ipv4Number(host.address))
    case "IPv6":
      return classifyV6(ipv6Groups(host.address))
    default:
      return "invalid"
  }
}

/**
 * Whether {@link classify} finds the address public.
 */
export const isPublic = (address: string): boolean => classify(address) === "public"

/**
 * The error a {@link safeLookup} fails with: `code` is `"ERR_SSRF_BLOCKED"`.
 */
export class SsrfBlockedError extends Error {
  readonly _tag = "SsrfBlocked"
  readonly code = "ERR_SSRF_BLOCKED"
  constructor(readonly hostname: string, readonly address: string, readonly reason: Reason) {
    super(
      `webhook destination ${hostname} resolves to ${address} (${reason}), which is not allowed (private destinations are refused unless the server allows them)`
    )
    this.name = "SsrfBlockedError"
  }
}

/**
 * A resolver with the shape of `dns.lookup(hostname, { all: true }, callback)`.
 */
export type Resolver = (
  hostname: string,
  options: Dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: Array<Dns.LookupAddress>) => void
) => void

const systemResolver: Resolver = (hostname, options, callback) => Dns.lookup(hostname, options, callback)

/**
 * A `lookup` for `http.Agent`, `net.connect` or undici's `connect` options: resolves with the
 * system resolver (or `resolve`) and fails with {@link SsrfBlockedError} when any resolved
 * address is not public, unless `allowPrivate`. The socket connects to the address checked here.
 * Node does not call `lookup` for an IP literal host: check URLs with {@link checkUrl} too.
 */
export const safeLookup = (
  options: { readonly allowPrivate: boolean; readonly resolve?: Resolver }
): LookupFunction => {
  const resolve = options.resolve ?? systemResolver
  return (hostname, lookupOptions, callback) => {
    const given: Dns.LookupOptions = typeof lookupOptions === "number"
      ? { family: lookupOptions }
      : typeof lookupOptions === "object" && lookupOptions !== null
      ? lookupOptions
      : {}
    const { all, ...rest } = given
    resolve(hostname, { ...rest, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      if (!options.allowPrivate) {
        for (const { address } of addresses) {
          const reason = classify(address)
          if (reason !== "public") return callback(new SsrfBlockedError(hostname, address, reason), [])
        }
      }
      const first = addresses[0]
      if (first === undefined) {
        return callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }),
          []
        )
      }
      return all === true ? callback(null, addresses) : callback(null, first.address, first.family)
    })
  }
}

/**
 * Why a destination URL is refused.
 */
export class DestinationRefused extends Data.TaggedError("DestinationRefused")<{
  readonly url: string
  readonly reason: Reason | "invalid-url" | "scheme" | "http-not-allowed" | "credentials" | "port"
  readonly message: string
}> {}

/** What {@link checkUrl} lets through beyond public `https:` destinations. */
export interface CheckOptions {
  readonly allowPrivate: boolean
  readonly allowHttp: boolean
  /** Host names (lower case) that may be reached over plain `http:` even without `allowHttp`. */
  readonly httpHosts?: ReadonlyArray<string> | undefined
}

/**
 * Checks a destination URL when an automation is saved and before each delivery: only
 * `https:` (and `http:` when `allowHttp`, or to a host of `httpHosts`), no credentials, only port 80, 443 or
 * one above 1023 (never a well-known service port such as SSH or SMTP), and unless `allowPrivate` no host
 * that is a non-public address literal (in any form) or a `localhost` name.
 */
export const checkUrl = (
  url: string | URL,
  options: CheckOptions
): Either.Either<URL, DestinationRefused> => {
  const text = String(url)
  const refuse = (reason: DestinationRefused["reason"], message: string) =>
    Either.left(new DestinationRefused({ url: text, reason, message }))
  let parsed: URL
  try {
    parsed = new URL(text)
  } catch {
    return refuse("invalid-url", "not a valid absolute URL")
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return refuse("scheme", `scheme ${parsed.protocol} is not allowed; use https`)
  }
  if (
    parsed.protocol === "http:" && !options.allowHttp &&
    !(options.httpHosts ?? []).includes(parsed.hostname.toLowerCase())
  ) {
    return refuse("http-not-allowed", "plain http is not allowed; use https (or have the host allowed over plain http)")
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return refuse("credentials", "credentials in the URL are not allowed")
  }
  const port = parsed.port === "" ? undefined : Number(parsed.port)
  if (port !== undefined && port !== 80 && port !== 443 && port <= 1023) {
    return refuse("port", `port ${port} is not allowed; use 80, 443 or a port above 1023`)
  }
  if (options.allowPrivate) return Either.right(parsed)
  const host = parseHost(parsed.hostname)
  switch (host._tag) {
    case "Invalid":
      return refuse("invalid", `host ${parsed.hostname} is not valid`)
    case "Name":
      return host.name === "localhost" || host.name.endsWith(".localhost")
        ? refuse("loopback", `host ${parsed.hostname} is loopback`)
        : Either.right(parsed)
    default: {
      const reason = classify(host.address)
      return reason === "public" ? Either.right(parsed) : refuse(reason, `host ${parsed.hostname} is ${reason}`)
    }
  }
}

/**
 * Core's `WebhookDestination` port: a destination is refused as {@link checkUrl} refuses it with
 * `options` (host names of `httpHosts` in any case).
 */
export const layer = (options: CheckOptions): Layer.Layer<WebhookDestination.WebhookDestination> => {
  const settings = { ...options, httpHosts: (options.httpHosts ?? []).map((host) => host.toLowerCase()) }
  return Layer.succeed(
    WebhookDestination.WebhookDestination,
    WebhookDestination.WebhookDestination.of({
      check: (url) =>
        Either.match(checkUrl(url, settings), {
          onLeft: (refused) =>
            Effect.fail(new WebhookDestination.DestinationRefused({ url, message: refused.message })),
          onRight: () => Effect.void
        })
    })
  )
}
