import { setNewest } from "./boundedMap.js"

/**
 * A token bucket per client: each holds at most `burst` tokens and gains `perSecond` tokens a
 * second; a request takes one, and a request that finds its bucket empty is refused (it takes
 * nothing). At most `maxClients` buckets are remembered, the least recently used going first, so
 * the memory is bounded whatever the number of clients an attacker uses (a forgotten client starts
 * again with a full bucket).
 */
export interface TokenBuckets {
  /** Takes a token of the client: `undefined` when it may go on, else the seconds until a token is back. */
  readonly take: (client: string, now: number) => number | undefined
  /** How many clients are remembered. */
  readonly size: () => number
}

/** Options of {@link make}. */
export interface TokenBucketOptions {
  readonly perSecond: number
  readonly burst: number
  readonly maxClients: number
}

/** New, empty token buckets. */
export const make = (options: TokenBucketOptions): TokenBuckets => {
  const buckets = new Map<string, { readonly tokens: number; readonly at: number }>()
  return {
    take: (client, now) => {
      const bucket = buckets.get(client)
      const tokens = bucket === undefined
        ? options.burst
        : Math.min(options.burst, bucket.tokens + Math.max(0, now - bucket.at) * options.perSecond / 1000)
      const allowed = tokens >= 1
      setNewest(
        buckets,
        client,
        { tokens: allowed ? tokens - 1 : tokens, at: Math.max(now, bucket?.at ?? now) },
        options.maxClients
      )
      return allowed ? undefined : Math.max(1, Math.ceil((1 - tokens) / options.perSecond))
    },
    size: () => buckets.size
  }
}
