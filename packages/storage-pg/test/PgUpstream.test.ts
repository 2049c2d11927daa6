import { layer } from "@effect/vitest"
import { checkReadFetchesOnlyWhatItReturns, type DriverReads, upstreamContract } from "@tradeflow/core/test-kit"
import { Effect } from "effect"
import pg from "pg"
import { vi } from "vitest"
import { layerTest } from "./TestDatabase.js"

upstreamContract("postgres", layerTest)

interface Result {
  readonly rows?: ReadonlyArray<{ readonly body?: unknown }>
}

/** Counts what node-postgres hands over (rows, and the characters of their `body` fields) while `effect` runs. */
const measure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, DriverReads], E, R> => {
  const reads = { rows: 0, bodyChars: 0 }
  const prototype: { query: (...args: Array<unknown>) => unknown } = pg.Client.prototype
  const query = prototype.query
  return Effect.acquireUseRelease(
    Effect.sync(() =>
      vi.spyOn(prototype, "query").mockImplementation(function(this: unknown, ...args: Array<unknown>) {
        const callback = args[args.length - 1]
        if (typeof callback === "function") {
          args[args.length - 1] = (error: unknown, result: Result | undefined) => {
            for (const row of result?.rows ?? []) {
              reads.rows++
              if (typeof row.body === "string") reads.bodyChars += row.body.length
            }
            callback(error, result)
          }
        }
        return query.apply(this, args)
      })
    ),
    () => Effect.map(effect, (a): [A, DriverReads] => [a, { ...reads }]),
    (spy) => Effect.sync(() => spy.mockRestore())
  )
}

layer(layerTest, { excludeTestServices: true })("PostgreSQL MessageStore.read", (it) => {
  it.effect("the driver hands over the bodies of the messages returned and no other", () =>
    checkReadFetchesOnlyWhatItReturns(measure))
})
