import { Effect } from "effect"
import pg from "pg"
import { vi } from "vitest"

/** The statements node-postgres ran (text and parameters) while `effect` ran. */
export const captured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => vi.spyOn(pg.Client.prototype as { query: (...args: Array<unknown>) => unknown }, "query")),
    (spy) =>
      Effect.map(effect, () =>
        spy.mock.calls.flatMap(([text, values]) =>
          typeof text === "string" ? [{ text, values: Array.isArray(values) ? values : [] }] : []
        )),
    (spy) =>
      Effect.sync(() =>
        spy.mockRestore()
      )
  )
