/**
 * The contract of the `RateLimitStore` port: one suite every adapter (memory, SQLite, PostgreSQL)
 * must pass. Every test counts fresh keys; the windows of the pruning test end long before those
 * of the others, so pruning sees its own counters only.
 *
 * @module
 */
import { expect, layer as sharedLayer } from "@effect/vitest"
import { Effect, FastCheck as fc, type Layer, type Scope } from "effect"
import { RateLimitStore, type Window } from "../src/RateLimitStore.js"
import { freshId, type StorageContractOptions } from "./StorageContract.js"

const minute = 60_000
const at = 1_700_000_040_000

const windowAt = (start: number, millis = minute): Window => ({ start, end: start + millis })

/** One hit of `key` in `window`: the counter's total after it. */
const hit = (store: RateLimitStore["Type"], key: string, window: Window) =>
  Effect.map(store.add([{ key, window, hits: 1 }]), (totals) => totals[0]!)

/** Options of {@link rateLimitContract}. */
export interface RateLimitContractOptions<R> extends Pick<StorageContractOptions, "numRuns"> {
  /**
   * Another adapter over the same database (another pool or connection, as another process has),
   * opened with the suite's layer at hand; without it the concurrency test uses the suite's store twice.
   */
  readonly another?: Effect.Effect<RateLimitStore["Type"], unknown, R | Scope.Scope>
}

/** The `RateLimitStore` contract, run against `layer`. */
export const rateLimitContract = <R>(
  name: string,
  layer: Layer.Layer<RateLimitStore | R, unknown>,
  options: RateLimitContractOptions<R> = {}
): void =>
  sharedLayer(layer, { timeout: "60 seconds", excludeTestServices: true })(`rate limit contract: ${name}`, (it) => {
    const props = { fastCheck: { numRuns: options.numRuns ?? 20 } }

    it.effect("add: the hits of a key in a window, counted from 1", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const key = freshId("key")
        const counts: Array<number> = []
        for (let i = 0; i < 5; i++) counts.push(yield* hit(store, key, windowAt(at)))
        expect(counts).toEqual([1, 2, 3, 4, 5])
      }))

    it.effect("add: windows of one key and keys in one window are counted apart", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const [a, b] = [freshId("key"), freshId("key")]
        yield* hit(store, a, windowAt(at))
        yield* hit(store, a, windowAt(at))
        expect(yield* hit(store, a, windowAt(at + minute))).toBe(1)
        expect(yield* hit(store, b, windowAt(at))).toBe(1)
        expect(yield* hit(store, a, windowAt(at))).toBe(3)
        expect(yield* hit(store, a, windowAt(at + minute))).toBe(2)
        expect(yield* hit(store, b, windowAt(at + minute))).toBe(1)
      }))

    it.effect.prop(
      "add: of any sequence of hits, each answers the hits of its key and window so far",
      [fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })), { maxLength: 40 })],
      ([hits]) =>
        Effect.gen(function*() {
          const store = yield* RateLimitStore
          const keys = [freshId("key"), freshId("key"), freshId("key")]
          const model = new Map<string, number>()
          for (const [k, w] of hits) {
            const name = `${k}/${w}`
            const expected = (model.get(name) ?? 0) + 1
            model.set(name, expected)
            expect(yield* hit(store, keys[k]!, windowAt(at + w * minute))).toBe(expected)
          }
        }),
      props
    )

    it.effect("add: 2 x 100 concurrent hits of one key from two clients are 200 hits, none lost", () =>
      Effect.gen(function*() {
        const first = yield* RateLimitStore
        const second = options.another === undefined ? first : yield* options.another
        const key = freshId("key")
        const counts = yield* Effect.all(
          Array.from({ length: 200 }, (_, i) => hit(i % 2 === 0 ? first : second, key, windowAt(at))),
          { concurrency: "unbounded" }
        )
        expect([...counts].sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
        expect(yield* hit(first, key, windowAt(at))).toBe(201)
      }).pipe(Effect.scoped))

    it.effect("add: many counters at once, each answered its total in the order asked, a counter named twice counted twice", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const [a, b, c] = [freshId("key"), freshId("key"), freshId("key")]
        yield* hit(store, a, windowAt(at))
        const totals = yield* store.add([
          { key: b, window: windowAt(at), hits: 5 },
          { key: a, window: windowAt(at), hits: 3 },
          { key: a, window: windowAt(at + minute), hits: 2 },
          { key: c, window: windowAt(at), hits: 1 },
          { key: b, window: windowAt(at), hits: 2 }
        ])
        expect(totals).toEqual([7, 4, 2, 1, 7])
        expect(yield* store.add([])).toEqual([])
        const many = Array.from({ length: 1_200 }, (_, i) => ({ key: `${a}-${i}`, window: windowAt(at), hits: i + 1 }))
        expect(yield* store.add(many)).toEqual(many.map((m) => m.hits))
      }))

    it.effect("prune: removes the counters whose window has ended, at most limit at a time", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const now = 1_000_000
        const [a, b] = [freshId("key"), freshId("key")]
        const ended = [windowAt(now - 3 * minute), windowAt(now - 2 * minute), windowAt(now - minute)]
        for (const w of ended) {
          yield* hit(store, a, w)
          yield* hit(store, b, w)
        }
        const running = windowAt(now - minute + 1)
        yield* hit(store, a, running)
        yield* hit(store, a, running)
        expect(yield* store.prune(now, 4)).toBe(4)
        expect(yield* store.prune(now, 4)).toBe(2)
        expect(yield* store.prune(now, 4)).toBe(0)
        for (const w of ended) expect(yield* hit(store, a, w)).toBe(1)
        expect(yield* hit(store, a, running)).toBe(3)
        expect(yield* store.prune(now, 0)).toBe(0)
        expect(yield* store.prune(now, 100)).toBe(3)
      }))
  })
