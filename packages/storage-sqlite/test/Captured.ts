import Database from "better-sqlite3"
import { Effect } from "effect"
import { vi } from "vitest"

interface Statement {
  readonly source: string
}

/** The statements better-sqlite3 ran or read (text and arguments) while `effect` ran. */
export const captured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const probe = new Database(":memory:")
      const prototype = Object.getPrototypeOf(probe.prepare("SELECT 1"))
      probe.close()
      return [vi.spyOn(prototype, "all"), vi.spyOn(prototype, "run")] as const
    }),
    (spies) =>
      Effect.map(effect, () =>
        spies.flatMap((spy) =>
          spy.mock.contexts.map((statement, i) => ({
            source: (statement as Statement).source,
            args: spy.mock.calls[i] ?? []
          }))
        )),
    (spies) => Effect.sync(() => spies.forEach((spy) => spy.mockRestore()))
  )
