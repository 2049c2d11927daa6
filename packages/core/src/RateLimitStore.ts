/**
 * Port: request counters of fixed windows, shared by every process on one database (the HTTP
 * rate limits per API key and per widget key), and their in-memory adapter.
 *
 * A counter is named by a key (the HTTP layer uses a SHA-256 digest of the credential, never the
 * credential) and the window it counts in: the instants `[start, end)` in epoch milliseconds.
 *
 * @module
 */
import { Context, Effect, Layer } from "effect"
import type { StorageError } from "./StorageError.js"

/** One fixed window of a counter: from `start` (inclusive) to `end` (exclusive), epoch ms. */
export interface Window {
  readonly start: number
  readonly end: number
}

export class RateLimitStore extends Context.Tag("@tradeflow/core/RateLimitStore")<RateLimitStore, {
  /**
   * Counts one hit of `key` in `window`, atomically (concurrent hits from any process on the same
   * database are all counted), and answers the hits of that window, this one included. Windows of
   * one key are independent: a hit in another window starts at 1.
   */
  readonly hit: (key: string, window: Window) => Effect.Effect<number, StorageError>
  /**
   * Removes at most `limit` counters whose window ended at or before `now`; answers how many it
   * removed (fewer than `limit`: none such is left).
   */
  readonly prune: (now: number, limit: number) => Effect.Effect<number, StorageError>
}>() {}

/** Counters in a map: nothing survives the process, and the memory grows until {@link RateLimitStore} `prune`. */
export const makeMemory: Effect.Effect<RateLimitStore["Type"]> = Effect.sync(() => {
  const counters = new Map<string, { readonly end: number; hits: number }>()
  return RateLimitStore.of({
    hit: (key, window) =>
      Effect.sync(() => {
        const name = JSON.stringify([key, window.start])
        const counter = counters.get(name)
        if (counter !== undefined) return ++counter.hits
        counters.set(name, { end: window.end, hits: 1 })
        return 1
      }),
    prune: (now, limit) =>
      Effect.sync(() => {
        const n = Math.max(0, Math.floor(limit))
        let removed = 0
        for (const [name, counter] of counters) {
          if (removed >= n) break
          if (counter.end <= now) {
            counters.delete(name)
            removed++
          }
        }
        return removed
      })
  })
})

/** {@link makeMemory} as a layer. */
export const layerMemory: Layer.Layer<RateLimitStore> = Layer.effect(RateLimitStore, makeMemory)
