import { setNewest } from "./boundedMap.js"

/**
 * Counts failures per client in fixed windows: once a client has failed `failures` times within
 * `windowMillis` of its first failure, it is refused until that window ends. At most `maxClients`
 * clients are remembered (the oldest window goes first, an expired one whenever any has), so the memory is bounded
 * whatever the number of addresses an attacker uses.
 */
export interface FailureLimit {
  /** Seconds until the client may try again, or `undefined` when it may try now. */
  readonly retryAfter: (client: string, now: number) => number | undefined
  /** Records one failure of the client. */
  readonly fail: (client: string, now: number) => void
  /** How many clients are remembered. */
  readonly size: () => number
}

/** Options of {@link make}. */
export interface FailureLimitOptions {
  readonly failures: number
  readonly windowMillis: number
  readonly maxClients: number
}

/** A new, empty failure limit. */
export const make = (options: FailureLimitOptions): FailureLimit => {
  const windows = new Map<string, { readonly start: number; count: number }>()
  const live = (client: string, now: number) => {
    const window = windows.get(client)
    if (window === undefined) return undefined
    if (now - window.start < options.windowMillis) return window
    windows.delete(client)
    return undefined
  }
  return {
    retryAfter: (client, now) => {
      const window = live(client, now)
      return window === undefined || window.count < options.failures
        ? undefined
        : Math.max(1, Math.ceil((window.start + options.windowMillis - now) / 1000))
    },
    fail: (client, now) => {
      const window = live(client, now)
      if (window !== undefined) {
        window.count++
        return
      }
      // A window is set only when it starts, so the map is in order of start: the window evicted
      // is the oldest, and the first to expire if any has.
      setNewest(windows, client, { start: now, count: 1 }, options.maxClients)
    },
    size: () => windows.size
  }
}
