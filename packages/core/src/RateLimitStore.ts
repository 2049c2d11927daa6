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

/** Hits of a key in a window, to add to its counter. */
export interface Count {
  readonly key: string
  readonly window: Window
  readonly hits: number
}

export class RateLimitStore extends Context.Tag("@tradeflow/core/RateLimitStore")<RateLimitStore, {
  /**
   * Adds the hits of each count to the counter of its key and window, atomically (concurrent adds
   * from any process on the same database are all counted), and answers each counter's total
   * after the add, in the order of `counts` (a key and window named twice gets both adds, and the
   * total after both, twice). Windows of one key are independent.
   */
  readonly add: (counts: ReadonlyArray<Count>) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /**
   * Removes at most `limit` counters whose window ended at or before `now`; answers how many it
   * removed (fewer than `limit`: none such is left).
   */
  readonly prune: (now: number, limit: number) => Effect.Effect<number, StorageError>
}>() {}

/** Counters in a map: nothing survives the process, and the memory grows until {@link RateLimitStore} `prune`. */
export const makeMemory: Effect.Effect<RateLimitStore["Type"]> = Effect.sync(() => {
  const counters = new Map<string, { readonly end: number; hits: number }>()
  const nameOf = (count: Count) => JSON.stringify([count.key, count.window.start])
  return RateLimitStore.of({
    add: (counts) =>
      Effect.sync(() => {
        for (const count of counts) {
          const counter = counters.get(nameOf(count))
          if (counter !== undefined) counter.hits += count.hits
          else counters.set(nameOf(count), { end: count.window.end, hits: count.hits })
        }
        return counts.map((count) => counters.get(nameOf(count))!.hits)
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
